/*
 * src/sim/embedded_system.c — sd_simulate on the embedded system (soadyn/embed.h, issue 11): the
 * embedded loops are solved at every evaluation, never integrated nor projected.
 *
 * State: the tree's q (nq: every hinge's coordinates, so the chart of chart.c applies unchanged) and
 * the embedded speeds u_e (sd_embedding_nv: the tree speeds outside aggregates and each aggregate's
 * independent ones, 002 Eq 19-20). The equations integrated are
 *     dq/dt   = N(q) u_e            (q moves with the tree speeds u_tree = N u_e on the chart)
 *     du_e/dt = sd_embedded_forward_dynamics(q, u_e, N^T tau)     (000 Eq 62-67 over nodes)
 * where each evaluation first closes the embedded loops from the q it is given by Newton over the
 * dependent directions, holding the independent coordinates (so the dependent coordinates that the
 * chart carries are only the next Newton's warm start), and after every step q is closed again
 * (sd_embedded_close, constraint_projection.c). The joint forces (constant and the control law's)
 * are the tree's: an actuator on a dependent joint acts on the mechanism through
 * tau_e = N^T tau (virtual work: tau . u_tree = tau . N u_e = (N^T tau) . u_e).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"
#include "sim/sim_internal.h"

/* Residual below which the starting q is taken as closed, so the split is chosen there. */
static const double START_CLOSED_TOL = 1e-9;

/* Whether the run embeds anything: a choice given, or one constraint the model file embeds. */
static int embedding_asked(const sd_model *m, const sd_sim_options *o)
{
    if (o->embed || (o->independent && o->independent[0])) return 1;
    for (int c = 0; c < sd_model_nconstraints(m); ++c)
        if (sd_model_constraint_embed(m, c) == 1) return 1;
    return 0;
}

static int embeds_any(const sd_embedding *e, const sd_model *m)
{
    for (int c = 0; c < sd_model_nconstraints(m); ++c)
        if (sd_embedding_constraint_embedded(e, c) == 1) return 1;
    return 0;
}

/* The split is chosen by pivoting at the starting configuration when it closes every loop (the
 * motion starts there, so Y1 is best conditioned where it is first used); otherwise at the model's
 * reference configuration, closed by the library. */
static int start_is_closed(const sim_rhs *rhs, const double *q)
{
    const int nc = sd_model_nconstraint_rows(rhs->model);
    double *res = malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1));
    int closed = 0;
    if (res && sd_constraint_residuals(rhs->model, rhs->data, q, NULL, res, NULL) == SD_OK) {
        closed = 1;
        for (int i = 0; i < nc; ++i)
            if (!(fabs(res[i]) <= START_CLOSED_TOL)) closed = 0;
    }
    free(res);
    return closed;
}

sd_status sim_embedded_init(sim_rhs *rhs, const sd_sim_options *options, const double *q, sd_error *err)
{
    const sd_model *m = rhs->model;
    if (!embedding_asked(m, options)) return SD_OK;
    sd_embed_options eo;
    sd_embed_options_init(&eo);
    eo.loops = options->embed;
    eo.independent = options->independent;
    eo.q = start_is_closed(rhs, q) ? q : NULL;
    sd_error e_err = {0};
    rhs->embedding = sd_embedding_new(m, &eo, &e_err);
    if (!rhs->embedding)
        return sd_error_set(err, e_err.status != SD_OK ? e_err.status : SD_E_MEMORY, "embedding the loops: %s",
                            e_err.message[0] ? e_err.message : "out of memory");
    if (!embeds_any(rhs->embedding, m)) { /* "none", or a file that embeds nothing: the tree path */
        sim_embedded_release(rhs);
        return SD_OK;
    }
    rhs->nu = sd_embedding_nv(rhs->embedding);
    rhs->edata = sd_embedded_data_new(rhs->embedding);
    rhs->u_tree = calloc((size_t)rhs->nv + 1, sizeof(double));
    rhs->tau_e = calloc((size_t)rhs->nu + 1, sizeof(double));
    if (!rhs->edata || !rhs->u_tree || !rhs->tau_e) {
        sim_embedded_release(rhs);
        return sd_error_set(err, SD_E_MEMORY, "out of memory setting up the embedded simulation");
    }
    return SD_OK;
}

void sim_embedded_release(sim_rhs *rhs)
{
    sd_embedded_data_free(rhs->edata);
    sd_embedding_free(rhs->embedding);
    free(rhs->u_tree);
    free(rhs->tau_e);
    rhs->edata = NULL;
    rhs->embedding = NULL;
    rhs->u_tree = rhs->tau_e = NULL;
    rhs->nu = rhs->nv;
}

sd_status sim_embedded_start(sim_rhs *rhs, double *q, double *u, double *u_e, sd_error *err)
{
    sd_status st = sd_embedded_close(rhs->embedding, rhs->edata, q, q, NULL);
    if (st != SD_OK) return sd_error_set(err, st, "closing the embedded loops at the start: %s", sd_embedded_error(rhs->edata));
    /* the nearest motion of the mechanism (kinetic-energy metric): a speed given on a dependent joint
     * is kept in spirit, where the bare selection of the embedded speeds would drop it */
    st = sd_project_velocities(rhs->model, rhs->data, q, u, u);
    if (st != SD_OK) return sd_error_set(err, st, "projecting the initial speeds: %s", sd_data_error(rhs->data));
    sd_embedded_speeds_of_tree(rhs->embedding, u, u_e);
    return SD_OK;
}

void sim_embedded_reduce_forces(const sd_embedding *e, const sd_embedded_data *ed, const double *tau,
                                double *tau_e)
{
    for (int s = 0; s < e->nnodes; ++s) {
        const sd_embed_node *nd = &e->nodes[s];
        const int *ts = e->tree_speeds + nd->t0;
        if (nd->kind != SD_EMBED_AGGREGATE) { /* N = I on a rigid node's speeds */
            for (int i = 0; i < nd->ni; ++i) tau_e[nd->v0 + i] = tau[ts[i]];
            continue;
        }
        const double *X = ed->X + e->x_off[s]; /* nt x ni, row j: tree speed ts[j] (002 Eq 20) */
        for (int i = 0; i < nd->ni; ++i) {
            double sum = 0.0;
            for (int j = 0; j < nd->nt; ++j) sum += X[j * nd->ni + i] * tau[ts[j]];
            tau_e[nd->v0 + i] = sum;
        }
    }
}

sd_status sim_embedded_accel(sim_rhs *rhs, double t, const double *q, const double *u_e, double *qdd_e)
{
    const sd_embedding *e = rhs->embedding;
    sd_embedded_data *ed = rhs->edata;
    ++rhs->evals;
    /* closes the loops from q and forms X_S there: u_tree and tau_e below are at the closed q */
    sd_status st = sd_embedded_tree_speeds(e, ed, q, u_e, rhs->u_tree);
    if (st != SD_OK) return st;
    memcpy(rhs->q, sd_embedded_configuration(ed), sizeof(double) * (size_t)rhs->nq);
    sim_rhs_forces(rhs, t, rhs->q, rhs->u_tree);
    sim_embedded_reduce_forces(e, ed, rhs->tau, rhs->tau_e);
    sd_embedded_fd_options fo;
    memset(&fo, 0, sizeof(fo));
    /* from the closed q: the Newton inside takes no step */
    return sd_embedded_forward_dynamics(e, ed, rhs->q, u_e, rhs->tau_e, NULL, qdd_e, NULL, &fo);
}
