/*
 * src/embed/embed_prescribed.c — prescribed speeds in the embedded forward dynamics (mixed dynamics,
 * 000 Sec 3, on the embedded speeds of 000 Sec 5), with the tree-augmented rows beside:
 *   1. M_e and C_e at (q, u, f_ext) (the tree's, projected: embed_projected.c);
 *   2. gamma_0 = the tree-augmented rows' rates at the prescribed accelerations with the free ones
 *      zero, so that G_e qdd + (Gdot u)_ta = G_e,f qdd_f + gamma_0;
 *   3. the partitioned system of the free speeds f (p: the prescribed ones)
 *        M_ff qdd_f - G_f* lambda = r_f = tau_f - C_f - M_fp qdd_p,   G_f qdd_f = -gamma_0
 *      by a Cholesky factorisation of M_ff: lambda = -(G_f M_ff^-1 G_f*)^+ (gamma_0 + G_f M_ff^-1 r_f)
 *      of minimum norm, qdd_f = M_ff^-1 (r_f + G_f* lambda);
 *   4. tau_p = (M_e qdd + C_e - G_e* lambda)_p, the prescribed speeds' forces;
 *   5. the embedded forward dynamics under the whole tau (free given, prescribed found), which
 *      reproduces qdd and gives qdd_tree, the inter-body forces and every multiplier as usual.
 * Why dense: a prescribed speed inside an aggregate is one of several of its node's independent
 * speeds, which the node Riccati step eliminates together; the partitioned solve needs no change to
 * the sweeps. O(nv^3).
 *
 * Glossary: see embed_internal.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed_internal.h"

struct sd_embed_pres_ws {
    double *M, *c;       /* ne x ne, ne: M_e and C_e */
    double *L;           /* ne x ne: M_ff, then its Cholesky factor */
    double *Z;           /* m x ne: row i = M_ff^-1 G_f(i)^T on the free speeds (packed) */
    double *S, *rhs, *lam; /* m x m, m, m: G_f M_ff^-1 G_f*, its right side, lambda */
    double *y, *x;       /* ne each: M_ff^-1 r_f (packed), the accelerations of step 2 */
    int *fr;             /* ne: the free speeds */
};

void sd_embed_pres_ws_free(struct sd_embed_pres_ws *w)
{
    if (!w) return;
    free(w->M);
    free(w->c);
    free(w->L);
    free(w->Z);
    free(w->S);
    free(w->rhs);
    free(w->lam);
    free(w->y);
    free(w->x);
    free(w->fr);
    free(w);
}

struct sd_embed_pres_ws *sd_embed_pres_ws_new(const sd_embedding *e)
{
    struct sd_embed_pres_ws *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t ne = (size_t)e->nv + 1, mr = (size_t)e->n_ta_rows + 1;
    w->M = calloc(ne * ne, sizeof(double));
    w->c = calloc(ne, sizeof(double));
    w->L = calloc(ne * ne, sizeof(double));
    w->Z = calloc(mr * ne, sizeof(double));
    w->S = calloc(mr * mr, sizeof(double));
    w->rhs = calloc(mr, sizeof(double));
    w->lam = calloc(mr, sizeof(double));
    w->y = calloc(ne, sizeof(double));
    w->x = calloc(ne, sizeof(double));
    w->fr = calloc(ne, sizeof(int));
    if (!w->M || !w->c || !w->L || !w->Z || !w->S || !w->rhs || !w->lam || !w->y || !w->x || !w->fr) {
        sd_embed_pres_ws_free(w);
        return NULL;
    }
    return w;
}

static inline double max2(double a, double b) { return a > b ? a : b; }

sd_status sd_embed_prescribed_forward_dynamics(const sd_embedding *e, sd_embedded_data *ed, const double *q,
                                               const double *u, const double *tau, const double *f_ext, double *qdd,
                                               double *qdd_tree, const sd_embedded_fd_options *options)
{
    const char *fn = "sd_embedded_forward_dynamics";
    struct sd_embed_pres_ws *w = ed->pres;
    sd_data *d = ed->tree;
    const unsigned char *pres = options->prescribed;
    const int ne = e->nv;
    if (e->model->nflex > 0) /* the partitioned solve over M_e has not been checked on flexible models */
        return sd_data_fail(d, SD_E_NOT_SUPPORTED,
                            "%s: model '%s' has flexible bodies: prescribed speeds in the embedded forward dynamics "
                            "are not offered for them (the partitioned solve over the projected M_e is not verified "
                            "there; tree-augmented loops offer them)",
                            fn, e->model->name ? e->model->name : "");
    if (options->tau_tree || !tau || !options->tau_out)
        return sd_data_fail(d, SD_E_ARGUMENT, "%s: prescribed speeds need tau on the embedded speeds and tau_out "
                                              "(not tau_tree)", fn);
    for (int v = 0; v < ne; ++v)
        if (pres[v] && !isfinite(qdd[v]))
            return sd_data_fail(d, SD_E_ARGUMENT, "%s: the prescribed qdd[%d] is not finite", fn, v);
    sd_status st;
    if ((st = sd_embedded_mass_matrix(e, ed, q, w->M)) != SD_OK ||
        (st = sd_embedded_bias_forces(e, ed, q, u, f_ext, w->c)) != SD_OK)
        return st;
    int nf = 0;
    for (int v = 0; v < ne; ++v) {
        w->x[v] = pres[v] ? qdd[v] : 0.0;
        if (!pres[v]) w->fr[nf++] = v;
    }
    const double *Ge = NULL, *gamma0 = NULL; /* step 2 (the velocities of the bias forces' call) */
    const int mr = sd_embed_mixed_rates(e, ed, w->x, &Ge, &gamma0);
    double mmax = 0.0; /* step 3 */
    for (int a = 0; a < nf; ++a) {
        double r = tau[w->fr[a]] - w->c[w->fr[a]];
        for (int v = 0; v < ne; ++v) r -= w->M[(size_t)w->fr[a] * ne + v] * w->x[v];
        w->y[a] = r;
        for (int b = 0; b < nf; ++b) w->L[(size_t)a * nf + b] = w->M[(size_t)w->fr[a] * ne + w->fr[b]];
        mmax = max2(mmax, w->L[(size_t)a * nf + a]);
    }
    if (nf > 0 && sd_cholesky_factor(w->L, nf, 1e-13 * mmax) >= 0)
        return sd_data_fail(d, SD_E_SINGULAR, "%s: the mass matrix over the free speeds is singular", fn);
    sd_cholesky_solve(w->L, nf, w->y);
    if (mr > 0) {
        double ref = 0.0, gnorm = 0.0;
        for (int i = 0; i < mr; ++i) {
            double *z = w->Z + (size_t)i * ne, s = gamma0[i];
            for (int a = 0; a < nf; ++a) z[a] = Ge[(size_t)i * ne + w->fr[a]], s += z[a] * w->y[a];
            w->rhs[i] = -s;
            gnorm = max2(gnorm, fabs(s));
            sd_cholesky_solve(w->L, nf, z);
        }
        for (int i = 0; i < mr; ++i)
            for (int j = 0; j <= i; ++j) {
                double s = 0.0;
                for (int a = 0; a < nf; ++a) s += Ge[(size_t)i * ne + w->fr[a]] * w->Z[(size_t)j * ne + a];
                w->S[i * mr + j] = w->S[j * mr + i] = s;
                if (i == j) ref = max2(ref, s);
            }
        ref = max2(ref, 1e-14 / e->model->total_mass); /* the loops layer's floor */
        if (sd_loops_psd_solve(d, w->S, mr, w->rhs, w->lam, ref, 1e-10) < 0)
            return sd_data_fail(d, SD_E_SINGULAR, "%s: pivoted Cholesky failed", fn);
        double worst = 0.0, lnorm = 0.0, scale = 0.0; /* the rows must be satisfiable */
        for (int i = 0; i < mr; ++i) lnorm = max2(lnorm, fabs(w->lam[i])), scale = max2(scale, w->S[i * mr + i]);
        for (int i = 0; i < mr; ++i) {
            double r = -w->rhs[i];
            for (int j = 0; j < mr; ++j) r += w->S[i * mr + j] * w->lam[j];
            worst = max2(worst, fabs(r));
        }
        if (!(worst <= 1e-6 * (gnorm + scale * lnorm) + 1e-12))
            return sd_data_fail(d, SD_E_SINGULAR,
                                "%s: the prescribed accelerations break the tree-augmented constraints (no free "
                                "accelerations satisfy them: residual %.3g)",
                                fn, worst);
        for (int a = 0; a < nf; ++a)
            for (int i = 0; i < mr; ++i) w->y[a] += w->Z[(size_t)i * ne + a] * w->lam[i];
    }
    for (int a = 0; a < nf; ++a) w->x[w->fr[a]] = w->y[a];
    double *tau_out = options->tau_out; /* step 4 */
    if (tau_out != tau) memmove(tau_out, tau, (size_t)ne * sizeof(double));
    for (int v = 0; v < ne; ++v) {
        if (!pres[v]) continue;
        double s = w->c[v];
        for (int j = 0; j < ne; ++j) s += w->M[(size_t)v * ne + j] * w->x[j];
        for (int i = 0; i < mr; ++i) s -= Ge[(size_t)i * ne + v] * w->lam[i];
        tau_out[v] = s;
    }
    /* step 5: the whole tau; the prescribed accelerations stay exactly those given */
    sd_embedded_fd_options o = *options;
    o.prescribed = NULL;
    o.tau_out = NULL;
    if ((st = sd_embedded_forward_dynamics(e, ed, q, u, tau_out, f_ext, w->y, qdd_tree, &o)) != SD_OK) return st;
    for (int v = 0; v < ne; ++v)
        if (!pres[v]) qdd[v] = w->y[v];
    return SD_OK;
}
