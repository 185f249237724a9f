/*
 * src/flex/frequencies.c — natural frequencies of the flexible bodies with the hinges locked
 * (soadyn/flex.h): a body's own (sd_model_flex_frequencies: its modal speeds alone, every hinge and
 * every other body's modes locked, the bodies riding on its nodes riding) and the model's system
 * modes (sd_model_system_frequencies: every flexible body's modal speeds together, free joints left
 * free). With the locked speeds' rates zero, the linearised motion of the kept speeds x at rest is
 * M_s x-ddot + K x = 0 (001 Eq 39-40 with the hinge speeds zero): M_s the model's mass matrix (the
 * node engine's, so riders on nodes, other flexible bodies and a floating base's recoil are in it)
 * on the kept speeds, K block-diagonal with each body's modal stiffness K_m (001 Eq 40) on its modal
 * speeds and zero on the free joints'. LAPACK dsygv solves the generalized symmetric-definite
 * problem; the first 6 eigenvalues per free joint are its rigid-body modes (zero) and are dropped.
 * For a body with nothing on its nodes, M_s on its modal speeds is M_m^ff (001 Eq 25), so its own
 * frequencies are those of K_m w.r.t. M_m^ff.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_body.h"
#include "internal.h"

/* after soadyn's headers: lapacke.h brings <complex.h> */
#include <lapacke.h>

int sd_model_nsystem_modes(const sd_model *model)
{
    if (!model) return 0;
    int n = 0;
    for (int k = 0; k < model->n; ++k) n += sd_model_body_nmodes(model, k);
    return n;
}

/* The modes of the kept speeds: every flexible body's modal speeds and the free joints' (only = -1),
 * or body `only`'s modal speeds alone (its hinge, every other hinge and every other body's modes
 * locked); see the top of this file. */
static sd_status locked_modes(const sd_model *model, const double *q, int only, double *omega, int *body,
                              double *share, sd_error *err, const char *fn)
{
    const int nmodes = only >= 0 ? sd_model_body_nmodes(model, only) : sd_model_nsystem_modes(model), nv = model->nv;
    if (nmodes <= 0) return SD_OK;
    if (omega == NULL) return sd_error_set(err, SD_E_ARGUMENT, "%s: omega is NULL", fn);
    int nfree = 0;
    for (int k = 0; k < model->n && only < 0; ++k) nfree += model->hinge[k] == SD_HINGE_FREE;
    const int n = nmodes + 6 * nfree;
    int *keep = malloc((size_t)n * sizeof(int)), *owner = malloc((size_t)n * sizeof(int));
    double *qr = malloc((size_t)model->nq * sizeof(double)), *M = malloc((size_t)nv * nv * sizeof(double));
    double *Ms = malloc((size_t)n * n * sizeof(double)), *K = calloc((size_t)n * n, sizeof(double));
    double *w = malloc((size_t)n * sizeof(double)), *Mx = malloc((size_t)n * sizeof(double));
    double *M2 = malloc((size_t)n * n * sizeof(double));
    sd_data *d = sd_data_new(model);
    sd_status st = SD_OK;
    if (!keep || !owner || !qr || !M || !Ms || !K || !w || !Mx || !M2 || !d) {
        st = sd_error_set(err, SD_E_MEMORY, "%s: out of memory (%d speeds)", fn, nv);
        goto done;
    }
    int at = 0; /* the kept speeds: a free joint's six, each flexible body's modal speeds (K_m on them) */
    for (int k = 0; k < model->n; ++k) {
        if (only >= 0 && k != only) continue;
        if (only < 0 && model->hinge[k] == SD_HINGE_FREE)
            for (int i = 0; i < 6; ++i) owner[at] = -1, keep[at++] = model->v_index[k] + i;
        const int nm = sd_model_body_nmodes(model, k), v0 = sd_model_mode_v_index(model, k);
        if (nm <= 0) continue;
        const double *Km = sd_flex_body_desc(model->flex[k])->stiffness;
        for (int i = 0; i < nm; ++i)
            for (int j = 0; j < nm; ++j) K[(size_t)(at + i) * n + at + j] = Km[i * nm + j];
        for (int i = 0; i < nm; ++i) owner[at] = k, keep[at++] = v0 + i;
    }
    if (q) memcpy(qr, q, (size_t)model->nq * sizeof(double));
    else sd_configuration_reference(model, qr);
    if ((st = sd_mass_matrix(model, d, qr, M)) != SD_OK) {
        st = sd_error_set(err, st, "%s: the mass matrix: %s", fn, sd_data_error(d));
        goto done;
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) Ms[(size_t)i * n + j] = M[(size_t)keep[i] * nv + keep[j]];
    memcpy(M2, Ms, (size_t)n * n * sizeof(double));
    const lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'L', n, K, n, M2, n, w);
    if (info != 0) {
        st = sd_error_set(err, SD_E_SINGULAR, "%s: %s (LAPACK dsygv info %d)", fn,
                          info > n ? "the mass matrix on the modal speeds is not positive definite"
                                   : "the eigensolver did not converge",
                          (int)info);
        goto done;
    }
    for (int r = 0; r < nmodes; ++r) { /* K_m is PSD: a negative eigenvalue is round-off of a zero */
        const int e = 6 * nfree + r;
        omega[r] = w[e] > 0.0 ? sqrt(w[e]) : 0.0;
        if (!body && !share) continue;
        /* eigenvector e (column e of K, row-major: K[i n + e]), M_s-normalised: kinetic energy shares
         * x_i (M_s x)_i summed per flexible body */
        for (int i = 0; i < n; ++i) {
            double s = 0.0;
            for (int j = 0; j < n; ++j) s += Ms[(size_t)i * n + j] * K[(size_t)j * n + e];
            Mx[i] = s;
        }
        int best = -1;
        double best_share = -INFINITY;
        for (int k = 0; k < model->n; ++k) {
            if (sd_model_body_nmodes(model, k) <= 0) continue;
            double energy = 0.0;
            for (int i = 0; i < n; ++i)
                if (owner[i] == k) energy += K[(size_t)i * n + e] * Mx[i];
            if (energy > best_share) best_share = energy, best = k;
        }
        if (body) body[r] = best;
        if (share) share[r] = best_share; /* x is M_s-normalised: the shares sum to 1 */
    }
done:
    free(keep); free(owner); free(qr); free(M); free(Ms); free(K); free(w); free(Mx); free(M2);
    sd_data_free(d);
    return st;
}

sd_status sd_model_system_frequencies(const sd_model *model, const double *q, double *omega, int *body,
                                      double *share, sd_error *err)
{
    const char *fn = "sd_model_system_frequencies";
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (model == NULL) return sd_error_set(err, SD_E_ARGUMENT, "%s: model is NULL", fn);
    return locked_modes(model, q, -1, omega, body, share, err, fn);
}

sd_status sd_model_flex_frequencies(const sd_model *model, int body, double *omega, sd_error *err)
{
    const char *fn = "sd_model_flex_frequencies";
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (model == NULL) return sd_error_set(err, SD_E_ARGUMENT, "%s: model is NULL", fn);
    if (body < 0 || body >= model->n)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: body %d is out of range (the model has %d bodies)", fn, body,
                            model->n);
    return locked_modes(model, NULL, body, omega, NULL, NULL, err, fn);
}
