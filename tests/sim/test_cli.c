/*
 * tests/sim/test_cli.c — the `soadyn` program, run as a child process (its path is argv[1]; argv[2]
 * is an LSan suppression file for the plot run under ASan):
 *   - SIGTERM, SIGINT and SIGHUP during `simulate --output` leave a CSV whose data lines all have the
 *     header's column count and whose last line is the truncated marker; exit status 143 / 130 /
 *     129; while running, and after SIGKILL, only FILE.csv.partial exists; SIGUSR1 prints the time
 *     reached and the run goes on; an interrupted run's plot and page say "truncated at t = ...";
 *   - `eval --json` prints valid JSON whose mass matrix and qdd equal the C API's to 1e-12;
 *   - usage errors exit 1 (also an option or a NAME=VALUE entry given twice), bad models exit 2,
 *     --help exits 0; --plot writes PNG and SVG files;
 *     every non-zero exit comes with a message on stderr;
 *   - output lost is a failure: stdout on /dev/full or a pipe closed (SIGPIPE ignored or not) makes
 *     every command exit 3 naming the reason; a CSV or plot cut short by a file size limit is removed
 *     (an older file of that name is left as it was), exit 3;
 *   - a 100 000-link chain: `info` writes a few lines (not gigabytes), `bench` shows the dense rows
 *     as "-" and exits 0, `eval` answers;
 *   - simulate refuses --dt longer than --duration, --duration 0 or negative, --every 0; a run of
 *     too many steps, a --plot or --html that cannot be created, before any file is touched;
 *   - the progress line appears on a terminal (a pseudo-terminal here) and not on a file;
 *   - joint names of 300 characters that differ only at the end stay whole and distinct in
 *     `eval --json`, the CSV header and NAME=VALUE lists.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt and friends, with POSIX 2008 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <soadyn/config.h> /* SOADYN_HAS_VIEWER */
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

/* How a child runs, beyond stdout and stderr into files. */
typedef struct child_setup {
    int out_fd, err_fd;    /* >= 0: this descriptor as stdout / stderr instead of the file */
    long file_size_limit;  /* > 0: RLIMIT_FSIZE in bytes, SIGXFSZ ignored (writes fail with EFBIG) */
    int ignore_sigpipe;    /* a write to a closed pipe fails with EPIPE instead of killing */
} child_setup;

static const child_setup plain_child = {-1, -1, 0, 0};

/* Start args[0] with args (NULL-terminated); stdout and stderr into files unless `setup` says. */
static pid_t spawn_with(char *const *args, const char *out_path, const char *err_path, const child_setup *setup)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = setup->out_fd >= 0 ? setup->out_fd : open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = setup->err_fd >= 0 ? setup->err_fd : open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0) _exit(99);
        dup2(fo, STDOUT_FILENO);
        dup2(fe, STDERR_FILENO);
        if (setup->ignore_sigpipe) signal(SIGPIPE, SIG_IGN); /* kept across exec */
        if (setup->file_size_limit > 0) {
            struct rlimit rl = {(rlim_t)setup->file_size_limit, (rlim_t)setup->file_size_limit};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(97);
        }
        execv(args[0], args);
        _exit(98);
    }
    return pid;
}

static pid_t spawn(char *const *args, const char *out_path, const char *err_path)
{
    return spawn_with(args, out_path, err_path, &plain_child);
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

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Like wait_status, but a child still running after `seconds` is killed (status 1000 + SIGKILL):
 * a regression that hangs fails the test instead of stalling it. */
static int wait_status_within(pid_t pid, double seconds)
{
    const double t0 = now_s();
    int status;
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
        if (r < 0 && errno != EINTR) return -1;
        if (now_s() - t0 > seconds) {
            fprintf(stderr, "  child still running after %.0f s: killed\n", seconds);
            kill(pid, SIGKILL);
            return wait_status(pid);
        }
        sleep_ms(20);
    }
}

static char *read_all(const char *path);
static int contains(const char *path, const char *text);

/* Every failure must say why: a non-zero status with an empty stderr is a defect of its own. */
static int check_message_with_failure(int status, const char *err_path)
{
    if (status != 0) {
        char *e = read_all(err_path);
        if (!(e && e[0] != '\0')) fprintf(stderr, "  exit status %d with nothing on stderr\n", status);
        CHECK(e && e[0] != '\0');
        free(e);
    }
    return status;
}

/* Run soadyn with up to 7 arguments; returns its status. */
static int run(const char *out, const char *err, const char *a1, const char *a2, const char *a3, const char *a4,
               const char *a5, const char *a6, const char *a7)
{
    const char *args[] = {soadyn_path, a1, a2, a3, a4, a5, a6, a7, NULL};
    char out_path[512], err_path[512];
    path_in_dir(out_path, sizeof(out_path), out ? out : "stdout.txt");
    path_in_dir(err_path, sizeof(err_path), err ? err : "stderr.txt");
    return check_message_with_failure(wait_status_within(spawn((char *const *)args, out_path, err_path), 300.0),
                                      err_path);
}

/* Run soadyn with args (NULL-terminated, without the program) under `setup`, stderr into
 * dir/err_name; returns its status. */
static int run_with(const char *const *args, const child_setup *setup, const char *err_name)
{
    const char *argv[16] = {soadyn_path};
    int n = 1;
    for (; args[n - 1] && n < 15; ++n) argv[n] = args[n - 1];
    argv[n] = NULL;
    char out_path[512], err_path[512];
    path_in_dir(out_path, sizeof(out_path), "stdout.txt");
    path_in_dir(err_path, sizeof(err_path), err_name);
    return check_message_with_failure(
        wait_status_within(spawn_with((char *const *)argv, out_path, err_path, setup), 300.0), err_path);
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

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
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

/* A long run writing run.csv (and the outputs `extra` asks for: up to 4 arguments, NULL-terminated),
 * sent `sig` once it has written some lines, then `then` (0: none) 300 ms later. While it runs, only
 * run.csv.partial exists: a run.csv is always complete (or marked truncated). */
static int interrupted_run_with(int sig, int then, const char *csv, const char *err, const char *const *extra)
{
    char model[512], out[512], partial[600];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(out, sizeof(out), "sim_out.txt");
    snprintf(partial, sizeof(partial), "%s.partial", csv);
    remove(csv);
    remove(partial);
    const char *args[16] = {soadyn_path, "simulate", model, "--duration", "1e6", "--q0", "1,0.5", "--output", csv};
    for (int i = 0; extra && extra[i] && i < 4; ++i) args[9 + i] = extra[i];
    pid_t pid = spawn((char *const *)args, out, err);
    for (int i = 0; i < 200 && count_lines(partial) < 2; ++i) sleep_ms(50); /* running and writing */
    sleep_ms(200);
    CHECK(count_lines(partial) >= 2);
    CHECK(!file_exists(csv));
    kill(pid, sig);
    if (then) {
        sleep_ms(300);
        kill(pid, then);
    }
    return wait_status_within(pid, 60.0);
}

static int interrupted_run(int sig, const char *csv, const char *err)
{
    return interrupted_run_with(sig, 0, csv, err, NULL);
}

static void check_interrupt(int sig, const char *signame, int expected_status)
{
    char csv[512], err[512];
    path_in_dir(csv, sizeof(csv), "run.csv");
    path_in_dir(err, sizeof(err), "sim_err.txt");
    const int status = interrupted_run(sig, csv, err);
    printf("  %s: exit status %d\n", signame, status);
    CHECK(status == expected_status);
    check_truncated_csv(csv, signame);
    char *e = read_all(err);
    CHECK(e && strstr(e, "interrupted") != NULL);
    free(e);
}

/* SIGUSR1 asks for the time reached and the run goes on (it used to kill it, leaving a .partial and
 * no word); SIGINT then stops it as usual. The plot and the page of the interrupted run carry the
 * mark the CSV's last line carries, in their titles. */
static void check_report_and_marks(void)
{
    char csv[512], err[512], svg[512], html[512];
    path_in_dir(csv, sizeof(csv), "report.csv");
    path_in_dir(err, sizeof(err), "report_err.txt");
    path_in_dir(svg, sizeof(svg), "report.svg");
    path_in_dir(html, sizeof(html), "report.html");
    const char *extra[] = {"--plot", svg, SOADYN_HAS_VIEWER ? "--html" : NULL, html, NULL};
    const int status = interrupted_run_with(SIGUSR1, SIGINT, csv, err, extra);
    printf("  SIGUSR1 then SIGINT: exit %d\n", status);
    CHECK(status == 130);
    check_truncated_csv(csv, "SIGINT");
    CHECK(contains(err, "(SIGUSR1)"));
    CHECK(contains(svg, "</svg>")); /* whole; its title's glyphs are counted in test_output_marks */
    if (SOADYN_HAS_VIEWER) CHECK(contains(html, "truncated at t = ") && contains(html, "interrupted by SIGINT"));
}

/* Killed outright, the run cannot finish its file: what is left must not carry the CSV's name. */
static void check_killed(void)
{
    char csv[512], err[512], partial[600];
    path_in_dir(csv, sizeof(csv), "killed.csv");
    path_in_dir(err, sizeof(err), "sim_err.txt");
    snprintf(partial, sizeof(partial), "%s.partial", csv);
    const int status = interrupted_run(SIGKILL, csv, err);
    printf("  SIGKILL: exit status %d, %s left, %s\n", status, file_exists(partial) ? "killed.csv.partial" : "nothing",
           file_exists(csv) ? "killed.csv exists" : "no killed.csv");
    CHECK(status == 1000 + SIGKILL);
    CHECK(!file_exists(csv));
    CHECK(file_exists(partial));
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

/* ---------------------------------------------------------------- output lost */

static int contains(const char *path, const char *text)
{
    char *s = read_all(path);
    const int found = s && strstr(s, text) != NULL;
    free(s);
    return found;
}

/* stdout on /dev/full, or a pipe whose reader is gone (SIGPIPE ignored, so the write fails with
 * EPIPE): every command must exit 3 and name the reason, never exit 0 with its output lost. */
static void check_lost_output(void)
{
    char model[512], err_path[512];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(err_path, sizeof(err_path), "lost_err.txt");
    const char *commands[][7] = {{"info", model, NULL},
                                 {"eval", model, NULL},
                                 {"eval", model, "--json", NULL},
                                 {"bench", model, "--repeats", "1", NULL},
                                 {"simulate", model, "--duration", "0.01", NULL},
                                 {"info", "--help", NULL},
                                 {"--version", NULL},
                                 {"--help", NULL}};
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); ++i) {
        child_setup full = plain_child;
        full.out_fd = open("/dev/full", O_WRONLY);
        CHECK(full.out_fd >= 0);
        const int status_full = run_with(commands[i], &full, "lost_err.txt");
        close(full.out_fd);
        const int said_full = contains(err_path, strerror(ENOSPC)) && contains(err_path, "standard output");

        int fds[2];
        CHECK(pipe(fds) == 0);
        close(fds[0]); /* nobody will read */
        child_setup closed = plain_child;
        closed.out_fd = fds[1];
        closed.ignore_sigpipe = 1;
        const int status_pipe = run_with(commands[i], &closed, "lost_err.txt");
        close(fds[1]);
        const int said_pipe = contains(err_path, strerror(EPIPE));
        /* the same pipe with SIGPIPE in its default action (a shell's): the program ignores it itself */
        CHECK(pipe(fds) == 0);
        close(fds[0]);
        closed.out_fd = fds[1];
        closed.ignore_sigpipe = 0;
        const int status_sigpipe = run_with(commands[i], &closed, "lost_err.txt");
        close(fds[1]);
        const int said_sigpipe = contains(err_path, strerror(EPIPE));
        printf("  %s %s: /dev/full -> %d%s, closed pipe -> %d%s, and with SIGPIPE default -> %d%s\n", commands[i][0],
               commands[i][1] && commands[i][1] != model ? commands[i][1] : "", status_full,
               said_full ? " (says why)" : "", status_pipe, said_pipe ? " (says why)" : "", status_sigpipe,
               said_sigpipe ? " (says why)" : "");
        CHECK(status_full == 3 && said_full);
        CHECK(status_pipe == 3 && said_pipe);
        CHECK(status_sigpipe == 3 && said_sigpipe);
    }
}

/* A CSV or a plot cut short (here by a file size limit: writes fail with EFBIG, as on a full disk)
 * is removed, and an older file of the same name is left as it was: no file of that name ends short. */
static void check_output_files_cut(void)
{
    char model[512], csv[512], partial[600], png[512], err_path[512];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(csv, sizeof(csv), "cut.csv");
    path_in_dir(png, sizeof(png), "cut.png");
    path_in_dir(err_path, sizeof(err_path), "cut_err.txt");
    write_file(csv, "an older file\n");
    child_setup limited = plain_child;
    limited.file_size_limit = 20000; /* the CSV of 10 s is some 600 kB */
    const char *sim_csv[] = {"simulate", model, "--duration", "10", "--output", csv, NULL};
    int status = run_with(sim_csv, &limited, "cut_err.txt");
    char *old = read_all(csv);
    snprintf(partial, sizeof(partial), "%s.partial", csv);
    printf("  CSV past the size limit: exit %d, cut.csv %s, .partial %s\n", status,
           old && strcmp(old, "an older file\n") == 0 ? "untouched" : "changed", file_exists(partial) ? "left" : "gone");
    CHECK(status == 3);
    CHECK(old && strcmp(old, "an older file\n") == 0);
    CHECK(!file_exists(partial));
    CHECK(contains(err_path, "cut.csv") && contains(err_path, strerror(EFBIG)));
    free(old);

    limited.file_size_limit = 4000; /* a 1200 x 900 PNG is tens of kB */
    remove(png);
    const char *sim_png[] = {"simulate", model, "--duration", "1", "--plot", png, NULL};
    status = run_with(sim_png, &limited, "cut_err.txt");
    snprintf(partial, sizeof(partial), "%s.partial", png);
    printf("  plot past the size limit: exit %d, cut.png %s\n", status, file_exists(png) ? "exists" : "absent");
    CHECK(status == 3);
    CHECK(!file_exists(png));
    CHECK(!file_exists(partial));
    CHECK(contains(err_path, "cut.png"));
}

/* ---------------------------------------------------------------- long chains */

static void write_chain_urdf(const char *path, int n)
{
    FILE *fp = fopen(path, "w");
    if (!fp) { perror(path); exit(1); }
    fputs("<?xml version=\"1.0\"?>\n<robot name=\"chain\">\n<link name=\"world\"/>\n", fp);
    for (int i = 1; i <= n; ++i) {
        fprintf(fp, "<joint name=\"j%d\" type=\"continuous\"><parent link=\"", i);
        if (i == 1) fputs("world", fp);
        else fprintf(fp, "l%d", i - 1);
        fprintf(fp, "\"/><child link=\"l%d\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/></joint>\n"
                    "<link name=\"l%d\"><inertial><origin xyz=\"0 0 0.05\"/><mass value=\"1\"/><inertia ixx=\"0.01\" "
                    "ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n",
                i, i);
    }
    fputs("</robot>\n", fp);
    fclose(fp);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A 100 000-link chain: info is a few lines (indenting every level was 10 GB), bench runs the O(N)
 * algorithms and shows the dense ones as "-" with a note (it exited 3 silently), eval answers. */
static void check_long_chain(void)
{
    char chain[512], out_path[512], err_path[512];
    path_in_dir(chain, sizeof(chain), "chain.urdf");
    path_in_dir(out_path, sizeof(out_path), "stdout.txt");
    path_in_dir(err_path, sizeof(err_path), "chain_err.txt");
    write_chain_urdf(chain, 100000);
    child_setup limited = plain_child;
    limited.file_size_limit = 4L << 20; /* a runaway info fails here rather than filling the disk */
    const char *info[] = {"info", chain, NULL};
    double t0 = now_s();
    int status = run_with(info, &limited, "chain_err.txt");
    const long info_bytes = file_size(out_path);
    printf("  info, 100 000-link chain: exit %d, %ld bytes, %.1f s\n", status, info_bytes, now_s() - t0);
    CHECK(status == 0);
    CHECK(info_bytes > 0 && info_bytes < 4096);
    CHECK(contains(out_path, "- l3 .. l99998  (99996 bodies in a chain"));
    CHECK(contains(out_path, "- l100000  [continuous j100000, 1 dof, 1 kg]  (depth 100000)") ||
          contains(out_path, "- l100000  [revolute j100000, 1 dof, 1 kg]  (depth 100000)"));
    CHECK(contains(out_path, "10000000000 structurally nonzero entries"));

    const char *bench[] = {"bench", chain, "--repeats", "1", NULL};
    t0 = now_s();
    status = run_with(bench, &limited, "chain_err.txt");
    printf("  bench, 100 000-link chain: exit %d, %.1f s\n", status, now_s() - t0);
    CHECK(status == 0);
    CHECK(contains(out_path, "not run: needs a dense 100000 x 100000 matrix"));
    CHECK(contains(out_path, "forward dynamics (articulated body)"));
    CHECK(contains(out_path, "mass matrix determinant"));

    child_setup to_null = plain_child;
    to_null.out_fd = open("/dev/null", O_WRONLY);
    const char *eval[] = {"eval", chain, "--json", NULL};
    t0 = now_s();
    status = run_with(eval, &to_null, "chain_err.txt");
    close(to_null.out_fd);
    printf("  eval --json, 100 000-link chain: exit %d, %.1f s\n", status, now_s() - t0);
    CHECK(status == 0);
    remove(chain);
}

/* ---------------------------------------------------------------- simulate options */

/* Options under which a run would not do what was asked are refused with a message (exit 1): a
 * --dt longer than --duration silently simulated nothing (or one shortened step). */
static void check_simulate_options(void)
{
    char model[512], err_path[512], out_path[512];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(err_path, sizeof(err_path), "opt_err.txt");
    path_in_dir(out_path, sizeof(out_path), "opt_out.txt");
    const char *refused[][6] = {{"--dt", "2", NULL},
                                {"--duration", "1e-10", NULL},
                                {"--duration", "0", NULL},
                                {"--duration", "-1", NULL},
                                {"--duration", "nan", NULL},
                                {"--dt", "0", NULL},
                                {"--dt", "inf", NULL},
                                {"--every", "0", NULL},
                                {"--every", "-3", NULL},
                                {"--dt", "0.5", "--duration", "0.25", NULL},
                                {"--jacobian", "exact", NULL}};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); ++i) {
        const char *r[6];
        for (int j = 0; j < 6; ++j) r[j] = refused[i][j];
        const int status = run("opt_out.txt", "opt_err.txt", "simulate", model, r[0], r[1], r[2], r[3], NULL);
        const int named = contains(err_path, r[0]);
        printf("  simulate %s %s%s%s%s%s: exit %d%s\n", r[0], r[1], r[2] ? " " : "", r[2] ? r[2] : "",
               r[2] ? " " : "", r[2] ? r[3] : "", status, named ? ", names the option" : "");
        CHECK(status == 1 && named);
    }
    /* --jacobian: the Newton Jacobian of cvode-bdf and radau-iia, said in the summary; refused where no
     * Jacobian is used */
    const char *jacobians[][3] = {{"cvode-bdf", "analytic", "jacobian         analytic"},
                                  {"cvode-bdf", "dq", "jacobian         difference quotients"},
                                  {"radau-iia", "analytic", "jacobian         analytic"},
                                  {"radau-iia", "dq", "jacobian         difference quotients"}};
    int status = 0;
    for (int i = 0; i < 4; ++i) {
        const char *args[] = {"simulate", model, "--integrator", jacobians[i][0], "--jacobian", jacobians[i][1],
                              "--duration", "0.1", NULL};
        status = run_with(args, &plain_child, "opt_err.txt");
        path_in_dir(out_path, sizeof(out_path), "stdout.txt"); /* run_with's */
        CHECK(status == 0 && contains(out_path, jacobians[i][2]));
    }
    path_in_dir(out_path, sizeof(out_path), "opt_out.txt");
    status = run("opt_out.txt", "opt_err.txt", "simulate", model, "--jacobian", "analytic", NULL, NULL, NULL);
    printf("  simulate --jacobian analytic (with rk4): exit %d\n", status);
    CHECK(status == 1 && contains(err_path, "take a Jacobian"));
    /* a run sd_simulate would refuse at once (too many steps) is refused before the CSV is touched
     * (it used to replace keep.csv by a header and a truncated mark) */
    char keep[512], keep_partial[600], nowhere_png[512], nowhere_html[512];
    path_in_dir(keep, sizeof(keep), "keep.csv");
    snprintf(keep_partial, sizeof(keep_partial), "%s.partial", keep);
    path_in_dir(nowhere_png, sizeof(nowhere_png), "no_such_folder/plot.png");
    path_in_dir(nowhere_html, sizeof(nowhere_html), "no_such_folder/page.html");
    write_file(keep, "keep me\n");
    status = run("opt_out.txt", "opt_err.txt", "simulate", model, "--duration", "1e12", "--output", keep, NULL);
    char *kept = read_all(keep);
    printf("  simulate --duration 1e12 --output keep.csv: exit %d, keep.csv %s\n", status,
           kept && strcmp(kept, "keep me\n") == 0 ? "untouched" : "changed");
    CHECK(status == 1);
    CHECK(kept && strcmp(kept, "keep me\n") == 0);
    CHECK(!file_exists(keep_partial));
    CHECK(contains(err_path, "too many"));
    free(kept);
    /* a plot or a page that cannot be created is refused at the start, as the CSV is: before the
     * run (of 1e4 s here, which would take minutes) and before the CSV is touched */
    const char *unwritable[] = {nowhere_png, SOADYN_HAS_VIEWER ? nowhere_html : NULL};
    for (int i = 0; i < 2 && unwritable[i]; ++i) {
        const double t0 = now_s();
        const char *args[] = {"simulate", model, "--duration", "1e4", i == 0 ? "--plot" : "--html", unwritable[i],
                              "--output", keep, NULL};
        status = run_with(args, &plain_child, "opt_err.txt");
        kept = read_all(keep);
        printf("  simulate %s into a missing folder: exit %d after %.2f s, keep.csv %s\n", i == 0 ? "--plot" : "--html",
               status, now_s() - t0, kept && strcmp(kept, "keep me\n") == 0 ? "untouched" : "changed");
        CHECK(status == 3);
        CHECK(now_s() - t0 < 20.0);
        CHECK(contains(err_path, "no_such_folder") && contains(err_path, "cannot create"));
        CHECK(kept && strcmp(kept, "keep me\n") == 0);
        free(kept);
    }
    /* dt equal to the duration: one step of it */
    CHECK(run("opt_out.txt", "opt_err.txt", "simulate", model, "--dt", "0.5", "--duration", "0.5", NULL) == 0);
    CHECK(contains(out_path, "steps            1 ("));
}

/* ---------------------------------------------------------------- progress line */

/* A long run (1e6 s) that SIGINT stops `seconds` after it started integrating, stderr to err_fd
 * (or the file err_name). The run writes a CSV (every 10th sample: its first block of 4 KiB reaches
 * the file within milliseconds) so that its start can be seen: the seconds count from its first
 * samples, not from the spawn: starting up (loading the model, a sanitizer's runtime) can take
 * longer than they on a loaded machine, and a signal before the handlers are in place kills the
 * run instead of stopping it. */
static int run_for(double seconds, int err_fd, const char *err_name, int master_fd, char *tty_text, size_t tty_size)
{
    char model[512], out_path[512], err_path[512], csv[512], partial[600];
    path_in_dir(model, sizeof(model), "arm.urdf");
    path_in_dir(out_path, sizeof(out_path), "progress_out.txt");
    path_in_dir(err_path, sizeof(err_path), err_name ? err_name : "unused.txt");
    path_in_dir(csv, sizeof(csv), "progress.csv");
    snprintf(partial, sizeof(partial), "%s.partial", csv);
    remove(csv);
    remove(partial);
    const char *args[] = {soadyn_path, "simulate", model, "--duration", "1e6", "--output", csv, "--every", "10", NULL};
    child_setup setup = plain_child;
    setup.err_fd = err_fd;
    const pid_t pid = spawn_with((char *const *)args, out_path, err_path, &setup);
    size_t got = 0;
    double t0 = -1.0;
    const double spawned = now_s();
    int status = -1, sent = 0;
    for (;;) { /* read the terminal while the run goes on: a full terminal buffer would block it */
        if (master_fd >= 0 && got + 1 < tty_size) {
            const ssize_t n = read(master_fd, tty_text + got, tty_size - 1 - got);
            if (n > 0) got += (size_t)n;
        }
        if (t0 < 0.0 && (count_lines(partial) >= 2 || now_s() - spawned > 30.0)) t0 = now_s(); /* integrating */
        if (!sent && t0 >= 0.0 && now_s() - t0 > seconds) {
            kill(pid, SIGINT);
            sent = 1;
        }
        int st;
        const pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
            break;
        }
        if (now_s() - spawned > seconds + 90.0) {
            kill(pid, SIGKILL);
            status = wait_status(pid);
            break;
        }
        sleep_ms(10);
    }
    for (int i = 0; master_fd >= 0 && i < 50 && got + 1 < tty_size; ++i) { /* what is left */
        const ssize_t n = read(master_fd, tty_text + got, tty_size - 1 - got);
        if (n > 0) got += (size_t)n;
        else sleep_ms(10);
    }
    if (tty_text) tty_text[got] = '\0';
    return status;
}

/* On a terminal a run of more than a second shows "t = ... of ... s (..%), real-time factor ..., ETA ..."
 * redrawn with '\r'; on a file nothing at all. */
static void check_progress(void)
{
    char err_path[512];
    path_in_dir(err_path, sizeof(err_path), "progress_err.txt");
    int status = run_for(1.6, -1, "progress_err.txt", -1, NULL, 0);
    char *e = read_all(err_path);
    const int quiet = e && !strchr(e, '\r') && !strstr(e, "ETA") && !strstr(e, "real-time factor");
    printf("  progress, stderr a file: exit %d, %s\n", status, quiet ? "no progress line" : "a progress line");
    CHECK(status == 130);
    CHECK(quiet);
    free(e);

    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        printf("  progress on a terminal: no pseudo-terminal here (%s): not checked\n", strerror(errno));
        if (master >= 0) close(master);
        return;
    }
    const int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    CHECK(slave >= 0);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    static char tty[1 << 16];
    status = run_for(2.0, slave, NULL, master, tty, sizeof(tty));
    close(slave);
    close(master);
    int redraws = 0;
    for (const char *c = tty; *c; ++c) redraws += *c == '\r' && c[1] == 't';
    const int shown = strstr(tty, "\rt = ") && strstr(tty, "real-time factor") && strstr(tty, "ETA");
    printf("  progress on a pseudo-terminal: exit %d, %d redraws%s\n", status, redraws, shown ? "" : " (no line)");
    CHECK(status == 130);
    CHECK(shown);
    CHECK(redraws >= 2 && redraws <= 20); /* about 1 s of redraws, ten a second at most, and the last one */
}

/* ---------------------------------------------------------------- long names */

/* Two joints whose 300-character names differ only in the last one: JSON keys, NAME=VALUE lists
 * and CSV columns keep them whole and apart (they were cut at 127 characters, making two keys one). */
static void check_long_names(void)
{
    char name[2][301], model[512], json_path[512], csv[512];
    for (int j = 0; j < 2; ++j) {
        memset(name[j], 'a', 299);
        name[j][299] = (char)('1' + j);
        name[j][300] = '\0';
    }
    path_in_dir(model, sizeof(model), "long_names.urdf");
    path_in_dir(json_path, sizeof(json_path), "long.json");
    path_in_dir(csv, sizeof(csv), "long.csv");
    char *urdf = malloc(sizeof(model_urdf) + 1000);
    char *p = strstr(model_urdf, "shoulder"), *q = strstr(model_urdf, "elbow");
    CHECK(urdf && p && q);
    if (!urdf || !p || !q) return;
    snprintf(urdf, sizeof(model_urdf) + 1000, "%.*s%s%.*s%s%s", (int)(p - model_urdf), model_urdf, name[0],
             (int)(q - p - 8), p + 8, name[1], q + 5);
    write_file(model, urdf);
    free(urdf);
    char values[700];
    snprintf(values, sizeof(values), "%s=0.3,%s=-1.2", name[0], name[1]);
    CHECK(run("long.json", NULL, "eval", model, "--q", values, "--json", NULL, NULL) == 0);
    char *text = read_all(json_path);
    mj_value *root = text ? mj_parse(text) : NULL;
    CHECK(root != NULL);
    const mj_value *speeds = mj_get(root, "speeds"), *qv = mj_get(root, "q"), *mm = mj_get(root, "mass_matrix");
    CHECK(speeds && speeds->type == MJ_ARRAY && speeds->n == 2);
    if (speeds && speeds->n == 2) {
        CHECK(strcmp(speeds->items[0].string, name[0]) == 0 && strcmp(speeds->items[1].string, name[1]) == 0);
    }
    const mj_value *q0 = mj_get(qv, name[0]), *q1 = mj_get(qv, name[1]);
    CHECK(qv && qv->n == 2 && q0 && q1);
    CHECK(q0 && q0->type == MJ_NUMBER && q0->number == 0.3);
    CHECK(q1 && q1->type == MJ_NUMBER && q1->number == -1.2);
    CHECK(mm && mm->n == 2 && mj_get(mm, name[0]) && mj_get(mm, name[1]));
    printf("  300-character joint names: JSON keys %s\n", q0 && q1 && qv->n == 2 ? "whole and distinct" : "lost");
    mj_free(root);
    free(text);
    CHECK(run(NULL, NULL, "simulate", model, "--duration", "0.01", "--output", csv, NULL) == 0);
    char header[1400];
    snprintf(header, sizeof(header), "time,%s,%s,u.%s,u.%s,kinetic", name[0], name[1], name[0], name[1]);
    char *c = read_all(csv);
    CHECK(c && strncmp(c, header, strlen(header)) == 0);
    free(c);
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
    /* the same entry twice, the same option twice: refused, not the last one taken silently */
    CHECK(run(NULL, "err.txt", "eval", model, "--q", "shoulder=1,elbow=0,shoulder=2", NULL, NULL, NULL) == 1);
    CHECK(contains(err_path, "'shoulder' is given twice"));
    CHECK(run(NULL, "err.txt", "eval", model, "--q", "0,1", "--q", "2,3", NULL) == 1);
    CHECK(contains(err_path, "option --q given twice ('0,1', then '2,3')"));
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
    check_interrupt(SIGHUP, "SIGHUP", 129);
    check_report_and_marks();
    check_killed();
    check_eval_json();
    check_exit_codes();
    check_lost_output();
    check_output_files_cut();
    check_simulate_options();
    check_progress();
    check_long_names();
    check_long_chain();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("test_cli");
}
