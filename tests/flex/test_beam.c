/*
 * tests/flex/test_beam.c — the uniform Euler-Bernoulli beam generator (sd_beam_modes, src/flex/beam.c)
 * against independent computations:
 *   - cantilever and free-free frequencies against the continuum's, omega_i = (beta_i L)^2
 *     sqrt(EI / (m L^4)), with the error shrinking as elements are added (table printed);
 *   - every mode satisfies the UNcondensed finite-element equations assembled here in the textbook
 *     form (slopes unscaled): K_full [v; theta] = omega^2 M [v; 0] (translation rows) and 0 (the
 *     rotation rows: the slopes are those of the condensation), at 1e-10;
 *   - mass normalisation and orthogonality Pi^T M_s Pi = I, K_m = diag(omega^2), D_m = diag(2 zeta omega);
 *   - free-free modes carry no momentum (sum m v = 0, sum m x v = 0: the rigid modes are gone);
 *   - the planes: x-y modes move t_y and r_z only, x-z modes t_z and r_y only, pairs of equal frequency;
 *   - bad specifications refused with a message naming the parameter.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/flex.h>

#include "test_util.h"

static const double beta_cantilever[4] = {1.8751041, 4.6940911, 7.8547574, 10.9955407};
static const double beta_free[2] = {4.7300408, 7.8532046};

static sd_flex_data *make(double L, double EI, double m, int ne, int modes, sd_beam_boundary bc, int planes,
                          double zeta)
{
    sd_beam_spec s;
    sd_beam_spec_init(&s);
    s.length = L;
    s.EI = EI;
    s.mass_per_length = m;
    s.elements = ne;
    s.modes = modes;
    s.boundary = bc;
    s.planes = planes;
    s.damping_ratio = zeta;
    sd_flex_data *d = NULL;
    sd_error err;
    const sd_status st = sd_beam_modes(&s, &d, &err);
    if (st != SD_OK) fprintf(stderr, "sd_beam_modes: %s\n", err.message);
    CHECK(st == SD_OK && d != NULL);
    return d;
}

static double omega_of(const sd_flex_desc *D, int r) { return sqrt(D->stiffness[r * D->n_modes + r]); }
static const double *mode_at(const sd_flex_desc *D, int r, int node) { return D->modes + 6 * (D->n_nodes * r + node); }

/* Frequencies against the continuum, the convergence table, the order of convergence. */
static void test_cantilever_convergence(void)
{
    const double L = 2.0, EI = 3.5, m = 0.7, scale = sqrt(EI / (m * L * L * L * L));
    const int sizes[4] = {5, 10, 20, 40};
    double error[4][4];
    printf("cantilever (L %g, EI %g, m %g): relative frequency error vs Euler-Bernoulli\n", L, EI, m);
    printf("  elements   mode 1      mode 2      mode 3      mode 4\n");
    for (int s = 0; s < 4; ++s) {
        sd_flex_data *d = make(L, EI, m, sizes[s], 4, SD_BEAM_CANTILEVER, 1, 0.0);
        if (d == NULL) return;
        const sd_flex_desc *D = sd_flex_data_desc(d);
        printf("  %8d", sizes[s]);
        for (int i = 0; i < 4; ++i) {
            const double exact = beta_cantilever[i] * beta_cantilever[i] * scale;
            error[s][i] = fabs(omega_of(D, i) - exact) / exact;
            printf("  %.3e", error[s][i]);
        }
        printf("\n");
        sd_flex_data_free(d);
    }
    for (int i = 0; i < 4; ++i)
        for (int s = 1; s < 4; ++s) CHECK(error[s][i] < error[s - 1][i]); /* monotone */
    CHECK(error[2][0] < 0.01);
    printf("  observed order (log2 of successive error ratios, mode 1): %.2f %.2f %.2f\n",
           log2(error[0][0] / error[1][0]), log2(error[1][0] / error[2][0]), log2(error[2][0] / error[3][0]));
    const double order = log2(error[2][0] / error[3][0]);
    CHECK(order > 1.8 && order < 2.2); /* lumped mass: second order (h^2) */
    /* at the largest count offered, rounding in the eigensolver (~1.5e-16 n^4) stays below a tenth
     * of the discretisation error the h^2 law predicts from 40 elements */
    sd_flex_data *d = make(L, EI, m, 250, 1, SD_BEAM_CANTILEVER, 1, 0.0);
    if (d == NULL) return;
    const double exact = beta_cantilever[0] * beta_cantilever[0] * scale;
    const double e250 = fabs(omega_of(sd_flex_data_desc(d), 0) - exact) / exact;
    const double predicted = error[3][0] * (40.0 / 250.0) * (40.0 / 250.0);
    printf("  250 elements: mode 1 error %.3e, h^2 law from 40 elements %.3e\n", e250, predicted);
    CHECK(fabs(e250 - predicted) < 0.1 * predicted);
    sd_flex_data_free(d);
}

static void test_free_free(void)
{
    const double L = 1.5, EI = 2.0, m = 3.0, scale = sqrt(EI / (m * L * L * L * L));
    printf("free-free (L %g, EI %g, m %g): relative frequency error\n  elements   mode 1      mode 2\n", L, EI, m);
    double prev[2] = {INFINITY, INFINITY};
    for (int ne = 10; ne <= 80; ne *= 2) {
        sd_flex_data *d = make(L, EI, m, ne, 2, SD_BEAM_FREE_FREE, 1, 0.0);
        if (d == NULL) return;
        const sd_flex_desc *D = sd_flex_data_desc(d);
        printf("  %8d", ne);
        for (int i = 0; i < 2; ++i) {
            const double exact = beta_free[i] * beta_free[i] * scale, e = fabs(omega_of(D, i) - exact) / exact;
            printf("  %.3e", e);
            CHECK(e < prev[i]);
            prev[i] = e;
        }
        printf("\n");
        /* no momentum: the rigid-body modes (translation, rotation about z) are not among them */
        for (int r = 0; r < D->n_modes; ++r) {
            double p = 0.0, h = 0.0, mscale = 0.0;
            for (int j = 0; j < D->n_nodes; ++j) {
                p += D->node_mass[j] * mode_at(D, r, j)[4];
                h += D->node_mass[j] * D->node_position[3 * j] * mode_at(D, r, j)[4];
                mscale += D->node_mass[j] * fabs(mode_at(D, r, j)[4]);
            }
            CHECK(fabs(p) < 1e-10 * mscale);
            if (!(fabs(h) < 1e-10 * mscale * L)) fprintf(stderr, "ne %d mode %d: p %g h %g of %g\n", ne, r, p, h, mscale * L);
            CHECK(fabs(h) < 1e-10 * mscale * L);
        }
        sd_flex_data_free(d);
    }
    CHECK(prev[0] < 0.01);
}

/* The textbook Hermite element (slopes unscaled) assembled over the whole beam, x-y plane: dofs
 * (v_i, theta_i) at 2i, 2i+1. Checks K_full x = omega^2 M x for each mode's (v, theta), with the
 * clamped dofs' rows left out for a cantilever. `sign` maps the mode's rotation to the slope
 * (x-y: r_z = dv/dx, +1; x-z: r_y = -dw/dx, -1). */
static void check_fe_equations(const sd_flex_desc *D, double L, double EI, int cantilever, int r, int t_index,
                               int r_index, double sign)
{
    const int N = D->n_nodes, ne = N - 1, n = 2 * N;
    const double h = L / ne;
    double *K = calloc((size_t)n * n, sizeof *K), *x = calloc((size_t)n, sizeof *x);
    const double k[4][4] = {{12, 6 * h, -12, 6 * h},
                            {6 * h, 4 * h * h, -6 * h, 2 * h * h},
                            {-12, -6 * h, 12, -6 * h},
                            {6 * h, 2 * h * h, -6 * h, 4 * h * h}};
    for (int e = 0; e < ne; ++e)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) K[(2 * e + i) * n + 2 * e + j] += EI / (h * h * h) * k[i][j];
    for (int j = 0; j < N; ++j) {
        x[2 * j] = mode_at(D, r, j)[t_index];
        x[2 * j + 1] = sign * mode_at(D, r, j)[r_index];
    }
    const double w2 = D->stiffness[r * D->n_modes + r];
    double worst = 0.0, ref = 0.0;
    for (int i = cantilever ? 2 : 0; i < n; ++i) {
        double Kx = 0.0;
        for (int j = 0; j < n; ++j) Kx += K[i * n + j] * x[j];
        const double Mx = i % 2 == 0 ? D->node_mass[i / 2] * x[i] : 0.0;
        worst = fmax(worst, fabs(Kx - w2 * Mx));
        ref = fmax(ref, fabs(w2 * Mx));
    }
    if (!(worst <= 1e-10 * ref)) fprintf(stderr, "mode %d: FE residual %.3g of %.3g\n", r, worst, ref);
    CHECK(worst <= 1e-10 * ref);
    if (cantilever) CHECK(x[0] == 0.0 && x[1] == 0.0);
    free(K);
    free(x);
}

static void test_modes(sd_beam_boundary bc, int planes)
{
    const double L = 3.0, EI = 5.0, m = 2.0, zeta = 0.02;
    const int ne = 12, cantilever = bc == SD_BEAM_CANTILEVER;
    const int nplanes = planes == 0 ? 2 : 1, nm = 6 * nplanes > (cantilever ? ne : ne - 1) * nplanes
                                                       ? (cantilever ? ne : ne - 1) * nplanes
                                                       : 6 * nplanes;
    sd_flex_data *d = make(L, EI, m, ne, nm, bc, planes, zeta);
    if (d == NULL) return;
    const sd_flex_desc *D = sd_flex_data_desc(d);
    CHECK(D->n_nodes == ne + 1 && D->n_modes == nm && D->node_inertia == NULL && D->damping != NULL);
    CHECK(D->mass_model == SD_FLEX_FULL);
    double total = 0.0;
    for (int j = 0; j < D->n_nodes; ++j) {
        total += D->node_mass[j];
        CHECK_CLOSE(D->node_position[3 * j], L * j / ne, 1e-15); /* from x = 0 to x = L */
        CHECK(D->node_position[3 * j + 1] == 0.0 && D->node_position[3 * j + 2] == 0.0);
    }
    CHECK_CLOSE(total, m * L, 1e-14);
    /* Pi^T M_s Pi = I (point masses: translations only) */
    double worst = 0.0;
    for (int r = 0; r < nm; ++r)
        for (int s = 0; s < nm; ++s) {
            double g = 0.0;
            for (int j = 0; j < D->n_nodes; ++j)
                for (int c = 3; c < 6; ++c) g += D->node_mass[j] * mode_at(D, r, j)[c] * mode_at(D, s, j)[c];
            worst = fmax(worst, fabs(g - (r == s ? 1.0 : 0.0)));
        }
    CHECK(worst < 1e-12);
    for (int r = 0; r < nm; ++r) {
        const int plane = planes == 0 ? r % 2 : planes - 1; /* 0: x-y, 1: x-z */
        const int t = plane == 0 ? 4 : 5, rot = plane == 0 ? 2 : 1;
        for (int j = 0; j < D->n_nodes; ++j)
            for (int c = 0; c < 6; ++c)
                if (c != t && c != rot) CHECK(mode_at(D, r, j)[c] == 0.0);
        CHECK(mode_at(D, r, ne)[t] > 0.0); /* signed: positive tip deflection */
        check_fe_equations(D, L, EI, cantilever, r, t, rot, plane == 0 ? 1.0 : -1.0);
        for (int s = 0; s < nm; ++s) {
            const double w = omega_of(D, r);
            CHECK_CLOSE(D->stiffness[r * nm + s], r == s ? w * w : 0.0, 1e-15);
            CHECK_CLOSE(D->damping[r * nm + s], r == s ? 2.0 * zeta * w : 0.0, 1e-15);
        }
        if (r > 0) CHECK(omega_of(D, r) >= omega_of(D, r - 1)); /* ascending */
        if (planes == 0 && r % 2 == 1) CHECK(omega_of(D, r) == omega_of(D, r - 1)); /* pairs */
    }
    sd_flex_data_free(d);
}

static void expect_refused(const sd_beam_spec *s, const char *word)
{
    sd_flex_data *d = (sd_flex_data *)&d; /* must be set to NULL */
    sd_error err;
    const sd_status st = sd_beam_modes(s, &d, &err);
    CHECK(st == SD_E_ARGUMENT && d == NULL);
    const int named = strstr(err.message, word) != NULL;
    if (!named) fprintf(stderr, "message lacks '%s': %s\n", word, err.message);
    CHECK(named);
    printf("  refused: %s\n", err.message);
}

static void test_bad_specs(void)
{
    sd_beam_spec s, base;
    sd_beam_spec_init(&base);
    CHECK(base.length == 1.0 && base.EI == 1.0 && base.mass_per_length == 1.0 && base.elements == 10 &&
          base.modes == 4 && base.boundary == SD_BEAM_CANTILEVER && base.planes == 0 && base.damping_ratio == 0.0 &&
          base.mass_model == SD_FLEX_FULL);
    s = base; s.length = 0.0; expect_refused(&s, "length");
    s = base; s.length = NAN; expect_refused(&s, "length");
    s = base; s.length = 1e7; expect_refused(&s, "length");
    s = base; s.EI = -1.0; expect_refused(&s, "EI");
    s = base; s.EI = INFINITY; expect_refused(&s, "EI");
    s = base; s.mass_per_length = NAN; expect_refused(&s, "mass_per_length");
    s = base; s.mass_per_length = 0.0; expect_refused(&s, "mass_per_length");
    s = base; s.elements = 0; expect_refused(&s, "elements");
    s = base; s.elements = 251; expect_refused(&s, "elements"); /* SD_BEAM_MAX_ELEMENTS = 250 */
    s = base; s.boundary = SD_BEAM_FREE_FREE; s.elements = 1; expect_refused(&s, "elements");
    s = base; s.modes = 0; expect_refused(&s, "modes");
    s = base; s.modes = 21; expect_refused(&s, "modes"); /* 10 elements, 2 planes: 20 */
    s = base; s.planes = 1; s.modes = 11; expect_refused(&s, "modes");
    s = base; s.planes = 4; expect_refused(&s, "planes");
    s = base; s.damping_ratio = -0.1; expect_refused(&s, "damping_ratio");
    s = base; s.damping_ratio = NAN; expect_refused(&s, "damping_ratio");
    s = base; s.boundary = (sd_beam_boundary)7; expect_refused(&s, "boundary");
    s = base; s.mass_model = (sd_flex_mass_model)5; expect_refused(&s, "mass_model");
    sd_error err;
    CHECK(sd_beam_modes(&base, NULL, &err) == SD_E_ARGUMENT && strstr(err.message, "data") != NULL);
    sd_flex_data *d = NULL;
    CHECK(sd_beam_modes(NULL, &d, &err) == SD_E_ARGUMENT && d == NULL);
    CHECK(sd_flex_data_desc(NULL) == NULL);
    sd_flex_data_free(NULL);
    /* the largest count works (and the linearised mass model is passed on) */
    s = base; s.modes = 20; s.mass_model = SD_FLEX_LINEARISED;
    CHECK(sd_beam_modes(&s, &d, &err) == SD_OK && sd_flex_data_desc(d)->mass_model == SD_FLEX_LINEARISED);
    CHECK(sd_flex_data_desc(d)->damping == NULL); /* no damping asked */
    sd_flex_data_free(d);
}

int main(void)
{
    test_cantilever_convergence();
    test_free_free();
    for (int planes = 0; planes <= 2; ++planes) {
        test_modes(SD_BEAM_CANTILEVER, planes);
        test_modes(SD_BEAM_FREE_FREE, planes);
    }
    test_bad_specs();
    return test_summary("test_beam");
}
