/*
 * cli/eval_embedded.c — `soadyn eval` on the embedded system (soadyn/embed.h): what eval prints for
 * a tree, in the embedded speeds u_e (the tree speeds outside aggregates and each aggregate's
 * independent ones), from the embedded algorithms over nodes:
 *   q         the --q given, its embedded loops closed by Newton (sd_embedded_close; independent
 *             coordinates held), tree-augmented loops (if any) assembled first;
 *   u, u_e    --u projected onto G u = 0 when it is not a motion of the mechanism (as for
 *             tree-augmented loops), u_e its embedded speeds, u = N u_e;
 *   tau_e     N^T tau of --tau (tree joint forces: an actuator on a dependent joint acts through N);
 *   qdd_e     sd_embedded_forward_dynamics, and qdd_tree = X qdd_e + Xdot u_e;
 *   M_e, C_e  sd_embedded_mass_matrix / _bias_forces; M_e^-1, log det M_e over nodes;
 *   tau_id    sd_embedded_inverse_dynamics at --qdd (its selection) or at qdd_e (then = tau_e:
 *             a built-in check; not offered with tree-augmented loops on top);
 *   forces    every body's inter-body force f(k) and every constraint's multipliers and cut-joint
 *             force from the same forward dynamics (000 Eq 68-69), of tau as given on every joint
 *             (sd_embedded_fd_options.tau_tree: the motion of tau_e, the loads of tau).
 * The columns of N are formed (sd_embedded_tree_speeds of unit vectors) only for the aggregates'
 * independent speeds: elsewhere N is the identity, so N^T tau stays O(N) outside the loops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constraint_report.h"
#include "embed_report.h"
#include "eval_embedded.h"

#define LOOP_TOL 1e-9 /* residual above which --q is said to have been closed, --u to have been replaced */

typedef struct emb_eval {
    const sd_model *m;
    const sd_embedding *e;
    sd_embedded_data *ed;
    sd_data *d; /* the tree workspace for residuals and energies */
    int n, nq, nv, ne, ncons, nrows, dense, n_ta;
    char **qlab, **vlab, **elab; /* coordinate, tree speed, embedded speed labels */
    double *q, *u, *tau, *qdd_in;  /* tree sizes: the inputs (q, u replaced by the state evaluated) */
    double *u_e, *tau_e, *qdd_e, *qdd_id_e, *tau_id, *c, *qdd_tree, *M, *Minv, *col;
    double *force, *lambda, *cut_local, *cut_world, *res;
    double pos_before, pos_after, vel_before, vel_after, u_change;
    int assembled, id_status; /* id_status: SD_OK, or why the inverse dynamics is left out */
    double log_det, det, kinetic, potential;
} emb_eval;

static void *zalloc(size_t n, size_t size) { return calloc(n > 0 ? n : 1, size); }

static double max_abs(const double *x, int n)
{
    double v = 0.0;
    for (int i = 0; i < n; ++i) v = fabs(x[i]) > v ? fabs(x[i]) : v;
    return v;
}

static int ee_alloc(emb_eval *r)
{
    const size_t nq = (size_t)r->nq, nv = (size_t)r->nv, ne = (size_t)r->ne, n = (size_t)r->n;
    const size_t nd = r->dense ? ne * ne : 0;
    r->qlab = zalloc(nq, sizeof(char *));
    r->vlab = zalloc(nv, sizeof(char *));
    r->elab = zalloc(ne, sizeof(char *));
    double **vec[] = {&r->u_e, &r->tau_e, &r->qdd_e, &r->qdd_id_e, &r->tau_id, &r->c};
    for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); ++i) *vec[i] = zalloc(ne, sizeof(double));
    r->qdd_tree = zalloc(nv, sizeof(double));
    r->col = zalloc(nv, sizeof(double));
    r->M = zalloc(nd, sizeof(double));
    r->Minv = zalloc(nd, sizeof(double));
    r->force = zalloc(6 * n, sizeof(double));
    r->lambda = zalloc((size_t)r->nrows, sizeof(double));
    r->res = zalloc((size_t)r->nrows, sizeof(double));
    r->cut_local = zalloc(6 * (size_t)r->ncons, sizeof(double));
    r->cut_world = zalloc(6 * (size_t)r->ncons, sizeof(double));
    r->ed = sd_embedded_data_new(r->e);
    r->d = sd_data_new(r->m);
    int ok = r->qlab && r->vlab && r->elab;
    for (int i = 0; ok && i < r->nq; ++i) ok = (r->qlab[i] = cli_label(r->m, CLI_LIST_Q, i)) != NULL;
    for (int i = 0; ok && i < r->nv; ++i) ok = (r->vlab[i] = cli_label(r->m, CLI_LIST_V, i)) != NULL;
    for (int i = 0; ok && i < r->ne; ++i) ok = (r->elab[i] = cli_embedded_speed_label(r->e, i)) != NULL;
    for (size_t i = 0; ok && i < sizeof(vec) / sizeof(vec[0]); ++i) ok = *vec[i] != NULL;
    return ok && r->qdd_tree && r->col && r->M && r->Minv && r->force && r->lambda && r->res && r->cut_local &&
           r->cut_world && r->ed && r->d;
}

static void ee_free(emb_eval *r)
{
    for (int i = 0; r->qlab && i < r->nq; ++i) free(r->qlab[i]);
    for (int i = 0; r->vlab && i < r->nv; ++i) free(r->vlab[i]);
    for (int i = 0; r->elab && i < r->ne; ++i) free(r->elab[i]);
    void *p[] = {r->qlab, r->vlab, r->elab, r->u_e, r->tau_e, r->qdd_e, r->qdd_id_e, r->tau_id, r->c, r->qdd_tree,
                 r->col, r->M, r->Minv, r->force, r->lambda, r->res, r->cut_local, r->cut_world};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); ++i) free(p[i]);
    sd_embedded_data_free(r->ed);
    sd_data_free(r->d);
}

/* Largest position (u NULL) or velocity residual over every constraint at (q, u). */
static sd_status residual(emb_eval *r, const double *u, double *out)
{
    const sd_status st = u ? sd_constraint_residuals(r->m, r->d, r->q, u, NULL, r->res)
                           : sd_constraint_residuals(r->m, r->d, r->q, NULL, r->res, NULL);
    *out = st == SD_OK ? max_abs(r->res, r->nrows) : NAN;
    return st;
}

/* q closed (tree-augmented loops assembled first when open), u_e of --u, u = N u_e. */
static sd_status close_state(emb_eval *r)
{
    sd_status st = residual(r, NULL, &r->pos_before);
    if (st == SD_OK && r->n_ta > 0 && r->pos_before > LOOP_TOL) {
        st = sd_assemble_configuration(r->m, r->d, r->q, NULL, 1e-12, 100, r->q, NULL);
        if (st != SD_OK) return st;
    }
    if (st == SD_OK) st = sd_embedded_close(r->e, r->ed, r->q, r->q, NULL);
    if (st == SD_OK) st = residual(r, NULL, &r->pos_after);
    if (st != SD_OK) return st;
    r->assembled = r->pos_before > LOOP_TOL;
    if (residual(r, r->u, &r->vel_before) != SD_OK) r->vel_before = NAN;
    double *given = r->col; /* --u kept to say how far u moved */
    memcpy(given, r->u, sizeof(double) * (size_t)r->nv);
    /* --u off the mechanism's motions: its projection onto G u = 0 (the nearest motion in the kinetic
     * energy metric, as for tree-augmented loops), not the bare selection of its embedded speeds,
     * which would drop what was given on a dependent joint */
    if (r->vel_before > LOOP_TOL && (st = sd_project_velocities(r->m, r->d, r->q, r->u, r->u)) != SD_OK) return st;
    sd_embedded_speeds_of_tree(r->e, r->u, r->u_e);
    st = sd_embedded_tree_speeds(r->e, r->ed, r->q, r->u_e, r->u);
    if (st != SD_OK) return st;
    r->u_change = 0.0;
    for (int i = 0; i < r->nv; ++i) r->u_change = fmax(r->u_change, fabs(r->u[i] - given[i]));
    return residual(r, r->u, &r->vel_after);
}

/* tau_e = N^T tau: the identity outside aggregates, a column of N (N e_i) for an aggregate's
 * independent speed i. */
static sd_status reduce_forces(emb_eval *r)
{
    const sd_model *m = r->m;
    unsigned char *in_agg = zalloc((size_t)r->nv, 1);
    double *unit = zalloc((size_t)r->ne, sizeof(double));
    sd_status st = in_agg && unit ? SD_OK : SD_E_MEMORY;
    for (int a = 0; st == SD_OK && a < sd_embedding_naggregates(r->e); ++a) {
        const int ni = sd_embedding_aggregate_independent(r->e, a, NULL);
        int *ind = zalloc((size_t)ni, sizeof(int));
        if (!ind) {
            st = SD_E_MEMORY;
            break;
        }
        sd_embedding_aggregate_independent(r->e, a, ind);
        for (int i = 0; i < ni; ++i) in_agg[ind[i]] = 1;
        free(ind);
    }
    for (int i = 0; st == SD_OK && i < r->ne; ++i) {
        const int t = sd_embedding_speed_index(r->e, i);
        if (!in_agg[t]) {
            r->tau_e[i] = r->tau[t];
            continue;
        }
        unit[i] = 1.0;
        st = sd_embedded_tree_speeds(r->e, r->ed, r->q, unit, r->col);
        unit[i] = 0.0;
        double s = 0.0;
        for (int j = 0; j < sd_model_nv(m); ++j) s += r->col[j] * r->tau[j];
        r->tau_e[i] = s;
    }
    free(in_agg);
    free(unit);
    return st;
}

static sd_status forward(emb_eval *r)
{
    sd_embedded_fd_options fo;
    memset(&fo, 0, sizeof(fo));
    fo.interbody_forces = 1;
    fo.tau_tree = r->tau;
    sd_status st = sd_embedded_forward_dynamics(r->e, r->ed, r->q, r->u_e, r->tau_e, NULL, r->qdd_e, r->qdd_tree, &fo);
    if (st == SD_OK) st = sd_embedded_constraint_forces(r->e, r->ed, r->lambda);
    sd_data *td = sd_embedded_tree_data(r->ed);
    for (int c = 0; st == SD_OK && c < r->ncons; ++c) {
        st = sd_constraint_force(r->m, td, c, SD_CONSTRAINT_FRAME_LOCAL, r->cut_local + 6 * c);
        if (st == SD_OK) st = sd_constraint_force(r->m, td, c, SD_CONSTRAINT_FRAME_WORLD, r->cut_world + 6 * c);
    }
    for (int k = 0; st == SD_OK && k < r->n; ++k) st = sd_interbody_force(r->m, td, k, SD_FRAME_BODY, r->force + 6 * k);
    return st;
}

static sd_status eval_all(emb_eval *r, int have_qdd)
{
    sd_status st = close_state(r);
    if (st == SD_OK) st = reduce_forces(r);
    if (st == SD_OK) st = forward(r);
    if (st != SD_OK) return st;
    if (have_qdd) sd_embedded_speeds_of_tree(r->e, r->qdd_in, r->qdd_id_e);
    else memcpy(r->qdd_id_e, r->qdd_e, sizeof(double) * (size_t)r->ne);
    /* with tree-augmented loops on top the library refuses (SD_E_NOT_SUPPORTED): reported, not fatal */
    r->id_status = sd_embedded_inverse_dynamics(r->e, r->ed, r->q, r->u_e, r->qdd_id_e, NULL, r->tau_id);
    if (r->id_status != SD_OK && r->id_status != SD_E_NOT_SUPPORTED) return r->id_status;
    if ((st = sd_embedded_bias_forces(r->e, r->ed, r->q, r->u_e, NULL, r->c)) != SD_OK) return st;
    if (r->dense && (st = sd_embedded_mass_matrix(r->e, r->ed, r->q, r->M)) != SD_OK) return st;
    if (r->dense && (st = sd_embedded_mass_matrix_inverse(r->e, r->ed, r->q, r->Minv)) != SD_OK) return st;
    if ((st = sd_embedded_log_det(r->e, r->ed, r->q, &r->log_det)) != SD_OK) return st;
    r->det = exp(r->log_det);
    return sd_sim_energy(r->m, r->d, r->q, r->u, &r->kinetic, &r->potential);
}

/* ---------------------------------------------------------------- text */

static void print_vector(const char *title, const double *x, int n, char **lab)
{
    cli_printf("%s:\n", title);
    for (int i = 0; i < n && !cli_output_failed(); ++i) cli_printf("  %-24s %22.15g\n", lab[i], x[i]);
}

static void print_matrix(const emb_eval *r, const char *title, const double *A)
{
    if (!r->dense) {
        cli_printf("%s: not formed (%d embedded speeds > %d)\n", title, r->ne, CLI_DENSE_MAX_NV);
        return;
    }
    cli_printf("%s (rows and columns in embedded speed order):\n", title);
    for (int i = 0; i < r->ne && !cli_output_failed(); ++i) {
        cli_printf("  %-24s", r->elab[i]);
        for (int j = 0; j < r->ne; ++j) cli_printf(" %12.6g", A[(size_t)i * (size_t)r->ne + (size_t)j]);
        cli_printf("\n");
    }
}

static void print_constraints(const emb_eval *r)
{
    cli_printf("closure: residuals position %.3g, velocity %.3g (given: %.3g, %.3g)\n", r->pos_after, r->vel_after,
               r->pos_before, r->vel_before);
    if (r->assembled)
        cli_printf("  --q left the loops open: q above is closed from it (embedded loops by Newton, the\n"
                   "  independent coordinates held%s)\n", r->n_ta > 0 ? "; tree-augmented ones assembled first" : "");
    if (r->u_change > LOOP_TOL)
        cli_printf("  --u was not a motion of the mechanism (moved by up to %.3g): u above is its projection\n"
                   "  onto G u = 0 (kinetic-energy metric), u_e its embedded speeds\n", r->u_change);
    for (int c = 0; c < r->ncons && !cli_output_failed(); ++c) {
        const int rows = sd_model_constraint_nrows(r->m, c);
        cli_printf("  %s (%s, %d rows, %s) lambda:", sd_model_constraint_name(r->m, c),
                   sd_constraint_type_name(sd_model_constraint_type(r->m, c)), rows,
                   sd_embedding_constraint_embedded(r->e, c) == 1 ? "embedded" : "tree-augmented");
        cli_constraint_print_forces(r->m, c, r->lambda, r->cut_local + 6 * c, r->cut_world + 6 * c);
    }
}

static int print_text(const emb_eval *r, int have_qdd)
{
    cli_printf("model %s: nq %d, nv %d; embedded system: %d speeds\n", sd_model_name(r->m), r->nq, r->nv, r->ne);
    if (cli_embed_print_text("eval", r->m, r->e, r->q) != CLI_OK) return CLI_FAILURE;
    print_vector("q (embedded loops closed)", r->q, r->nq, r->qlab);
    print_vector("u (tree speeds, N u_e)", r->u, r->nv, r->vlab);
    print_vector("embedded speeds u_e", r->u_e, r->ne, r->elab);
    print_vector("tau (tree joint forces, forward-dynamics input)", r->tau, r->nv, r->vlab);
    print_vector("tau_e = N^T tau (on the embedded speeds)", r->tau_e, r->ne, r->elab);
    print_matrix(r, "mass matrix M_e = N^T M N", r->M);
    print_vector("bias forces C_e", r->c, r->ne, r->elab);
    print_vector("forward dynamics qdd_e (embedded speeds)", r->qdd_e, r->ne, r->elab);
    print_vector("tree accelerations qdd = X qdd_e + Xdot u_e", r->qdd_tree, r->nv, r->vlab);
    print_constraints(r);
    if (r->id_status == SD_OK)
        print_vector(have_qdd ? "inverse dynamics tau_e (at --qdd's embedded speeds)"
                              : "inverse dynamics tau_e (at qdd_e above; = tau_e)",
                     r->tau_id, r->ne, r->elab);
    else
        cli_printf("inverse dynamics: not offered with tree-augmented loops on top of embedded ones\n"
                   "  (sd_constrained_inverse_dynamics on the tree is)\n");
    cli_printf("inter-body forces f(k) on each body from its parent, body frame [moment N m; force N]:\n");
    for (int k = 0; k < r->n && !cli_output_failed(); ++k) {
        const double *f = r->force + 6 * k;
        cli_printf("  %-20s moment %12.6g %12.6g %12.6g  force %12.6g %12.6g %12.6g\n", sd_model_body_name(r->m, k),
                   f[0], f[1], f[2], f[3], f[4], f[5]);
    }
    print_matrix(r, "mass matrix inverse M_e^-1", r->Minv);
    cli_printf("det M_e:      %.17g\nlog det M_e:  %.17g\n", r->det, r->log_det);
    cli_printf("energy:     kinetic %.17g J, potential %.17g J, total %.17g J\n", r->kinetic, r->potential,
               r->kinetic + r->potential);
    return CLI_OK;
}

/* ---------------------------------------------------------------- JSON */

static void json_vector(json_writer *w, const char *key, const double *x, int n, char **lab)
{
    jw_begin_object(w, key);
    for (int i = 0; i < n; ++i) jw_number(w, lab[i], x[i]);
    jw_end_object(w);
}

static void json_matrix(json_writer *w, const emb_eval *r, const char *key, const double *A)
{
    if (!r->dense) {
        jw_null(w, key);
        return;
    }
    jw_begin_object(w, key);
    for (int i = 0; i < r->ne; ++i) jw_numbers(w, r->elab[i], A + (size_t)i * (size_t)r->ne, r->ne);
    jw_end_object(w);
}

static void json_loops(json_writer *w, const emb_eval *r)
{
    jw_begin_object(w, "loops");
    jw_bool(w, "assembled", r->assembled);
    jw_number(w, "position_residual_before", r->pos_before);
    jw_number(w, "position_residual", r->pos_after);
    if (isfinite(r->vel_before)) jw_number(w, "velocity_residual_before", r->vel_before);
    else jw_null(w, "velocity_residual_before");
    jw_number(w, "velocity_residual", r->vel_after);
    jw_number(w, "speeds_changed_by", r->u_change);
    jw_int(w, "rows", r->nrows);
    jw_begin_object(w, "constraints");
    for (int c = 0; c < r->ncons; ++c) {
        const sd_constraint_type type = sd_model_constraint_type(r->m, c);
        const int off = sd_model_constraint_row_offset(r->m, c);
        jw_begin_object(w, sd_model_constraint_name(r->m, c));
        jw_string(w, "type", sd_constraint_type_name(type));
        jw_bool(w, "embedded", sd_embedding_constraint_embedded(r->e, c) == 1);
        jw_int(w, "first_row", off);
        cli_constraint_json_forces(w, r->m, c, r->lambda, r->cut_local + 6 * c, r->cut_world + 6 * c);
        jw_end_object(w);
    }
    jw_end_object(w);
    jw_end_object(w);
}

static int print_json(const emb_eval *r)
{
    json_writer w;
    jw_init(&w);
    jw_begin_object(&w, NULL);
    jw_string(&w, "model", sd_model_name(r->m));
    jw_int(&w, "nq", r->nq);
    jw_int(&w, "nv", r->nv);
    jw_int(&w, "nv_embedded", r->ne);
    cli_embed_json(&w, r->m, r->e, r->q);
    jw_begin_array(&w, "coordinates");
    for (int i = 0; i < r->nq; ++i) jw_string(&w, NULL, r->qlab[i]);
    jw_end_array(&w);
    jw_begin_array(&w, "speeds");
    for (int i = 0; i < r->nv; ++i) jw_string(&w, NULL, r->vlab[i]);
    jw_end_array(&w);
    json_vector(&w, "q", r->q, r->nq, r->qlab);
    json_vector(&w, "u", r->u, r->nv, r->vlab);
    json_vector(&w, "u_embedded", r->u_e, r->ne, r->elab);
    json_vector(&w, "tau", r->tau, r->nv, r->vlab);
    json_vector(&w, "tau_embedded", r->tau_e, r->ne, r->elab);
    json_matrix(&w, r, "mass_matrix", r->M);
    json_vector(&w, "bias_forces", r->c, r->ne, r->elab);
    json_vector(&w, "qdd", r->qdd_e, r->ne, r->elab);
    json_vector(&w, "qdd_tree", r->qdd_tree, r->nv, r->vlab);
    json_loops(&w, r);
    if (r->id_status == SD_OK) json_vector(&w, "tau_inverse_dynamics", r->tau_id, r->ne, r->elab);
    else jw_null(&w, "tau_inverse_dynamics");
    jw_begin_object(&w, "interbody_forces");
    for (int k = 0; k < r->n; ++k) {
        jw_begin_object(&w, sd_model_body_name(r->m, k));
        jw_string(&w, "joint", sd_model_joint_name(r->m, k));
        jw_numbers(&w, "moment", r->force + 6 * k, 3);
        jw_numbers(&w, "force", r->force + 6 * k + 3, 3);
        jw_end_object(&w);
    }
    jw_end_object(&w);
    json_matrix(&w, r, "mass_matrix_inverse", r->Minv);
    if (isfinite(r->det)) jw_number(&w, "det_mass_matrix", r->det);
    else jw_null(&w, "det_mass_matrix");
    jw_number(&w, "log_det_mass_matrix", r->log_det);
    jw_begin_object(&w, "energy");
    jw_number(&w, "kinetic", r->kinetic);
    jw_number(&w, "potential", r->potential);
    jw_number(&w, "total", r->kinetic + r->potential);
    jw_end_object(&w);
    jw_end_object(&w);
    const int rc = cli_json_emit("eval", &w);
    jw_free(&w);
    return rc;
}

int cli_eval_embedded(const sd_model *m, const sd_embedding *e, const double *q, const double *u, const double *tau,
                      const double *qdd, int json)
{
    emb_eval r;
    memset(&r, 0, sizeof(r));
    r.m = m;
    r.e = e;
    r.n = sd_model_nbodies(m);
    r.nq = sd_model_nq(m);
    r.nv = sd_model_nv(m);
    r.ne = sd_embedding_nv(e);
    r.dense = r.ne <= CLI_DENSE_MAX_NV;
    r.ncons = sd_model_nconstraints(m);
    r.nrows = sd_model_nconstraint_rows(m);
    for (int c = 0; c < r.ncons; ++c) r.n_ta += sd_embedding_constraint_embedded(e, c) == 0;
    int rc = CLI_OK;
    if (!ee_alloc(&r) || !(r.q = zalloc((size_t)r.nq, sizeof(double))) || !(r.u = zalloc((size_t)r.nv, sizeof(double))) ||
        !(r.tau = zalloc((size_t)r.nv, sizeof(double))) || !(r.qdd_in = zalloc((size_t)r.nv, sizeof(double)))) {
        fprintf(stderr, "soadyn eval: out of memory\n");
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) {
        memcpy(r.q, q, sizeof(double) * (size_t)r.nq);
        memcpy(r.u, u, sizeof(double) * (size_t)r.nv);
        memcpy(r.tau, tau, sizeof(double) * (size_t)r.nv);
        if (qdd) memcpy(r.qdd_in, qdd, sizeof(double) * (size_t)r.nv);
        const sd_status st = eval_all(&r, qdd != NULL);
        if (st != SD_OK) {
            const char *why = r.ed ? sd_embedded_error(r.ed) : NULL;
            if (!why || !why[0]) why = sd_data_error(r.d);
            fprintf(stderr, "soadyn eval: %s\n", why && why[0] ? why : sd_status_name(st));
            rc = CLI_FAILURE;
        }
    }
    if (rc == CLI_OK) rc = json ? print_json(&r) : print_text(&r, qdd != NULL);
    free(r.q);
    free(r.u);
    free(r.tau);
    free(r.qdd_in);
    ee_free(&r);
    return rc;
}
