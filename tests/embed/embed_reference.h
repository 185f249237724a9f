/*
 * tests/embed/embed_reference.h — the embedded forward dynamics against the all-tree-augmented one
 * (loops.h, sd_closed_loop_forward_dynamics) at one consistent state, for test_embed_mixed.c and
 * test_geared_motor.c. N(q) is read column by column through sd_embedded_tree_speeds (its defining
 * properties are test_embed_model's business). The actuators act on the independent speeds only
 * (what the embedded system's tau is): tau_tree is zeroed on the dependent speeds first, so both
 * sides apply the same hinge torques and the multipliers are comparable (a torque on a dependent
 * hinge gives the same motion through N^T but other loop forces).
 */
#ifndef SOADYN_TEST_EMBED_REFERENCE_H
#define SOADYN_TEST_EMBED_REFERENCE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "test_util.h"

/* What one comparison saw (relative differences) and computed. */
typedef struct er_result {
    int ok;                   /* both forward dynamics succeeded */
    double qdd, lambda, gl, force; /* qdd_tree, lambda, G* lambda, inter-body forces */
    int ta_rank;              /* rank of the tree-augmented solve */
} er_result;

static inline double er_maxabs(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(x[i]));
    return s;
}

/* max |a - b| / max(1, max |b|) */
static inline double er_rel(const double *a, const double *b, int n)
{
    double num = 0.0;
    for (int i = 0; i < n; ++i) {
        const double d = fabs(a[i] - b[i]);
        if (d != d) return INFINITY;
        num = fmax(num, d);
    }
    return num / fmax(1.0, er_maxabs(b, n));
}

/* N (nv x ne, row-major) at q, by columns. */
static inline int er_tree_map(const sd_embedding *e, sd_embedded_data *ed, const double *q, int nv, double *N)
{
    const int ne = sd_embedding_nv(e);
    double *ej = calloc((size_t)ne + 1, sizeof *ej), *col = calloc((size_t)nv + 1, sizeof *col);
    int ok = 1;
    for (int j = 0; j < ne && ok; ++j) {
        memset(ej, 0, (size_t)ne * sizeof *ej);
        ej[j] = 1.0;
        ok = sd_embedded_tree_speeds(e, ed, q, ej, col) == SD_OK;
        for (int i = 0; i < nv; ++i) N[i * ne + j] = col[i];
    }
    free(ej);
    free(col);
    return ok;
}

/* Both forward dynamics at (q, u_tree, tau_tree, f_ext): q closed, G u_tree = 0. The embedded
 * side gets u_e = the selection of u_tree and tau_e = N^T tau_tree. qdd_e_out (ne, may be NULL)
 * receives the embedded accelerations. */
static inline er_result er_compare(const sd_model *m, const sd_embedding *e, sd_embedded_data *ed, sd_data *d,
                                   const double *q, const double *u_tree, const double *tau_tree,
                                   const double *f_ext, double *qdd_e_out)
{
    er_result r = {0, INFINITY, INFINITY, INFINITY, INFINITY, -1};
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    const int ne = sd_embedding_nv(e);
    double *N = calloc((size_t)(nv * ne) + 1, sizeof *N), *ue = calloc((size_t)ne + 1, sizeof *ue);
    double *tau_e = calloc((size_t)ne + 1, sizeof *tau_e), *qdd_e = calloc((size_t)ne + 1, sizeof *qdd_e);
    double *qdd_t = calloc((size_t)nv + 1, sizeof *qdd_t), *qdd_ta = calloc((size_t)nv + 1, sizeof *qdd_ta);
    double *lam_e = calloc((size_t)nc + 1, sizeof *lam_e), *lam_ta = calloc((size_t)nc + 1, sizeof *lam_ta);
    double *G = calloc((size_t)(nc * nv) + 1, sizeof *G), *gl_e = calloc((size_t)nv + 1, sizeof *gl_e);
    double *gl_ta = calloc((size_t)nv + 1, sizeof *gl_ta);
    double *f_e = calloc((size_t)(6 * nb), sizeof *f_e), *f_ta = calloc((size_t)(6 * nb), sizeof *f_ta);
    double *tau_ind = calloc((size_t)nv + 1, sizeof *tau_ind);
    if (!er_tree_map(e, ed, q, nv, N)) {
        fprintf(stderr, "  sd_embedded_tree_speeds: %s\n", sd_embedded_error(ed));
        goto done;
    }
    sd_embedded_speeds_of_tree(e, u_tree, ue);
    for (int i = 0; i < nv; ++i) tau_ind[i] = 0.0;
    for (int j = 0; j < ne; ++j) tau_ind[sd_embedding_speed_index(e, j)] = tau_tree[sd_embedding_speed_index(e, j)];
    for (int j = 0; j < ne; ++j)
        for (int i = 0; i < nv; ++i) tau_e[j] += N[i * ne + j] * tau_ind[i];
    sd_closed_loop_options copt = {.interbody_forces = 1};
    if (sd_closed_loop_forward_dynamics(m, d, q, u_tree, tau_ind, f_ext, qdd_ta, lam_ta, &copt) != SD_OK) {
        fprintf(stderr, "  tree-augmented FD: %s\n", sd_data_error(d));
        goto done;
    }
    r.ta_rank = sd_closed_loop_rank(d);
    sd_embedded_fd_options eopt = {.interbody_forces = 1};
    if (sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, f_ext, qdd_e, qdd_t, &eopt) != SD_OK) {
        fprintf(stderr, "  embedded FD: %s\n", sd_embedded_error(ed));
        goto done;
    }
    if (sd_embedded_constraint_forces(e, ed, lam_e) != SD_OK) {
        fprintf(stderr, "  sd_embedded_constraint_forces: %s\n", sd_embedded_error(ed));
        goto done;
    }
    sd_data *td = sd_embedded_tree_data(ed);
    for (int k = 0; k < nb; ++k) {
        CHECK(sd_interbody_force(m, d, k, SD_FRAME_WORLD, f_ta + 6 * k) == SD_OK);
        CHECK(sd_interbody_force(m, td, k, SD_FRAME_WORLD, f_e + 6 * k) == SD_OK);
    }
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    for (int a = 0; a < nc; ++a)
        for (int i = 0; i < nv; ++i) gl_e[i] += G[a * nv + i] * lam_e[a], gl_ta[i] += G[a * nv + i] * lam_ta[a];
    r.ok = 1;
    r.qdd = er_rel(qdd_t, qdd_ta, nv);
    r.lambda = er_rel(lam_e, lam_ta, nc);
    r.gl = er_rel(gl_e, gl_ta, nv);
    r.force = er_rel(f_e, f_ta, 6 * nb);
    if (qdd_e_out) memcpy(qdd_e_out, qdd_e, (size_t)ne * sizeof *qdd_e);
done:
    free(N); free(ue); free(tau_e); free(qdd_e); free(qdd_t); free(qdd_ta); free(lam_e); free(lam_ta); free(G);
    free(gl_e); free(gl_ta); free(f_e); free(f_ta); free(tau_ind);
    return r;
}

#endif /* SOADYN_TEST_EMBED_REFERENCE_H */
