/*
 * src/flex/frequencies.c — a flexible body's modal natural frequencies with its hinge and every
 * other body held (soadyn/flex.h sd_model_flex_frequencies): the generalized symmetric-definite
 * eigenproblem K_m x = omega^2 M_m^ff x (001 Eq 25: M_m^ff is the constant flex/flex block of the
 * modal mass matrix, Eq 40: K_m the modal stiffness), solved by LAPACK dsygv. For mass-normalised
 * modes M_m^ff = I and omega^2 are K_m's diagonal; for any other modes (a data file with modal
 * masses, a rigid part adding nothing to M^ff) the same call gives the right answer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_body.h"
#include "internal.h"

/* after soadyn's headers: lapacke.h brings <complex.h> */
#include <lapacke.h>

sd_status sd_model_flex_frequencies(const sd_model *model, int body, double *omega, sd_error *err)
{
    const char *fn = "sd_model_flex_frequencies";
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (model == NULL) return sd_error_set(err, SD_E_ARGUMENT, "%s: model is NULL", fn);
    if (body < 0 || body >= model->n)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: body %d is out of range (the model has %d bodies)", fn, body,
                            model->n);
    const sd_flex_body *fb = model->nflex > 0 ? model->flex[body] : NULL;
    if (fb == NULL) return SD_OK; /* a rigid body has no modes */
    const int nm = sd_flex_body_nmodes(fb), N = 6 + nm;
    if (nm == 0) return SD_OK;
    if (omega == NULL) return sd_error_set(err, SD_E_ARGUMENT, "%s: omega is NULL", fn);
    const size_t bytes = ((size_t)N * N + 2 * (size_t)nm * nm + (size_t)nm) * sizeof(double);
    double *Mm = malloc(bytes);
    if (Mm == NULL) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", fn);
    double *K = Mm + (size_t)N * N, *Mff = K + (size_t)nm * nm, *eta = Mff + (size_t)nm * nm;
    memset(eta, 0, (size_t)nm * sizeof(double));
    sd_flex_mass(fb, eta, Mm); /* M_m^ff does not depend on eta (001 Sec 2.2) */
    for (int i = 0; i < nm; ++i)
        for (int j = 0; j < nm; ++j) Mff[i * nm + j] = Mm[(size_t)(6 + i) * N + 6 + j]; /* the trailing block */
    memcpy(K, sd_flex_body_desc(fb)->stiffness, (size_t)nm * nm * sizeof(double));
    const lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'N', 'L', nm, K, nm, Mff, nm, eta);
    sd_status st = SD_OK;
    if (info != 0)
        st = sd_error_set(err, SD_E_SINGULAR, "%s: body '%s': %s (LAPACK dsygv info %d)", fn, model->desc[body].name,
                          info > nm ? "the modal mass M_m^ff is not positive definite" : "the eigensolver did not converge",
                          (int)info);
    for (int r = 0; r < nm && st == SD_OK; ++r) omega[r] = eta[r] > 0.0 ? sqrt(eta[r]) : 0.0; /* K_m is PSD */
    free(Mm);
    return st;
}
