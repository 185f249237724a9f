/*
 * src/sim/rhs.c — the right-hand side of the equations of motion, shared by the integrators:
 *   tau_total = tau_const + control(t, q, u)
 *   qdd       = sd_forward_dynamics(q, u, tau_total)       (articulated-body algorithm, O(N); it adds
 *               the joints' damping and spring forces itself), or
 *               sd_closed_loop_forward_dynamics() when the model has closure constraints
 *   ydot      = [J^-1(delta) u; qdd] on the chart q = q0 (+) delta (chart.c)
 * With an embedding (embedded_system.c) the state's speeds are the embedded u_e: qdd_e from
 * sd_embedded_forward_dynamics, and delta moves with the tree speeds N u_e.
 * All storage is made by sim_rhs_init(); an evaluation allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "soadyn/loops.h"

static double *alloc_zero(int n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); /* never calloc(0): it may return NULL */
}

sd_status sim_rhs_init(sim_rhs *rhs, const sd_model *model, const sd_sim_options *options, const double *q,
                       sd_error *err)
{
    memset(rhs, 0, sizeof(*rhs));
    rhs->model = model;
    rhs->nq = sd_model_nq(model);
    rhs->nv = sd_model_nv(model);
    rhs->nu = rhs->nv;
    rhs->control = options->control;
    rhs->control_user = options->control_user;
    rhs->data = sd_data_new(model);
    rhs->tau_const = alloc_zero(rhs->nv);
    rhs->tau = alloc_zero(rhs->nv);
    rhs->q = alloc_zero(rhs->nq);
    if (!rhs->data || !rhs->tau_const || !rhs->tau || !rhs->q ||
        sim_chart_init(&rhs->chart, model) != SD_OK) {
        sim_rhs_release(rhs);
        return sd_error_set(err, SD_E_MEMORY, "out of memory setting up the simulation");
    }
    if (options->tau) memcpy(rhs->tau_const, options->tau, sizeof(double) * (size_t)rhs->nv);
    const sd_status st = sim_embedded_init(rhs, options, q, err);
    if (st != SD_OK) sim_rhs_release(rhs);
    return st;
}

void sim_rhs_release(sim_rhs *rhs)
{
    sim_embedded_release(rhs);
    sd_data_free(rhs->data);
    free(rhs->tau_const);
    free(rhs->tau);
    free(rhs->q);
    sim_chart_release(&rhs->chart);
    rhs->data = NULL;
    rhs->tau_const = rhs->tau = rhs->q = NULL;
}

void sim_rhs_forces(sim_rhs *rhs, double t, const double *q, const double *u)
{
    memcpy(rhs->tau, rhs->tau_const, sizeof(double) * (size_t)rhs->nv);
    if (rhs->control) rhs->control(rhs->control_user, t, q, u, rhs->tau);
}

sd_status sim_rhs_accel(sim_rhs *rhs, double t, const double *q, const double *u, double *qdd)
{
    if (rhs->embedding) return sim_embedded_accel(rhs, t, q, u, qdd);
    sim_rhs_forces(rhs, t, q, u);
    ++rhs->evals;
    if (sd_model_nconstraints(rhs->model) > 0) /* the closed system: 000 Eq 45-46 */
        return sd_closed_loop_forward_dynamics(rhs->model, rhs->data, q, u, rhs->tau, NULL, qdd, NULL, NULL);
    return sd_forward_dynamics(rhs->model, rhs->data, q, u, rhs->tau, NULL, qdd);
}

sd_status sim_rhs_eval(sim_rhs *rhs, double t, const double *q0, const double *y, double *ydot)
{
    const double *delta = y, *u = y + rhs->nv;
    sim_chart_apply(&rhs->chart, q0, delta, rhs->q);
    if (!rhs->embedding) {
        sim_chart_rate(&rhs->chart, delta, u, ydot);
        return sim_rhs_accel(rhs, t, rhs->q, u, ydot + rhs->nv);
    }
    /* the tree speeds N u_e exist only after the evaluation (at the closed q) */
    const sd_status st = sim_rhs_accel(rhs, t, rhs->q, u, ydot + rhs->nv);
    if (st == SD_OK) sim_chart_rate(&rhs->chart, delta, rhs->u_tree, ydot);
    return st;
}

const char *sim_rhs_error(const sim_rhs *rhs)
{
    return rhs->embedding ? sd_embedded_error(rhs->edata) : sd_data_error(rhs->data);
}
