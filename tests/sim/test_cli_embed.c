/*
 * tests/sim/test_cli_embed.c — the `soadyn` program with --embed (issue 11), run as a child process
 * on models/four_bar.urdf, against the library called here:
 *   - `info --embed all`: the aggregate named (its constraint, bodies, independent speed), text and
 *     --json (parsed by tests/sim/mini_json.c: the aggregate, the embedded and tree-augmented lists);
 *   - `eval --embed all --json` at a state off the mechanism's motions: the q it printed closes the
 *     loop, its u satisfies G u = 0, its qdd_tree equals the tree-augmented
 *     sd_closed_loop_forward_dynamics's at that state with the tree joint forces given (on dependent
 *     joints) to 1e-10, and so do its multipliers with tau_e applied on the independent speed (what
 *     the embedded forces are of: the output flags it); the inverse dynamics gives tau_embedded back
 *     and M_e qdd + C_e = tau_e;
 *   - `simulate --embed all --duration 2 --output F.csv`: exit 0, the summary names the embedded
 *     loop, and the closure residual recomputed here (sd_constraint_residuals) from every line of
 *     the CSV stays below 1e-12 (position) and 1e-12 (velocity: the CSV's u = N u_e);
 *   - bad names: --embed and --independent naming nothing in the model, on info, eval, simulate and
 *     bench: exit 1 with the name on stderr.
 * argv[1]: the program, argv[2]: the models folder.
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

static const char *soadyn_path;
static char dir[256], model_path[1024], out_path[300], err_path[300], csv_path[300];

/* Runs soadyn with args (NULL-terminated), stdout and stderr into out_path and err_path. */
static int run(const char *const *args)
{
    return cli_run(soadyn_path, args, out_path, err_path);
}

/* stdout (or stderr) of the last run contains `text`. */
static int out_has(const char *path, const char *text)
{
    char *s = cli_read_all(path);
    const int yes = s && strstr(s, text) != NULL;
    if (!yes) fprintf(stderr, "expected '%s' in:\n%s\n", text, s ? s : "(nothing)");
    free(s);
    return yes;
}

static mj_value *parse_out(void)
{
    char *text = cli_read_all(out_path);
    mj_value *v = text ? mj_parse(text) : NULL;
    free(text);
    return v;
}

static const char *string_at(const mj_value *arr, int i)
{
    return arr && arr->type == MJ_ARRAY && i < arr->n && arr->items[i].type == MJ_STRING ? arr->items[i].string : "";
}

static void numbers_of_object(const mj_value *obj, double *out, int n)
{
    CHECK(obj && obj->type == MJ_OBJECT && obj->n == n);
    for (int i = 0; obj && obj->type == MJ_OBJECT && i < n && i < obj->n; ++i) out[i] = obj->items[i].number;
}

static void test_info(void)
{
    const char *a[] = {"info", model_path, "--embed", "all", NULL};
    CHECK(run(a) == 0);
    CHECK(out_has(out_path, "aggregate 1: constraint rocker_pivot"));
    CHECK(out_has(out_path, "bodies (3): crank, coupler, rocker"));
    CHECK(out_has(out_path, "independent speeds (1 of 3)"));
    CHECK(out_has(out_path, "tree-augmented: (none)"));
    const char *b[] = {"info", model_path, "--embed", "all", "--independent", "crank_joint", "--json", NULL};
    CHECK(run(b) == 0);
    mj_value *j = parse_out();
    CHECK(j != NULL);
    const mj_value *e = j ? mj_get(j, "embedding") : NULL;
    CHECK(e && e->type == MJ_OBJECT);
    const mj_value *aggs = e ? mj_get(e, "aggregates") : NULL;
    CHECK(aggs && aggs->type == MJ_ARRAY && aggs->n == 1);
    if (aggs && aggs->n == 1) {
        const mj_value *g = &aggs->items[0];
        CHECK(strcmp(string_at(mj_get(g, "constraints"), 0), "rocker_pivot") == 0);
        CHECK(strcmp(string_at(mj_get(g, "independent"), 0), "crank_joint") == 0);
        CHECK(mj_get(g, "dependent") && mj_get(g, "dependent")->n == 2);
        CHECK(mj_get(g, "parent_body") && mj_get(g, "parent_body")->type == MJ_NULL);
    }
    CHECK(e && strcmp(string_at(mj_get(e, "embedded"), 0), "rocker_pivot") == 0);
    CHECK(e && mj_get(e, "tree_augmented") && mj_get(e, "tree_augmented")->n == 0);
    CHECK(e && mj_get(e, "nv") && mj_get(e, "nv")->number == 1);
    mj_free(j);
    /* without --embed: the file's choice (tree-augmented), said in text and JSON */
    const char *c[] = {"info", model_path, "--json", NULL};
    CHECK(run(c) == 0);
    j = parse_out();
    CHECK(j && mj_get(j, "embedding") && mj_get(j, "embedding")->type == MJ_NULL);
    mj_free(j);
}

static void test_eval(const sd_model *m)
{
    const char *a[] = {"eval", model_path, "--embed", "all", "--json", "--q", "crank_joint=0.2",
                       "--u", "crank_joint=1.5", "--tau", "crank_joint=0.4,rocker_joint=-0.1", NULL};
    CHECK(run(a) == 0);
    mj_value *j = parse_out();
    CHECK(j != NULL);
    if (!j) return;
    double q[3], u[3], tau[3] = {0.4, 0.0, -0.1}, qdd_tree[3], qdd[3], lambda[5], res[5], ue[1], taue[1], qdde[1],
                          tid[1], c[1], M[1];
    numbers_of_object(mj_get(j, "q"), q, 3);
    numbers_of_object(mj_get(j, "u"), u, 3);
    numbers_of_object(mj_get(j, "qdd_tree"), qdd_tree, 3);
    numbers_of_object(mj_get(j, "u_embedded"), ue, 1);
    numbers_of_object(mj_get(j, "tau_embedded"), taue, 1);
    numbers_of_object(mj_get(j, "qdd"), qdde, 1);
    numbers_of_object(mj_get(j, "tau_inverse_dynamics"), tid, 1);
    numbers_of_object(mj_get(j, "bias_forces"), c, 1);
    const mj_value *mm = mj_get(j, "mass_matrix");
    CHECK(mm && mm->type == MJ_OBJECT && mm->n == 1 && mm->items[0].type == MJ_ARRAY && mm->items[0].n == 1);
    M[0] = mm && mm->n == 1 && mm->items[0].n == 1 ? mm->items[0].items[0].number : NAN;
    sd_data *d = sd_data_new(m);
    CHECK(sd_constraint_residuals(m, d, q, NULL, res, NULL) == SD_OK);
    double pos = 0.0, vel = 0.0;
    for (int i = 0; i < 5; ++i) pos = fmax(pos, fabs(res[i]));
    CHECK(sd_constraint_residuals(m, d, q, u, NULL, res) == SD_OK);
    for (int i = 0; i < 5; ++i) vel = fmax(vel, fabs(res[i]));
    CHECK(pos < 1e-12 && vel < 1e-12);
    CHECK(fabs(u[0]) > 0.1); /* the crank rate given survived as a motion of the mechanism (projected) */
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lambda, NULL) == SD_OK);
    double worst = 0.0;
    for (int i = 0; i < 3; ++i) worst = fmax(worst, fabs(qdd_tree[i] - qdd[i]) / (1.0 + fabs(qdd[i])));
    /* the motion is that of tau_e on the independent speed; the multipliers are those of tau as given
     * (sd_embedded_fd_options.tau_tree), so they equal the tree-augmented solve's with tau */
    const mj_value *emb = mj_get(j, "embedding");
    const char *ind = string_at(emb ? mj_get(emb, "speeds") : NULL, 0);
    double tau_eq[3] = {0.0, 0.0, 0.0}, qdd_eq[3];
    int found = 0;
    for (int i = 0; i < 3; ++i) {
        char label[64];
        sd_speed_label(m, i, label, sizeof label);
        if (strcmp(label, ind) == 0) tau_eq[i] = taue[0], found = 1;
    }
    CHECK(found);
    double lambda_eq[5];
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau_eq, NULL, qdd_eq, lambda_eq, NULL) == SD_OK);
    for (int i = 0; i < 3; ++i) worst = fmax(worst, fabs(qdd_eq[i] - qdd[i]) / (1.0 + fabs(qdd[i])));
    const mj_value *loops = mj_get(j, "loops"), *cons = loops ? mj_get(loops, "constraints") : NULL;
    const mj_value *pivot = cons ? mj_get(cons, "rocker_pivot") : NULL, *lam = pivot ? mj_get(pivot, "lambda") : NULL;
    CHECK(lam && lam->type == MJ_ARRAY && lam->n == 5);
    double worst_l = 0.0;
    for (int i = 0; lam && i < 5 && i < lam->n; ++i)
        worst_l = fmax(worst_l, fabs(lam->items[i].number - lambda[i]) / (1.0 + fabs(lambda[i])));
    printf("eval --embed all vs sd_closed_loop_forward_dynamics at its state: qdd %.3g, lambda %.3g; residuals %.3g %.3g;"
           " ID - tau_e %.3g, M qdd + C - tau_e %.3g\n",
           worst, worst_l, pos, vel, fabs(tid[0] - taue[0]), fabs(M[0] * qdde[0] + c[0] - taue[0]));
    CHECK(worst < 1e-10);
    CHECK(worst_l < 1e-9);
    CHECK(fabs(tid[0] - taue[0]) < 1e-10 * (1.0 + fabs(taue[0])));
    CHECK(fabs(M[0] * qdde[0] + c[0] - taue[0]) < 1e-10 * (1.0 + fabs(taue[0])));
    sd_data_free(d);
    mj_free(j);
    const char *t[] = {"eval", model_path, "--embed", "all", NULL};
    CHECK(run(t) == 0);
    CHECK(out_has(out_path, "forward dynamics qdd_e (embedded speeds)"));
    CHECK(out_has(out_path, "rocker_pivot (revolute, 5 rows, embedded) lambda"));
}

static void test_simulate(const sd_model *m)
{
    const char *a[] = {"simulate", model_path, "--embed", "all", "--duration", "2", "--u0", "crank_joint=3",
                       "--output", csv_path, NULL};
    CHECK(run(a) == 0);
    CHECK(out_has(out_path, "embedded loops   1 of 1 constraint in 1 aggregate"));
    CHECK(out_has(out_path, "0 projections; embedded loops solved by Newton"));
    char *text = cli_read_all(csv_path);
    CHECK(text != NULL);
    if (!text) return;
    sd_data *d = sd_data_new(m);
    double pos = 0.0, vel = 0.0;
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == 't' || line[0] == '#') continue; /* the header */
        double v[7], res[10];
        char *p = line;
        for (int i = 0; i < 7; ++i) {
            v[i] = strtod(p, &p);
            if (*p == ',') ++p;
        }
        if (sd_constraint_residuals(m, d, v + 1, v + 4, res, res + 5) != SD_OK) break;
        for (int i = 0; i < 5; ++i) {
            pos = fmax(pos, fabs(res[i]));
            vel = fmax(vel, fabs(res[5 + i]));
        }
        ++lines;
    }
    printf("simulate --embed all, 2 s: %d CSV lines, closure residual from the CSV: position %.3g, velocity %.3g\n",
           lines, pos, vel);
    CHECK(lines == 2001);
    CHECK(pos < 1e-12 && vel < 1e-12);
    free(text);
    sd_data_free(d);
}

/* flexible_four_bar.urdf (its coupler a beam inside the loop) with --embed all: eval prints the
 * embedded system (the coupler's modal speeds among the independent ones), simulate keeps the loop
 * closed by Newton, never projected. */
static void test_flexible(const char *models)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/flexible_four_bar.urdf", models);
    const char *e[] = {"eval", path, "--embed", "all", NULL};
    CHECK(run(e) == 0);
    CHECK(out_has(out_path, "independent speeds (3 of 5): coupler_joint, coupler.eta1, coupler.eta2"));
    CHECK(out_has(out_path, "mass matrix M_e = N^T M N"));
    CHECK(out_has(out_path, "inverse dynamics tau_e"));
    const char *s[] = {"simulate", path, "--embed", "all", "--duration", "0.5", "--dt", "0.0005", "--u0", "crank_joint=3", NULL};
    CHECK(run(s) == 0);
    CHECK(out_has(out_path, "3 integrated speeds of 5 (coupler_joint, coupler.eta1, coupler.eta2)"));
    CHECK(out_has(out_path, "0 projections; embedded loops solved by Newton"));
}

static void test_bad_names(void)
{
    const char *cmds[] = {"info", "eval", "simulate", "bench"};
    for (int i = 0; i < 4; ++i) {
        const char *a[] = {cmds[i], model_path, "--embed", "rocker_pivot,no_such_loop", "--duration", "0.01", NULL};
        if (strcmp(cmds[i], "simulate") != 0) a[4] = NULL;
        CHECK(run(a) == 1);
        CHECK(out_has(err_path, "no_such_loop"));
        const char *b[] = {cmds[i], model_path, "--embed", "all", "--independent", "no_such_joint", NULL};
        CHECK(run(b) == 1);
        CHECK(out_has(err_path, "no_such_joint"));
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_cli_embed SOADYN MODELS\n");
        return 2;
    }
    soadyn_path = argv[1];
    snprintf(model_path, sizeof model_path, "%s/four_bar.urdf", argv[2]);
    snprintf(dir, sizeof dir, "/tmp/soadyn_cli_embed_XXXXXX");
    if (!mkdtemp(dir)) return 2;
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    snprintf(csv_path, sizeof csv_path, "%s/run.csv", dir);
    sd_model *m = NULL;
    sd_error err;
    if (sd_urdf_load_file(model_path, NULL, &m, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    test_info();
    test_eval(m);
    test_simulate(m);
    test_bad_names();
    test_flexible(argv[2]);
    sd_model_free(m);
    remove(out_path);
    remove(err_path);
    remove(csv_path);
    rmdir(dir);
    return test_summary("test_cli_embed");
}
