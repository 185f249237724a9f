/*
 * src/sim/jacobian.c — the Jacobian of the right-hand side on the chart, for the Newton iterations of
 * CVODE BDF and Radau IIA, from the analytical derivatives of the forward dynamics
 * (soadyn/derivatives.h).
 *
 * The state is y = [delta; u] with q = q0 (+) delta (chart.c) and the rate
 *     ydot = [ J^-1(delta) u ; qdd(q0 (+) delta, u, tau) ]
 * so, in blocks of nv,
 *     d ydot / d y = [ d(J^-1(delta) u)/d delta    J^-1(delta) ]
 *                    [ d qdd / d delta             d qdd / d u ]
 * - J^-1(delta) is linear in u: its column j is sd_configuration_chart_rate(delta, e_j), exactly.
 * - d qdd / d u is the derivatives' dqdd/du at q, exactly (tau_total = tau_const + control: the
 *   control callback's own derivatives are unknown and left out).
 * - d qdd / d delta = (dqdd/dq on the tangent space at q) (d eps / d delta), where q (+) eps is the
 *   perturbation the derivatives are taken along and eps = Jr(delta) d delta for a rotation (the
 *   right Jacobian of SO(3)), exp(-phi) d delta for a free hinge's position. d eps / d delta is taken
 *   as the identity: exact for scalar coordinates (revolute, prismatic, modal) and at delta = 0, and
 *   off by O(|delta|) for a quaternion hinge.
 * - d(J^-1(delta) u)/d delta is taken as 0: exact for scalar coordinates, O(|u|) for a quaternion
 *   hinge (-1/2 [omega]x at delta = 0).
 * CVODE re-bases the chart at half a radian (cvode.c) and Radau IIA starts one at every step (radau.c,
 * delta = 0 where J is taken), so these terms stay small; they only change how fast Newton converges,
 * not the solution, whose accuracy is CVODE's error control's or Radau's step's (sim.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "soadyn/derivatives.h"

static const char *const jacobian_names[] = {"auto", "analytic", "dq"};

const char *sd_sim_jacobian_name(sd_sim_jacobian jacobian)
{
    if ((int)jacobian < 0 || (int)jacobian > SD_SIM_JACOBIAN_DQ) return "unknown";
    return jacobian_names[jacobian];
}

sd_status sd_sim_jacobian_from_name(const char *name, sd_sim_jacobian *jacobian)
{
    const int i = sim_name_index(jacobian_names, (int)SD_SIM_JACOBIAN_DQ + 1, name);
    if (i < 0) return SD_E_ARGUMENT;
    *jacobian = (sd_sim_jacobian)i;
    return SD_OK;
}

/* Whether the derivatives take the model at (q, u, tau): one evaluation (dqdd/du only) into a
 * workspace of its own. SD_OK, or their status with their message in `why`. */
static sd_status derivatives_probe(const sd_model *m, const double *q, const double *u, const double *tau,
                                   char *why, size_t size)
{
    const int nv = sd_model_nv(m);
    sd_data *d = sd_data_new(m);
    double *w = malloc(sizeof(double) * (size_t)(nv * nv + 2 * nv + 1)); /* dqdd/du, tau, qdd */
    if (!d || !w) {
        sd_data_free(d);
        free(w);
        snprintf(why, size, "out of memory");
        return SD_E_MEMORY;
    }
    double *tau0 = w + nv * nv, *qdd = tau0 + nv;
    if (tau) memcpy(tau0, tau, sizeof(double) * (size_t)nv);
    else memset(tau0, 0, sizeof(double) * (size_t)nv);
    const sd_status st = sd_forward_dynamics_derivatives(m, d, q, u, tau0, NULL, qdd, NULL, w, NULL);
    if (st != SD_OK) snprintf(why, size, "%s", sd_data_error(d));
    sd_data_free(d);
    free(w);
    return st;
}

sd_status sim_jacobian_choose(const sd_model *m, const sd_sim_options *o, const double *q, const double *u,
                              sd_sim_jacobian *chosen, sd_error *err)
{
    *chosen = SD_SIM_JACOBIAN_AUTO;
    if ((int)o->jacobian < 0 || (int)o->jacobian > SD_SIM_JACOBIAN_DQ)
        return sd_error_set(err, SD_E_ARGUMENT, "unknown Jacobian choice %d", (int)o->jacobian);
    if (o->integrator != SD_INTEGRATOR_CVODE_BDF && o->integrator != SD_INTEGRATOR_RADAU_IIA) {
        if (o->jacobian == SD_SIM_JACOBIAN_AUTO) return SD_OK;
        return sd_error_set(err, SD_E_NOT_SUPPORTED,
                            "jacobian %s is not offered with integrator %s: only the Newton iterations of "
                            "cvode-bdf and radau-iia take a Jacobian (rk4 and cvode-adams use none)",
                            sd_sim_jacobian_name(o->jacobian), sd_integrator_name(o->integrator));
    }
    if (o->jacobian == SD_SIM_JACOBIAN_DQ || sd_model_nv(m) == 0) {
        *chosen = SD_SIM_JACOBIAN_DQ;
        return SD_OK;
    }
    /* what keeps the analytical Jacobian from the run, if anything */
    char why[400] = "";
    sd_status st = SD_OK;
    if (sd_model_nconstraints(m) > 0) {
        snprintf(why, sizeof(why), "model %s has %d closure constraint(s): the derivatives are of the open "
                 "tree's forward dynamics, not of the closed (or embedded) system's", sd_model_name(m),
                 sd_model_nconstraints(m));
        st = SD_E_NOT_SUPPORTED;
    } else if (o->control && o->jacobian == SD_SIM_JACOBIAN_AUTO) {
        *chosen = SD_SIM_JACOBIAN_DQ; /* the control's derivatives are unknown: difference quotients see them */
        return SD_OK;
    } else {
        st = derivatives_probe(m, q, u, o->tau, why, sizeof(why));
    }
    if (st == SD_OK) {
        *chosen = SD_SIM_JACOBIAN_ANALYTIC;
        return SD_OK;
    }
    if (st == SD_E_NOT_SUPPORTED && o->jacobian == SD_SIM_JACOBIAN_AUTO) {
        *chosen = SD_SIM_JACOBIAN_DQ;
        return SD_OK;
    }
    if (st == SD_E_NOT_SUPPORTED)
        return sd_error_set(err, st, "jacobian analytic is not offered here: %s; jacobian dq (difference "
                            "quotients) is", why);
    return sd_error_set(err, st, "the analytical Jacobian at the initial state: %s", why);
}

sd_status sim_jacobian_init(sim_jacobian *jac, int nv)
{
    memset(jac, 0, sizeof(*jac));
    const size_t n = (size_t)(nv > 0 ? nv : 1);
    jac->dqdd_dq = malloc(sizeof(double) * n * n);
    jac->dqdd_du = malloc(sizeof(double) * n * n);
    jac->unit = calloc(n, sizeof(double));
    jac->column = malloc(sizeof(double) * n);
    if (!jac->dqdd_dq || !jac->dqdd_du || !jac->unit || !jac->column) {
        sim_jacobian_release(jac);
        return SD_E_MEMORY;
    }
    return SD_OK;
}

void sim_jacobian_release(sim_jacobian *jac)
{
    free(jac->dqdd_dq);
    free(jac->dqdd_du);
    free(jac->unit);
    free(jac->column);
    memset(jac, 0, sizeof(*jac));
}

sd_status sim_jacobian_eval(sim_jacobian *jac, sim_rhs *rhs, double t, const double *q0, const double *y,
                            double *J)
{
    const int nv = rhs->nv, m = 2 * nv;
    const double *delta = y, *u = y + nv;
    sim_chart_apply(&rhs->chart, q0, delta, rhs->q);
    sim_rhs_forces(rhs, t, rhs->q, u);
    const sd_status st = sd_forward_dynamics_derivatives(rhs->model, rhs->data, rhs->q, u, rhs->tau, NULL, NULL,
                                                         jac->dqdd_dq, jac->dqdd_du, NULL);
    if (st != SD_OK) return st;
    for (int j = 0; j < nv; ++j) {
        double *col_delta = J + (size_t)j * (size_t)m, *col_u = J + (size_t)(nv + j) * (size_t)m;
        jac->unit[j] = 1.0;
        sim_chart_rate(&rhs->chart, delta, jac->unit, jac->column); /* J^-1(delta) e_j */
        jac->unit[j] = 0.0;
        for (int i = 0; i < nv; ++i) {
            col_delta[i] = 0.0;
            col_delta[nv + i] = jac->dqdd_dq[(size_t)i * (size_t)nv + (size_t)j];
            col_u[i] = jac->column[i];
            col_u[nv + i] = jac->dqdd_du[(size_t)i * (size_t)nv + (size_t)j];
        }
    }
    return SD_OK;
}
