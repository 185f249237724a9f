/*
 * tests/sim/test_cli_flex.c — the `soadyn` program (argv[1]) on the bundled flexible-body examples
 * (argv[2]: the models folder, models/spacecraft.urdf and models/flexible_arm.urdf), run as a child
 * process, against the library called here on the same files:
 *   - `info` lists the flexible bodies (modes, nodes, mass model, the bodies riding on nodes) and
 *     each mode's frequency in Hz and rad/s = sd_model_flex_frequencies's (to the 6 digits printed);
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
        CHECK(minv && minv->type == MJ_NULL); /* not offered for flexible bodies */
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
    check_eval();
    check_simulate();
    unlink(out_path);
    unlink(err_path);
    rmdir(dir);
    return test_summary("test_cli_flex");
}
