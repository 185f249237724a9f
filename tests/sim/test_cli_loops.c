/*
 * tests/sim/test_cli_loops.c — the `soadyn` program on a closed-loop model (its path is argv[1]),
 * run as a child process, against the library called here at the same state:
 *   - `info` lists the closure constraint and "mobility 1";
 *   - `eval --json` at a closed state: qdd and lambda equal sd_closed_loop_forward_dynamics's and the
 *     cut-joint forces (constraint frame, world axes) sd_constraint_force's, to 1e-12; rank 2 of 5;
 *   - `eval` at a --q that leaves the loop open says it assembled (text and JSON, the residual before
 *     and after), and the q it printed closes the loop and gives the library's qdd there;
 *   - `simulate --duration 1` prints loop residuals below 1e-9 in its summary;
 *   - with the models folder as argv[2]: models/flexible_four_bar.urdf (a loop through a flexible
 *     coupler): `info` gives rank 2 and mobility 3, `simulate` keeps the loop closed to 1e-9.
 * The model is the Grashof crank-rocker four-bar of models/four_bar.urdf (URDF+ <loop>), written here
 * to a temporary file so that the test stands on its own.
 */
#define _XOPEN_SOURCE 700

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "cli_child.h"
#include "mini_json.h"
#include "test_util.h"

static const char four_bar_urdf[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"four_bar\">\n"
    "  <link name=\"world\"/>\n"
    "  <joint name=\"crank_joint\" type=\"continuous\"><parent link=\"world\"/><child link=\"crank\"/>\n"
    "    <origin xyz=\"0 0 0\" rpy=\"0 -1.0471975511965977 0\"/><axis xyz=\"0 -1 0\"/></joint>\n"
    "  <link name=\"crank\"><inertial><origin xyz=\"0.05 0 0\"/><mass value=\"0.5\"/>\n"
    "    <inertia ixx=\"0.0005\" ixy=\"0\" ixz=\"0\" iyy=\"0.00091666666666666667\" iyz=\"0\"\n"
    "     izz=\"0.00091666666666666667\"/></inertial></link>\n"
    "  <joint name=\"coupler_joint\" type=\"continuous\"><parent link=\"crank\"/><child link=\"coupler\"/>\n"
    "    <origin xyz=\"0.1 0 0\" rpy=\"0 0.41848242355105715 0\"/><axis xyz=\"0 -1 0\"/></joint>\n"
    "  <link name=\"coupler\"><inertial><origin xyz=\"0.175 0 0\"/><mass value=\"1.2\"/>\n"
    "    <inertia ixx=\"0.0012\" ixy=\"0\" ixz=\"0\" iyy=\"0.01345\" iyz=\"0\" izz=\"0.01345\"/></inertial></link>\n"
    "  <joint name=\"rocker_joint\" type=\"continuous\"><parent link=\"coupler\"/><child link=\"rocker\"/>\n"
    "    <origin xyz=\"0.35 0 0\" rpy=\"0 1.9745328078391253 0\"/><axis xyz=\"0 -1 0\"/></joint>\n"
    "  <link name=\"rocker\"><inertial><origin xyz=\"0.15 0 0\"/><mass value=\"0.9\"/>\n"
    "    <inertia ixx=\"0.0009\" ixy=\"0\" ixz=\"0\" iyy=\"0.00765\" iyz=\"0\" izz=\"0.00765\"/></inertial></link>\n"
    "  <loop name=\"rocker_pivot\" type=\"revolute\">\n"
    "    <predecessor link=\"world\"><origin xyz=\"0.4 0 0\" rpy=\"0 0 0\"/></predecessor>\n"
    "    <successor link=\"rocker\"><origin xyz=\"0.3 0 0\" rpy=\"0 0 0\"/></successor>\n"
    "    <axis xyz=\"0 -1 0\"/>\n"
    "  </loop>\n"
    "</robot>\n";

static const char *soadyn_path;
static char dir[256], model_path[300], out_path[300], err_path[300];

/* Runs soadyn with args (NULL-terminated), stdout and stderr into out_path and err_path. */
static int run(const char *const *args)
{
    return cli_run(soadyn_path, args, out_path, err_path);
}

static double number_at(const mj_value *obj, const char *key)
{
    const mj_value *v = obj ? mj_get(obj, key) : NULL;
    CHECK(v && v->type == MJ_NUMBER);
    return v && v->type == MJ_NUMBER ? v->number : NAN;
}

/* values of an object {label: number} in order, n of them */
static void numbers_of_object(const mj_value *obj, double *out, int n)
{
    CHECK(obj && obj->type == MJ_OBJECT && obj->n == n);
    for (int i = 0; obj && obj->type == MJ_OBJECT && i < n && i < obj->n; ++i) out[i] = obj->items[i].number;
}

static void numbers_of_array(const mj_value *arr, double *out, int n)
{
    CHECK(arr && arr->type == MJ_ARRAY && arr->n == n);
    for (int i = 0; arr && arr->type == MJ_ARRAY && i < n && i < arr->n; ++i) out[i] = arr->items[i].number;
}

/* `eval --json` (args after the model) parsed; NULL on failure. */
static mj_value *eval_json(const char *a1, const char *a2, const char *a3, const char *a4)
{
    const char *args[] = {"eval", model_path, "--json", a1, a2, a3, a4, NULL};
    CHECK(run(args) == 0);
    char *text = cli_read_all(out_path);
    CHECK(text != NULL);
    mj_value *v = text ? mj_parse(text) : NULL;
    CHECK(v != NULL);
    free(text);
    return v;
}

/* The program's closed-loop answer at its printed state against the library's at that state. */
static void check_against_library(const sd_model *m, sd_data *d, const mj_value *j, const double *tau)
{
    double q[3], u[3], qdd_cli[3], qdd[3], lambda[5], lam_cli[5], f[6], fc[6], pos[5];
    numbers_of_object(mj_get(j, "q"), q, 3);
    numbers_of_object(mj_get(j, "u"), u, 3);
    numbers_of_object(mj_get(j, "qdd"), qdd_cli, 3);
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK);
    for (int i = 0; i < 5; ++i) CHECK(fabs(pos[i]) < 1e-9);
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lambda, NULL) == SD_OK);
    for (int i = 0; i < 3; ++i) CHECK_CLOSE(qdd_cli[i], qdd[i], 1e-12 * (1.0 + fabs(qdd[i])));
    const mj_value *loops = mj_get(j, "loops");
    CHECK(loops != NULL);
    CHECK(number_at(loops, "rows") == 5 && number_at(loops, "rank") == 2 && number_at(loops, "mobility") == 1);
    CHECK(sd_closed_loop_rank(d) == 2);
    const mj_value *c = mj_get(mj_get(loops, "constraints"), "rocker_pivot");
    CHECK(c != NULL);
    if (!c) return;
    numbers_of_array(mj_get(c, "lambda"), lam_cli, 5);
    for (int i = 0; i < 5; ++i) CHECK_CLOSE(lam_cli[i], lambda[i], 1e-12 * (1.0 + fabs(lambda[i])));
    const char *frames[2] = {"cut_force_local", "cut_force_world"};
    for (int s = 0; s < 2; ++s) {
        CHECK(sd_constraint_force(m, d, 0, s ? SD_CONSTRAINT_FRAME_WORLD : SD_CONSTRAINT_FRAME_LOCAL, f) == SD_OK);
        numbers_of_array(mj_get(mj_get(c, frames[s]), "moment"), fc, 3);
        numbers_of_array(mj_get(mj_get(c, frames[s]), "force"), fc + 3, 3);
        for (int i = 0; i < 6; ++i) CHECK_CLOSE(fc[i], f[i], 1e-12 * (1.0 + fabs(f[i])));
    }
    /* a force that does something: gravity loads the pivot */
    CHECK(fabs(f[3]) + fabs(f[4]) + fabs(f[5]) > 1.0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cli_loops PATH_TO_SOADYN [MODELS_FOLDER]\n");
        return 2;
    }
    soadyn_path = argv[1];
    snprintf(dir, sizeof(dir), "/tmp/soadyn_cli_loops_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(model_path, sizeof(model_path), "%s/four_bar.urdf", dir);
    snprintf(out_path, sizeof(out_path), "%s/stdout.txt", dir);
    snprintf(err_path, sizeof(err_path), "%s/stderr.txt", dir);
    FILE *fp = fopen(model_path, "w");
    CHECK(fp != NULL);
    if (!fp) return 1;
    fputs(four_bar_urdf, fp);
    fclose(fp);

    sd_model *m = NULL;
    sd_error err = {0};
    CHECK(sd_urdf_load_file(model_path, NULL, &m, &err) == SD_OK);
    if (!m) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    sd_data *d = sd_data_new(m);
    CHECK(sd_model_nconstraints(m) == 1 && sd_model_nconstraint_rows(m) == 5);

    /* info */
    {
        const char *args[] = {"info", model_path, NULL};
        CHECK(run(args) == 0);
        char *text = cli_read_all(out_path);
        CHECK(text && strstr(text, "rocker_pivot") && strstr(text, "revolute, 5 rows"));
        CHECK(text && strstr(text, "mobility 1"));
        free(text);
    }
    /* eval at the closed neutral configuration, with a crank torque and a consistent speed */
    {
        const double tau[3] = {0.5, 0.0, 0.0};
        mj_value *j = eval_json("--tau", "0.5,0,0", NULL, NULL);
        if (j) {
            const mj_value *loops = mj_get(j, "loops");
            const mj_value *as = loops ? mj_get(loops, "assembled") : NULL;
            CHECK(as && as->type == MJ_BOOL && as->number == 0.0);
            CHECK(number_at(loops, "position_residual_before") < 1e-12);
            check_against_library(m, d, j, tau);
            mj_free(j);
        }
        /* a speed off G u = 0: projected, and qdd is the library's at the projected speed */
        j = eval_json("--tau", "0.5,0,0", "--u", "1,0,0");
        if (j) {
            const mj_value *loops = mj_get(j, "loops");
            const mj_value *pr = loops ? mj_get(loops, "projected") : NULL;
            CHECK(pr && pr->type == MJ_BOOL && pr->number == 1.0);
            CHECK(number_at(loops, "velocity_residual_before") > 0.1);
            CHECK(number_at(loops, "velocity_residual") < 1e-12);
            check_against_library(m, d, j, tau);
            mj_free(j);
        }
    }
    /* eval at an open --q: assembled, said in JSON and in text */
    {
        const double tau[3] = {0.0, 0.0, 0.0};
        mj_value *j = eval_json("--q", "0.1,0,0", NULL, NULL);
        if (j) {
            const mj_value *loops = mj_get(j, "loops");
            const mj_value *as = loops ? mj_get(loops, "assembled") : NULL;
            CHECK(as && as->type == MJ_BOOL && as->number == 1.0);
            CHECK(number_at(loops, "position_residual_before") > 1e-3);
            CHECK(number_at(loops, "position_residual") < 1e-9);
            check_against_library(m, d, j, tau);
            mj_free(j);
        }
        const char *args[] = {"eval", model_path, "--q", "0.1,0,0", NULL};
        CHECK(run(args) == 0);
        char *text = cli_read_all(out_path);
        CHECK(text && strstr(text, "assembled: --q left the loops open"));
        CHECK(text && strstr(text, "rocker_pivot (revolute, 5 rows) lambda:"));
        CHECK(text && strstr(text, "world axes"));
        free(text);
    }
    /* simulate: residuals in the summary */
    {
        const char *args[] = {"simulate", model_path, "--duration", "1", NULL};
        CHECK(run(args) == 0);
        char *text = cli_read_all(out_path);
        const char *line = text ? strstr(text, "loop residuals") : NULL;
        CHECK(line != NULL);
        double pos = NAN, vel = NAN;
        CHECK(line && sscanf(line, "loop residuals position %lf, velocity %lf", &pos, &vel) == 2);
        printf("simulate 1 s: loop residuals position %.3g, velocity %.3g\n", pos, vel);
        CHECK(pos < 1e-9 && vel < 1e-9);
        free(text);
    }
    /* a loop through a flexible body (argv[2]: the models folder): info and simulate end to end */
    if (argc > 2) {
        char flex_path[1024];
        snprintf(flex_path, sizeof flex_path, "%s/flexible_four_bar.urdf", argv[2]);
        const char *info[] = {"info", flex_path, NULL};
        CHECK(run(info) == 0);
        char *text = cli_read_all(out_path);
        CHECK(text && strstr(text, "rank of G:   2 of 5 rows") && strstr(text, "mobility 3"));
        free(text);
        const char *args[] = {"simulate", flex_path, "--duration", "0.5", "--u0", "crank_joint=3", NULL};
        CHECK(run(args) == 0);
        text = cli_read_all(out_path);
        const char *line = text ? strstr(text, "loop residuals") : NULL;
        double pos = NAN, vel = NAN;
        CHECK(line && sscanf(line, "loop residuals position %lf, velocity %lf", &pos, &vel) == 2);
        printf("flexible_four_bar.urdf, simulate 0.5 s: loop residuals position %.3g, velocity %.3g\n", pos, vel);
        CHECK(pos < 1e-9 && vel < 1e-9);
        CHECK(text && strstr(text, "deflection end   coupler node 8") != NULL);
        free(text);
    }
    sd_data_free(d);
    sd_model_free(m);
    unlink(model_path);
    unlink(out_path);
    unlink(err_path);
    rmdir(dir);
    return test_summary("test_cli_loops");
}
