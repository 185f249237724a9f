/*
 * tests/flex/test_system_modes.c — a flexible body's total mass and natural frequencies with what
 * rides on it (soadyn/flex.h: sd_model_body_total_mass, sd_model_flex_frequencies,
 * sd_model_system_frequencies), on a uniform cantilever (sd_beam_modes: 4 m, EI 500 N m^2, 1.5 kg/m,
 * 20 elements, bending in x-y only, 4 modes; the spacecraft's boom, finer):
 *   - total mass = the rigid part + the nodes' masses summed here (the beam's rho L);
 *   - alone: the first frequency is the Euler-Bernoulli cantilever's (1.8751^2 sqrt(EI / rho L^4))
 *     to 1%, and the system modes of the one clamped body are its own;
 *   - with a 2 kg point mass riding on the tip node: the first frequency drops to the Euler-Bernoulli
 *     cantilever's with a tip mass, the root of 1 + cos bL cosh bL + mu bL (cos bL sinh bL -
 *     sin bL cosh bL) = 0 (mu = tip mass / beam mass), found here by bisection, to 1% (the lumped
 *     masses' discretisation error, the same as the bare beam's); the per-body and system values
 *     agree (one flexible body, nothing floating);
 *   - the same beam and tip on a floating hub (free joint): the system modes drop the six rigid-body
 *     modes; a hub of 1e8 kg gives the clamped frequencies (1e-5 relative; its recoil: 3e-6), a light
 *     hub raises them
 *     (the hub recoils), and sd_model_flex_frequencies (every hinge locked) stays the clamped value;
 *   - the mode's body is the beam.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/flex.h>
#include <soadyn/soadyn.h>

#include "test_util.h"

static const double LEN = 4.0, EI = 500.0, RHO = 1.5, TIP = 2.0, PI = 3.14159265358979323846;

/* Beam (4 modes in x-y) named "beam" on a hinge from the world (FIXED, or FREE under a hub body of
 * mass hub), with a point mass of `tip` kg on its last node (none when tip is 0). */
static sd_model *build(double tip, double hub)
{
    sd_beam_spec spec;
    sd_beam_spec_init(&spec);
    spec.length = LEN;
    spec.EI = EI;
    spec.mass_per_length = RHO;
    spec.elements = 20;
    spec.modes = 4;
    spec.planes = 1;
    sd_flex_data *fd = NULL;
    sd_error err;
    if (sd_beam_modes(&spec, &fd, &err) != SD_OK) {
        fprintf(stderr, "beam: %s\n", err.message);
        return NULL;
    }
    sd_builder *b = sd_builder_new();
    const double no_gravity[3] = {0, 0, 0};
    sd_builder_set_gravity(b, no_gravity);
    sd_body_desc d;
    if (hub > 0.0) {
        sd_body_desc_init(&d);
        d.name = "hub";
        d.hinge = SD_HINGE_FREE;
        d.mass = hub;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = hub * 0.1;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_body_desc_init(&d);
    d.name = "beam";
    d.parent = hub > 0.0 ? "hub" : NULL;
    d.hinge = SD_HINGE_FIXED;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    CHECK(sd_builder_set_flexible(b, "beam", sd_flex_data_desc(fd), &err) == SD_OK);
    if (tip > 0.0) {
        sd_body_desc_init(&d);
        d.name = "tip";
        d.parent = "beam";
        d.hinge = SD_HINGE_FIXED;
        d.parent_node = spec.elements; /* the free end */
        d.placement.p[0] = LEN;
        d.mass = tip;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 1e-9;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "build: %s\n", err.message);
    sd_builder_free(b);
    sd_flex_data_free(fd);
    return m;
}

/* The Euler-Bernoulli cantilever's first frequency (rad/s) with a tip point mass mu * (beam mass):
 * f(bL) = 1 + cos cosh + mu bL (cos sinh - sin cosh) is 2 at 0 and negative at 2.2 for mu >= 0, its
 * first root between (1.8751 for mu = 0), by bisection. */
static double cantilever_with_tip(double mu)
{
    double lo = 0.5, hi = 2.2;
    for (int it = 0; it < 100; ++it) {
        const double x = 0.5 * (lo + hi), f = 1 + cos(x) * cosh(x) + mu * x * (cos(x) * sinh(x) - sin(x) * cosh(x));
        if (f > 0) lo = x;
        else hi = x;
    }
    const double bl = 0.5 * (lo + hi);
    return bl * bl * sqrt(EI / (RHO * pow(LEN, 4)));
}

static void test_mass_and_alone(void)
{
    sd_model *m = build(0.0, 0.0);
    if (!m) return;
    const int k = sd_model_body_index(m, "beam");
    CHECK_CLOSE(sd_model_body_total_mass(m, k), RHO * LEN, 1e-12);
    CHECK(sd_model_body_mass(m, k) == 0.0);
    CHECK(isnan(sd_model_body_total_mass(m, 7)));
    double w[4], ws[4];
    sd_error err;
    CHECK(sd_model_flex_frequencies(m, k, w, &err) == SD_OK);
    CHECK(sd_model_nsystem_modes(m) == 4);
    CHECK(sd_model_system_frequencies(m, NULL, ws, NULL, NULL, &err) == SD_OK);
    const double bare = cantilever_with_tip(0.0);
    printf("bare cantilever: %.6g Hz (Euler-Bernoulli %.6g Hz), modes %.6g %.6g %.6g %.6g rad/s\n",
           w[0] / (2 * PI), bare / (2 * PI), w[0], w[1], w[2], w[3]);
    CHECK(fabs(w[0] / bare - 1.0) < 0.01);
    CHECK_ARRAY_CLOSE(ws, w, 4, 1e-10, "one clamped body: system modes = its own");
    sd_model_free(m);
}

static void test_tip_mass(void)
{
    sd_model *m = build(TIP, 0.0), *bare = build(0.0, 0.0);
    if (!m || !bare) return;
    const int k = sd_model_body_index(m, "beam");
    double w[4], w0[4], ws[4];
    int owner[4];
    double share[4];
    sd_error err;
    CHECK(sd_model_flex_frequencies(m, k, w, &err) == SD_OK);
    CHECK(sd_model_flex_frequencies(bare, 0, w0, &err) == SD_OK);
    CHECK(sd_model_system_frequencies(m, NULL, ws, owner, share, &err) == SD_OK);
    const double expect = cantilever_with_tip(TIP / (RHO * LEN));
    printf("with a %.0f kg tip: %.6g Hz (Euler-Bernoulli %.6g Hz; %.6g Hz without it)\n", TIP, w[0] / (2 * PI),
           expect / (2 * PI), w0[0] / (2 * PI));
    CHECK(fabs(w[0] / expect - 1.0) < 0.01);
    CHECK(w[0] < 0.8 * w0[0]); /* the rider counts */
    CHECK_ARRAY_CLOSE(ws, w, 4, 1e-10, "one clamped body: system modes = its own");
    for (int r = 0; r < 4; ++r) CHECK(owner[r] == k && fabs(share[r] - 1.0) < 1e-12); /* all of it */
    sd_model_free(m);
    sd_model_free(bare);
}

static void test_floating_hub(void)
{
    sd_model *clamped = build(TIP, 0.0), *heavy = build(TIP, 1e8), *light = build(TIP, 5.0);
    if (!clamped || !heavy || !light) return;
    double wc[4], wh[4], wl[4], wl_own[4];
    sd_error err;
    CHECK(sd_model_flex_frequencies(clamped, 0, wc, &err) == SD_OK);
    CHECK(sd_model_nsystem_modes(heavy) == 4);
    CHECK(sd_model_system_frequencies(heavy, NULL, wh, NULL, NULL, &err) == SD_OK);
    CHECK(sd_model_system_frequencies(light, NULL, wl, NULL, NULL, &err) == SD_OK);
    CHECK(sd_model_flex_frequencies(light, sd_model_body_index(light, "beam"), wl_own, &err) == SD_OK);
    printf("floating hub: 1e8 kg %.9g Hz, 5 kg %.6g Hz; clamped %.9g Hz\n", wh[0] / (2 * PI), wl[0] / (2 * PI),
           wc[0] / (2 * PI));
    for (int r = 0; r < 4; ++r) CHECK(fabs(wh[r] / wc[r] - 1.0) < 1e-5); /* its recoil: ~3e-6 */
    CHECK(wl[0] > 1.05 * wc[0]); /* a light hub recoils: free-free is stiffer than clamped */
    CHECK_ARRAY_CLOSE(wl_own, wc, 4, 1e-10, "every hinge locked (the free joint too): the clamped frequencies");
    sd_model_free(clamped);
    sd_model_free(heavy);
    sd_model_free(light);
}

int main(void)
{
    test_mass_and_alone();
    test_tip_mass();
    test_floating_hub();
    return test_summary("test_system_modes");
}
