/*
 * tests/sim/test_example_deploy.c — the bundled deployment example (models/spacecraft_deploy.urdf,
 * docs/deployment.md) run as its page says: `soadyn simulate` for 20 s with a CSV and an --html
 * page, then checked from what the run wrote, each against a computation of its own:
 *   - the energy: the summary's start against 1/2 k (q_rest - q_stowed)^2 by hand (the craft starts
 *     at rest), and the end's recomputed from the CSV's last row as 1/2 u^T M u (the composite-body
 *     M, not the kinetic-energy sweep) plus the spring by hand plus the panel's strain: drift
 *     < 1e-6 relative;
 *   - the momentum: the summary's drift, and the centre of mass of the whole craft, which must not
 *     move when the craft starts at rest (a check through positions only);
 *   - the loop: the arm's pin and the coupler's tip placed by the tree's kinematics at every row of
 *     the CSV coincide (not the constraint code's residual), and the summary's largest residuals;
 *   - the deployment: the panel's arm passes its deployed angle (90 degrees from stowed) in the
 *     first swing and the driving hinge then oscillates about the spring's rest angle (the middle
 *     of its last swings within 0.1 rad of it: the spring has no damper, and the bending panel and
 *     the recoiling bus share the energy, so the turning points are not exactly symmetric);
 *   - the symmetry: the motion stays in the linkage's plane, so the panel's torsion modes, which
 *     only out-of-plane motion excites, stay at rest to round-off;
 *   - the page: complete (closing tag, no leftover .partial), its data block parses, its time axis
 *     ends at 20 s and its drawn closure points meet at every frame.
 *
 * Usage: test_example_deploy <soadyn program> <models folder>
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "sim/cli_child.h"
#include "sim/mini_json.h"
#include "test_util.h"

/* The model's spring (models/spacecraft_deploy.urdf, crank_hinge) */
#define SPRING_K 10.0
#define SPRING_REST 1.4167545120947618 /* rad from the stowed position, q = 0 */
#define PIN_ON_ARM 0.32                /* the loop's frames: on the arm and at the coupler's tip */
#define COUPLER_TIP 0.36
#define RUN_SECONDS 20.0
#define DEPLOYED_ARM 1.5707963267948966 /* the arm turned by 90 degrees: the panel out along +x */

static char dir[256], out_path[300], err_path[300], csv_path[300], html_path[300], model_path[1024];

/* The CSV: a header of names and rows of numbers. */
typedef struct table {
    char names[64][64];
    int ncols, nrows;
    double *rows; /* nrows x ncols */
} table;

static int read_table(const char *path, table *t)
{
    char *text = cli_read_all(path);
    if (!text) return 0;
    t->ncols = 0;
    char *line = text, *next = strchr(line, '\n');
    if (next) *next = '\0';
    for (char *tok = strtok(line, ","); tok && t->ncols < 64; tok = strtok(NULL, ","))
        snprintf(t->names[t->ncols++], 64, "%s", tok);
    size_t cap = 1024;
    t->rows = malloc(sizeof(double) * cap * (size_t)t->ncols);
    t->nrows = 0;
    for (char *p = next ? next + 1 : NULL; p && *p && *p != '#';) {
        if ((size_t)(t->nrows + 1) > cap) {
            cap *= 2;
            t->rows = realloc(t->rows, sizeof(double) * cap * (size_t)t->ncols);
        }
        for (int c = 0; c < t->ncols; ++c) {
            char *end;
            t->rows[(size_t)t->nrows * (size_t)t->ncols + (size_t)c] = strtod(p, &end);
            p = end + (*end == ',' || *end == '\n');
        }
        ++t->nrows;
    }
    free(text);
    return t->nrows;
}

static int col(const table *t, const char *name)
{
    for (int c = 0; c < t->ncols; ++c)
        if (strcmp(t->names[c], name) == 0) return c;
    fprintf(stderr, "the CSV has no column %s\n", name);
    return -1;
}

static double at(const table *t, int row, int c) { return t->rows[(size_t)row * (size_t)t->ncols + (size_t)c]; }

/* The number after `label` in the summary, NAN when absent. */
static double summary_number(const char *out, const char *label)
{
    const char *p = out ? strstr(out, label) : NULL;
    double x = NAN;
    if (!p || sscanf(p + strlen(label), "%lf", &x) != 1) fprintf(stderr, "the summary lacks '%s'\n", label);
    return x;
}

/* The summary: energy, momentum and loop lines, in the layer the model file asks for. */
static void check_summary(const sd_model *m, const char *out)
{
    const double e0 = summary_number(out, "energy start");
    CHECK_CLOSE(e0, 0.5 * SPRING_K * SPRING_REST * SPRING_REST, 1e-11); /* at rest: the spring's alone */
    const double drift = summary_number(out, "energy drift");
    CHECK(fabs(drift) < 1e-6);
    const double linear = summary_number(out, "momentum drift   linear");
    const char *ang = out ? strstr(out, "kg m/s, angular") : NULL;
    double angular = NAN;
    CHECK(ang && sscanf(ang, "kg m/s, angular %lf", &angular) == 1);
    /* against the bus's own swing: up to 16 kg m/s and 28 N m s over the run */
    CHECK(linear < 1e-7 && angular < 1e-7);
    CHECK(out && !strstr(out, "not conserved"));
    const double position = summary_number(out, "loop residuals   position");
    const char *vel = out ? strstr(out, "velocity") : NULL;
    double velocity = NAN;
    CHECK(vel && sscanf(vel, "velocity %lf", &velocity) == 1);
    const int embedded = sd_model_constraint_embed(m, 0) == 1;
    if (embedded) { /* closed by Newton at every evaluation, never projected */
        CHECK(out && strstr(out, "embedded loops   1 of 1 constraint"));
        CHECK(out && strstr(out, "(largest over the run; 0 projections; embedded loops solved by Newton, never projected)"));
        CHECK(position < 1e-12 && velocity < 1e-12);
    } else { /* projected back after every step, to the projection's tolerance */
        CHECK(position < 2e-12 && velocity < 1e-12);
    }
    printf("summary: energy drift %.3e, momentum drift %.3e kg m/s, %.3e N m s, loop residuals %.3e m, %.3e (%s)\n",
           drift, linear, angular, position, velocity, embedded ? "embedded" : "tree-augmented");
}

/* 1/2 u^T M u + the spring by hand + the panel's strain, at one row. */
static double energy_at(const sd_model *m, sd_data *d, const double *q, const double *u, int crank_q)
{
    const int nv = sd_model_nv(m);
    double *M = malloc(sizeof(double) * (size_t)(nv * nv));
    double T = NAN, strain = NAN;
    if (M && sd_mass_matrix(m, d, q, M) == SD_OK && sd_strain_energy(m, d, &strain) == SD_OK) {
        T = 0.0;
        for (int i = 0; i < nv; ++i)
            for (int j = 0; j < nv; ++j) T += 0.5 * u[i] * M[i * nv + j] * u[j];
    }
    free(M);
    const double s = q[crank_q] - SPRING_REST;
    return T + 0.5 * SPRING_K * s * s + strain;
}

static void check_trajectory(const sd_model *m, const table *t)
{
    const int nq = sd_model_nq(m);
    CHECK(t->ncols > 1 + nq + sd_model_nv(m) && strcmp(t->names[1], "orbit.x") == 0 &&
          strcmp(t->names[1 + nq], "u.orbit.wx") == 0);
    const int c_crank = col(t, "crank_hinge"), c_arm = col(t, "arm_hinge"), c_t = col(t, "time");
    const int c_tors1 = col(t, "panel.eta2"), c_tors2 = col(t, "panel.eta4");
    const int arm = sd_model_body_index(m, "arm"), coupler = sd_model_body_index(m, "coupler");
    if (c_crank < 0 || c_arm < 0 || c_t < 0 || c_tors1 < 0 || c_tors2 < 0 || arm < 0 || coupler < 0) return;
    CHECK_CLOSE(at(t, t->nrows - 1, c_t), RUN_SECONDS, 1e-12);
    sd_data *d = sd_data_new(m);
    if (!d) return;
    double worst_gap = 0.0, worst_torsion = 0.0, com0[3] = {0}, com[3] = {0};
    double deployed_at = -1.0, crank_lo = INFINITY, crank_hi = -INFINITY, arm_lo = INFINITY, arm_hi = -INFINITY;
    for (int r = 0; r < t->nrows; ++r) {
        const double *q = &t->rows[(size_t)r * (size_t)t->ncols + 1];
        sd_transform Xa, Xc;
        CHECK(sd_kinematics(m, d, q, NULL, NULL) == SD_OK);
        sd_body_placement_world(m, d, arm, &Xa);
        sd_body_placement_world(m, d, coupler, &Xc);
        const double pa[3] = {PIN_ON_ARM, 0, 0}, pc[3] = {COUPLER_TIP, 0, 0};
        double wa[3], wc[3];
        sd_transform_point(&Xa, pa, wa);
        sd_transform_point(&Xc, pc, wc);
        const double gap = sqrt((wa[0] - wc[0]) * (wa[0] - wc[0]) + (wa[1] - wc[1]) * (wa[1] - wc[1]) +
                                (wa[2] - wc[2]) * (wa[2] - wc[2]));
        if (gap > worst_gap) worst_gap = gap;
        if (r == 0) sd_center_of_mass_world(m, d, com0);
        if (r == t->nrows - 1) sd_center_of_mass_world(m, d, com);
        worst_torsion = fmax(worst_torsion, fmax(fabs(at(t, r, c_tors1)), fabs(at(t, r, c_tors2))));
        if (deployed_at < 0 && at(t, r, c_arm) >= DEPLOYED_ARM) deployed_at = at(t, r, c_t);
        if (at(t, r, c_t) >= RUN_SECONDS / 2) { /* the last swings */
            crank_lo = fmin(crank_lo, at(t, r, c_crank));
            crank_hi = fmax(crank_hi, at(t, r, c_crank));
            arm_lo = fmin(arm_lo, at(t, r, c_arm));
            arm_hi = fmax(arm_hi, at(t, r, c_arm));
        }
    }
    const double com_shift = sqrt((com[0] - com0[0]) * (com[0] - com0[0]) + (com[1] - com0[1]) * (com[1] - com0[1]) +
                                  (com[2] - com0[2]) * (com[2] - com0[2]));
    /* embedded: closed by Newton to round-off; tree-augmented: projected to 1e-12 per row of G */
    CHECK(worst_gap < (sd_model_constraint_embed(m, 0) == 1 ? 1e-12 : 2e-12));
    CHECK(com_shift < 1e-9);
    CHECK(worst_torsion < 1e-12);
    CHECK(deployed_at > 0.0 && deployed_at < 5.0);
    CHECK(arm_lo < DEPLOYED_ARM && arm_hi > DEPLOYED_ARM); /* still swinging through the deployed position */
    const double middle = 0.5 * (crank_lo + crank_hi);
    CHECK(fabs(middle - SPRING_REST) < 0.1);
    CHECK(crank_hi - crank_lo > 2.0); /* a swing of about 2 x 78 degrees, not a creep */

    const int crank_q = c_crank - 1, last = t->nrows - 1;
    const double *q_end = &t->rows[(size_t)last * (size_t)t->ncols + 1];
    const double e_start = 0.5 * SPRING_K * SPRING_REST * SPRING_REST;
    const double e_end = energy_at(m, d, q_end, q_end + nq, crank_q);
    CHECK(fabs(e_end - e_start) < 1e-6 * e_start);
    printf("trajectory: %d rows; pin gap <= %.3g m, centre of mass moved %.3g m, torsion <= %.3g; deployed "
           "(90 deg) at t = %.3f s; last 10 s: crank %.4f .. %.4f rad (middle %+.4f from rest), arm %.4f .. %.4f; "
           "energy at the end (M, spring, strain) %.12g J, start %.12g J (%.3e relative)\n",
           t->nrows, worst_gap, com_shift, worst_torsion, deployed_at, crank_lo, crank_hi, middle - SPRING_REST,
           arm_lo, arm_hi, e_end, e_start, (e_end - e_start) / e_start);
    sd_data_free(d);
}

/* The page: whole, its data parses, its last time is the run's end, the closure's points meet. */
static void check_page(void)
{
    char partial[320];
    snprintf(partial, sizeof(partial), "%s.partial", html_path);
    struct stat sb;
    CHECK(stat(partial, &sb) != 0);
    char *page = cli_read_all(html_path);
    CHECK(page != NULL);
    if (!page) return;
    const size_t len = strlen(page);
    CHECK(len > 100000 && strcmp(page + len - strlen("</body></html>\n"), "</body></html>\n") == 0);
    const char *open = "<script type=\"application/json\" id=\"soadyn-data\">";
    char *start = strstr(page, open), *end = start ? strstr(start, "</script>") : NULL;
    CHECK(start && end);
    if (!start || !end) {
        free(page);
        return;
    }
    *end = '\0';
    mj_value *data = mj_parse(start + strlen(open));
    CHECK(data != NULL);
    const mj_value *title = data ? mj_get(data, "title") : NULL, *times = data ? mj_get(data, "times") : NULL;
    const mj_value *points = data ? mj_get(data, "closure_points") : NULL, *note = data ? mj_get(data, "note") : NULL;
    CHECK(title && title->type == MJ_STRING && strcmp(title->string, "spacecraft_deploy") == 0);
    CHECK(times && times->type == MJ_ARRAY && times->n > 100 &&
          fabs(times->items[times->n - 1].number - RUN_SECONDS) < 1e-9);
    CHECK(note && note->type == MJ_STRING && !strstr(note->string, "truncated"));
    /* one closure, two points (the arm's pin, the coupler's tip) per frame; the page keeps 7 digits */
    CHECK(points && times && points->n == 6 * times->n);
    double worst = 0.0;
    for (int i = 0; points && i + 5 < points->n; i += 6)
        for (int k = 0; k < 3; ++k) worst = fmax(worst, fabs(points->items[i + k].number - points->items[i + 3 + k].number));
    CHECK(worst < 1e-6);
    printf("page: %zu bytes, %d frames, drawn closure points within %.3g m\n", len, times ? times->n : 0, worst);
    mj_free(data);
    free(page);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_example_deploy <soadyn program> <models folder>\n");
        return 2;
    }
    snprintf(dir, sizeof(dir), "/tmp/soadyn_deploy_XXXXXX");
    if (!mkdtemp(dir)) return 2;
    snprintf(out_path, sizeof(out_path), "%s/out.txt", dir);
    snprintf(err_path, sizeof(err_path), "%s/err.txt", dir);
    snprintf(csv_path, sizeof(csv_path), "%s/deploy.csv", dir);
    snprintf(html_path, sizeof(html_path), "%s/deploy.html", dir);
    snprintf(model_path, sizeof(model_path), "%s/spacecraft_deploy.urdf", argv[2]);

    /* the command of docs/deployment.md */
    const char *args[] = {"simulate", model_path, "--duration", "20", "--dt", "0.0025",
                          "--output", csv_path, "--html", html_path, NULL};
    CHECK(cli_run(argv[1], args, out_path, err_path) == 0);
    char *out = cli_read_all(out_path);
    sd_model *m = NULL;
    sd_error err = {0};
    if (sd_model_load_file(model_path, NULL, &m, NULL, &err) != SD_OK) fprintf(stderr, "%s\n", err.message);
    CHECK(m != NULL);
    if (m) {
        check_summary(m, out);
        table t = {0};
        CHECK(read_table(csv_path, &t) == 8001);
        if (t.nrows > 0) check_trajectory(m, &t);
        free(t.rows);
    }
    check_page();
    free(out);
    sd_model_free(m);
    unlink(out_path);
    unlink(err_path);
    unlink(csv_path);
    unlink(html_path);
    rmdir(dir);
    return test_summary("test_example_deploy");
}
