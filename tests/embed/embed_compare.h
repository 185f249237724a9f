/*
 * tests/embed/embed_compare.h — the embedded system against the tree-augmented one (loops.h) at one
 * consistent state, for the mechanism and Cassie tests (issue 11, "What it must show").
 *
 * Independent sides: the tree-augmented forward dynamics (sd_closed_loop_forward_dynamics, its
 * lambda and inter-body forces), the tree's mass matrix and bias forces, the constraint Jacobian G,
 * a Euclidean projection of the speeds written in tests/loops (random_loops.c), a Cholesky factor
 * and Gdot u by finite differences written here / in loops_oracle.h. The embedding's N(q) is read
 * column by column through sd_embedded_tree_speeds and checked for what defines it (G N = 0 on the
 * embedded rows, identity on the independent speeds), then used for N^T M N, N^T tau.
 * Joint forces are compared acting at the independent hinges only (see step 4 of ec_compare).
 */
#ifndef SOADYN_TEST_EMBED_COMPARE_H
#define SOADYN_TEST_EMBED_COMPARE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>
#include <soadyn/embed.h>

#include "loops/loops_oracle.h"
#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

/* path = <shared models folder (argv[1])>/rel; 0 when the file is there, else the exit code: 2 on
 * a usage error, 77 (skipped, said on stdout) when the shared models are absent. */
static inline int ec_shared_model(int argc, char **argv, const char *rel, char *path, size_t size)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <shared models folder>\n", argv[0]);
        return 2;
    }
    snprintf(path, size, "%s/%s", argv[1], rel);
    FILE *probe = fopen(path, "r");
    if (!probe) {
        printf("skipped: %s not found (the shared models are absent)\n", path);
        return 77;
    }
    fclose(probe);
    return 0;
}

/* The worst relative differences seen (the lead quotes them). */
typedef struct ec_worst {
    double closure;   /* largest |position residual| of the embedded constraints after closing, m/rad */
    double speeds;    /* N u_e vs the projected u_tree */
    double nmap;      /* |G N| on embedded rows, relative to |G| |N| */
    double qdd;       /* qdd_tree (embedded) vs the tree-augmented qdd */
    double accrows;   /* |G qdd_tree + Gdot u| (finite-difference Gdot u) relative to |Gdot u| */
    double force;     /* every body's inter-body force */
    double lambda;    /* multipliers */
    double mass;      /* M_e vs N^T M N */
    double bias;      /* C_e vs N^T (C + M qdd_c) */
    double minv;      /* |M_e^-1 M_e - I| */
    double logdet;    /* log det M_e vs Cholesky of N^T M N, absolute */
    double id;        /* ID(FD(tau)) vs tau */
    double cond;      /* largest cond(M_e) estimate */
    int states;
} ec_worst;

static inline double ec_maxabs(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(x[i]));
    return s;
}

/* max |a - b| / max(floor, max |b|) */
static inline double ec_rel(const double *a, const double *b, int n, double floor)
{
    double num = 0.0;
    for (int i = 0; i < n; ++i) {
        const double d = fabs(a[i] - b[i]);
        if (isnan(d)) return INFINITY;
        num = fmax(num, d);
    }
    return num / fmax(floor, ec_maxabs(b, n));
}

/* Cholesky L of the n x n SPD A (row-major, lower); returns log det A, NAN if not SPD. */
static inline double ec_cholesky_logdet(const double *A, int n, double *L)
{
    double ld = 0.0;
    memset(L, 0, (size_t)n * n * sizeof *L);
    for (int j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (int k = 0; k < j; ++k) s -= L[j * n + k] * L[j * n + k];
        if (!(s > 0.0)) return NAN;
        L[j * n + j] = sqrt(s);
        ld += log(s);
        for (int i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (int k = 0; k < j; ++k) t -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = t / L[j * n + j];
        }
    }
    return ld;
}

/* The rows of the embedded constraints (1) or not (0), n_c flags. */
static inline void ec_embedded_rows(const sd_model *m, const sd_embedding *e, unsigned char *flag)
{
    for (int c = 0; c < sd_model_nconstraints(m); ++c) {
        const int r0 = sd_model_constraint_row_offset(m, c), nr = sd_model_constraint_nrows(m, c);
        for (int r = 0; r < nr; ++r) flag[r0 + r] = (unsigned char)(sd_embedding_constraint_embedded(e, c) == 1);
    }
}

static inline int ec_all_embedded(const sd_model *m, const sd_embedding *e)
{
    for (int c = 0; c < sd_model_nconstraints(m); ++c)
        if (sd_embedding_constraint_embedded(e, c) != 1) return 0;
    return 1;
}

/* A consistent random state near q_ref: q_ref moved by random speeds of size `scale` (times dt 1),
 * closed by the embedding (independent coordinates held), checked closed with
 * sd_constraint_residuals on every constraint (tree-augmented ones are closed by
 * sd_assemble_configuration first when present); u_tree random of size uscale projected on G's
 * null space (Euclidean, tests/loops), tau_tree and f_ext random. Returns 0 when the state could
 * not be made (Newton failed from there: the caller tries a smaller step). */
static inline int ec_random_state(const sd_model *m, const sd_embedding *e, sd_embedded_data *ed, sd_data *d,
                                  uint64_t *rng, const double *q_ref, double scale, double uscale, double *q,
                                  double *u_tree, double *tau_tree, double *f_ext)
{
    const int nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    double *du = malloc((size_t)nv * sizeof *du), *G = malloc((size_t)(nc * nv + 1) * sizeof *G);
    double *pos = malloc((size_t)(nc + 1) * sizeof *pos);
    random_vector(rng, du, nv, scale);
    sd_configuration_integrate(m, q_ref, du, 1.0, q);
    int ok = 1;
    if (!ec_all_embedded(m, e)) ok = sd_assemble_configuration(m, d, q, NULL, 1e-13, 100, q, NULL) == SD_OK;
    double res = 1.0;
    ok = ok && sd_embedded_close(e, ed, q, q, &res) == SD_OK && res < 1e-12;
    ok = ok && sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK && ec_maxabs(pos, nc) < 1e-12;
    if (ok) {
        random_vector(rng, u_tree, nv, uscale);
        sd_constraint_jacobian(m, d, q, G);
        project_on_nullspace(G, nc, nv, u_tree);
        random_vector(rng, tau_tree, nv, 1.0);
        memset(f_ext, 0, (size_t)(6 * nb) * sizeof *f_ext);
        for (int k = 0; k < nb; k += 2) random_vector(rng, f_ext + 6 * k, 6, 0.5);
    }
    free(du);
    free(G);
    free(pos);
    return ok;
}

/* Every check of the embedded system against the tree-augmented one at (q, u_tree, tau_tree,
 * f_ext) (consistent: closed, G u_tree = 0), at relative tolerance tol (scaled by cond(M_e) past
 * 1e5 for M^-1 and the solves, test_cond_tolerance). Updates w. */
static inline void ec_compare(const sd_model *m, const sd_embedding *e, sd_embedded_data *ed, sd_data *d,
                              const double *q_in, const double *u_tree, const double *tau_tree, const double *f_ext,
                              double tol, ec_worst *w)
{
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m), nb = sd_model_nbodies(m);
    const int ne = sd_embedding_nv(e);
    double *q = malloc((size_t)nq * sizeof *q), *ue = calloc((size_t)ne + 1, sizeof *ue);
    double *ut = malloc((size_t)nv * sizeof *ut), *N = calloc((size_t)(nv * ne) + 1, sizeof *N);
    double *G = malloc((size_t)(nc * nv + 1) * sizeof *G), *pos = malloc((size_t)(nc + 1) * sizeof *pos);
    double *tau_e = calloc((size_t)ne + 1, sizeof *tau_e), *qdd_e = calloc((size_t)ne + 1, sizeof *qdd_e);
    double *qdd_t = malloc((size_t)nv * sizeof *qdd_t), *qdd_ta = malloc((size_t)nv * sizeof *qdd_ta);
    double *lam_ta = calloc((size_t)nc + 1, sizeof *lam_ta), *lam_e = calloc((size_t)nc + 1, sizeof *lam_e);
    double *f_ta = malloc((size_t)(6 * nb) * sizeof *f_ta), *f_e = malloc((size_t)(6 * nb) * sizeof *f_e);
    double *M = malloc((size_t)(nv * nv) * sizeof *M), *Me = calloc((size_t)(ne * ne) + 1, sizeof *Me);
    double *NMN = calloc((size_t)(ne * ne) + 1, sizeof *NMN), *L = calloc((size_t)(ne * ne) + 1, sizeof *L);
    double *Minv = calloc((size_t)(ne * ne) + 1, sizeof *Minv), *C = malloc((size_t)nv * sizeof *C);
    double *ce = calloc((size_t)ne + 1, sizeof *ce), *ce_ref = calloc((size_t)ne + 1, sizeof *ce_ref);
    double *qc = malloc((size_t)nv * sizeof *qc), *tmp = malloc((size_t)nv * sizeof *tmp), *gdu = calloc((size_t)nc + 1, sizeof *gdu);
    double *tau_id = calloc((size_t)ne + 1, sizeof *tau_id);
    unsigned char *erow = calloc((size_t)nc + 1, 1);
    ec_embedded_rows(m, e, erow);

    /* 1. the closed configuration: the state was closed, Newton takes 0 steps and moves nothing */
    double res = 1.0;
    CHECK(sd_embedded_close(e, ed, q_in, q, &res) == SD_OK);
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK);
    double clo = 0.0;
    for (int r = 0; r < nc; ++r)
        if (erow[r]) clo = fmax(clo, fabs(pos[r]));
    CHECK(clo < 1e-12);
    w->closure = fmax(w->closure, clo);

    /* 2. speeds: the selection, and N u_e back to u_tree */
    sd_embedded_speeds_of_tree(e, u_tree, ue);
    CHECK(sd_embedded_tree_speeds(e, ed, q, ue, ut) == SD_OK);
    const double sp = ec_rel(ut, u_tree, nv, 1.0);
    CHECK(sp < tol);
    w->speeds = fmax(w->speeds, sp);

    /* 3. N by columns; G N = 0 on the embedded rows, N = I on the independent speeds */
    for (int j = 0; j < ne; ++j) {
        double *ej = calloc((size_t)ne, sizeof *ej);
        ej[j] = 1.0;
        CHECK(sd_embedded_tree_speeds(e, ed, q, ej, ut) == SD_OK);
        for (int i = 0; i < nv; ++i) N[i * ne + j] = ut[i];
        free(ej);
    }
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    double gn = 0.0, gmax = ec_maxabs(G, nc * nv), nmax = ec_maxabs(N, nv * ne);
    for (int r = 0; r < nc; ++r) {
        if (!erow[r]) continue;
        for (int j = 0; j < ne; ++j) {
            double s = 0.0;
            for (int i = 0; i < nv; ++i) s += G[r * nv + i] * N[i * ne + j];
            gn = fmax(gn, fabs(s));
        }
    }
    gn /= fmax(1e-300, gmax * nmax);
    CHECK(gn < tol);
    w->nmap = fmax(w->nmap, gn);
    for (int i = 0; i < ne; ++i) {
        const int t = sd_embedding_speed_index(e, i);
        CHECK(t >= 0 && t < nv);
        if (t < 0 || t >= nv) continue;
        for (int j = 0; j < ne; ++j) CHECK(N[t * ne + j] == (i == j ? 1.0 : 0.0));
    }

    /* 4. forward dynamics. The joint forces act at the independent hinges only: the embedded
     * system's tau lives on its own speeds, and a torque given on a dependent hinge has no place
     * there (N^T would carry it to the independent ones: the same motion, other internal forces).
     * So tau_t = tau_tree with its dependent entries zeroed, tau_e = its selection = N^T tau_t. */
    double *tau_t = calloc((size_t)nv, sizeof *tau_t);
    for (int i = 0; i < ne; ++i) {
        const int t = sd_embedding_speed_index(e, i);
        if (t >= 0 && t < nv) tau_t[t] = tau_tree[t];
    }
    for (int j = 0; j < ne; ++j) {
        double s = 0.0;
        for (int i = 0; i < nv; ++i) s += N[i * ne + j] * tau_t[i];
        tau_e[j] = s;
    }
    sd_closed_loop_options copt = {.interbody_forces = 1};
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u_tree, tau_t, f_ext, qdd_ta, lam_ta, &copt) == SD_OK);
    for (int k = 0; k < nb; ++k) CHECK(sd_interbody_force(m, d, k, SD_FRAME_WORLD, f_ta + 6 * k) == SD_OK);
    sd_embedded_fd_options eopt = {.interbody_forces = 1};
    const sd_status st = sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, f_ext, qdd_e, qdd_t, &eopt);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "embedded FD: %s\n", sd_embedded_error(ed));
    sd_data *td = sd_embedded_tree_data(ed);
    for (int k = 0; k < nb; ++k) CHECK(sd_interbody_force(m, td, k, SD_FRAME_WORLD, f_e + 6 * k) == SD_OK);
    CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
    const double eq = ec_rel(qdd_t, qdd_ta, nv, 1.0), ef = ec_rel(f_e, f_ta, 6 * nb, 1.0), el = ec_rel(lam_e, lam_ta, nc, 1.0);
    CHECK(eq < tol);
    CHECK(ef < tol);
    CHECK(el < tol);
    if (eq >= tol || ef >= tol || el >= tol)
        fprintf(stderr, "  embedded vs tree-augmented: qdd %.3g, forces %.3g, lambda %.3g\n", eq, ef, el);
    w->qdd = fmax(w->qdd, eq);
    w->force = fmax(w->force, ef);
    w->lambda = fmax(w->lambda, el);
    /* 4b. the tree's forces on every speed, dependent ones included (sd_embedded_fd_options.tau_tree):
     * the same motion, multipliers and inter-body forces as the tree-augmented solve with tau_tree */
    {
        double *qdd_t2 = malloc((size_t)nv * sizeof *qdd_t2);
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, u_tree, tau_tree, f_ext, qdd_ta, lam_ta, &copt) == SD_OK);
        for (int k = 0; k < nb; ++k) CHECK(sd_interbody_force(m, d, k, SD_FRAME_WORLD, f_ta + 6 * k) == SD_OK);
        sd_embedded_fd_options topt = {.interbody_forces = 1, .tau_tree = tau_tree};
        CHECK(sd_embedded_forward_dynamics(e, ed, q, ue, NULL, f_ext, qdd_e, qdd_t2, &topt) == SD_OK);
        for (int k = 0; k < nb; ++k) CHECK(sd_interbody_force(m, td, k, SD_FRAME_WORLD, f_e + 6 * k) == SD_OK);
        CHECK(sd_embedded_constraint_forces(e, ed, lam_e) == SD_OK);
        const double tq = ec_rel(qdd_t2, qdd_ta, nv, 1.0), tf = ec_rel(f_e, f_ta, 6 * nb, 1.0);
        const double tl = ec_rel(lam_e, lam_ta, nc, 1.0);
        CHECK(tq < tol);
        CHECK(tf < tol);
        CHECK(tl < tol);
        if (tq >= tol || tf >= tol || tl >= tol)
            fprintf(stderr, "  tau_tree: embedded vs tree-augmented: qdd %.3g, forces %.3g, lambda %.3g\n", tq, tf, tl);
        w->qdd = fmax(w->qdd, tq);
        w->force = fmax(w->force, tf);
        w->lambda = fmax(w->lambda, tl);
        /* leave the workspace as step 4 left it, for the checks below */
        CHECK(sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, f_ext, qdd_e, qdd_t, &eopt) == SD_OK);
        free(qdd_t2);
    }
    for (int i = 0; i < ne; ++i) { /* qdd_e is qdd_tree on the independent speeds */
        const int t = sd_embedding_speed_index(e, i);
        if (t >= 0 && t < nv) CHECK(fabs(qdd_e[i] - qdd_t[t]) <= 1e-12 * fmax(1.0, fabs(qdd_t[t])));
    }
    /* the acceleration-level constraints, with Gdot u by finite differences (truncation ~1e-9) */
    CHECK(oracle_gdot_u(m, d, q, u_tree, 1e-3, gdu));
    double ar = 0.0;
    for (int r = 0; r < nc; ++r) {
        double s = gdu[r];
        for (int i = 0; i < nv; ++i) s += G[r * nv + i] * qdd_t[i];
        ar = fmax(ar, fabs(s));
    }
    ar /= fmax(1.0, ec_maxabs(gdu, nc));
    CHECK(ar < 1e-7);
    w->accrows = fmax(w->accrows, ar);

    /* 5. M_e = N^T M N (armature in M), log det by Cholesky, M^-1 M = I */
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    for (int a = 0; a < ne; ++a)
        for (int b = 0; b < ne; ++b) {
            double s = 0.0;
            for (int i = 0; i < nv; ++i) {
                double t = 0.0;
                for (int j = 0; j < nv; ++j) t += M[i * nv + j] * N[j * ne + b];
                s += N[i * ne + a] * t;
            }
            NMN[a * ne + b] = s;
        }
    CHECK(sd_embedded_mass_matrix(e, ed, q, Me) == SD_OK);
    const double em = ec_rel(Me, NMN, ne * ne, 1e-300);
    CHECK(em < tol);
    w->mass = fmax(w->mass, em);
    const double ld_ref = ec_cholesky_logdet(NMN, ne, L);
    const double cond = ne ? test_cond_estimate(NMN, L, ne) : 1.0;
    w->cond = fmax(w->cond, cond);
    const double ctol = test_cond_tolerance(tol, cond);
    double ld = NAN;
    CHECK(sd_embedded_log_det(e, ed, q, &ld) == SD_OK);
    CHECK(fabs(ld - ld_ref) < ctol * fmax(1.0, fabs(ld_ref)));
    w->logdet = fmax(w->logdet, fabs(ld - ld_ref));
    CHECK(sd_embedded_mass_matrix_inverse(e, ed, q, Minv) == SD_OK);
    double ei = 0.0;
    for (int a = 0; a < ne; ++a)
        for (int b = 0; b < ne; ++b) {
            double s = 0.0;
            for (int k = 0; k < ne; ++k) s += Minv[a * ne + k] * Me[k * ne + b];
            ei = fmax(ei, fabs(s - (a == b)));
        }
    CHECK(ei < ctol);
    w->minv = fmax(w->minv, ei);

    /* 6. C_e = N^T (C + M qdd_c), qdd_c = qdd_tree - N qdd_e (zero on the independent speeds) */
    for (int i = 0; i < nv; ++i) {
        double s = qdd_t[i];
        for (int j = 0; j < ne; ++j) s -= N[i * ne + j] * qdd_e[j];
        qc[i] = s;
    }
    for (int i = 0; i < ne; ++i) {
        const int t = sd_embedding_speed_index(e, i);
        if (t >= 0 && t < nv) CHECK(fabs(qc[t]) <= 1e-12 * fmax(1.0, ec_maxabs(qdd_t, nv)));
    }
    CHECK(sd_bias_forces(m, d, q, u_tree, f_ext, C) == SD_OK);
    for (int i = 0; i < nv; ++i) {
        double s = C[i];
        for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qc[j];
        tmp[i] = s;
    }
    for (int j = 0; j < ne; ++j) {
        double s = 0.0;
        for (int i = 0; i < nv; ++i) s += N[i * ne + j] * tmp[i];
        ce_ref[j] = s;
    }
    CHECK(sd_embedded_bias_forces(e, ed, q, ue, f_ext, ce) == SD_OK);
    const double ec = ec_rel(ce, ce_ref, ne, 1.0);
    CHECK(ec < tol);
    w->bias = fmax(w->bias, ec);

    /* 7. ID(FD(tau)) = tau (all constraints embedded: ID refuses tree-augmented ones) */
    if (ec_all_embedded(m, e)) {
        CHECK(sd_embedded_inverse_dynamics(e, ed, q, ue, qdd_e, f_ext, tau_id) == SD_OK);
        const double eid = ec_rel(tau_id, tau_e, ne, 1.0);
        CHECK(eid < ctol);
        w->id = fmax(w->id, eid);
    }
    w->states++;
    free(q); free(ue); free(ut); free(N); free(G); free(pos); free(tau_e); free(qdd_e); free(qdd_t); free(qdd_ta);
    free(lam_ta); free(lam_e); free(f_ta); free(f_e); free(M); free(Me); free(NMN); free(L); free(Minv); free(C);
    free(ce); free(ce_ref); free(qc); free(tmp); free(gdu); free(tau_id); free(erow); free(tau_t);
}

static inline void ec_print(const char *name, const ec_worst *w)
{
    printf("%-28s %2d states | closure %.1e  N u_e %.1e  |GN| %.1e | qdd %.1e  forces %.1e  lambda %.1e | "
           "M %.1e  C %.1e  M^-1 %.1e  logdet %.1e  ID %.1e | G qdd + Gdot u %.1e (FD oracle) | cond(M_e) %.1e\n",
           name, w->states, w->closure, w->speeds, w->nmap, w->qdd, w->force, w->lambda, w->mass, w->bias, w->minv,
           w->logdet, w->id, w->accrows, w->cond);
}

#endif /* SOADYN_TEST_EMBED_COMPARE_H */
