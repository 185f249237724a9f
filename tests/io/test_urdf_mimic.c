/*
 * tests/io/test_urdf_mimic.c — URDF <mimic> joints enforced as coupling constraints, on the real
 * robots of ../shared/models (MODELS.md):
 *   - panda: panda_finger_joint2 mimics panda_finger_joint1: nv 9, one coupling, rank 1 and
 *     mobility 8 (sd_constraint_rank); closed-loop forward dynamics moves the fingers together
 *     (qdd_2 = r qdd_1 to 1e-12) even when only one finger is pushed, which the same file loaded
 *     with mimic_independent does not;
 *   - talos_full_v2 (floating base): twelve gripper joints mimic two; nv 50, twelve couplings, rank
 *     12, mobility 38; at random states on the couplings, qdd of the closed-loop dynamics equals the
 *     dynamics of the independent coordinates, N (N* M N)^-1 N* (tau - C), with N a basis of the null
 *     space of G built here from the couplings (u = N u_independent: a follower's speed is its
 *     ratio times its leader's), M and C of the tree, to 1e-10. The couplings' G is constant, so no
 *     G-dot term enters.
 *
 * Usage: test_urdf_mimic <shared models folder>; exits 77 (skipped) when it is absent.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

static sd_model *load(const char *folder, const char *file, int floating, int mimic_independent)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    const sd_urdf_options opt = {.floating_base = floating, .mimic_independent = mimic_independent};
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_urdf_load_file(path, &opt, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s\n", err.message);
    return m;
}

static double uniform(uint64_t *rng) { return 2.0 * sd_random_uniform(rng) - 1.0; }

/* The couplings as speed maps: for speed v, lead[v] = the speed it follows (-1: none) and gain[v]
 * its ratio, and, for positions, the q indices and the offset. */
typedef struct coupling_map {
    int nv, *lead, *q_follow, *q_lead;
    double *gain, *offset;
} coupling_map;

static int coupling_map_make(const sd_model *m, coupling_map *cm)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraints(m);
    cm->nv = nv;
    cm->lead = malloc((size_t)nv * sizeof *cm->lead);
    cm->q_follow = calloc((size_t)nv, sizeof *cm->q_follow);
    cm->q_lead = calloc((size_t)nv, sizeof *cm->q_lead);
    cm->gain = calloc((size_t)nv, sizeof *cm->gain);
    cm->offset = calloc((size_t)nv, sizeof *cm->offset);
    if (!cm->lead || !cm->q_follow || !cm->q_lead || !cm->gain || !cm->offset) return 0;
    for (int v = 0; v < nv; ++v) cm->lead[v] = -1;
    for (int c = 0; c < nc; ++c) {
        int a = -1, b = -1;
        if (sd_model_constraint_type(m, c) != SD_CONSTRAINT_COUPLING ||
            sd_model_constraint_bodies(m, c, &a, &b) != SD_OK)
            return 0;
        const sd_body_desc *da = sd_model_body_desc(m, a); /* the mimic joint: its <mimic> numbers */
        const int va = sd_model_v_index(m, a);
        if (da == NULL || da->mimic_joint == NULL || cm->lead[va] >= 0) return 0;
        cm->lead[va] = sd_model_v_index(m, b);
        cm->gain[va] = da->mimic_multiplier;
        cm->offset[va] = da->mimic_offset;
        cm->q_follow[va] = sd_model_q_index(m, a);
        cm->q_lead[va] = sd_model_q_index(m, b);
    }
    for (int v = 0; v < nv; ++v) /* the shared robots' leaders follow nobody */
        if (cm->lead[v] >= 0 && cm->lead[cm->lead[v]] >= 0) return 0;
    return 1;
}

static void coupling_map_free(coupling_map *cm)
{
    free(cm->lead), free(cm->q_follow), free(cm->q_lead), free(cm->gain), free(cm->offset);
}

/* A random state on the couplings: q and u drawn, then each follower set from its leader; tau random. */
static void coupled_state(const sd_model *m, const coupling_map *cm, uint64_t *rng, double *q, double *u, double *tau)
{
    sd_configuration_random(m, rng, q);
    for (int v = 0; v < cm->nv; ++v) {
        u[v] = uniform(rng);
        tau[v] = 5.0 * uniform(rng);
    }
    for (int v = 0; v < cm->nv; ++v) {
        if (cm->lead[v] < 0) continue;
        q[cm->q_follow[v]] = cm->gain[v] * q[cm->q_lead[v]] + cm->offset[v];
        u[v] = cm->gain[v] * u[cm->lead[v]];
    }
}

/* In-place Cholesky of the SPD n x n A (row-major, lower triangle used) and a solve of A x = b. */
static int cholesky_solve(double *A, int n, double *b)
{
    for (int j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (int k = 0; k < j; ++k) s -= A[j * n + k] * A[j * n + k];
        if (!(s > 0.0)) return 0;
        A[j * n + j] = sqrt(s);
        for (int i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (int k = 0; k < j; ++k) t -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = t / A[j * n + j];
        }
    }
    for (int i = 0; i < n; ++i) { /* L y = b */
        for (int k = 0; k < i; ++k) b[i] -= A[i * n + k] * b[k];
        b[i] /= A[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) { /* L^T x = y */
        for (int k = i + 1; k < n; ++k) b[i] -= A[k * n + i] * b[k];
        b[i] /= A[i * n + i];
    }
    return 1;
}

/* qdd of the independent coordinates' dynamics, N (N* M N)^-1 N* (tau - C), compared with the
 * closed-loop forward dynamics at `trials` random coupled states; returns the worst relative
 * difference. */
static double compare_reduced(const sd_model *m, const coupling_map *cm, int trials, uint64_t seed)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    int ni = 0, *col = malloc((size_t)nv * sizeof *col);
    for (int v = 0; v < nv; ++v) col[v] = cm->lead[v] < 0 ? ni++ : -1;
    double *N = calloc((size_t)nv * ni, sizeof *N); /* nv x ni */
    for (int v = 0; v < nv; ++v) {
        if (cm->lead[v] < 0) N[v * ni + col[v]] = 1.0;
        else N[v * ni + col[cm->lead[v]]] = cm->gain[v];
    }
    double *q = malloc((size_t)nq * sizeof *q), *u = malloc((size_t)nv * sizeof *u), *tau = malloc((size_t)nv * sizeof *tau);
    double *M = malloc((size_t)nv * nv * sizeof *M), *C = malloc((size_t)nv * sizeof *C), *qdd = malloc((size_t)nv * sizeof *qdd);
    double *A = malloc((size_t)ni * ni * sizeof *A), *x = malloc((size_t)ni * sizeof *x), *ref = malloc((size_t)nv * sizeof *ref);
    double *MN = malloc((size_t)nv * ni * sizeof *MN);
    sd_data *d = sd_data_new(m);
    double worst = 0.0;
    for (int t = 0; t < trials; ++t) {
        coupled_state(m, cm, &seed, q, u, tau);
        double pos[64], vel[64];
        CHECK(sd_model_nconstraint_rows(m) <= 64);
        CHECK(sd_constraint_residuals(m, d, q, u, pos, vel) == SD_OK);
        for (int r = 0; r < sd_model_nconstraint_rows(m) && r < 64; ++r)
            CHECK(fabs(pos[r]) < 1e-14 && fabs(vel[r]) < 1e-14);
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
        for (int i = 0; i < nv; ++i)
            for (int j = 0; j < ni; ++j) {
                double s = 0.0;
                for (int k = 0; k < nv; ++k) s += M[i * nv + k] * N[k * ni + j];
                MN[i * ni + j] = s;
            }
        for (int i = 0; i < ni; ++i) {
            for (int j = 0; j < ni; ++j) {
                double s = 0.0;
                for (int k = 0; k < nv; ++k) s += N[k * ni + i] * MN[k * ni + j];
                A[i * ni + j] = s;
            }
            double s = 0.0;
            for (int k = 0; k < nv; ++k) s += N[k * ni + i] * (tau[k] - C[k]);
            x[i] = s;
        }
        CHECK(cholesky_solve(A, ni, x));
        for (int v = 0; v < nv; ++v) {
            double s = 0.0;
            for (int j = 0; j < ni; ++j) s += N[v * ni + j] * x[j];
            ref[v] = s;
        }
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, NULL, NULL) == SD_OK);
        worst = fmax(worst, test_rel_diff(qdd, ref, nv));
        CHECK_ARRAY_CLOSE(qdd, ref, nv, 1e-10, "closed-loop qdd vs N (N* M N)^-1 N* (tau - C)");
    }
    sd_data_free(d);
    free(col), free(N), free(q), free(u), free(tau), free(M), free(C), free(qdd), free(A), free(x), free(ref), free(MN);
    return worst;
}

static void check_rank(const sd_model *m, int rank_expected, int mobility_expected)
{
    double *q = malloc((size_t)sd_model_nq(m) * sizeof *q);
    sd_data *d = sd_data_new(m);
    int rank = -1, mobility = -1;
    sd_configuration_neutral(m, q);
    CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
    CHECK(rank == rank_expected && mobility == mobility_expected);
    if (rank != rank_expected || mobility != mobility_expected)
        fprintf(stderr, "  rank %d mobility %d, expected %d and %d\n", rank, mobility, rank_expected, mobility_expected);
    sd_data_free(d);
    free(q);
}

/* Finger accelerations with a push on finger 1 only: coupled, the fingers move together. */
static void finger_step(const sd_model *m, int coupled, double *qdd1, double *qdd2)
{
    const int f1 = sd_model_joint_index(m, "panda_finger_joint1"), f2 = sd_model_joint_index(m, "panda_finger_joint2");
    const int v1 = sd_model_v_index(m, f1), v2 = sd_model_v_index(m, f2);
    double q[9], u[9] = {0.1, -0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.05, 0.05}, tau[9] = {0}, qdd[9];
    sd_configuration_neutral(m, q);
    q[sd_model_q_index(m, f1)] = q[sd_model_q_index(m, f2)] = 0.02;
    tau[v1] = 3.0;
    sd_data *d = sd_data_new(m);
    if (coupled) CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, NULL, NULL) == SD_OK);
    else CHECK(sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) == SD_OK);
    *qdd1 = qdd[v1];
    *qdd2 = qdd[v2];
    sd_data_free(d);
}

static void check_panda(const char *folder)
{
    sd_model *m = load(folder, "panda/panda.urdf", 0, 0), *mi = load(folder, "panda/panda.urdf", 0, 1);
    if (m == NULL || mi == NULL) goto done;
    CHECK(sd_model_nv(m) == 9 && sd_model_nconstraints(m) == 1 && sd_model_nconstraint_rows(m) == 1);
    const int c = sd_model_constraint_index(m, "panda_finger_joint2");
    CHECK(c == 0 && sd_model_constraint_type(m, c) == SD_CONSTRAINT_COUPLING);
    int a = -1, b = -1;
    sd_model_constraint_bodies(m, c, &a, &b);
    CHECK(a == sd_model_joint_index(m, "panda_finger_joint2") && b == sd_model_joint_index(m, "panda_finger_joint1"));
    check_rank(m, 1, 8);
    CHECK(sd_model_nconstraints(mi) == 0 && sd_model_nv(mi) == 9);
    double a1, a2, i1, i2;
    const double r = sd_model_body_desc(m, a)->mimic_multiplier;
    finger_step(m, 1, &a1, &a2);
    finger_step(mi, 0, &i1, &i2);
    CHECK(fabs(a2 - r * a1) <= 1e-12 * fmax(1.0, fabs(a1)));
    CHECK(fabs(i2 - r * i1) > 1e-3 * fabs(i1)); /* independent fingers do not */
    coupling_map cm = {0};
    CHECK(coupling_map_make(m, &cm));
    const double worst = cm.lead ? compare_reduced(m, &cm, 20, 2024) : -1.0;
    printf("  panda: nv 9, 1 coupling, mobility 8; pushed finger 1: qdd %.6f and %.6f (independent: %.6f and "
           "%.6f); vs N (N* M N)^-1 N* (tau - C): worst %.1e\n", a1, a2, i1, i2, worst);
    coupling_map_free(&cm);
done:
    sd_model_free(m);
    sd_model_free(mi);
}

static void check_talos(const char *folder)
{
    sd_model *m = load(folder, "talos/talos_full_v2.urdf", 1, 0);
    if (m == NULL) return;
    CHECK(sd_model_nv(m) == 50 && sd_model_nconstraints(m) == 12 && sd_model_nconstraint_rows(m) == 12);
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        CHECK(sd_model_constraint_type(m, c) == SD_CONSTRAINT_COUPLING);
        int a = -1;
        sd_model_constraint_bodies(m, c, &a, NULL);
        CHECK(a >= 0 && strcmp(sd_model_constraint_name(m, c), sd_model_joint_name(m, a)) == 0);
    }
    check_rank(m, 12, 38);
    coupling_map cm = {0};
    CHECK(coupling_map_make(m, &cm));
    const double worst = cm.lead ? compare_reduced(m, &cm, 20, 77) : -1.0;
    printf("  talos_full_v2 (floating): nv 50, 12 couplings, mobility 38; closed-loop qdd vs "
           "N (N* M N)^-1 N* (tau - C) over 20 states: worst %.1e\n", worst);
    coupling_map_free(&cm);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <shared models folder>\n", argv[0]);
        return 2;
    }
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/MODELS.md", argv[1]);
    FILE *f = fopen(probe, "r");
    if (f == NULL) {
        printf("skipped: shared models folder %s not found\n", argv[1]);
        return 77;
    }
    fclose(f);
    check_panda(argv[1]);
    check_talos(argv[1]);
    return test_summary("test_urdf_mimic");
}
