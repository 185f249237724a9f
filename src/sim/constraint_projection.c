/*
 * src/sim/constraint_projection.c — keeping a simulated closed system on its constraint manifold
 * (issue 8 item 4): after each accepted step the integrator's (q, u) is moved back onto
 *   phi(q) = 0   by sd_assemble_configuration() started from the step's q (Gauss-Newton, minimum-norm
 *                steps: the nearest closed configuration, a few iterations from a step's drift), and
 *   G(q) u = 0   by sd_project_velocities() (the nearest speeds in the kinetic-energy metric, so the
 *                projection removes energy only with the constraint-violating part of u).
 * The residuals left after the projection are what sd_sim_stats reports; they are recorded also when
 * the projection is switched off, so that the drift is visible rather than hidden.
 *
 * With an embedding (embedded_system.c) the embedded loops are not projected but solved: q is
 * closed by sd_embedded_close (Newton over the dependent directions, the independent coordinates
 * held), the tree-augmented constraints (if any) are projected as above from there, the embedded
 * speeds u_e taken from the projected tree speeds (their selection), and the caller's u = N u_e.
 *
 * Baumgarte stabilisation is not offered: sd_closed_loop_forward_dynamics() takes no term to add to
 * gamma, and projection alone keeps the residuals at rounding level.
 */
#include <math.h>
#include <stdlib.h>

#include "sim/sim_internal.h"
#include "soadyn/loops.h"

/* Assembly aims at TIGHT_TOL; where rounding of a large model stops it just above, a configuration
 * within LOOSE_TOL is kept (the residual is reported) rather than failing the run. */
enum { ASSEMBLY_MAX_ITER = 10 };
static const double TIGHT_TOL = 1e-12;
static const double LOOSE_TOL = 1e-9;

sd_status sim_constraints_init(sim_run *run, sd_error *err)
{
    run->residual = NULL;
    const int nc = sd_model_nconstraint_rows(run->model);
    if (nc <= 0) return SD_OK;
    run->residual = malloc(sizeof(double) * (size_t)(2 * nc));
    if (!run->residual) return sd_error_set(err, SD_E_MEMORY, "out of memory setting up the constraint projection");
    return SD_OK;
}

void sim_constraints_release(sim_run *run)
{
    free(run->residual);
    run->residual = NULL;
}

static double max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; ++i)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

/* Rows of the constraints the embedding leaves tree-augmented. */
static int tree_augmented_rows(const sim_run *run)
{
    int rows = 0;
    for (int c = 0; c < sd_model_nconstraints(run->model); ++c)
        if (sd_embedding_constraint_embedded(run->rhs.embedding, c) == 0) rows += sd_model_constraint_nrows(run->model, c);
    return rows;
}

/* The embedded loops closed, the tree-augmented ones projected (when asked), u = N u_e. */
static sd_status settle_embedded(sim_run *run, double t, sd_error *err)
{
    sim_rhs *rhs = &run->rhs;
    const sd_embedding *e = rhs->embedding;
    sd_embedded_data *ed = rhs->edata;
    sd_status st = sd_embedded_close(e, ed, run->q, run->q, NULL);
    if (st != SD_OK)
        return sd_error_set(err, st, "closing the embedded loops at t = %.9g: %s", t, sd_embedded_error(ed));
    if (run->opt->project_constraints && tree_augmented_rows(run) > 0) {
        sd_data *data = rhs->data;
        double left = 0.0;
        st = sd_assemble_configuration(run->model, data, run->q, NULL, TIGHT_TOL, ASSEMBLY_MAX_ITER, run->q, &left);
        if (st != SD_OK && !(st == SD_E_SINGULAR && left <= LOOSE_TOL))
            return sd_error_set(err, st, "closing the loops at t = %.9g: %s", t, sd_data_error(data));
        /* the assembly moved every coordinate a little: the embedded loops are solved again */
        st = sd_embedded_close(e, ed, run->q, run->q, NULL);
        if (st == SD_OK) st = sd_embedded_tree_speeds(e, ed, run->q, run->us, run->u);
        if (st != SD_OK)
            return sd_error_set(err, st, "closing the embedded loops at t = %.9g: %s", t, sd_embedded_error(ed));
        st = sd_project_velocities(run->model, data, run->q, run->u, run->u);
        if (st != SD_OK)
            return sd_error_set(err, st, "projecting the speeds at t = %.9g: %s", t, sd_data_error(data));
        sd_embedded_speeds_of_tree(e, run->u, run->us); /* u keeps G u = 0: its selection rebuilds it */
        ++run->stats.projections;
    }
    st = sd_embedded_tree_speeds(e, ed, run->q, run->us, run->u);
    if (st != SD_OK)
        return sd_error_set(err, st, "tree speeds of the embedded system at t = %.9g: %s", t, sd_embedded_error(ed));
    return SD_OK;
}

sd_status sim_constraints_project(sim_run *run, double t, sd_error *err)
{
    if (!run->residual) return SD_OK; /* a tree: nothing to close */
    const sd_model *model = run->model;
    sd_data *data = run->rhs.data;
    sd_status st;
    if (run->rhs.embedding) {
        if ((st = settle_embedded(run, t, err)) != SD_OK) return st;
    } else if (run->opt->project_constraints) {
        double left = 0.0;
        st = sd_assemble_configuration(model, data, run->q, NULL, TIGHT_TOL, ASSEMBLY_MAX_ITER, run->q, &left);
        if (st != SD_OK && !(st == SD_E_SINGULAR && left <= LOOSE_TOL))
            return sd_error_set(err, st, "closing the loops at t = %.9g: %s", t, sd_data_error(data));
        st = sd_project_velocities(model, data, run->q, run->u, run->u);
        if (st != SD_OK)
            return sd_error_set(err, st, "projecting the speeds at t = %.9g: %s", t, sd_data_error(data));
        ++run->stats.projections;
    }
    const int nc = sd_model_nconstraint_rows(model);
    st = sd_constraint_residuals(model, data, run->q, run->u, run->residual, run->residual + nc);
    if (st != SD_OK) return sd_error_set(err, st, "constraint residuals at t = %.9g: %s", t, sd_data_error(data));
    const double rp = max_abs(run->residual, nc), rv = max_abs(run->residual + nc, nc);
    if (rp > run->stats.max_position_residual) run->stats.max_position_residual = rp;
    if (rv > run->stats.max_velocity_residual) run->stats.max_velocity_residual = rv;
    return SD_OK;
}
