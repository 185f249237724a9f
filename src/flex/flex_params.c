/*
 * src/flex/flex_params.c — a flexible body's modal frequencies and damping ratios, read and set on a
 * built model (soadyn/params.h). Both work in the body's mass-normalised modes: the generalized
 * eigenproblem K_m x = omega^2 M_m^ff x (001 Eq 25 and 40; LAPACK dsygv) gives X with X^T M_m^ff X = I
 * and X^T K_m X = diag(omega^2), so K_m = M_m^ff X diag(omega^2) X^T M_m^ff (X^-1 = X^T M_m^ff), and
 * proportional modal damping is D_m = M_m^ff X diag(2 zeta omega) X^T M_m^ff. The setter makes the
 * body anew from its description with the new K_m and D_m (sd_flex_body_new checks them as
 * sd_builder_set_flexible does) and swaps it in only when that succeeds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_body.h"
#include "internal.h"

/* after soadyn's headers: lapacke.h brings <complex.h> */
#include <lapacke.h>

/* The body's flexible model, or NULL with err naming what is wrong. */
static const sd_flex_body *flexible_body(const sd_model *m, int body, const char *fn, sd_error *err)
{
    if (!m) {
        sd_error_set(err, SD_E_ARGUMENT, "%s: model is NULL", fn);
        return NULL;
    }
    if (body < 0 || body >= m->n) {
        sd_error_set(err, SD_E_ARGUMENT, "%s: body index %d is out of range (the model has bodies 0 to %d)", fn, body,
                     m->n - 1);
        return NULL;
    }
    const sd_flex_body *fb = m->nflex > 0 ? m->flex[body] : NULL;
    if (!fb) sd_error_set(err, SD_E_ARGUMENT, "%s: body '%s' is not flexible", fn, m->desc[body].name);
    return fb;
}

/* X (nm x nm row-major, column r the mass-normalised mode r) and omega (ascending) of the body; X and
 * Mff are the caller's nm^2 each. */
static sd_status modal_basis(const sd_model *m, int body, const sd_flex_body *fb, const char *fn, double *X,
                             double *Mff, double *omega, sd_error *err)
{
    const int nm = sd_flex_body_nmodes(fb);
    const size_t nn = (size_t)nm * (size_t)nm;
    memcpy(X, sd_flex_body_desc(fb)->stiffness, nn * sizeof(double));
    memcpy(Mff, sd_flex_body_modal_mass(fb), nn * sizeof(double));
    const lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'L', nm, X, nm, Mff, nm, omega);
    if (info != 0)
        return sd_error_set(err, SD_E_SINGULAR, "%s: body '%s': %s (LAPACK dsygv info %d)", fn, m->desc[body].name,
                            info > nm ? "the modal mass M_m^ff is not positive definite"
                                      : "the eigensolver did not converge",
                            (int)info);
    for (int r = 0; r < nm; ++r) omega[r] = omega[r] > 0.0 ? sqrt(omega[r]) : 0.0; /* K_m is PSD */
    return SD_OK;
}

sd_status sd_model_flex_damping_ratios(const sd_model *m, int body, double *zeta, sd_error *err)
{
    const char *fn = "sd_model_flex_damping_ratios";
    if (m && body >= 0 && body < m->n && !(m->nflex > 0 && m->flex[body])) return SD_OK; /* rigid: no modes */
    const sd_flex_body *fb = flexible_body(m, body, fn, err);
    if (!fb) return err ? err->status : SD_E_ARGUMENT;
    const int nm = sd_flex_body_nmodes(fb);
    if (nm == 0) return SD_OK;
    if (!zeta) return sd_error_set(err, SD_E_ARGUMENT, "%s: zeta is NULL", fn);
    const size_t nn = (size_t)nm * (size_t)nm;
    double *X = malloc((2 * nn + (size_t)nm) * sizeof(double));
    if (!X) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", fn);
    double *Mff = X + nn, *omega = Mff + nn;
    const sd_status st = modal_basis(m, body, fb, fn, X, Mff, omega, err);
    const double *D = sd_flex_body_desc(fb)->damping;
    for (int r = 0; r < nm && st == SD_OK; ++r) {
        double xDx = 0.0; /* x_r^T D_m x_r */
        for (int i = 0; D && i < nm; ++i)
            for (int j = 0; j < nm; ++j) xDx += X[i * nm + r] * D[i * nm + j] * X[j * nm + r];
        zeta[r] = omega[r] > 0.0 ? xDx / (2.0 * omega[r]) : 0.0;
    }
    free(X);
    return st;
}

sd_status sd_model_set_flex_modes(sd_model *m, int body, const double *omega_new, const double *zeta,
                                  sd_error *err)
{
    const char *fn = "sd_model_set_flex_modes";
    const sd_flex_body *fb = flexible_body(m, body, fn, err);
    if (!fb) return err ? err->status : SD_E_ARGUMENT;
    const int nm = sd_flex_body_nmodes(fb);
    if (nm == 0) return SD_OK;
    if (!omega_new || !zeta) return sd_error_set(err, SD_E_ARGUMENT, "%s: omega or zeta is NULL", fn);
    const sd_body_desc *bd = &m->desc[body];
    for (int r = 0; r < nm; ++r) {
        if (!(omega_new[r] >= 0.0) || !isfinite(omega_new[r]))
            return sd_body_desc_fail(err, SD_E_MODEL, bd, "flexible body '%s': natural frequency omega[%d] = %g rad/s "
                                     "is not a finite number >= 0", bd->name, r, omega_new[r]);
        if (!(zeta[r] >= 0.0) || !isfinite(zeta[r]))
            return sd_body_desc_fail(err, SD_E_MODEL, bd, "flexible body '%s': damping ratio zeta[%d] = %g is not a "
                                     "finite number >= 0", bd->name, r, zeta[r]);
    }
    const size_t nn = (size_t)nm * (size_t)nm;
    double *X = malloc((5 * nn + (size_t)nm) * sizeof(double));
    if (!X) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", fn);
    double *Mff = X + nn, *B = Mff + nn, *K = B + nn, *D = K + nn, *omega = D + nn;
    sd_status st = modal_basis(m, body, fb, fn, X, Mff, omega, err);
    if (st == SD_OK) {
        const double *M = sd_flex_body_modal_mass(fb); /* Mff above was overwritten by dsygv */
        for (int i = 0; i < nm; ++i) /* B = M_m^ff X: column r is the mode's modal force M x_r */
            for (int r = 0; r < nm; ++r) {
                double s = 0.0;
                for (int j = 0; j < nm; ++j) s += M[i * nm + j] * X[j * nm + r];
                B[i * nm + r] = s;
            }
        for (int i = 0; i < nm; ++i) /* K, D = B diag(.) B^T, formed once per pair and mirrored */
            for (int j = i; j < nm; ++j) {
                double k = 0.0, d = 0.0;
                for (int r = 0; r < nm; ++r) {
                    const double bb = B[i * nm + r] * B[j * nm + r];
                    k += omega_new[r] * omega_new[r] * bb;
                    d += 2.0 * zeta[r] * omega_new[r] * bb;
                }
                K[i * nm + j] = K[j * nm + i] = k;
                D[i * nm + j] = D[j * nm + i] = d;
            }
        sd_flex_desc desc = *sd_flex_body_desc(fb);
        desc.stiffness = K;
        desc.damping = D;
        sd_flex_body *made = sd_flex_body_new(&desc, m->mass[body], m->com + 3 * body, m->inertia_com + 9 * body,
                                              bd->name, err);
        if (!made) st = err && err->status != SD_OK ? err->status : SD_E_MODEL;
        else {
            sd_flex_body_free(m->flex[body]);
            m->flex[body] = made;
            m->params_generation++;
            m->compiled = NULL; /* the compiled code folded the old values in (soadyn/compile.h) */
        }
    }
    free(X);
    return st;
}
