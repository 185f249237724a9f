/*
 * tests/sim/test_cli_flex.c — the `soadyn` program (argv[1]) on the bundled flexible-body examples
 * (argv[2]: the models folder, models/spacecraft.urdf and models/flexible_arm.urdf), run as a child
 * process, against the library called here on the same files:
 *   - `info` lists the flexible bodies (modes, nodes, mass model, total mass with the nodes, the
 *     bodies riding on nodes) and each mode's frequency in Hz and rad/s = sd_model_flex_frequencies's
 *     (to the 6 digits printed), then the system modes;
 *   - a boom welded to a wall with a 2 kg magnetometer on its tip node (the spacecraft's, written
 *     here): the first frequency `info` gives (the rider included) = the frequency `simulate` shows
 *     (upward zero crossings of the tip's deflection over 40 s), within 1%;
 *   - `eval` prints the modal accelerations: JSON "modal_accelerations" and the modal entries of
 *     "qdd" = sd_forward_dynamics's at the same state to 1e-12; the text output has the section;
 *   - `simulate --output` writes the modal coordinates and speeds (BODY.etaR, u.BODY.etaR) and the
 *     tip deflection (BODY.nodeN.dx..dz) of every flexible body; the deflection on the last line =
 *     sd_model_node_deflection of that line's q; with no damping or joint forces the total energy
 *     (strain included) stays within 1e-8; `--tip-node` chooses the node (and a node or body that
 *     is not there is a usage error, exit 1); `--plot` writes a PNG.
 */
#define _XOPEN_SOURCE 700

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <soadyn/soadyn.h>
#include <soadyn/flex.h>

#include "cli_child.h"
#include "mini_json.h"
#include "test_util.h"

static const char *soadyn_path;
static char dir[256], out_path[300], err_path[300], spacecraft[1024], arm[1024];

/* Runs soadyn with args (NULL-terminated), stdout and stderr into out_path and err_path. */
static int run(const char *const *args)
{
    return cli_run(soadyn_path, args, out_path, err_path);
}

static sd_model *load(const char *path)
{
    sd_model *m = NULL;
    sd_error err = {0};
    if (sd_model_load_file(path, NULL, &m, NULL, &err) != SD_OK) fprintf(stderr, "%s\n", err.message);
    return m;
}

static int contains(const char *text, const char *what)
{
    const int found = text && strstr(text, what) != NULL;
    if (!found) fprintf(stderr, "output lacks \"%s\"\n", what);
    return found;
}

static void check_info(void)
{
    const char *args[] = {"info", spacecraft, NULL};
    CHECK(run(args) == 0);
    char *out = cli_read_all(out_path);
    CHECK(contains(out, "flexible bodies: 3"));
    CHECK(contains(out, "array_right: 4 modes, 11 nodes, full mass model"));
    CHECK(contains(out, "boom: 4 modes, 11 nodes, full mass model"));
    CHECK(contains(out, "magnetometer (joint boom_tip) rides on node 10"));
    CHECK(contains(out, "total mass 22 kg (rigid part 2 kg, nodes 20 kg)"));
    CHECK(contains(out, "[revolute sada_right, 1 dof, 22 kg]"));
    CHECK(contains(out, "system modes (every hinge locked, free joints free): 12"));
    sd_model *m = load(spacecraft);
    CHECK(m != NULL);
    int lines = 0;
    for (int k = 0; m && k < sd_model_nbodies(m); ++k) {
        const int nm = sd_model_body_nmodes(m, k);
        double omega[16];
        if (nm == 0) continue;
        sd_error err = {0};
        CHECK(nm <= 16 && sd_model_flex_frequencies(m, k, omega, &err) == SD_OK);
        for (int r = 0; r < nm; ++r) {
            char key[128];
            snprintf(key, sizeof(key), "mode %d (%s.eta%d): ", r + 1, sd_model_body_name(m, k), r + 1);
            const char *at = out ? strstr(out, key) : NULL;
            double hz = NAN, rad = NAN;
            CHECK(at && sscanf(at + strlen(key), "%lf Hz, %lf rad/s", &hz, &rad) == 2);
            CHECK_CLOSE(rad, omega[r], 1e-5 * omega[r]);
            CHECK_CLOSE(hz, omega[r] / (2 * 3.14159265358979323846), 1e-5 * omega[r]);
            ++lines;
        }
    }
    CHECK(lines == 12);
    free(out);
    sd_model_free(m);
    const char *args2[] = {"info", arm, NULL};
    CHECK(run(args2) == 0);
    out = cli_read_all(out_path);
    CHECK(contains(out, "link1: 2 modes, 11 nodes, full mass model"));
    CHECK(contains(out, "link2 (joint elbow) rides on node 10"));
    free(out);
}

static void check_eval(void)
{
    const char *args[] = {"eval", arm, "--json", "--q", "link1.eta1=0.01,elbow=0.5", "--u", "shoulder=1,link1.eta2=0.2",
                          "--tau", "shoulder=0.3", NULL};
    CHECK(run(args) == 0);
    char *text = cli_read_all(out_path);
    mj_value *j = text ? mj_parse(text) : NULL;
    CHECK(j != NULL);
    sd_model *m = load(arm);
    CHECK(m != NULL);
    if (j && m) {
        double q[4] = {0, 0.01, 0, 0.5}, u[4] = {1, 0, 0.2, 0}, tau[4] = {0.3, 0, 0, 0}, qdd[4];
        CHECK(sd_model_nq(m) == 4 && sd_model_mode_q_index(m, 0) == 1);
        sd_data *d = sd_data_new(m);
        CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
        const mj_value *modal = mj_get(j, "modal_accelerations"), *all = mj_get(j, "qdd");
        CHECK(modal && modal->type == MJ_OBJECT && modal->n == 2);
        for (int r = 0; r < 2; ++r) {
            char label[32];
            snprintf(label, sizeof(label), "link1.eta%d", r + 1);
            const mj_value *a = modal ? mj_get(modal, label) : NULL, *b = all ? mj_get(all, label) : NULL;
            CHECK(a && b && a->type == MJ_NUMBER && b->type == MJ_NUMBER);
            if (a && b) {
                CHECK_CLOSE(a->number, qdd[1 + r], 1e-12 * fmax(1.0, fabs(qdd[1 + r])));
                CHECK(a->number == b->number);
            }
        }
        const mj_value *minv = mj_get(j, "mass_matrix_inverse");
        CHECK(minv && minv->type == MJ_OBJECT && minv->n == 4); /* offered for flexible bodies too */
        sd_data_free(d);
    }
    mj_free(j);
    free(text);
    sd_model_free(m);
    const char *args2[] = {"eval", spacecraft, NULL};
    CHECK(run(args2) == 0);
    text = cli_read_all(out_path);
    CHECK(contains(text, "modal accelerations (flexible bodies' eta-ddot, in qdd above):"));
    CHECK(contains(text, "  boom.eta4 "));
    free(text);
}

/* The CSV's header fields and its last data line's numbers. */
static int csv_last(const char *path, char names[][64], double *values, int max)
{
    char *text = cli_read_all(path);
    if (!text) return 0;
    char *nl = strchr(text, '\n');
    int n = 0;
    if (nl) {
        *nl = '\0';
        for (char *f = strtok(text, ","); f && n < max; f = strtok(NULL, ",")) snprintf(names[n++], 64, "%s", f);
        char *end = nl + 1 + strlen(nl + 1);
        while (end > nl + 1 && end[-1] == '\n') *--end = '\0';
        char *last = strrchr(nl + 1, '\n');
        last = last ? last + 1 : nl + 1;
        int i = 0;
        for (char *f = strtok(last, ","); f && i < n; f = strtok(NULL, ",")) values[i++] = strtod(f, NULL);
        if (i != n) n = 0;
    }
    free(text);
    return n;
}

static int column(char names[][64], int n, const char *name)
{
    for (int i = 0; i < n; ++i)
        if (strcmp(names[i], name) == 0) return i;
    fprintf(stderr, "CSV has no column %s\n", name);
    return -1;
}

/* The summary's momentum line on the free-floating spacecraft: kept without gravity; under gravity
 * (1 m/s^2 along -z for 0.2 s) the linear momentum changes by the impulse M g t of the total mass
 * (1000 + 2 x 22 + 6 + 2 = 1052 kg, spacecraft.urdf's comment): 210.4 kg m/s, and the line says the
 * momentum is not conserved. */
static void check_momentum_line(void)
{
    const char *kept[] = {"simulate", spacecraft, "--duration", "0.2", "--dt", "0.002", "--q0", "boom.eta1=0.01",
                          "--u0", "sada_left=0.5", NULL};
    CHECK(run(kept) == 0);
    char *out = cli_read_all(out_path);
    double linear = NAN, angular = NAN;
    const char *at = out ? strstr(out, "momentum drift") : NULL;
    CHECK(at && sscanf(at, "momentum drift linear %lf kg m/s, angular %lf", &linear, &angular) == 2);
    CHECK(linear < 1e-10 && angular < 1e-10);
    CHECK(at && !strstr(at, "not conserved"));
    free(out);
    const char *falling[] = {"simulate", spacecraft, "--duration", "0.2", "--dt", "0.002", "--q0", "boom.eta1=0.01",
                             "--gravity", "0,0,-1", NULL};
    CHECK(run(falling) == 0);
    out = cli_read_all(out_path);
    at = out ? strstr(out, "momentum drift") : NULL;
    CHECK(at && sscanf(at, "momentum drift linear %lf kg m/s, angular %lf", &linear, &angular) == 2);
    CHECK_CLOSE(linear, 1052 * 1.0 * 0.2, 1e-3); /* the summary prints 4 digits */
    CHECK(at && strstr(at, "[not conserved: gravity or outside forces act]"));
    free(out);
}

static void check_simulate(void)
{
    char csv[320], png[320];
    snprintf(csv, sizeof(csv), "%s/arm.csv", dir);
    snprintf(png, sizeof(png), "%s/sc.png", dir);
    const char *args[] = {"simulate", arm,    "--duration", "0.5", "--dt",  "0.0001", "--q0", "link1.eta1=0.02",
                          "--u0",     "shoulder=1", "--output", csv,   NULL};
    CHECK(run(args) == 0);
    static char names[64][64];
    double v[64];
    const int n = csv_last(csv, names, v, 64);
    CHECK(n == 1 + 4 + 4 + 3 + 3);
    const int c_eta = column(names, n, "link1.eta1"), c_ueta = column(names, n, "u.link1.eta2");
    const int c_dy = column(names, n, "link1.node10.dy"), c_t = column(names, n, "time");
    CHECK(c_eta == 2 && c_ueta >= 0 && c_dy >= 0 && c_t == 0);
    sd_model *m = load(arm);
    if (m && n == 15 && c_dy >= 0) {
        CHECK_CLOSE(v[0], 0.5, 1e-12);
        double d[6];
        CHECK(sd_model_node_deflection(m, 0, 10, v + 1, d, NULL) == SD_OK);
        CHECK_CLOSE(v[c_dy], d[4], 1e-15);
        CHECK(v[c_dy - 1] == 0.0 && v[c_dy + 1] == 0.0); /* x-y bending only, no axial shapes */
        CHECK(fabs(v[c_dy]) > 1e-4);                     /* it does deflect */
    }
    /* energy: the summary's drift, strain energy included (RK4 at 1e-4 s: 1.5e-9; at 5e-4 s 4e-6, O(h^4)) */
    char *out = cli_read_all(out_path);
    double drift = NAN;
    const char *at = out ? strstr(out, "energy drift") : NULL;
    CHECK(at && sscanf(at, "energy drift %lf", &drift) == 1);
    CHECK(fabs(drift) < 1e-8);
    CHECK(contains(out, "deflection end   link1 node 10:"));
    CHECK(!contains(out, "momentum drift")); /* a fixed base: momentum is not the run's to keep */
    free(out);
    sd_model_free(m);

    const char *args2[] = {"simulate", spacecraft, "--duration", "0.2", "--dt", "0.002", "--q0", "boom.eta1=0.01",
                           "--tip-node", "boom=5", "--output", csv, "--plot", png, NULL};
    CHECK(run(args2) == 0);
    const int n2 = csv_last(csv, names, v, 64);
    CHECK(n2 == 1 + 21 + 20 + 3 + 9);
    CHECK(column(names, n2, "array_right.node10.dy") >= 0 && column(names, n2, "array_left.node10.dz") >= 0 &&
          column(names, n2, "boom.node5.dy") >= 0 && column(names, n2, "boom.eta4") >= 0);
    struct stat sb;
    CHECK(stat(png, &sb) == 0 && sb.st_size > 1000);
    check_momentum_line();
    const char *bad1[] = {"simulate", spacecraft, "--tip-node", "boom=11", "--duration", "0.01", NULL};
    CHECK(run(bad1) == 1);
    char *err = cli_read_all(err_path);
    CHECK(contains(err, "boom has no node '11' (nodes 0..10)"));
    free(err);
    const char *bad2[] = {"simulate", spacecraft, "--tip-node", "bus=1", "--duration", "0.01", NULL};
    CHECK(run(bad2) == 1);
    err = cli_read_all(err_path);
    CHECK(contains(err, "bus is not a flexible body"));
    free(err);
    unlink(csv);
    unlink(png);
}

/* All values of CSV column `name` (malloc'd into *out); returns their number, 0 on failure. */
static int csv_column(const char *path, const char *name, double **out)
{
    char *text = cli_read_all(path);
    *out = NULL;
    if (!text) return 0;
    int col = -1, n = 0, cap = 0, i = 0;
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    for (char *f = line, *end; f; f = end ? end + 1 : NULL, ++i) {
        end = strchr(f, ',');
        if ((end ? (size_t)(end - f) : strlen(f)) == strlen(name) && strncmp(f, name, strlen(name)) == 0) col = i;
    }
    for (line = strtok_r(NULL, "\n", &save); line && col >= 0; line = strtok_r(NULL, "\n", &save)) {
        const char *f = line;
        for (int c = 0; c < col && f; ++c) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        if (!f) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            double *p = realloc(*out, (size_t)cap * sizeof(double));
            if (!p) break;
            *out = p;
        }
        (*out)[n++] = strtod(f, NULL);
    }
    free(text);
    return n;
}

static const char BOOM_ON_WALL[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"boom_on_wall\" xmlns:soadyn=\"https://soadyn.example/urdf\">\n"
    "  <link name=\"world\"/>\n"
    "  <joint name=\"boom_root\" type=\"fixed\"><parent link=\"world\"/><child link=\"boom\"/></joint>\n"
    "  <link name=\"boom\">\n"
    "    <soadyn:flexible>\n"
    "      <beam length=\"4\" EI=\"500\" mass_per_length=\"1.5\" elements=\"10\" modes=\"4\" boundary=\"cantilever\"\n"
    "            planes=\"both\"/>\n"
    "    </soadyn:flexible>\n"
    "  </link>\n"
    "  <joint name=\"boom_tip\" type=\"fixed\"><parent link=\"boom\"/><child link=\"magnetometer\"/>\n"
    "    <soadyn:node index=\"10\"/><origin xyz=\"4 0 0\"/></joint>\n"
    "  <link name=\"magnetometer\">\n"
    "    <inertial><mass value=\"2\"/><inertia ixx=\"0.002\" ixy=\"0\" ixz=\"0\" iyy=\"0.002\" iyz=\"0\" izz=\"0.002\"/></inertial>\n"
    "  </link>\n"
    "</robot>\n";

static void check_boom_frequency(void)
{
    char urdf[320], csv[320];
    snprintf(urdf, sizeof urdf, "%s/boom_on_wall.urdf", dir);
    snprintf(csv, sizeof csv, "%s/boom.csv", dir);
    FILE *f = fopen(urdf, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(BOOM_ON_WALL, f);
    fclose(f);
    const char *info[] = {"info", urdf, NULL};
    CHECK(run(info) == 0);
    char *out = cli_read_all(out_path);
    double hz = NAN;
    const char *at = out ? strstr(out, "mode 1 (boom.eta1): ") : NULL;
    CHECK(at && sscanf(at + strlen("mode 1 (boom.eta1): "), "%lf Hz", &hz) == 1);
    free(out);
    /* the tip's deflection in the x-y plane (no gravity in it): eta1 and eta3 (the first two y
     * bending modes) carry it; the system's first mode dominates the tip */
    const char *sim[] = {"simulate", urdf, "--duration", "40", "--dt", "0.002", "--q0", "boom.eta1=0.02",
                         "--output", csv, NULL};
    CHECK(run(sim) == 0);
    double *t = NULL, *y = NULL;
    const int nt = csv_column(csv, "time", &t), ny = csv_column(csv, "boom.node10.dy", &y);
    CHECK(nt > 1000 && ny == nt);
    int crossings = 0;
    double first = NAN, last = NAN;
    for (int i = 1; i < ny && ny == nt; ++i)
        if (y[i - 1] < 0.0 && y[i] >= 0.0) { /* upward zero crossing, interpolated */
            const double tc = t[i - 1] + (t[i] - t[i - 1]) * (-y[i - 1]) / (y[i] - y[i - 1]);
            if (crossings++ == 0) first = tc;
            last = tc;
        }
    const double measured = crossings > 1 ? (crossings - 1) / (last - first) : NAN;
    printf("boom with its magnetometer on a wall: info %.6g Hz, simulate %.6g Hz (%d periods), difference %.2g%%\n",
           hz, measured, crossings - 1, 100.0 * (measured / hz - 1.0));
    CHECK(crossings > 10 && fabs(measured / hz - 1.0) < 0.01);
    free(t);
    free(y);
    unlink(csv);
    unlink(urdf);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_cli_flex SOADYN MODELS_DIR\n");
        return 1;
    }
    soadyn_path = argv[1];
    snprintf(spacecraft, sizeof(spacecraft), "%s/spacecraft.urdf", argv[2]);
    snprintf(arm, sizeof(arm), "%s/flexible_arm.urdf", argv[2]);
    snprintf(dir, sizeof(dir), "%s/soadyn_cli_flex_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(out_path, sizeof(out_path), "%s/out.txt", dir);
    snprintf(err_path, sizeof(err_path), "%s/err.txt", dir);
    check_info();
    check_boom_frequency();
    check_eval();
    check_simulate();
    unlink(out_path);
    unlink(err_path);
    rmdir(dir);
    return test_summary("test_cli_flex");
}
