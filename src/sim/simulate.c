/*
 * src/sim/simulate.c — sd_simulate(): checks the options, sets up the right-hand side, runs the
 * chosen integrator and hands output samples to the observer. Also the energy helper and the
 * integrator names.
 *
 * With an embedding (sd_sim_options.embed, embedded_system.c) the integrated speeds are the embedded
 * ones (run.us); the caller's u, the samples and the energies stay the tree's (u = N u_e).
 *
 * Output times are t0 + k dt (k = 0 .. nout, the last one clipped to t0 + duration); the observer
 * sees k = 0, every `every`-th k, the last k, and the state where a run was stopped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/flex.h>

#include "sim/sim_internal.h"

static const char *const integrator_names[] = {"rk4", "cvode-bdf", "cvode-adams", "radau-iia"};

const char *sd_integrator_name(sd_integrator integrator)
{
    if ((int)integrator < 0 || (int)integrator > SD_INTEGRATOR_RADAU_IIA) return "unknown";
    return integrator_names[integrator];
}

int sim_name_index(const char *const *names, int count, const char *name)
{
    for (int i = 0; name && i < count; ++i)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

sd_status sd_integrator_from_name(const char *name, sd_integrator *integrator)
{
    const int i = sim_name_index(integrator_names, (int)SD_INTEGRATOR_RADAU_IIA + 1, name);
    if (i < 0) return SD_E_ARGUMENT;
    *integrator = (sd_integrator)i;
    return SD_OK;
}

void sd_sim_options_init(sd_sim_options *options)
{
    if (!options) return; /* nothing to fill (was a NULL dereference) */
    memset(options, 0, sizeof(*options));
    options->integrator = SD_INTEGRATOR_RK4;
    options->duration = 1.0;
    options->dt = 1e-3;
    options->every = 1;
    options->rtol = 1e-8;
    options->atol = 1e-10;
    options->max_internal_steps = 100000;
    options->project_constraints = 1;
    options->sample_energies = 1;
}

sd_status sd_sim_energy(const sd_model *model, sd_data *data, const double *q, const double *u,
                        double *kinetic, double *potential)
{
    sd_status st = sd_kinematics(model, data, q, u, NULL);
    if (st != SD_OK) return st;
    if (kinetic && (st = sd_kinetic_energy(model, data, kinetic)) != SD_OK) return st;
    if (!potential) return SD_OK;
    double springs, strain = 0.0; /* flexible bodies' strain energy: potential like a spring's */
    if ((st = sd_potential_energy(model, data, potential)) != SD_OK ||
        (st = sd_spring_energy(model, data, q, &springs)) != SD_OK ||
        (sd_model_nflexible(model) > 0 && (st = sd_strain_energy(model, data, &strain)) != SD_OK))
        return st;
    *potential += springs + strain;
    return SD_OK;
}

/* Options that would make a run do something other than what was asked are refused, not adjusted:
 * a dt longer than the duration would be cut to the duration (an RK4 step the caller did not ask
 * for) or, for a duration below 1e-9 dt, integrate nothing while looking like a success; so would a
 * zero duration. */
static sd_status check_options(const sd_model *model, const sd_sim_options *o, const double *q,
                               const double *u, sd_error *err)
{
    if (!model || !o || !q || !u) return sd_error_set(err, SD_E_ARGUMENT, "sd_simulate: NULL argument");
    if (!isfinite(o->t0)) return sd_error_set(err, SD_E_ARGUMENT, "start time t0 = %g is not finite", o->t0);
    if (!(o->duration > 0.0) || !isfinite(o->duration))
        return sd_error_set(err, SD_E_ARGUMENT, "duration = %g s must be finite and positive", o->duration);
    if (!(o->dt > 0.0) || !isfinite(o->dt))
        return sd_error_set(err, SD_E_ARGUMENT, "time step dt = %g s must be finite and positive", o->dt);
    if (o->dt > o->duration)
        return sd_error_set(err, SD_E_ARGUMENT,
                            "time step dt = %g s is longer than the duration %g s: no step of dt fits; give "
                            "dt <= duration",
                            o->dt, o->duration);
    if (o->duration / o->dt > 1e12)
        return sd_error_set(err, SD_E_ARGUMENT, "duration / dt = %g steps is too many", o->duration / o->dt);
    if (o->every < 1) return sd_error_set(err, SD_E_ARGUMENT, "every = %d must be >= 1", o->every);
    if ((int)o->integrator < 0 || (int)o->integrator > SD_INTEGRATOR_RADAU_IIA)
        return sd_error_set(err, SD_E_ARGUMENT, "unknown integrator %d", (int)o->integrator);
    if ((o->integrator == SD_INTEGRATOR_CVODE_BDF || o->integrator == SD_INTEGRATOR_CVODE_ADAMS) &&
        (!(o->rtol > 0.0) || !(o->atol > 0.0) || !isfinite(o->rtol) || !isfinite(o->atol)))
        return sd_error_set(err, SD_E_ARGUMENT, "tolerances rtol = %g, atol = %g must be finite and positive",
                            o->rtol, o->atol);
    if (!(o->max_step >= 0.0) || !isfinite(o->max_step))
        return sd_error_set(err, SD_E_ARGUMENT, "max_step = %g must be finite and >= 0 (0: no limit)",
                            o->max_step);
    if (o->max_internal_steps < 0)
        return sd_error_set(err, SD_E_ARGUMENT, "max_internal_steps = %ld must be >= 0 (0: the default)",
                            o->max_internal_steps);
    for (int i = 0; i < sd_model_nq(model); ++i)
        if (!isfinite(q[i])) return sd_error_set(err, SD_E_ARGUMENT, "initial q[%d] is not finite", i);
    for (int i = 0; i < sd_model_nv(model); ++i)
        if (!isfinite(u[i])) return sd_error_set(err, SD_E_ARGUMENT, "initial u[%d] is not finite", i);
    for (int i = 0; o->tau && i < sd_model_nv(model); ++i)
        if (!isfinite(o->tau[i])) return sd_error_set(err, SD_E_ARGUMENT, "tau[%d] is not finite", i);
    return SD_OK;
}

sd_status sd_simulate_check(const sd_model *model, const sd_sim_options *options, const double *q,
                            const double *u, sd_error *err)
{
    sd_status st = check_options(model, options, q, u, err);
    sd_sim_jacobian chosen;
    if (st == SD_OK) st = sim_jacobian_choose(model, options, q, u, &chosen, err);
    return st;
}

/* Hand the state at output time t to the observer when it is due. */
static int observe(sim_run *run, double t, sd_error *err, sd_status *status)
{
    const sd_sim_options *o = run->opt;
    sd_sim_sample s;
    s.t = t;
    s.q = run->q;
    s.u = run->u;
    s.steps = run->stats.steps;
    s.kinetic = s.potential = NAN;
    if (o->sample_energies) {
        const sd_status st = sd_sim_energy(run->model, run->rhs.data, run->q, run->u, &s.kinetic, &s.potential);
        if (st != SD_OK) {
            *status = sd_error_set(err, st, "energy at t = %g: %s", t, sd_data_error(run->rhs.data));
            return 1;
        }
    }
    if (o->observer(o->observer_user, &s) != 0) {
        run->stats.stop_reason = SD_STOP_OBSERVER;
        return 1;
    }
    return 0;
}

int sim_run_output(sim_run *run, long k, double t, sd_error *err, sd_status *status)
{
    const sd_sim_options *o = run->opt;
    run->stats.t_end = t;
    if (k > 0 && (*status = sim_constraints_project(run, t, err)) != SD_OK) return 1;
    const double qe = sim_chart_quat_error(&run->rhs.chart, run->q);
    if (qe > run->stats.max_quat_norm_error) run->stats.max_quat_norm_error = qe;
    int stop = 0;
    if (o->stop && *o->stop) {
        run->stats.stop_reason = SD_STOP_FLAG;
        stop = 1;
    }
    if (o->observer && (k % o->every == 0 || k == run->nout || stop))
        stop |= observe(run, t, err, status);
    if (o->progress && k > 0) o->progress(o->progress_user, t, run->stats.steps);
    return stop;
}

sd_status sim_fixed_step_run(sim_run *run, sim_step_fn step, void *work, sd_error *err)
{
    const sd_sim_options *o = run->opt;
    sd_status st = SD_OK;
    double t = o->t0;
    for (long k = 1; k <= run->nout; ++k) {
        double t_next = o->t0 + (double)k * o->dt; /* from k, so that round-off does not accumulate */
        if (k == run->nout || t_next > run->t_end) t_next = run->t_end;
        if ((st = step(work, run, t, t_next - t, err)) != SD_OK) break;
        t = t_next;
        ++run->stats.steps;
        if (sim_run_output(run, k, t, err, &st)) break;
    }
    return st;
}

/* The conserved quantities at the run's state: the total energy and the spatial momentum h (the
 * energy's kinematics pass leaves the velocities that sd_spatial_momentum_world reads). */
static sd_status energy_and_momentum(sim_run *run, double *e, double h[6], sd_error *err)
{
    double T = 0.0, V = 0.0;
    sd_status st = sd_sim_energy(run->model, run->rhs.data, run->q, run->u, &T, &V);
    if (st == SD_OK) st = sd_spatial_momentum_world(run->model, run->rhs.data, h);
    if (st != SD_OK) return sd_error_set(err, st, "energy and momentum: %s", sd_data_error(run->rhs.data));
    *e = T + V;
    return SD_OK;
}

sd_status sd_simulate(const sd_model *model, const sd_sim_options *options, double *q, double *u,
                      sd_sim_stats *stats, sd_error *err)
{
    sd_status st = check_options(model, options, q, u, err);
    sim_run run;
    memset(&run, 0, sizeof(run));
    if (st == SD_OK) st = sim_jacobian_choose(model, options, q, u, &run.jacobian, err);
    if (st != SD_OK) return st;
    run.model = model;
    run.opt = options;
    run.q = q;
    run.u = u;
    run.t_end = options->t0 + options->duration;
    /* dt <= duration: at least one interval; a last one shorter than 1e-9 dt is merged into the one
     * before rather than taken as a step of round-off size */
    run.nout = (long)ceil(options->duration / options->dt - 1e-9);
    run.stats.t_end = options->t0;
    st = sim_rhs_init(&run.rhs, model, options, q, err);
    if (st != SD_OK) return st;
    run.us = u;
    if (run.rhs.embedding) { /* the integrated speeds are the embedded ones; u stays N u_e */
        run.us = malloc(sizeof(double) * (size_t)(run.rhs.nu + 1));
        if (!run.us) {
            sim_rhs_release(&run.rhs);
            return sd_error_set(err, SD_E_MEMORY, "out of memory setting up the embedded simulation");
        }
        st = sim_embedded_start(&run.rhs, q, u, run.us, err);
    }
    if (st == SD_OK) st = sim_constraints_init(&run, err);
    if (st == SD_OK) st = sim_constraints_project(&run, options->t0, err); /* start on the manifold */

    if (st == SD_OK) st = energy_and_momentum(&run, &run.stats.energy_start, run.stats.momentum_start, err);
    if (st == SD_OK && !sim_run_output(&run, 0, options->t0, err, &st)) {
        /* A model without speeds has nothing to integrate: RK4 handles it trivially. */
        if (options->integrator == SD_INTEGRATOR_RK4 || run.rhs.nu == 0)
            st = sim_rk4_run(&run, err);
        else if (options->integrator == SD_INTEGRATOR_RADAU_IIA)
            st = sim_radau_run(&run, err);
        else
            st = sim_cvode_run(&run, err);
    }
    sd_status st2 = energy_and_momentum(&run, &run.stats.energy_end, run.stats.momentum_end, st == SD_OK ? err : NULL);
    if (st == SD_OK) st = st2;
    run.stats.rhs_evals = run.rhs.evals;
    run.stats.jacobian = run.jacobian;
    sim_constraints_release(&run);
    if (run.us != u) free(run.us);
    sim_rhs_release(&run.rhs);
    if (stats) *stats = run.stats;
    return st;
}
