/*
 * tests/sim/test_cli_model_files.c — what the `soadyn` program (argv[1]) takes from a model file and
 * lets the command line replace, run as a child process on small files it writes, against the
 * library on the same files:
 *   - --gravity GX,GY,GZ on every command (info prints it; eval's qdd of a free body at rest is
 *     that gravity, to 1e-15; simulate, bench and view accept it), replacing the file's (URDF
 *     <soadyn:gravity>, MJCF <option gravity>); NaN, 1e300, two numbers are usage errors (exit 1)
 *     with a message naming --gravity;
 *   - simulate's dt: the MJCF file's <option timestep> when no --dt is given, --dt otherwise, the
 *     default without either, each named in the summary;
 *   - eval on a model with a mimic joint: --q LEADER=v holds the leader at v and solves the follower
 *     (v times the multiplier); --q naming both of a four-bar's driving joints at values no closed
 *     configuration has is assembled with every joint free, and says so.
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
static char dir[256], out_path[300], err_path[300], floater[300], pendulum[300], mimic[300];

static int run(const char *const *args) { return cli_run(soadyn_path, args, out_path, err_path); }

static int contains(const char *text, const char *what)
{
    const int found = text && strstr(text, what) != NULL;
    if (!found) fprintf(stderr, "output lacks \"%s\"\n", what);
    return found;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A free body, its gravity 0 from the file (soadyn's URDF extension). */
static const char floater_urdf[] =
    "<robot name='floater' xmlns:soadyn='https://soadyn.example/urdf'>\n"
    "  <soadyn:gravity xyz='0 0 0'/>\n"
    "  <link name='world'/>\n"
    "  <joint name='free' type='floating'><parent link='world'/><child link='body'/></joint>\n"
    "  <link name='body'><inertial><mass value='2'/>"
    "<inertia ixx='0.1' ixy='0' ixz='0' iyy='0.2' iyz='0' izz='0.3'/></inertial></link>\n"
    "</robot>\n";

/* A pendulum whose file asks for a 2.5 ms step and the Moon's gravity. */
static const char pendulum_mjcf[] =
    "<mujoco model='pendulum'>\n"
    "  <option timestep='0.0025' gravity='0 0 -1.62'/>\n"
    "  <worldbody><body name='bob' pos='0 0 1'><joint name='swing' axis='0 1 0'/>"
    "<geom type='sphere' size='0.1' pos='0.5 0 0'/></body></worldbody>\n"
    "</mujoco>\n";

/* A gripper: finger2 mimics finger1 with multiplier -1 (a coupling constraint). */
static const char mimic_urdf[] =
    "<robot name='gripper'>\n"
    "  <link name='palm'><inertial><mass value='1'/>"
    "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial></link>\n"
    "  <link name='left'><inertial><mass value='0.1'/>"
    "<inertia ixx='0.001' ixy='0' ixz='0' iyy='0.001' iyz='0' izz='0.001'/></inertial></link>\n"
    "  <link name='right'><inertial><mass value='0.1'/>"
    "<inertia ixx='0.001' ixy='0' ixz='0' iyy='0.001' iyz='0' izz='0.001'/></inertial></link>\n"
    "  <joint name='finger1' type='prismatic'><parent link='palm'/><child link='left'/><axis xyz='0 1 0'/>"
    "<limit lower='0' upper='0.04' effort='10' velocity='1'/></joint>\n"
    "  <joint name='finger2' type='prismatic'><parent link='palm'/><child link='right'/><axis xyz='0 1 0'/>"
    "<limit lower='-0.04' upper='0' effort='10' velocity='1'/><mimic joint='finger1' multiplier='-1'/></joint>\n"
    "</robot>\n";

/* The entries of eval's JSON vector `key` ({label: value}, in the order of "coordinates" or
 * "speeds"), at most max; how many. */
static int json_vector(const mj_value *root, const char *key, double *out, int max)
{
    const mj_value *obj = root ? mj_get(root, key) : NULL;
    if (!obj || obj->type != MJ_OBJECT) return 0;
    int n = 0;
    for (; n < obj->n && n < max; ++n) {
        if (obj->items[n].type != MJ_NUMBER) return 0;
        out[n] = obj->items[n].number;
    }
    return n;
}

static void check_gravity(void)
{
    char *out;
    /* the file's gravity, then --gravity in its place */
    const char *info[] = {"info", floater, NULL};
    CHECK(run(info) == 0);
    CHECK(contains(out = cli_read_all(out_path), "gravity:     0 0 0 m/s^2"));
    free(out);
    const char *info_g[] = {"info", floater, "--gravity", "0.5,-1,-3.7", NULL};
    CHECK(run(info_g) == 0);
    CHECK(contains(out = cli_read_all(out_path), "gravity:     0.5 -1 -3.7 m/s^2"));
    free(out);
    /* eval: a free body at rest falls with exactly the gravity given (world axes = body axes at the
     * neutral configuration; the speeds are angular then linear) */
    const char *eval_g[] = {"eval", floater, "--gravity=0.5,-1,-3.7", "--json", NULL};
    CHECK(run(eval_g) == 0);
    out = cli_read_all(out_path);
    mj_value *root = out ? mj_parse(out) : NULL;
    double v[6] = {1, 1, 1, 1, 1, 1};
    CHECK(json_vector(root, "qdd", v, 6) == 6);
    const double expected[6] = {0, 0, 0, 0.5, -1.0, -3.7};
    CHECK_ARRAY_CLOSE(v, expected, 6, 1e-15, "qdd of a free body at rest = --gravity");
    mj_free(root);
    free(out);
    /* simulate, bench, view take it too */
    const char *sim_g[] = {"simulate", pendulum, "--gravity", "0,0,-9.81", "--duration", "0.01", NULL};
    CHECK(run(sim_g) == 0);
    const char *bench_g[] = {"bench", pendulum, "--gravity", "0,0,-9.81", "--repeats", "1", NULL};
    CHECK(run(bench_g) == 0);
    char page[320];
    snprintf(page, sizeof page, "%s/page.html", dir);
    const char *view_g[] = {"view", pendulum, "--gravity", "0,0,0", "-o", page, NULL};
    const int view_rc = run(view_g);
    out = cli_read_all(err_path); /* a build without the viewer says so */
    CHECK(view_rc == 0 || (view_rc == 1 && contains(out, "not offered")));
    free(out);
    unlink(page);
    /* bad values: a usage error naming the option, on every command */
    static const char *const bad[] = {"nan,0,0", "1e300,0,0", "0,-9.81", "0,0,-9.81,1", "a,b,c"};
    static const char *const commands[] = {"info", "eval", "simulate", "bench"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        for (size_t c = 0; c < sizeof commands / sizeof commands[0]; ++c) {
            const char *args[] = {commands[c], pendulum, "--gravity", bad[i], NULL};
            CHECK(run(args) == 1);
            char *err = cli_read_all(err_path);
            CHECK(contains(err, "--gravity"));
            free(err);
        }
}

static void check_time_step(void)
{
    const char *file_dt[] = {"simulate", pendulum, "--duration", "0.01", NULL};
    CHECK(run(file_dt) == 0);
    char *out = cli_read_all(out_path);
    CHECK(contains(out, "dt = 0.0025 s (the model file's <option timestep>)"));
    CHECK(contains(out, "steps            4 "));
    free(out);
    const char *given_dt[] = {"simulate", pendulum, "--duration", "0.01", "--dt", "0.005", NULL};
    CHECK(run(given_dt) == 0);
    CHECK(contains(out = cli_read_all(out_path), "dt = 0.005 s (--dt)"));
    free(out);
    const char *default_dt[] = {"simulate", floater, "--duration", "0.01", NULL};
    CHECK(run(default_dt) == 0);
    CHECK(contains(out = cli_read_all(out_path), "dt = 0.001 s (the default)"));
    free(out);
    /* the file's step longer than the run: refused, naming where the step came from */
    const char *too_long[] = {"simulate", pendulum, "--duration", "0.001", NULL};
    CHECK(run(too_long) == 1);
    CHECK(contains(out = cli_read_all(err_path), "dt 0.0025 (the model file's <option timestep>)"));
    free(out);
}

/* The values of q from eval --json. */
static int eval_q(const char *const *args, double *q, int max, int *held)
{
    if (run(args) != 0) return 0;
    char *out = cli_read_all(out_path);
    mj_value *root = out ? mj_parse(out) : NULL;
    const mj_value *loops = root ? mj_get(root, "loops") : NULL;
    const mj_value *h = loops ? mj_get(loops, "held_named_joints") : NULL;
    const int n = json_vector(root, "q", q, max);
    *held = h != NULL && h->type == MJ_BOOL && h->number != 0.0;
    mj_free(root);
    free(out);
    return n;
}

static void check_mimic_hold(const char *models)
{
    double q[8];
    int held = 0;
    const char *named[] = {"eval", mimic, "--q", "finger1=0.02", "--json", NULL};
    CHECK(eval_q(named, q, 8, &held) == 2);
    printf("  mimic: --q finger1=0.02 gives finger1 %.17g, finger2 %.17g (held %d)\n", q[0], q[1], held);
    CHECK(q[0] == 0.02 && fabs(q[1] + 0.02) <= 1e-15 && held);
    /* the follower named: it is held, the leader solved */
    const char *follower[] = {"eval", mimic, "--q", "finger2=-0.03", "--json", NULL};
    CHECK(eval_q(follower, q, 8, &held) == 2);
    CHECK(q[1] == -0.03 && fabs(q[0] - 0.03) <= 1e-15 && held);
    /* a four-bar with both the crank and the rocker named at values no closed configuration has:
     * assembled with every joint free, and said */
    char four_bar[1100];
    snprintf(four_bar, sizeof four_bar, "%s/four_bar.urdf", models);
    const char *both[] = {"eval", four_bar, "--q", "crank_joint=0.3,rocker_joint=2", NULL};
    CHECK(run(both) == 0);
    char *out = cli_read_all(out_path);
    CHECK(contains(out, "the joints --q named could not be held"));
    free(out);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <soadyn program> <models folder>\n", argv[0]);
        return 2;
    }
    soadyn_path = argv[1];
    snprintf(dir, sizeof dir, "/tmp/soadyn_cli_files_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(out_path, sizeof out_path, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(floater, sizeof floater, "%s/floater.urdf", dir);
    snprintf(pendulum, sizeof pendulum, "%s/pendulum.xml", dir);
    snprintf(mimic, sizeof mimic, "%s/gripper.urdf", dir);
    write_file(floater, floater_urdf);
    write_file(pendulum, pendulum_mjcf);
    write_file(mimic, mimic_urdf);
    check_gravity();
    check_time_step();
    check_mimic_hold(argv[2]);
    const char *files[] = {floater, pendulum, mimic, out_path, err_path};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) unlink(files[i]);
    rmdir(dir);
    return test_summary("test_cli_model_files");
}
