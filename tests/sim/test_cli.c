/*
 * tests/sim/test_cli.c — the `soadyn` program, run as a child process (its path is argv[1]; argv[2]
 * is an LSan suppression file for the plot run under ASan):
 *   - SIGTERM and SIGINT during `simulate --output` leave a CSV whose data lines all have the
 *     header's column count and whose last line is the truncated marker; exit status 143 / 130;
 *   - `eval --json` prints valid JSON whose mass matrix and qdd equal the C API's to 1e-12;
 *   - usage errors exit 1, bad models exit 2, --help exits 0; --plot writes PNG and SVG files.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "mini_json.h"
#include "test_util.h"

static const char *soadyn_path;
static char dir[256];

static const char model_urdf[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"cli_test_arm\">\n"
    "  <link name=\"world\"/>\n"
    "  <joint name=\"shoulder\" type=\"revolute\"><parent link=\"world\"/><child link=\"upper\"/>\n"
    "    <origin xyz=\"0 0 0\" rpy=\"0 0 0\"/><axis xyz=\"0 1 0\"/>\n"
    "    <limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"5\"/></joint>\n"
    "  <link name=\"upper\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"1.5\"/>\n"
    "    <inertia ixx=\"0.02\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n"
    "  <joint name=\"elbow\" type=\"continuous\"><parent link=\"upper\"/><child link=\"lower\"/>\n"
    "    <origin xyz=\"0 0 -1\" rpy=\"0 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n"
    "  <link name=\"lower\"><inertial><origin xyz=\"0 0 -0.4\"/><mass value=\"0.8\"/>\n"
    "    <inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.005\"/></inertial></link>\n"
    "</robot>\n";

static void path_in_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp) { perror(path); exit(1); }
    fputs(text, fp);
    fclose(fp);
}

/* Start soadyn with args (NULL-terminated after argv[0]); stdout and stderr into files. */
static pid_t spawn(char *const *args, const char *out_path, const char *err_path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0) _exit(99);
        dup2(fo, STDOUT_FILENO);
        dup2(fe, STDERR_FILENO);
        execv(args[0], args);
        _exit(98);
    }
    return pid;
}

/* Exit status, or 1000 + signal if the child was killed. */
static int wait_status(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 1000 + WTERMSIG(status);
}

/* Run soadyn with up to 12 arguments; returns its status. */
static int run(const char *out, const char *err, const char *a1, const char *a2, const char *a3, const char *a4,
               const char *a5, const char *a6, const char *a7)
{
    const char *args[] = {soadyn_path, a1, a2, a3, a4, a5, a6, a7, NULL};
    char out_path[512], err_path[512];
    path_in_dir(out_path, sizeof(out_path), out ? out : "stdout.txt");
    path_in_dir(err_path, sizeof(err_path), err ? err : "stderr.txt");
    return wait_status(spawn((char *const *)args, out_path, err_path));
}

static char *read_all(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, fp);
    s[got] = '\0';
    fclose(fp);
    return s;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int count_lines(const char *path)
{
    char *s = read_all(path);
    int n = 0;
    for (char *c = s; c && *c; ++c) n += *c == '\n';
    free(s);
    return n;
}

/* Every data line has the header's column count of numbers; the last line is the marker. */
static void check_truncated_csv(const char *path, const char *signame)
{
    char *s = read_all(path);
    CHECK(s != NULL);
    if (!s) return;
    int header_cols = 0, data_lines = 0, bad_lines = 0, marker_last = 0;
    char *save = NULL;
    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int cols = 1;
        for (char *c = line; *c; ++c) cols += *c == ',';
        if (header_cols == 0) {
            header_cols = cols;
            CHECK(strncmp(line, "time,shoulder,elbow,u.shoulder,u.elbow,kinetic,potential,total", 62) == 0);
        } else if (line[0] == '#') {
            marker_last = strncmp(line, "# truncated at t=", 17) == 0 && strstr(line, signame) != NULL;
            CHECK(save == NULL || *save == '\0'); /* nothing after the marker */
        } else {
            ++data_lines;
            char *end = line;
            for (int k = 0; k < cols; ++k) {
                strtod(end, &end);
                if (*end == ',') ++end;
            }
            if (cols != header_cols || *end != '\0') ++bad_lines;
            marker_last = 0;
        }
    }
    printf("  %s: %d data lines of %d columns, %d bad, truncated marker last: %s\n", signame, data_lines,
           header_cols, bad_lines, marker_last ? "yes" : "no");
    CHECK(header_cols == 8);
    CHECK(data_lines >= 2);
    CHECK(bad_lines == 0);
    CHECK(marker_last);
    free(s);
}

static void check_interrupt(int sig, const char *signame, int expected_status)
{
    char model[512], csv[512], out[512], err[512];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(csv, sizeof(csv), "run.csv");
    path_in_dir(out, sizeof(out), "sim_out.txt");
    path_in_dir(err, sizeof(err), "sim_err.txt");
    remove(csv);
    const char *args[] = {soadyn_path, "simulate", model, "--duration", "1e6", "--q0", "1,0.5", "--output", csv,
                          NULL};
    pid_t pid = spawn((char *const *)args, out, err);
    for (int i = 0; i < 200 && count_lines(csv) < 2; ++i) sleep_ms(50); /* running and writing */
    sleep_ms(200);
    kill(pid, sig);
    const int status = wait_status(pid);
    printf("  %s: exit status %d\n", signame, status);
    CHECK(status == expected_status);
    check_truncated_csv(csv, signame);
    char *e = read_all(err);
    CHECK(e && strstr(e, "interrupted") != NULL);
    free(e);
}

/* Numbers of a JSON object of label -> number, in the order of `labels`. */
static int json_vector(const mj_value *obj, const mj_value *labels, double *out)
{
    if (!obj || !labels || labels->type != MJ_ARRAY) return 0;
    for (int i = 0; i < labels->n; ++i) {
        const mj_value *v = mj_get(obj, labels->items[i].string);
        if (!v || v->type != MJ_NUMBER) return 0;
        out[i] = v->number;
    }
    return 1;
}

static void check_eval_json(void)
{
    char model_path[512], out_path[512];
    path_in_dir(model_path, sizeof(model_path), "arm.urdf");
    path_in_dir(out_path, sizeof(out_path), "eval.json");
    const int status = run("eval.json", NULL, "eval", model_path, "--q", "shoulder=0.3,elbow=-1.2", "--u",
                           "0.5,-0.25", "--json");
    CHECK(status == 0);
    /* the C API at the same state */
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_file(model_path, NULL, &m, &err) == SD_OK);
    if (!m) return;
    double q[2] = {0.3, -1.2}, u[2] = {0.5, -0.25}, tau[2] = {0, 0}, M[4], qdd[2];
    sd_data *d = sd_data_new(m);
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    char *text = read_all(out_path);
    mj_value *root = text ? mj_parse(text) : NULL;
    CHECK(root != NULL);
    const mj_value *speeds = mj_get(root, "speeds"), *mm = mj_get(root, "mass_matrix");
    CHECK(speeds && speeds->type == MJ_ARRAY && speeds->n == 2);
    double got_qdd[2] = {NAN, NAN};
    CHECK(json_vector(mj_get(root, "qdd"), speeds, got_qdd));
    CHECK_ARRAY_CLOSE(got_qdd, qdd, 2, 1e-12, "eval --json qdd vs sd_forward_dynamics");
    for (int i = 0; speeds && mm && i < 2; ++i) {
        const mj_value *row = mj_get(mm, speeds->items[i].string);
        CHECK(row && row->type == MJ_ARRAY && row->n == 2);
        for (int j = 0; row && j < row->n && j < 2; ++j) CHECK_CLOSE(row->items[j].number, M[2 * i + j], 1e-12);
    }
    const mj_value *forces = mj_get(root, "interbody_forces");
    CHECK(mj_get(forces, "upper") && mj_get(forces, "lower"));
    mj_free(root);
    free(text);
    /* an independent parser agrees that it is JSON, where python3 is installed */
    if (access("/usr/bin/python3", X_OK) == 0) {
        const char *py[] = {"/usr/bin/python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", out_path, NULL};
        char o[512], e[512];
        path_in_dir(o, sizeof(o), "py_out.txt");
        path_in_dir(e, sizeof(e), "py_err.txt");
        CHECK(wait_status(spawn((char *const *)py, o, e)) == 0);
    }
    sd_data_free(d);
    sd_model_free(m);
}

static void check_exit_codes(void)
{
    char model[512], broken[512], missing[512], plot_png[512], plot_svg[512];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(broken, sizeof(broken), "broken.urdf");
    path_in_dir(missing, sizeof(missing), "no_such_model.urdf");
    path_in_dir(plot_png, sizeof(plot_png), "plot.png");
    path_in_dir(plot_svg, sizeof(plot_svg), "plot.svg");
    write_file(broken, "<?xml version=\"1.0\"?>\n<robot name=\"b\">\n  <link name=\"a\">\n</robot>\n");
    CHECK(run(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == 1);
    CHECK(run(NULL, NULL, "frobnicate", model, NULL, NULL, NULL, NULL, NULL) == 1);
    CHECK(run(NULL, NULL, "simulate", NULL, NULL, NULL, NULL, NULL, NULL) == 1);
    CHECK(run(NULL, NULL, "eval", model, "--bogus", NULL, NULL, NULL, NULL) == 1);
    CHECK(run(NULL, NULL, "eval", model, "--q", "0.1", NULL, NULL, NULL) == 1); /* 1 value of 2 */
    CHECK(run(NULL, NULL, "simulate", model, "--integrator", "euler", NULL, NULL, NULL) == 1);
    CHECK(run(NULL, NULL, "simulate", model, "--dt", "-1", NULL, NULL, NULL) == 1);
    CHECK(run(NULL, "err.txt", "eval", model, "--q", "nosuch=1,elbow=2,other=3", NULL, NULL, NULL) == 1);
    char err_path[512];
    path_in_dir(err_path, sizeof(err_path), "err.txt");
    char *e = read_all(err_path);
    CHECK(e && strstr(e, "nosuch") && strstr(e, "other"));
    free(e);
    CHECK(run(NULL, NULL, "info", missing, NULL, NULL, NULL, NULL, NULL) == 2);
    CHECK(run(NULL, "err.txt", "eval", broken, "--json", NULL, NULL, NULL, NULL) == 2);
    e = read_all(err_path);
    CHECK(e && strstr(e, "broken.urdf")); /* the loader's message, naming the file */
    free(e);
    CHECK(run(NULL, NULL, "simulate", broken, NULL, NULL, NULL, NULL, NULL) == 2);
    const char *cmds[] = {"info", "eval", "simulate", "bench"};
    for (int i = 0; i < 4; ++i) CHECK(run(NULL, NULL, cmds[i], "--help", NULL, NULL, NULL, NULL, NULL) == 0);
    CHECK(run(NULL, NULL, "--help", NULL, NULL, NULL, NULL, NULL, NULL) == 0);
    CHECK(run(NULL, NULL, "info", model, NULL, NULL, NULL, NULL, NULL) == 0);
    CHECK(run(NULL, NULL, "simulate", model, "--duration", "0.5", "--plot", plot_png, NULL) == 0);
    CHECK(run(NULL, NULL, "simulate", model, "--integrator", "cvode-adams", "--plot", plot_svg, NULL) == 0);
    char *png = read_all(plot_png), *svg = read_all(plot_svg);
    CHECK(png && memcmp(png, "\x89PNG", 4) == 0);
    CHECK(svg && strstr(svg, "<svg") != NULL);
    free(png);
    free(svg);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cli PATH_TO_SOADYN [LSAN_SUPPRESSIONS]\n");
        return 77;
    }
    soadyn_path = argv[1];
    if (argc > 2) { /* PLplot's fonts are cached until exit by fontconfig: not our leak */
        char opt[600];
        snprintf(opt, sizeof(opt), "suppressions=%s:print_suppressions=0", argv[2]);
        setenv("LSAN_OPTIONS", opt, 1);
    }
    snprintf(dir, sizeof(dir), "/tmp/soadyn_test_cli_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char model[512];
    path_in_dir(model, sizeof(model), "arm.urdf");
    write_file(model, model_urdf);
    check_interrupt(SIGTERM, "SIGTERM", 143);
    check_interrupt(SIGINT, "SIGINT", 130);
    check_eval_json();
    check_exit_codes();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("test_cli");
}
