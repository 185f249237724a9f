/*
 * src/sim/chart.c — a local chart of the configuration manifold, so that integrators work on
 * plain vectors while quaternions stay unit by construction.
 *
 * Around a base q0 every configuration near it is q = q0 (+) delta = sd_configuration_integrate(q0,
 * delta, 1) with delta in R^nv, which the model layer defines per hinge as
 *   scalar hinges   q = q0 + delta
 *   quaternions     quat = quat0 * exp(phi)       (phi = the hinge's 3 rotation entries of delta;
 *                                                  body-frame perturbation, as omega is in body axes)
 *   free position   p = p0 + R(quat0) dv          (dv = the 3 linear entries, in the base body axes)
 * The model layer (hinge.c, sd_configuration_chart_rate) knows each hinge's part; the rates of
 * delta follow from the body speeds u (omega, v):
 *   scalar          delta_dot = u
 *   rotation        phi_dot = Jr^-1(phi) omega,  Jr^-1(phi) = I + 1/2 [phi]x + c(theta) [phi]x^2,
 *                   c(theta) = 1/theta^2 - (1 + cos theta) / (2 theta sin theta)
 *                   (inverse right Jacobian of SO(3): R0 exp(phi) has body rate omega = Jr(phi) phi_dot)
 *   free position   dv_dot = exp(phi) v           (p_dot = R(quat) v = R(quat0) exp(phi) v)
 * This is the Munthe-Kaas construction: a Runge-Kutta method applied to delta is of the same order
 * on the manifold. The chart is regular for |phi| < 2 pi; the driver re-bases well before that.
 */
#include "sim/sim_internal.h"

sd_status sim_chart_init(sim_chart *chart, const sd_model *model)
{
    chart->model = model;
    chart->nq = sd_model_nq(model);
    chart->nv = sd_model_nv(model);
    return SD_OK;
}

void sim_chart_release(sim_chart *chart) { chart->model = NULL; }

void sim_chart_apply(const sim_chart *chart, const double *q0, const double *delta, double *q)
{
    sd_configuration_integrate(chart->model, q0, delta, 1.0, q);
}

void sim_chart_rate(const sim_chart *chart, const double *delta, const double *u, double *delta_dot)
{
    sd_configuration_chart_rate(chart->model, delta, u, delta_dot);
}

double sim_chart_max_rotation(const sim_chart *chart, const double *delta)
{
    return sd_configuration_chart_angle(chart->model, delta);
}

double sim_chart_quat_error(const sim_chart *chart, const double *q)
{
    return sd_configuration_quaternion_error(chart->model, q);
}
