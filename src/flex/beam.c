/*
 * src/flex/beam.c — the uniform Euler-Bernoulli beam as a lumped-mass finite-element model with
 * assumed modes (001 Sec 2: nodes, modal matrix Pi of 001 Eq 3, modal stiffness K_m).
 *
 * The beam lies along the body x axis from x = 0 to x = L, cut into n_e elements of length
 * L_e = L / n_e; node i sits at x_i = i L_e (i = 0 .. n_e, in that order). Each plane of bending is
 * one independent problem with the same matrices:
 *   x-y plane: deflection v along y, slope dv/dx = rotation about z (node dofs t_y, r_z);
 *   x-z plane: deflection w along z, rotation about y = -dw/dx (t_z, r_y).
 * Per element, the Hermite cubic stiffness on (v_1, L_e theta_1, v_2, L_e theta_2) is
 *   K_e = EI / L_e^3 [12 6 -12 6; 6 4 -6 2; -12 -6 12 -6; 6 2 -6 4]
 * (the rotations scaled by L_e, so that every entry has one unit and the condensation below is
 * well conditioned). The mass is lumped on the translations, m L_e / 2 at each element end; the
 * rotations carry none. A cantilever is clamped at x = 0 (node 0's dofs removed; its mass moves
 * with the body frame); a free-free beam keeps every dof.
 *
 * The massless rotations are condensed statically (Guyan), which is exact here: with no inertia on
 * them, K_rr theta + K_rt v = 0 holds at every instant, so theta = -K_rr^-1 K_rt v and the
 * translations obey M_t v-ddot + K_c v = 0 with K_c = K_tt - K_tr K_rr^-1 K_rt. K_rr is positive
 * definite for either boundary (with every deflection held at zero no rotation field is free of
 * strain). With M_t diagonal and positive, K_c phi = omega^2 M_t phi is solved as the symmetric
 * problem M_t^-1/2 K_c M_t^-1/2 psi = omega^2 psi (LAPACK dsyev), phi = M_t^-1/2 psi, so that the
 * modes are mass-normalised: phi^T M_t phi = 1, hence Pi^T M_s Pi = I over the nodes (001 Eq 2:
 * M_s has no rotary inertia here) and K_m = diag(omega^2), D_m = diag(2 zeta omega). A free-free
 * plane has two zero-frequency modes (a translation and a rotation of the whole beam), dropped:
 * they are the body frame's own motion, and the kept modes are made exactly M-orthogonal to them
 * (free_free_deflate).
 *
 * Each mode is signed so that its tip (x = L) deflection is positive. With both planes the modes
 * come in pairs of equal frequency, the x-y one first.
 *
 * Precision: the lowest eigenvalues of a fourth-order operator carry a relative rounding error of
 * about 1.5e-16 n_e^4 (the eigensolver's error is relative to the largest eigenvalue, n_e^4 times
 * the lowest), while the lumped mass's discretisation error of the first cantilever frequency is
 * about 0.46 / n_e^2 (tests/flex/test_beam.c). Measured on the first mode: 4.6e-5 at 100 elements,
 * 1.1e-5 at 200 (both the discretisation's), 1.1e-5 at 500 (rounding has caught up) and 1.4e-4 at
 * 1000 (rounding dominates). Hence SD_BEAM_MAX_ELEMENTS = 250, where rounding (6e-7) stays below a
 * tenth of the discretisation error (7e-6) and the solve takes well under a second.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_data.h"
#include "internal.h"
#include "model/model_bounds.h"

/* after soadyn's headers: lapacke.h brings <complex.h> */
#include <lapacke.h>

/* Beyond this, rounding in the eigensolver outgrows the discretisation error (see the file
 * comment), and the dense condensation and eigensolver (O(n_e^3)) take seconds. */
#define SD_BEAM_MAX_ELEMENTS 250

void sd_beam_spec_init(sd_beam_spec *spec)
{
    if (!spec) return; /* nothing to fill (was a NULL dereference) */
    if (spec == NULL) return;
    memset(spec, 0, sizeof *spec);
    spec->length = 1.0;
    spec->EI = 1.0;
    spec->mass_per_length = 1.0;
    spec->elements = 10;
    spec->modes = 4;
    spec->boundary = SD_BEAM_CANTILEVER;
    spec->planes = 0;
    spec->damping_ratio = 0.0;
    spec->mass_model = SD_FLEX_FULL;
}

static int nplanes_of(int planes) { return planes == 0 || planes == 3 ? 2 : 1; }

/* Elastic modes per plane: n_e translations for a cantilever, n_e + 1 minus the two rigid ones
 * for a free-free beam. */
static int plane_modes(const sd_beam_spec *s) { return s->boundary == SD_BEAM_CANTILEVER ? s->elements : s->elements - 1; }

static sd_status check_spec(const sd_beam_spec *s, sd_error *err)
{
    const char *fn = "sd_beam_modes";
    if (!(s->length > 0.0 && s->length <= SD_MAX_LENGTH))
        return sd_error_set(err, SD_E_ARGUMENT, "%s: length %g: must be positive and at most %g m", fn, s->length,
                            SD_MAX_LENGTH);
    if (!(s->EI > 0.0 && isfinite(s->EI)))
        return sd_error_set(err, SD_E_ARGUMENT, "%s: EI %g: the bending stiffness must be positive and finite", fn,
                            s->EI);
    if (!(s->mass_per_length > 0.0 && s->mass_per_length * s->length <= SD_MAX_MASS))
        return sd_error_set(err, SD_E_ARGUMENT,
                            "%s: mass_per_length %g: must be positive, the beam's mass at most %g kg", fn,
                            s->mass_per_length, SD_MAX_MASS);
    if (s->boundary != SD_BEAM_CANTILEVER && s->boundary != SD_BEAM_FREE_FREE)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: boundary %d: neither SD_BEAM_CANTILEVER nor SD_BEAM_FREE_FREE",
                            fn, (int)s->boundary);
    const int min_elements = s->boundary == SD_BEAM_CANTILEVER ? 1 : 2;
    if (s->elements < min_elements || s->elements > SD_BEAM_MAX_ELEMENTS)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: elements %d: a %s beam takes %d to %d elements", fn, s->elements,
                            s->boundary == SD_BEAM_CANTILEVER ? "cantilever" : "free-free (needs 2 for one elastic mode)",
                            min_elements, SD_BEAM_MAX_ELEMENTS);
    if (s->planes < 0 || s->planes > 3)
        return sd_error_set(err, SD_E_ARGUMENT,
                            "%s: planes %d: bit 0 is the x-y plane, bit 1 the x-z plane, 0 both (0 .. 3)", fn,
                            s->planes);
    const int count = nplanes_of(s->planes) * plane_modes(s);
    if (s->modes < 1 || s->modes > count)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: modes %d: this beam (%d elements, %s, %d plane%s) has 1 .. %d", fn,
                            s->modes, s->elements, s->boundary == SD_BEAM_CANTILEVER ? "cantilever" : "free-free",
                            nplanes_of(s->planes), nplanes_of(s->planes) > 1 ? "s" : "", count);
    if (!(s->damping_ratio >= 0.0 && s->damping_ratio <= 1e6))
        return sd_error_set(err, SD_E_ARGUMENT, "%s: damping_ratio %g: must be >= 0 (and at most 1e6)", fn,
                            s->damping_ratio);
    if (s->mass_model != SD_FLEX_FULL && s->mass_model != SD_FLEX_LINEARISED)
        return sd_error_set(err, SD_E_ARGUMENT, "%s: mass_model %d: neither SD_FLEX_FULL nor SD_FLEX_LINEARISED", fn,
                            (int)s->mass_model);
    return SD_OK;
}

/* One plane's eigenproblem. n = free translational dofs (= free rotational dofs), the free nodes
 * being first .. n_e. Out: lambda (n, ascending), phi (n x n column-major: mode r's deflections at
 * the free nodes) and theta (n x n: mode r's slopes at the free nodes). Scratch: 2 n^2. */
typedef struct plane_problem {
    int n, first;
    double *Ktt, *Ktr, *Krr, *X; /* X = K_rr^-1 K_rt, then reused */
    double *mass;                /* n: lumped translational masses of the free nodes */
    double *lambda;
} plane_problem;

static void assemble(const sd_beam_spec *s, plane_problem *p)
{
    static const double k[4][4] = {{12, 6, -12, 6}, {6, 4, -6, 2}, {-12, -6, 12, -6}, {6, 2, -6, 4}};
    const int n = p->n, ne = s->elements;
    const double Le = s->length / ne, c = s->EI / (Le * Le * Le), mL = s->mass_per_length * Le;
    memset(p->Ktt, 0, (size_t)n * n * sizeof(double));
    memset(p->Ktr, 0, (size_t)n * n * sizeof(double));
    memset(p->Krr, 0, (size_t)n * n * sizeof(double));
    for (int a = 0; a < n; ++a) {
        const int node = a + p->first;
        p->mass[a] = node == 0 || node == ne ? 0.5 * mL : mL; /* m L_e / 2 from each adjacent element */
    }
    for (int e = 0; e < ne; ++e)
        for (int i = 0; i < 4; ++i) {
            const int ai = e + i / 2 - p->first; /* free index of the dof's node; < 0: clamped */
            if (ai < 0) continue;
            for (int j = 0; j < 4; ++j) {
                const int aj = e + j / 2 - p->first;
                if (aj < 0) continue;
                const double kij = c * k[i][j];
                if (i % 2 == 0 && j % 2 == 0) p->Ktt[ai + (size_t)n * aj] += kij;
                else if (i % 2 == 0) p->Ktr[ai + (size_t)n * aj] += kij; /* row: translation, column: rotation */
                else if (j % 2 == 1) p->Krr[ai + (size_t)n * aj] += kij;
            }
        }
}

/* The eigenvectors of a free-free plane, psi = M^1/2 phi, made exactly M-orthogonal to the rigid
 * motions v = 1 and v = x - x_c (x_c the centre of mass), then orthonormalised again (modified
 * Gram-Schmidt), for the modes kept. dsyev's vectors are orthogonal to the zero-eigenvalue ones
 * only to eps ||A|| / omega_1^2 (3e-10 at 80 elements); the projection is within that accuracy of
 * the eigenvectors, and makes the kept modes carry no momentum to rounding (sum m v = 0, sum m x v
 * = 0), so that the body frame keeps the beam's rigid motion. */
static void free_free_deflate(const sd_beam_spec *s, const plane_problem *p, double *A)
{
    const int n = p->n, kept = 2 + (s->modes + nplanes_of(s->planes) - 1) / nplanes_of(s->planes);
    const double Le = s->length / s->elements;
    double mass = 0.0, xc = 0.0;
    for (int i = 0; i < n; ++i) {
        mass += p->mass[i];
        xc += p->mass[i] * i * Le;
    }
    xc /= mass;
    double *r1 = A, *r2 = A + n; /* the rigid columns are not kept: they hold the exact ones */
    double n1 = 0.0, n2 = 0.0;
    for (int i = 0; i < n; ++i) {
        const double sq = sqrt(p->mass[i]);
        r1[i] = sq;
        r2[i] = sq * (i * Le - xc);
        n1 += r1[i] * r1[i];
        n2 += r2[i] * r2[i];
    }
    for (int i = 0; i < n; ++i) {
        r1[i] /= sqrt(n1);
        r2[i] /= sqrt(n2);
    }
    for (int r = 2; r < kept && r < n; ++r) {
        double *psi = A + (size_t)n * r;
        for (int q = 0; q < r; ++q) {
            const double *o = A + (size_t)n * q;
            double dot = 0.0;
            for (int i = 0; i < n; ++i) dot += o[i] * psi[i];
            for (int i = 0; i < n; ++i) psi[i] -= dot * o[i];
        }
        double norm = 0.0;
        for (int i = 0; i < n; ++i) norm += psi[i] * psi[i];
        norm = sqrt(norm);
        for (int i = 0; i < n; ++i) psi[i] /= norm;
    }
}

static sd_status solve_plane(const sd_beam_spec *s, plane_problem *p, sd_error *err)
{
    const int n = p->n;
    const size_t nn = (size_t)n * n;
    assemble(s, p);
    /* X = K_rr^-1 K_rt, K_rt = K_tr^T */
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) p->X[i + (size_t)n * j] = p->Ktr[j + (size_t)n * i];
    lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, n, p->Krr, n, p->X, n);
    if (info != 0)
        return sd_error_set(err, SD_E_SINGULAR, "sd_beam_modes: the rotational stiffness is not positive definite "
                                                "(LAPACK dposv info %d): the beam's numbers are out of range",
                            (int)info);
    /* K_c = K_tt - K_tr X into Ktt (Guyan condensation, exact for massless rotations) */
    for (int j = 0; j < n; ++j)
        for (int l = 0; l < n; ++l) {
            const double x = p->X[l + (size_t)n * j];
            if (x == 0.0) continue;
            const double *col = p->Ktr + (size_t)n * l;
            double *out = p->Ktt + (size_t)n * j;
            for (int i = 0; i < n; ++i) out[i] -= col[i] * x;
        }
    /* A = M^-1/2 K_c M^-1/2, symmetrised (into Krr, no longer needed) */
    double *A = p->Krr;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const double kc = 0.5 * (p->Ktt[i + (size_t)n * j] + p->Ktt[j + (size_t)n * i]);
            A[i + (size_t)n * j] = kc / sqrt(p->mass[i] * p->mass[j]);
        }
    info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', n, A, n, p->lambda);
    if (info != 0)
        return sd_error_set(err, SD_E_SINGULAR, "sd_beam_modes: the eigensolver did not converge (LAPACK dsyev info %d)",
                            (int)info);
    if (s->boundary == SD_BEAM_FREE_FREE) free_free_deflate(s, p, A);
    /* phi = M^-1/2 psi (into Ktt), signed with a positive tip deflection; theta = -X phi / L_e
     * (into Ktr: the slopes, unscaled) */
    double *phi = p->Ktt, *theta = p->Ktr;
    for (int r = 0; r < n; ++r) {
        const double *psi = A + (size_t)n * r;
        const double sign = psi[n - 1] < 0.0 ? -1.0 : 1.0;
        for (int i = 0; i < n; ++i) phi[i + (size_t)n * r] = sign * psi[i] / sqrt(p->mass[i]);
    }
    const double Le = s->length / s->elements;
    memset(theta, 0, nn * sizeof(double));
    for (int r = 0; r < n; ++r)
        for (int l = 0; l < n; ++l) {
            const double v = phi[l + (size_t)n * r];
            const double *col = p->X + (size_t)n * l;
            double *out = theta + (size_t)n * r;
            for (int i = 0; i < n; ++i) out[i] -= col[i] * v / Le;
        }
    return SD_OK;
}

/* Mode k of the model: plane (0: x-y, 1: x-z) and the index among that plane's elastic modes. */
static void mode_of(const sd_beam_spec *s, int k, int *plane, int *r)
{
    if (nplanes_of(s->planes) == 2) {
        *plane = k % 2;
        *r = k / 2;
    } else {
        *plane = s->planes == 2 ? 1 : 0;
        *r = k;
    }
}

static sd_status fill(const sd_beam_spec *s, const plane_problem *p, sd_flex_data *d, sd_error *err)
{
    const int ne = s->elements, n = p->n, nn = ne + 1;
    const int skip = s->boundary == SD_BEAM_FREE_FREE ? 2 : 0; /* the rigid modes of a free plane */
    const double Le = s->length / ne;
    /* the dropped modes must be the rigid ones: zero next to the first elastic eigenvalue */
    if (skip && !(fabs(p->lambda[1]) <= 1e-3 * p->lambda[2]))
        return sd_error_set(err, SD_E_SINGULAR,
                            "sd_beam_modes: the free-free beam's rigid modes do not separate from its elastic ones "
                            "(eigenvalues %g and %g): the beam's numbers are out of range",
                            p->lambda[1], p->lambda[2]);
    for (int i = 0; i < nn; ++i) {
        d->node_position[3 * i] = i * Le;
        d->node_mass[i] = (i == 0 || i == ne ? 0.5 : 1.0) * s->mass_per_length * Le;
    }
    const double *phi = p->Ktt, *theta = p->Ktr;
    for (int k = 0; k < s->modes; ++k) {
        int plane, r;
        mode_of(s, k, &plane, &r);
        const int col = r + skip;
        const double lambda = p->lambda[col] > 0.0 ? p->lambda[col] : 0.0;
        const double omega = sqrt(lambda);
        double *Pi = d->modes + (size_t)6 * nn * k; /* column k: [r_x r_y r_z t_x t_y t_z] per node */
        for (int a = 0; a < n; ++a) {
            double *node = Pi + 6 * (a + p->first);
            const double v = phi[a + (size_t)n * col], th = theta[a + (size_t)n * col];
            if (plane == 0) {
                node[4] = v;  /* t_y */
                node[2] = th; /* r_z = dv/dx */
            } else {
                node[5] = v;   /* t_z */
                node[1] = -th; /* r_y = -dw/dx */
            }
        }
        d->stiffness[(size_t)s->modes * k + k] = lambda;                              /* K_m = diag(omega^2) */
        if (d->damping) d->damping[(size_t)s->modes * k + k] = 2.0 * s->damping_ratio * omega; /* diag(2 zeta omega) */
    }
    for (size_t i = 0; i < (size_t)6 * nn * s->modes; ++i)
        if (!isfinite(d->modes[i]))
            return sd_error_set(err, SD_E_NOT_FINITE, "sd_beam_modes: the mode shapes overflow a double: the beam's "
                                                      "numbers (EI, length, mass per length) are out of range");
    for (int k = 0; k < s->modes; ++k)
        if (!(d->stiffness[(size_t)s->modes * k + k] > 0.0 && isfinite(d->stiffness[(size_t)s->modes * k + k])))
            return sd_error_set(err, SD_E_NOT_FINITE, "sd_beam_modes: mode %d's frequency squared is %g: the beam's "
                                                      "numbers (EI, length, mass per length) are out of range",
                                k, d->stiffness[(size_t)s->modes * k + k]);
    return SD_OK;
}

sd_status sd_beam_modes(const sd_beam_spec *spec, sd_flex_data **data, sd_error *err)
{
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (data == NULL || spec == NULL)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_beam_modes: %s is NULL", data == NULL ? "data" : "spec");
    *data = NULL;
    sd_status st = check_spec(spec, err);
    if (st != SD_OK) return st;
    plane_problem p;
    memset(&p, 0, sizeof p);
    p.first = spec->boundary == SD_BEAM_CANTILEVER ? 1 : 0;
    p.n = spec->elements + 1 - p.first;
    const size_t nn = (size_t)p.n * p.n;
    p.Ktt = malloc(nn * sizeof(double));
    p.Ktr = malloc(nn * sizeof(double));
    p.Krr = malloc(nn * sizeof(double));
    p.X = malloc(nn * sizeof(double));
    p.mass = malloc((size_t)p.n * sizeof(double));
    p.lambda = malloc((size_t)p.n * sizeof(double));
    sd_flex_data *d = sd_flex_data_new(spec->elements + 1, spec->modes, 0, spec->damping_ratio > 0.0);
    if (!p.Ktt || !p.Ktr || !p.Krr || !p.X || !p.mass || !p.lambda || !d)
        st = sd_error_set(err, SD_E_MEMORY, "sd_beam_modes: out of memory (%d elements)", spec->elements);
    if (st == SD_OK) st = solve_plane(spec, &p, err); /* both planes have the same matrices */
    if (st == SD_OK) st = fill(spec, &p, d, err);
    free(p.Ktt);
    free(p.Ktr);
    free(p.Krr);
    free(p.X);
    free(p.mass);
    free(p.lambda);
    if (st != SD_OK) {
        sd_flex_data_free(d);
        return st;
    }
    d->desc.mass_model = spec->mass_model;
    *data = d;
    return SD_OK;
}
