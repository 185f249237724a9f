/*
 * src/sim/chart.c — a local chart of the configuration manifold, so that integrators work on
 * plain vectors while quaternions stay unit by construction.
 *
 * Around a base q0 every configuration near it is q = q0 (+) delta = sd_integrate_configuration(q0,
 * delta, 1) with delta in R^nv, which the model layer defines per hinge as
 *   scalar hinges   q = q0 + delta
 *   quaternions     quat = quat0 * exp(phi)       (phi = the hinge's 3 rotation entries of delta;
 *                                                  body-frame perturbation, as omega is in body axes)
 *   free position   p = p0 + R(quat0) dv          (dv = the 3 linear entries, in the base body axes)
 * The rates of delta follow from the body speeds u (omega, v):
 *   scalar          delta_dot = u
 *   rotation        phi_dot = Jr^-1(phi) omega,  Jr^-1(phi) = I + 1/2 [phi]x + c(theta) [phi]x^2,
 *                   c(theta) = 1/theta^2 - (1 + cos theta) / (2 theta sin theta)
 *                   (inverse right Jacobian of SO(3): R0 exp(phi) has body rate omega = Jr(phi) phi_dot)
 *   free position   dv_dot = exp(phi) v           (p_dot = R(quat) v = R(quat0) exp(phi) v)
 * This is the Munthe-Kaas construction: a Runge-Kutta method applied to delta is of the same order
 * on the manifold. The chart is regular for |phi| < 2 pi; the driver re-bases well before that.
 */
#include <math.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

sd_status sim_chart_init(sim_chart *chart, const sd_model *model)
{
    const int n = sd_model_nbodies(model);
    chart->model = model;
    chart->nq = sd_model_nq(model);
    chart->nv = sd_model_nv(model);
    chart->nseg = 0;
    chart->seg = malloc(sizeof(sim_segment) * (size_t)(n > 0 ? n : 1));
    if (!chart->seg) return SD_E_MEMORY;
    for (int k = 0; k < n; ++k) {
        const int nv = sd_model_hinge_nv(model, k);
        if (nv == 0) continue;
        sim_segment *s = &chart->seg[chart->nseg++];
        s->qi = sd_model_q_index(model, k);
        s->vi = sd_model_v_index(model, k);
        s->n = nv;
        switch (sd_model_hinge(model, k)) {
        case SD_HINGE_SPHERICAL: s->kind = SIM_SEG_QUAT; break;
        case SD_HINGE_FREE: s->kind = SIM_SEG_FREE; break;
        default: s->kind = SIM_SEG_VECTOR; break; /* nq == nv: coordinates are plain numbers */
        }
    }
    return SD_OK;
}

void sim_chart_release(sim_chart *chart)
{
    free(chart->seg);
    chart->seg = NULL;
    chart->nseg = 0;
}

void sim_chart_apply(const sim_chart *chart, const double *q0, const double *delta, double *q)
{
    sd_integrate_configuration(chart->model, q0, delta, 1.0, q);
}

/* phi_dot = Jr^-1(phi) omega (see the file comment). */
static void rotation_rate(const double phi[3], const double omega[3], double phi_dot[3])
{
    const double theta2 = sd_v3_dot(phi, phi);
    double c;
    if (theta2 < 1e-8) {
        c = 1.0 / 12.0 + theta2 / 720.0; /* series: the closed form loses digits near zero */
    } else {
        const double theta = sqrt(theta2);
        c = 1.0 / theta2 - (1.0 + cos(theta)) / (2.0 * theta * sin(theta));
    }
    double a[3], b[3];
    sd_v3_cross(phi, omega, a); /* [phi]x omega */
    sd_v3_cross(phi, a, b);     /* [phi]x^2 omega */
    for (int i = 0; i < 3; ++i) phi_dot[i] = omega[i] + 0.5 * a[i] + c * b[i];
}

void sim_chart_rate(const sim_chart *chart, const double *delta, const double *u, double *delta_dot)
{
    for (int s = 0; s < chart->nseg; ++s) {
        const sim_segment *g = &chart->seg[s];
        switch (g->kind) {
        case SIM_SEG_VECTOR:
            for (int i = 0; i < g->n; ++i) delta_dot[g->vi + i] = u[g->vi + i];
            break;
        case SIM_SEG_QUAT:
            rotation_rate(delta + g->vi, u + g->vi, delta_dot + g->vi);
            break;
        case SIM_SEG_FREE: {
            double e[4], R[9];
            sd_quat_exp(delta + g->vi, e);
            sd_quat_to_m3(e, R);
            rotation_rate(delta + g->vi, u + g->vi, delta_dot + g->vi);
            sd_m3_mul_v(R, u + g->vi + 3, delta_dot + g->vi + 3); /* current -> base body axes */
            break;
        }
        }
    }
}

double sim_chart_max_rotation(const sim_chart *chart, const double *delta)
{
    double m = 0.0;
    for (int s = 0; s < chart->nseg; ++s) {
        const sim_segment *g = &chart->seg[s];
        if (g->kind == SIM_SEG_VECTOR) continue;
        const double a = sd_v3_norm(delta + g->vi);
        if (a > m) m = a;
    }
    return m;
}

double sim_chart_quat_error(const sim_chart *chart, const double *q)
{
    double m = 0.0;
    for (int s = 0; s < chart->nseg; ++s) {
        const sim_segment *g = &chart->seg[s];
        if (g->kind == SIM_SEG_VECTOR) continue;
        const double *quat = q + g->qi + (g->kind == SIM_SEG_FREE ? 3 : 0);
        const double e = fabs(sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] +
                                   quat[3] * quat[3]) - 1.0);
        if (e > m) m = e;
    }
    return m;
}
