/*
 * cli/cmd_eval.c — `soadyn eval MODEL`: every algorithm at one state (q, u, tau), as text or JSON.
 *
 * Forward dynamics gives qdd from tau (with --prescribed, mixed dynamics: the prescribed joints'
 * accelerations are given and their forces computed); the inter-body forces are those of that motion.
 * Inverse dynamics is evaluated at --qdd when given, else at the forward-dynamics qdd (so that it
 * returns tau again: a built-in check). The dense nv x nv results (M, M^-1) are formed only up to
 * CLI_DENSE_MAX_NV speeds; everything else is O(N), so eval answers on a 100 000-body chain.
 *
 * A model with closure constraints (loops.h) is evaluated as the closed system: a --q that leaves a
 * loop open (position residual above CLI_LOOP_TOL) is first assembled onto the constraints
 * (sd_assemble_configuration from --q as the guess, the joints --q names held where the constraints
 * allow: a mimic's leader keeps its value, its followers are solved) and u projected onto G u = 0
 * likewise, and both are said; qdd is then sd_closed_loop_forward_dynamics's, with lambda, the cut-joint force of every
 * constraint (in its frame and in world axes) and the rank of G M^-1 G*. Models without constraints
 * take the tree path unchanged.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "constraint_report.h"
#include "eval_embedded.h"
#include "json_writer.h"
#include <soadyn/flex.h>

static const char help[] =
    "usage: soadyn eval MODEL [options]\n"
    "\n"
    "Evaluate the dynamics at one state: mass matrix M, bias forces C, forward dynamics qdd,\n"
    "inverse dynamics tau, inter-body forces of every body (free and constrained parts), M^-1,\n"
    "det M and log det M, kinetic and potential energy. The joints' armature is part of M, their\n"
    "damping and spring forces of C, their springs' energy of the potential energy.\n"
    "\n"
    "options:\n"
    "  --q VALUES        configuration (default: the model's reference configuration: MJCF's\n"
    "                    qpos0, the refs of its joints; neutral for URDF and SDF)\n"
    "  --u VALUES        speeds (default: zero)\n"
    "  --tau VALUES      joint forces for forward dynamics (default: zero)\n"
    "  --qdd VALUES      accelerations for inverse dynamics (default: the forward-dynamics qdd)\n"
    "  --prescribed J=A,...  joints whose accelerations are prescribed (mixed dynamics); their\n"
    "                    joint forces are computed and printed\n"
    "  --json            print one JSON object (keys name the joints and bodies, whole)\n"
    "  --compiled        ID, C, M, M^-1 by the model's compiled code (as bench --compiled; FD,\n"
    "                    forces, det M: the library)\n"
    CLI_EMBED_HELP
    "  --floating        attach the root link with a free hinge\n"
    "  --keep-fixed      keep fixed joints as 0-dof bodies\n"
    CLI_GRAVITY_HELP
    "  --help            this text\n"
    "\n"
    "VALUES is either every value in order (--q 0.1,0.2,0.3) or NAME=VALUE pairs\n"
    "(--q shoulder=0.3,elbow=-1.2); names are joint names, with a component for several-dof\n"
    "joints (base.x, base.qw, ball.wx, ...: see `soadyn info`). Units: rad, m, rad/s, m/s, N m, N.\n"
    "M and M^-1 are formed for models of up to 4096 speeds; past that they are left out (JSON: null)\n"
    "with a note, and everything else is still printed.\n"
    "\n"
    "Flexible bodies: the modal accelerations (eta-ddot, labelled BODY.eta1, ..) are part of qdd\n"
    "and are also listed on their own (JSON: \"modal_accelerations\"); M^-1 is not formed for such\n"
    "models (the library offers M, det M and the forward dynamics, not M^-1).\n"
    "\n"
    "Closed loops: on a model with closure constraints, a --q that leaves a loop open (residual\n"
    "above 1e-9) is assembled onto the constraints first, the joints --q names (NAME=VALUE) held at\n"
    "their values and the coupled ones solved (or, when the constraints need them moved, every joint\n"
    "freed), and a --u that violates G u = 0 projected, and the output says so; qdd is the closed system's, printed with the multipliers lambda of each\n"
    "constraint, the cut-joint force in the constraint frame and in world axes, and the rank of\n"
    "G M^-1 G*. Inverse dynamics is then the tree's: M qdd + C = tau + G* lambda. --prescribed is\n"
    "not offered on such models.\n"
    "\n"
    "Embedded loops (--embed, or the model file's choice): everything is evaluated on the embedded\n"
    "system, whose speeds u_e are the tree speeds outside the loops' aggregates and each aggregate's\n"
    "independent ones: q with the embedded loops closed by Newton (independent coordinates held),\n"
    "u = N u_e of --u's embedded speeds, tau_e = N^T tau, the forward dynamics qdd_e and the tree's\n"
    "qdd = X qdd_e + Xdot u_e, M_e = N^T M N, C_e, M_e^-1, det M_e, the inverse dynamics (at --qdd's\n"
    "embedded speeds or qdd_e), every constraint's multipliers and cut-joint force, every body's\n"
    "inter-body force; the embedding (aggregates, independent and dependent speeds) first.\n";

/* Residual above which a state is said not to close the loops and is assembled / projected. */
#define CLI_LOOP_TOL 1e-9
/* Tolerance and iterations of the assembly (the library's simulate uses 1e-12 too). */
#define CLI_ASSEMBLY_TOL 1e-12
#define CLI_ASSEMBLY_MAX_ITER 100

typedef struct eval_result {
    const sd_model *m;
    sd_data *d;
    int n, nq, nv;
    char **qlab, **vlab;             /* coordinate and speed labels, whole */
    int dense;                       /* M and M^-1 formed (nv <= CLI_DENSE_MAX_NV) */
    double *q, *u, *tau, *qdd_in;     /* inputs; qdd_in: --qdd or NaN-free zeros */
    unsigned char *qdd_given, *presc_given, *presc_body;
    double *presc_acc;
    int have_qdd, have_presc;
    double *qdd, *tau_fd, *tau_id, *c, *M, *Minv; /* results */
    double *force;                   /* 6 per body: f(k) in the body frame */
    double *free_part, *constrained; /* 6 per body slots */
    double det, log_det, kinetic, potential;
    /* closed loops (nc == 0: none, the tree path) */
    int ncons, nc, rank;
    int assembled, projected;        /* --q assembled, --u projected */
    unsigned char *q_named, *held;   /* coordinates --q named (name=value), speeds held in assembly */
    double *q_held;                  /* nq: the assembly with them held */
    int nheld, hold_failed;          /* speeds held; 1: they could not be, assembled with them free */
    double pos_before, vel_before;   /* largest residuals of the state given */
    double pos_after, vel_after;     /* ... of the state evaluated */
    double *lambda;                  /* nc */
    double *cut_local, *cut_world;   /* 6 per constraint: [moment; force] on body B */
    double *res;                     /* nc scratch */
} eval_result;

static void *zalloc(size_t n, size_t size) { return calloc(n > 0 ? n : 1, size); }

static int eval_alloc(eval_result *r)
{
    const size_t nq = (size_t)r->nq, nv = (size_t)r->nv, n = (size_t)r->n;
    const size_t ndense = r->dense ? nv * nv : 0;
    r->qlab = zalloc(nq, sizeof(*r->qlab));
    r->vlab = zalloc(nv, sizeof(*r->vlab));
    r->q = zalloc(nq, sizeof(double));
    r->u = zalloc(nv, sizeof(double));
    r->tau = zalloc(nv, sizeof(double));
    r->qdd_in = zalloc(nv, sizeof(double));
    r->qdd_given = zalloc(nv, 1);
    r->q_named = zalloc(nq, 1);
    r->held = zalloc(nv, 1);
    r->q_held = zalloc(nq, sizeof(double));
    r->presc_given = zalloc(nv, 1);
    r->presc_body = zalloc(n, 1);
    r->presc_acc = zalloc(nv, sizeof(double));
    r->qdd = zalloc(nv, sizeof(double));
    r->tau_fd = zalloc(nv, sizeof(double));
    r->tau_id = zalloc(nv, sizeof(double));
    r->c = zalloc(nv, sizeof(double));
    r->M = zalloc(ndense, sizeof(double));
    r->Minv = zalloc(ndense, sizeof(double));
    r->force = zalloc(6 * n, sizeof(double));
    r->free_part = zalloc(6 * n, sizeof(double));
    r->constrained = zalloc(6 * n, sizeof(double));
    r->lambda = zalloc((size_t)r->nc, sizeof(double));
    r->res = zalloc((size_t)r->nc, sizeof(double));
    r->cut_local = zalloc(6 * (size_t)r->ncons, sizeof(double));
    r->cut_world = zalloc(6 * (size_t)r->ncons, sizeof(double));
    r->d = sd_data_new(r->m);
    int ok = r->qlab && r->vlab;
    for (int i = 0; ok && i < r->nq; ++i) ok = (r->qlab[i] = cli_label(r->m, CLI_LIST_Q, i)) != NULL;
    for (int i = 0; ok && i < r->nv; ++i) ok = (r->vlab[i] = cli_label(r->m, CLI_LIST_V, i)) != NULL;
    return ok && r->qlab && r->vlab && r->q && r->u && r->tau && r->qdd_in && r->qdd_given && r->q_named && r->held && r->q_held &&
           r->presc_given &&
           r->presc_body && r->presc_acc && r->qdd && r->tau_fd && r->tau_id && r->c && r->M && r->Minv &&
           r->force && r->free_part && r->constrained && r->lambda && r->res && r->cut_local && r->cut_world &&
           r->d;
}

static void eval_free(eval_result *r)
{
    for (int i = 0; r->qlab && i < r->nq; ++i) free(r->qlab[i]);
    for (int i = 0; r->vlab && i < r->nv; ++i) free(r->vlab[i]);
    void *p[] = {r->qlab, r->vlab, r->q, r->u, r->tau, r->qdd_in, r->qdd_given, r->q_named, r->held, r->q_held, r->presc_given,
                 r->presc_body,
                 r->presc_acc, r->qdd, r->tau_fd, r->tau_id, r->c, r->M, r->Minv, r->force, r->free_part,
                 r->constrained, r->lambda, r->res, r->cut_local, r->cut_world};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); ++i) free(p[i]);
    sd_data_free(r->d);
}

static double max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; ++i) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

/* The speeds of every hinge a coordinate of which --q named: held in assembly. A full list of values
 * (every coordinate given) is a guess to close, not joints to hold. */
static void hold_named_joints(eval_result *r)
{
    int named = 0;
    for (int i = 0; i < r->nq; ++i) named += r->q_named[i] != 0;
    r->nheld = 0;
    if (named == 0 || named == r->nq) return;
    for (int k = 0; k < r->n; ++k) {
        const int q0 = sd_model_q_index(r->m, k), v0 = sd_model_v_index(r->m, k);
        int any = 0;
        for (int i = 0; i < sd_model_hinge_nq(r->m, k); ++i) any |= r->q_named[q0 + i];
        for (int i = 0; any && i < sd_model_hinge_nv(r->m, k); ++i) {
            r->held[v0 + i] = 1;
            ++r->nheld;
        }
    }
}

/* Bring (q, u) onto the constraints when they leave a loop open, remembering the residuals given. */
static sd_status close_loops(eval_result *r)
{
    sd_status st = sd_constraint_residuals(r->m, r->d, r->q, NULL, r->res, NULL);
    if (st != SD_OK) return st;
    r->pos_before = r->pos_after = max_abs(r->res, r->nc);
    if (r->pos_before > CLI_LOOP_TOL) {
        /* the joints --q named keep their values, the others (a mimic's follower, a loop's passive
         * joints) are solved; when the constraints cannot close with them held, they are freed */
        hold_named_joints(r);
        if (r->nheld) {
            st = sd_assemble_configuration(r->m, r->d, r->q, r->held, CLI_ASSEMBLY_TOL, CLI_ASSEMBLY_MAX_ITER,
                                           r->q_held, &r->pos_after);
            if (st == SD_OK) memcpy(r->q, r->q_held, sizeof(double) * (size_t)r->nq);
            else r->hold_failed = 1;
        }
        if (!r->nheld || r->hold_failed) {
            st = sd_assemble_configuration(r->m, r->d, r->q, NULL, CLI_ASSEMBLY_TOL, CLI_ASSEMBLY_MAX_ITER, r->q,
                                           &r->pos_after);
            if (st != SD_OK) return st;
        }
        r->assembled = 1;
    }
    st = sd_constraint_residuals(r->m, r->d, r->q, r->u, NULL, r->res);
    if (st != SD_OK) return st;
    r->vel_before = r->vel_after = max_abs(r->res, r->nc);
    if (r->vel_before > CLI_LOOP_TOL) {
        st = sd_project_velocities(r->m, r->d, r->q, r->u, r->u);
        if (st == SD_OK) st = sd_constraint_residuals(r->m, r->d, r->q, r->u, NULL, r->res);
        if (st != SD_OK) return st;
        r->vel_after = max_abs(r->res, r->nc);
        r->projected = 1;
    }
    return SD_OK;
}

/* Forward dynamics of the closed system: qdd, lambda, the cut-joint forces and the inter-body
 * forces of the tree hinges, all read from this one solve before anything overwrites them. */
static sd_status eval_forward_closed(eval_result *r)
{
    sd_closed_loop_options co;
    memset(&co, 0, sizeof(co));
    co.interbody_forces = 1;
    memcpy(r->tau_fd, r->tau, sizeof(double) * (size_t)r->nv);
    sd_status st = sd_closed_loop_forward_dynamics(r->m, r->d, r->q, r->u, r->tau, NULL, r->qdd, r->lambda, &co);
    if (st != SD_OK) return st;
    r->rank = sd_closed_loop_rank(r->d);
    for (int c = 0; st == SD_OK && c < r->ncons; ++c) {
        st = sd_constraint_force(r->m, r->d, c, SD_CONSTRAINT_FRAME_LOCAL, r->cut_local + 6 * c);
        if (st == SD_OK) st = sd_constraint_force(r->m, r->d, c, SD_CONSTRAINT_FRAME_WORLD, r->cut_world + 6 * c);
    }
    for (int k = 0; st == SD_OK && k < r->n; ++k) {
        st = sd_interbody_force(r->m, r->d, k, SD_FRAME_BODY, r->force + 6 * k);
        if (st == SD_OK)
            st = sd_constraint_force_components(r->m, r->d, k, r->free_part + 6 * k, r->constrained + 6 * k, NULL);
    }
    return st;
}

/* Forward (or mixed) dynamics with inter-body forces, read before anything overwrites them. */
static sd_status eval_forward(eval_result *r)
{
    if (r->nc > 0) return eval_forward_closed(r);
    memcpy(r->tau_fd, r->tau, sizeof(double) * (size_t)r->nv);
    for (int i = 0; i < r->nv; ++i) r->qdd[i] = r->presc_given[i] ? r->presc_acc[i] : 0.0;
    sd_fd_options fo;
    memset(&fo, 0, sizeof(fo));
    fo.interbody_forces = 1;
    fo.prescribed = r->have_presc ? r->presc_body : NULL;
    sd_status st = sd_forward_dynamics_ex(r->m, r->d, r->q, r->u, r->tau_fd, NULL, r->qdd, &fo);
    for (int k = 0; st == SD_OK && k < r->n; ++k) {
        st = sd_interbody_force(r->m, r->d, k, SD_FRAME_BODY, r->force + 6 * k);
        if (st == SD_OK)
            st = sd_constraint_force_components(r->m, r->d, k, r->free_part + 6 * k, r->constrained + 6 * k, NULL);
    }
    return st;
}

static sd_status eval_all(eval_result *r)
{
    sd_status st = r->nc > 0 ? close_loops(r) : SD_OK;
    if (st == SD_OK) st = eval_forward(r);
    const double *qdd_id = r->have_qdd ? r->qdd_in : r->qdd;
    if (st == SD_OK) st = sd_inverse_dynamics(r->m, r->d, r->q, r->u, qdd_id, NULL, r->tau_id);
    if (st == SD_OK) st = sd_bias_forces(r->m, r->d, r->q, r->u, NULL, r->c);
    if (st == SD_OK && r->dense) st = sd_mass_matrix(r->m, r->d, r->q, r->M);
    if (st == SD_OK && r->dense) st = sd_mass_matrix_inverse(r->m, r->d, r->q, r->Minv);
    if (st == SD_OK) st = sd_mass_matrix_determinant(r->m, r->d, r->q, &r->det, &r->log_det);
    if (st == SD_OK) st = sd_sim_energy(r->m, r->d, r->q, r->u, &r->kinetic, &r->potential);
    return st;
}

/* ---------------------------------------------------------------- text output */

static void print_vector(const char *title, const double *x, int n, char **lab, const char *unit)
{
    cli_printf("%s:\n", title);
    for (int i = 0; i < n && !cli_output_failed(); ++i) cli_printf("  %-24s %22.15g %s\n", lab[i], x[i], unit);
}

static void print_matrix(const eval_result *r, const char *title, const double *A)
{
    const int n = r->nv;
    if (!r->dense) {
        cli_printf("%s: not formed (nv = %d > %d: an nv x nv matrix; the O(N) results are above and below)\n",
                   title, n, CLI_DENSE_MAX_NV);
        return;
    }
    cli_printf("%s (rows and columns in speed order):\n", title);
    for (int i = 0; i < n && !cli_output_failed(); ++i) {
        cli_printf("  %-24s", r->vlab[i]);
        for (int j = 0; j < n; ++j) cli_printf(" %12.6g", A[(size_t)i * (size_t)n + (size_t)j]);
        cli_printf("\n");
    }
}

static void print_forces(const eval_result *r)
{
    cli_printf("inter-body forces f(k) on each body from its parent, body frame [moment N m; force N]:\n");
    for (int k = 0; k < r->n && !cli_output_failed(); ++k) {
        const double *f = r->force + 6 * k;
        const int nv = sd_model_hinge_nv(r->m, k);
        cli_printf("  %-20s moment %12.6g %12.6g %12.6g  force %12.6g %12.6g %12.6g\n", sd_model_body_name(r->m, k),
               f[0], f[1], f[2], f[3], f[4], f[5]);
        cli_printf("  %-20s free part (%d):", "", nv);
        for (int i = 0; i < nv; ++i) cli_printf(" %.6g", r->free_part[6 * k + i]);
        cli_printf("   constrained part (%d):", 6 - nv);
        for (int i = 0; i < 6 - nv; ++i) cli_printf(" %.6g", r->constrained[6 * k + i]);
        cli_printf("\n");
    }
}

/* The closure constraints: how the state was closed, the rank, and per constraint lambda and the
 * cut-joint force. */
static void print_loops(const eval_result *r)
{
    if (r->assembled)
        cli_printf("assembled: --q left the loops open (position residual %.3g > %.0e); q above is the\n"
                   "  configuration assembled from it (residual %.3g)\n",
                   r->pos_before, CLI_LOOP_TOL, r->pos_after);
    if (r->assembled && r->nheld && !r->hold_failed)
        cli_printf("  the joints --q named held as given, the coupled ones solved\n");
    if (r->assembled && r->hold_failed)
        cli_printf("  the joints --q named could not be held (the constraints need them moved): assembled with\n"
                   "  every joint free\n");
    if (r->projected)
        cli_printf("projected: --u violated G u = 0 (velocity residual %.3g > %.0e); u above is its projection\n"
                   "  (residual %.3g)\n",
                   r->vel_before, CLI_LOOP_TOL, r->vel_after);
    cli_printf("closure constraints: %d, rows %d, rank of G M^-1 G* %d, mobility %d; residuals position %.3g,"
               " velocity %.3g\n",
               r->ncons, r->nc, r->rank, r->nv - r->rank, r->pos_after, r->vel_after);
    for (int c = 0; c < r->ncons && !cli_output_failed(); ++c) {
        const int rows = sd_model_constraint_nrows(r->m, c);
        cli_printf("  %s (%s, %d rows) lambda:", sd_model_constraint_name(r->m, c),
                   sd_constraint_type_name(sd_model_constraint_type(r->m, c)), rows);
        cli_constraint_print_forces(r->m, c, r->lambda, r->cut_local + 6 * c, r->cut_world + 6 * c);
    }
}

static void print_text(const eval_result *r)
{
    cli_printf("model %s: nq %d, nv %d\n", sd_model_name(r->m), r->nq, r->nv);
    print_vector("q", r->q, r->nq, r->qlab, "");
    print_vector("u", r->u, r->nv, r->vlab, "");
    print_vector("tau (forward-dynamics input)", r->tau, r->nv, r->vlab, "");
    print_matrix(r, "mass matrix M", r->M);
    print_vector("bias forces C", r->c, r->nv, r->vlab, "");
    print_vector(r->nc > 0 ? "forward dynamics qdd (closed system)" : "forward dynamics qdd", r->qdd, r->nv,
                 r->vlab, "");
    if (r->nc > 0) print_loops(r);
    if (sd_model_nflexible(r->m) > 0) {
        cli_printf("modal accelerations (flexible bodies' eta-ddot, in qdd above):\n");
        for (int k = 0; k < sd_model_nbodies(r->m); ++k)
            for (int j = 0; j < sd_model_body_nmodes(r->m, k); ++j) {
                const int i = sd_model_mode_v_index(r->m, k) + j;
                cli_printf("  %-24s %22.15g\n", r->vlab[i], r->qdd[i]);
            }
    }
    if (r->have_presc) {
        cli_printf("prescribed joints, forces needed:\n");
        for (int i = 0; i < r->nv; ++i)
            if (r->presc_body[sd_model_v_body(r->m, i)])
                cli_printf("  %-24s qdd %14.8g  tau %22.15g\n", r->vlab[i], r->qdd[i], r->tau_fd[i]);
    }
    if (r->nc > 0)
        print_vector(r->have_qdd ? "tree inverse dynamics M qdd + C (at --qdd; = tau + G* lambda)"
                                 : "tree inverse dynamics M qdd + C (at the qdd above; = tau + G* lambda)",
                     r->tau_id, r->nv, r->vlab, "");
    else
        print_vector(r->have_qdd ? "inverse dynamics tau (at --qdd)" : "inverse dynamics tau (at the qdd above)",
                     r->tau_id, r->nv, r->vlab, "");
    print_forces(r);
    print_matrix(r, "mass matrix inverse M^-1", r->Minv);
    cli_printf("det M:      %.17g\nlog det M:  %.17g\n", r->det, r->log_det);
    cli_printf("energy:     kinetic %.17g J, potential %.17g J, total %.17g J\n", r->kinetic, r->potential,
           r->kinetic + r->potential);
}

/* ---------------------------------------------------------------- JSON output */

static void json_vector(json_writer *w, const char *key, const double *x, int n, char **lab)
{
    jw_begin_object(w, key);
    for (int i = 0; i < n; ++i) jw_number(w, lab[i], x[i]);
    jw_end_object(w);
}

/* A matrix as {row label: [row]} with columns in the order of "speeds"; null when not formed. */
static void json_matrix(json_writer *w, const eval_result *r, const char *key, const double *A)
{
    const int n = r->nv;
    if (!r->dense) {
        jw_null(w, key);
        return;
    }
    jw_begin_object(w, key);
    for (int i = 0; i < n; ++i) jw_numbers(w, r->vlab[i], A + (size_t)i * (size_t)n, n);
    jw_end_object(w);
}

static void json_forces(json_writer *w, const eval_result *r)
{
    jw_begin_object(w, "interbody_forces");
    for (int k = 0; k < r->n; ++k) {
        const int nv = sd_model_hinge_nv(r->m, k);
        jw_begin_object(w, sd_model_body_name(r->m, k));
        jw_string(w, "joint", sd_model_joint_name(r->m, k));
        jw_numbers(w, "moment", r->force + 6 * k, 3);
        jw_numbers(w, "force", r->force + 6 * k + 3, 3);
        jw_numbers(w, "free", r->free_part + 6 * k, nv);
        jw_numbers(w, "constrained", r->constrained + 6 * k, 6 - nv);
        jw_end_object(w);
    }
    jw_end_object(w);
}

static void json_loops(json_writer *w, const eval_result *r)
{
    jw_begin_object(w, "loops");
    jw_bool(w, "assembled", r->assembled);
    jw_bool(w, "held_named_joints", r->assembled && r->nheld && !r->hold_failed);
    jw_number(w, "position_residual_before", r->pos_before);
    jw_number(w, "position_residual", r->pos_after);
    jw_bool(w, "projected", r->projected);
    jw_number(w, "velocity_residual_before", r->vel_before);
    jw_number(w, "velocity_residual", r->vel_after);
    jw_int(w, "rows", r->nc);
    jw_int(w, "rank", r->rank);
    jw_int(w, "mobility", r->nv - r->rank);
    jw_begin_object(w, "constraints");
    for (int c = 0; c < r->ncons; ++c) {
        const sd_constraint_type type = sd_model_constraint_type(r->m, c);
        jw_begin_object(w, sd_model_constraint_name(r->m, c));
        jw_string(w, "type", sd_constraint_type_name(type));
        jw_int(w, "first_row", sd_model_constraint_row_offset(r->m, c));
        cli_constraint_json_forces(w, r->m, c, r->lambda, r->cut_local + 6 * c, r->cut_world + 6 * c);
        jw_end_object(w);
    }
    jw_end_object(w);
    jw_end_object(w);
}

static void json_all(json_writer *w, const eval_result *r)
{
    jw_begin_object(w, NULL);
    jw_string(w, "model", sd_model_name(r->m));
    jw_int(w, "nq", r->nq);
    jw_int(w, "nv", r->nv);
    jw_begin_array(w, "coordinates");
    for (int i = 0; i < r->nq; ++i) jw_string(w, NULL, r->qlab[i]);
    jw_end_array(w);
    jw_begin_array(w, "speeds");
    for (int i = 0; i < r->nv; ++i) jw_string(w, NULL, r->vlab[i]);
    jw_end_array(w);
    json_vector(w, "q", r->q, r->nq, r->qlab);
    json_vector(w, "u", r->u, r->nv, r->vlab);
    json_vector(w, "tau", r->tau, r->nv, r->vlab);
    json_matrix(w, r, "mass_matrix", r->M);
    json_vector(w, "bias_forces", r->c, r->nv, r->vlab);
    json_vector(w, "qdd", r->qdd, r->nv, r->vlab);
    if (r->nc > 0) json_loops(w, r);
    json_vector(w, "tau_inverse_dynamics", r->tau_id, r->nv, r->vlab);
    if (r->have_presc) {
        jw_begin_object(w, "prescribed_tau");
        for (int i = 0; i < r->nv; ++i)
            if (r->presc_body[sd_model_v_body(r->m, i)]) jw_number(w, r->vlab[i], r->tau_fd[i]);
        jw_end_object(w);
    }
    json_forces(w, r);
    if (sd_model_nflexible(r->m) > 0) {
        jw_begin_object(w, "modal_accelerations");
        for (int k = 0; k < sd_model_nbodies(r->m); ++k)
            for (int j = 0; j < sd_model_body_nmodes(r->m, k); ++j) {
                const int i = sd_model_mode_v_index(r->m, k) + j;
                jw_number(w, r->vlab[i], r->qdd[i]);
            }
        jw_end_object(w);
    }
    json_matrix(w, r, "mass_matrix_inverse", r->Minv);
    if (isfinite(r->det)) jw_number(w, "det_mass_matrix", r->det);
    else jw_null(w, "det_mass_matrix"); /* over- or underflow on big trees: the log is the answer */
    jw_number(w, "log_det_mass_matrix", r->log_det);
    jw_begin_object(w, "energy");
    jw_number(w, "kinetic", r->kinetic);
    jw_number(w, "potential", r->potential);
    jw_number(w, "total", r->kinetic + r->potential);
    jw_end_object(w);
    jw_end_object(w);
}

static int print_json(const eval_result *r)
{
    json_writer w;
    jw_init(&w);
    json_all(&w, r);
    int rc = CLI_OK;
    size_t length = 0;
    const char *text = jw_text(&w, &length);
    if (text) {
        cli_write(text, length);
        cli_write("\n", 1);
    } else {
        if (w.failed == 2)
            fprintf(stderr, "soadyn eval: '%s' is not a finite number; no JSON written\n",
                    w.bad_key ? w.bad_key : "(a value)");
        else
            fprintf(stderr, "soadyn eval: %s; no JSON written\n",
                    w.failed == 1 ? "out of memory forming the JSON text" : "JSON nested too deep");
        rc = CLI_FAILURE;
    }
    jw_free(&w);
    return rc;
}

/* ---------------------------------------------------------------- command */

typedef struct eval_args {
    const char *q, *u, *tau, *qdd, *prescribed, *gravity;
    int json, floating, keep_fixed, compiled;
    const char *code; /* --compiled: what ran (cli_compile) */
    cli_embed_args embed;
} eval_args;

static int read_inputs(eval_result *r, const eval_args *a)
{
    sd_configuration_reference(r->m, r->q);
    if (a->q && cli_parse_values(r->m, "q", a->q, CLI_LIST_Q, r->q, r->q_named)) return CLI_USAGE;
    if (a->u && cli_parse_values(r->m, "u", a->u, CLI_LIST_V, r->u, NULL)) return CLI_USAGE;
    if (a->tau && cli_parse_values(r->m, "tau", a->tau, CLI_LIST_V, r->tau, NULL)) return CLI_USAGE;
    if (a->qdd && cli_parse_values(r->m, "qdd", a->qdd, CLI_LIST_V, r->qdd_in, r->qdd_given)) return CLI_USAGE;
    r->have_qdd = a->qdd != NULL;
    if (a->prescribed && r->nc > 0) {
        fprintf(stderr, "soadyn eval: --prescribed is not offered on models with closure constraints\n");
        return CLI_USAGE;
    }
    if (a->prescribed) {
        if (!strchr(a->prescribed, '=')) {
            fprintf(stderr, "soadyn eval: --prescribed takes JOINT=ACC pairs\n");
            return CLI_USAGE;
        }
        if (cli_parse_values(r->m, "prescribed", a->prescribed, CLI_LIST_V, r->presc_acc, r->presc_given))
            return CLI_USAGE;
        for (int i = 0; i < r->nv; ++i)
            if (r->presc_given[i]) r->presc_body[sd_model_v_body(r->m, i)] = 1;
        r->have_presc = 1;
    }
    const double qerr = sd_configuration_quaternion_error(r->m, r->q);
    if (qerr > 1e-9)
        fprintf(stderr, "soadyn eval: warning: a quaternion in --q is not unit (| |q| - 1 | = %.3g); used as given\n",
                qerr);
    return CLI_OK;
}

static int run_eval(sd_model *model, const eval_args *a)
{
    eval_result r;
    memset(&r, 0, sizeof(r));
    r.m = model;
    r.n = sd_model_nbodies(model);
    r.nq = sd_model_nq(model);
    r.nv = sd_model_nv(model);
    r.dense = r.nv <= CLI_DENSE_MAX_NV;
    r.ncons = sd_model_nconstraints(model);
    r.nc = sd_model_nconstraint_rows(model);
    r.rank = -1;
    int rc = CLI_OK;
    if (!eval_alloc(&r)) {
        fprintf(stderr, "soadyn eval: out of memory\n");
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) rc = read_inputs(&r, a);
    sd_embedding *e = NULL;
    if (rc == CLI_OK) rc = cli_embedding("eval", model, &a->embed, r.q, &e);
    if (rc == CLI_OK && e) { /* the embedded system: its own evaluation and output */
        rc = cli_eval_embedded(model, e, r.q, r.u, r.tau, r.have_qdd ? r.qdd_in : NULL, a->json);
        sd_embedding_free(e);
        eval_free(&r);
        return rc;
    }
    sd_status st = rc == CLI_OK ? eval_all(&r) : SD_OK;
    if (st != SD_OK) {
        const char *why = sd_data_error(r.d);
        fprintf(stderr, "soadyn eval: %s\n", why && why[0] ? why : sd_status_name(st));
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) {
        if (a->json) rc = print_json(&r);
        else print_text(&r);
        if (a->code && a->json) fprintf(stderr, "soadyn eval: evaluated by %s\n", a->code);
        else if (a->code) cli_printf("evaluated by: %s\n", a->code);
    }
    eval_free(&r);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    eval_args a;
    memset(&a, 0, sizeof(a));
    const cli_option options[] = {
        {"q", 1, &a.q, NULL},          {"u", 1, &a.u, NULL},
        {"tau", 1, &a.tau, NULL},      {"qdd", 1, &a.qdd, NULL},
        {"prescribed", 1, &a.prescribed, NULL},
        {"json", 0, NULL, &a.json},    {"floating", 0, NULL, &a.floating}, CLI_EMBED_OPTIONS(a.embed),
        {"keep-fixed", 0, NULL, &a.keep_fixed}, {"gravity", 1, &a.gravity, NULL},
        {"compiled", 0, NULL, &a.compiled},     {NULL, 0, NULL, NULL}};
    const char *path;
    int rc = cli_parse("eval", argc, argv, options, help, &path);
    if (rc >= 0) return rc;
    sd_model *model;
    rc = cli_load_model("eval", path, a.floating, a.keep_fixed, a.gravity, &model);
    if (rc != CLI_OK) return rc;
    char code[4400];
    if (a.compiled) {
        cli_compile("eval", model, code, sizeof code);
        a.code = code;
    }
    rc = run_eval(model, &a);
    sd_model_free(model);
    return rc;
}
