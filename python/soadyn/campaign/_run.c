/*
 * python/soadyn/campaign/_run.c — the C side of one campaign run (compiled into the extension
 * soadyn.campaign._run_cffi): sd_simulate with an observer that keeps the run's outputs while it
 * runs, so that a run costs one crossing from Python whatever its length:
 *   - histories: t, q, u every `history_every`-th sample;
 *   - metrics, each the largest value over the samples of
 *       SDC_NODE_DEFLECTION  |translation| of a flexible body's node (sd_model_node_deflection, m)
 *       SDC_JOINT_FORCE      |force| through a body's hinge, the inter-body force's linear part (N):
 *                            forward dynamics at the sample's state with the run's joint forces
 *                            (constant tau plus the control law), then inverse dynamics, whose
 *                            inter-body forces sd_interbody_force reads
 *       SDC_JOINT_MOMENT     its moment about the body origin (N m), likewise
 *       SDC_ENERGY_DRIFT     |E(t) - E(t0)|, E = kinetic + potential of the sample (J)
 *     and SDC_CLOSURE_RESIDUAL, the run's largest position residual of the closure constraints
 *     (sd_sim_stats), read once at the end.
 * A failure inside the observer stops the run with its message; a state that leaves the finite
 * numbers is reported as such.
 * sdc_simulate_task runs a task's runs in one call.
 * sdc_baseline runs sd_simulate on n prepared models and initial states in a C loop, with no
 * observer: what the campaign machinery is measured against (python/bench_campaign.py).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

enum { SDC_NODE_DEFLECTION = 0, SDC_JOINT_FORCE, SDC_JOINT_MOMENT, SDC_ENERGY_DRIFT, SDC_CLOSURE_RESIDUAL };

typedef struct sdc_metric {
    int kind;
    int body, node; /* the node's body and index, or the hinge's body */
    double value;   /* the largest value so far */
} sdc_metric;

typedef struct sdc_run {
    const sd_model *model;
    sd_data *data;
    const double *tau;          /* constant joint forces (nv), NULL: none */
    sd_control_fn control;      /* NULL: none */
    void *control_user;
    int nmetrics;
    sdc_metric *metrics;
    long history_every;         /* 0: no history */
    long history_capacity, history_count;
    double *history_t, *history_q, *history_u;
    double *scratch;            /* 3 nv: joint forces, accelerations, inverse dynamics' forces */
    /* set by the observer */
    long samples;
    double energy0;
    int failed;
    char message[512];
} sdc_run;

static int fail(sdc_run *r, const char *what, const char *detail)
{
    r->failed = 1;
    snprintf(r->message, sizeof r->message, "%.60s: %.440s", what, detail); /* both fit, as err->message */
    return 1;
}

/* The force through body k's hinge at the sample: the hinge's force and moment in the body frame. */
static int hinge_force(sdc_run *r, const sd_sim_sample *s, int body, double f[6])
{
    const sd_model *m = r->model;
    const int nv = sd_model_nv(m);
    double *tau = r->scratch, *qdd = tau + nv, *tau_id = qdd + nv;
    for (int i = 0; i < nv; ++i) tau[i] = r->tau ? r->tau[i] : 0.0;
    if (r->control) r->control(r->control_user, s->t, s->q, s->u, tau);
    if (sd_forward_dynamics(m, r->data, s->q, s->u, tau, NULL, qdd) != SD_OK ||
        sd_inverse_dynamics(m, r->data, s->q, s->u, qdd, NULL, tau_id) != SD_OK ||
        sd_interbody_force(m, r->data, body, SD_FRAME_BODY, f) != SD_OK)
        return fail(r, "inter-body force metric", sd_data_error(r->data));
    return 0;
}

static int observe(void *user, const sd_sim_sample *s)
{
    sdc_run *r = user;
    const sd_model *m = r->model;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    const double energy = s->kinetic + s->potential;
    if (r->samples == 0) r->energy0 = energy;
    if (r->history_every > 0 && r->samples % r->history_every == 0 && r->history_count < r->history_capacity) {
        const long i = r->history_count++;
        r->history_t[i] = s->t;
        memcpy(r->history_q + i * nq, s->q, (size_t)nq * sizeof(double));
        memcpy(r->history_u + i * nv, s->u, (size_t)nv * sizeof(double));
    }
    r->samples++;
    int forces_of = -1; /* the body whose hinge force f holds at this sample: force and moment share it */
    double f[6];
    for (int k = 0; k < r->nmetrics; ++k) {
        sdc_metric *x = &r->metrics[k];
        double value = 0.0, d[6];
        sd_error err;
        switch (x->kind) {
        case SDC_NODE_DEFLECTION:
            if (sd_model_node_deflection(m, x->body, x->node, s->q, d, &err) != SD_OK)
                return fail(r, "node deflection metric", err.message);
            value = sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5]);
            break;
        case SDC_JOINT_FORCE:
        case SDC_JOINT_MOMENT:
            if (forces_of != x->body) {
                if (hinge_force(r, s, x->body, f)) return 1;
                forces_of = x->body;
            }
            value = x->kind == SDC_JOINT_FORCE ? sqrt(f[3] * f[3] + f[4] * f[4] + f[5] * f[5])
                                               : sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
            break;
        case SDC_ENERGY_DRIFT: value = fabs(energy - r->energy0); break;
        default: continue; /* read from the run's statistics at the end */
        }
        if (!isfinite(value)) return fail(r, "metric", "not finite: the state left the finite numbers");
        if (value > x->value) x->value = value;
    }
    return 0;
}

/* One run from (q, u), which receive the final state. stats and err are the caller's. */
sd_status sdc_simulate(sdc_run *r, sd_sim_options *o, double *q, double *u, sd_sim_stats *stats, sd_error *err)
{
    const sd_model *m = r->model;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    r->samples = 0;
    r->history_count = 0;
    r->failed = 0;
    r->message[0] = '\0';
    for (int k = 0; k < r->nmetrics; ++k) r->metrics[k].value = 0.0;
    o->tau = r->tau;
    o->control = r->control;
    o->control_user = r->control_user;
    o->observer = observe;
    o->observer_user = r;
    sd_status st = sd_simulate(m, o, q, u, stats, err);
    if (st == SD_OK && r->failed) {
        err->status = st = SD_E_NOT_FINITE;
        snprintf(err->message, sizeof err->message, "%s", r->message);
    }
    if (st == SD_OK && stats->stop_reason != SD_STOP_NONE) {
        err->status = st = SD_E_SOLVER;
        snprintf(err->message, sizeof err->message, "the run stopped at t = %g s before its end", stats->t_end);
    }
    for (int i = 0; st == SD_OK && i < nq + nv; ++i)
        if (!isfinite(i < nq ? q[i] : u[i - nq])) {
            err->status = st = SD_E_NOT_FINITE;
            snprintf(err->message, sizeof err->message, "the final state is not finite (%s %d)", i < nq ? "q" : "u",
                     i < nq ? i : i - nq);
        }
    for (int k = 0; st == SD_OK && k < r->nmetrics; ++k)
        if (r->metrics[k].kind == SDC_CLOSURE_RESIDUAL) r->metrics[k].value = stats->max_position_residual;
    return st;
}

/* A task's runs one after the other: sdc_simulate of runs[j] from (q + j nq, u + j nv), with its
 * status in status[j] and its message in errs[j]. A task crosses from Python once, so that the
 * interpreter's work (drawing, setting the parameters, reading the results) is done for all its runs
 * together rather than between simulations. */
void sdc_simulate_task(sdc_run *runs, long n, sd_sim_options *o, double *q, double *u, int *status, sd_error *errs)
{
    for (long j = 0; j < n; ++j) {
        if (!runs[j].model) continue; /* failed before its simulation (its parameters) */
        const int nq = sd_model_nq(runs[j].model), nv = sd_model_nv(runs[j].model);
        sd_sim_stats stats;
        status[j] = (int)sdc_simulate(&runs[j], o, q + j * nq, u + j * nv, &stats, &errs[j]);
    }
}

/* Run i of n: sd_simulate of models[i] from (q0 + i nq, u0 + i nv) with the options as given (no
 * observer): the C loop the campaign's overhead is measured against. q0 and u0 receive the final
 * states. Returns the first failure's status. */
sd_status sdc_baseline(sd_model *const *models, const sd_sim_options *o, long n, double *q0, double *u0,
                       sd_error *err)
{
    for (long i = 0; i < n; ++i) {
        const int nq = sd_model_nq(models[i]), nv = sd_model_nv(models[i]);
        const sd_status st = sd_simulate(models[i], o, q0 + i * nq, u0 + i * nv, NULL, err);
        if (st != SD_OK) return st;
    }
    return SD_OK;
}
