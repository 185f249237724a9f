/*
 * src/compile/compile_check.c — generated code against the library at random states (compile_check.h).
 * An independent computation: the library's recursions on the model, the generated code's
 * straight-line version compiled by another compiler run; a wrong or stale object differs by O(1).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "compile_check.h"

/* max |g - l| / max |l| over n entries (the absolute difference when l is zero). */
static double relative_difference(const double *g, const double *l, size_t n)
{
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; ++i) {
        diff = fmax(diff, fabs(g[i] - l[i]));
        scale = fmax(scale, fabs(l[i]));
    }
    return scale > 0.0 ? diff / scale : diff;
}

/* The 1-norm (largest column sum) of an n x n matrix. */
static double norm1(const double *A, size_t n)
{
    double best = 0.0;
    for (size_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (size_t i = 0; i < n; ++i) sum += fabs(A[i * n + j]);
        best = fmax(best, sum);
    }
    return best;
}

static void random_fill(uint64_t *rng, double *x, int n)
{
    for (int i = 0; i < n; ++i) x[i] = 2.0 * sd_random_uniform(rng) - 1.0;
}

sd_status sd_compiled_self_check(const sd_model *m, const sd_compiled_code *code, int nstates, double *worst,
                                 sd_error *err)
{
    const size_t nq = (size_t)m->nq, nv = (size_t)m->nv, n = (size_t)m->n;
    /* q | u | x (qdd or tau) | f_ext | library out | generated out, each out nv^2 or 6 n long | M */
    const size_t nout = nv * nv > 6 * n ? nv * nv : 6 * n;
    double *q = malloc((nq + 2 * nv + 6 * n + 2 * nout + nv * nv + 1) * sizeof *q);
    sd_data *d = sd_data_new(m);
    if (!q || !d) {
        free(q);
        sd_data_free(d);
        return sd_error_set(err, SD_E_MEMORY, "sd_model_compile: out of memory for the self-check");
    }
    double *u = q + nq, *x = u + nv, *f_ext = x + nv, *lib = f_ext + 6 * n, *gen = lib + nout, *M = gen + nout;
    uint64_t rng = 0x5eed0f5e1fc4ec4bu;
    sd_status st = SD_OK;
    *worst = 0.0;
    for (int s = 0; s < nstates && st == SD_OK; ++s) {
        sd_configuration_random(m, &rng, q);
        random_fill(&rng, u, (int)nv);
        random_fill(&rng, x, (int)nv);
        random_fill(&rng, f_ext, (int)(6 * n));
        double cond = 1.0; /* cond_1(M) at this state, from the library's M and M^-1 */
        for (int fn = 0; fn < 5 && st == SD_OK; ++fn) {
            const char *name = NULL;
            size_t len = nv;
            sd_status ls = SD_OK;
            int gs = 0, solve = 0;
            switch (fn) {
            case 0:
                name = "mass matrix";
                len = nv * nv;
                ls = sd_mass_matrix(m, d, q, lib);
                gs = code->mass_matrix(q, gen);
                if (ls == SD_OK) memcpy(M, lib, nv * nv * sizeof *M);
                break;
            case 1:
                name = "mass-matrix inverse";
                len = nv * nv;
                solve = 1;
                ls = sd_mass_matrix_inverse(m, d, q, lib);
                gs = code->mass_matrix_inverse(q, gen);
                if (ls == SD_OK) cond = norm1(M, nv) * norm1(lib, nv);
                break;
            case 2:
                name = "inverse dynamics";
                ls = sd_inverse_dynamics(m, d, q, u, x, f_ext, lib);
                gs = code->inverse_dynamics(q, u, x, f_ext, gen);
                break;
            case 3:
                name = "inter-body forces";
                len = 6 * n;
                ls = sd_inverse_dynamics(m, d, q, u, x, f_ext, lib);
                for (int k = 0; k < m->n && ls == SD_OK; ++k) ls = sd_interbody_force(m, d, k, SD_FRAME_BODY, lib + 6 * k);
                gs = code->interbody_forces(q, u, x, f_ext, gen);
                break;
            default:
                name = "forward dynamics";
                solve = 1;
                ls = sd_forward_dynamics(m, d, q, u, x, f_ext, lib);
                gs = code->forward_dynamics(q, u, x, f_ext, gen);
                break;
            }
            if (ls != SD_OK && gs != SD_OK) continue; /* a state neither evaluates (a singular random pose) */
            if (ls != SD_OK || gs != SD_OK) {
                st = sd_error_set(err, SD_E_NOT_SUPPORTED,
                                  "sd_model_compile: self-check: the compiled %s returns status %d where the library "
                                  "returns %s at random state %d",
                                  name, gs, sd_status_name(ls), s);
                break;
            }
            /* a solve amplifies round-off by cond(M), and the two factorisations differ */
            const double allowed = solve ? fmax(SD_COMPILE_CHECK_TOLERANCE, 16 * DBL_EPSILON * cond)
                                         : SD_COMPILE_CHECK_TOLERANCE;
            const double r = relative_difference(gen, lib, len);
            if (!(r <= allowed))
                st = sd_error_set(err, SD_E_NOT_SUPPORTED,
                                  "sd_model_compile: self-check: the compiled %s differs from the library by %.3g "
                                  "(relative; allowed %.3g) at random state %d",
                                  name, r, allowed, s);
            if (r > *worst) *worst = r;
        }
    }
    free(q);
    sd_data_free(d);
    return st;
}
