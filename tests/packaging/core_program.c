/*
 * tests/packaging/core_program.c — a user's program of the core alone, compiled outside the build
 * against an installed soadyn through `pkg-config soadyn-core` (install_and_link.sh): a double
 * pendulum built in code; forward dynamics then inverse dynamics of its accelerations must give the
 * joint forces back. Prints "core program: ok" and exits 0, or says what differed and exits 1.
 */
#include <math.h>
#include <stdio.h>

#include <soadyn/dynamics.h>
#include <soadyn/model.h>

static int add_link(sd_builder *b, const char *name, const char *parent, double offset)
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name;
    d.parent = parent;
    d.hinge = SD_HINGE_REVOLUTE;
    d.axis[0] = 0.0; d.axis[1] = 1.0; d.axis[2] = 0.0;
    d.placement.p[2] = offset;
    d.mass = 1.0;
    d.com[2] = -0.5;
    d.inertia[0] = d.inertia[4] = 0.1;
    d.inertia[8] = 0.01;
    sd_error err = {0};
    if (sd_builder_add_body(b, &d, &err) == SD_OK) return 0;
    fprintf(stderr, "core program: %s\n", err.message);
    return 1;
}

int main(void)
{
    sd_builder *b = sd_builder_new();
    sd_model *m = NULL;
    sd_error err = {0};
    if (!b || add_link(b, "upper", NULL, 0.0) || add_link(b, "lower", "upper", -1.0) ||
        sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "core program: building the model failed: %s\n", err.message);
        return 1;
    }
    sd_builder_free(b);
    sd_data *d = sd_data_new(m);
    const double q[2] = {0.3, -0.7}, u[2] = {0.2, 0.1}, tau[2] = {1.5, -0.5};
    double qdd[2], tau_back[2];
    int rc = !d || sd_forward_dynamics(m, d, q, u, tau, NULL, qdd) != SD_OK ||
             sd_inverse_dynamics(m, d, q, u, qdd, NULL, tau_back) != SD_OK;
    for (int i = 0; !rc && i < 2; ++i)
        if (!(fabs(tau_back[i] - tau[i]) <= 1e-12 * (1.0 + fabs(tau[i])))) {
            fprintf(stderr, "core program: tau[%d] = %.17g, back from qdd %.17g\n", i, tau[i], tau_back[i]);
            rc = 1;
        }
    if (!rc) printf("core program: ok\n");
    else fprintf(stderr, "core program: failed%s%s\n", d ? ": " : "", d ? sd_data_error(d) : "");
    sd_data_free(d);
    sd_model_free(m);
    return rc;
}
