/*
 * src/loops/constraint_solvers.c — staying on the constraint manifold and driving a closed system:
 *   - assembly: Gauss-Newton on the position residuals, each step the minimum-norm
 *     delta = -G_f^T (G_f G_f^T)^+ r over the free (unlocked) speeds, applied on the manifold
 *     (q (+) delta, so quaternions stay unit), halved while it does not reduce the residual; when
 *     no step descends, the failure says whether the residual left is one that no free speed moves
 *     (r + G_f delta = r at first order: G_f's rows vanish along it, as when a locked hinge's axis
 *     is tilted off a planar loop's plane; q_out is then the least-squares closure) or a local
 *     minimum;
 *   - velocity projection in the metric of M (kinetic energy): u+ = u - M^-1 G* Lambda_c^+ G u,
 *     the same compliance and correction sweep as the forward dynamics (closed_dynamics.c);
 *   - constrained inverse dynamics: with tau_ID = M qdd + C - J* f_ext (Newton-Euler),
 *     M qdd + C - G* lambda = T needs T = 0 on the unactuated speeds U, so G_U* lambda = tau_ID,U
 *     (minimum-norm lambda = (G_U G_U*)^+ G_U tau_ID,U) and T_a = tau_ID,a - (G* lambda)_a.
 * Each solve is n_c x n_c (LAPACK's pivoted Cholesky through sd_loops_psd_solve), with the
 * workspace's arrays. Also the rank of G and the mobility, for reports, by the rank rule of
 * rank_rule.h (the SVD of each loop group's rows), which the forward dynamics and the embedding use
 * too.
 *
 * Glossary: see loops_internal.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loops_internal.h"

static double max_abs(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(x[i]));
    return s;
}

static double sum_sq(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += x[i] * x[i];
    return s;
}

/* "'a', 'b'": the constraints with a row above tol (for messages). */
static void offending(const sd_model *m, const double *r, double tol, char *out, size_t size)
{
    const sd_loops_model *L = m->loops;
    size_t used = 0;
    out[0] = '\0';
    for (int c = 0; c < L->ncons; ++c) {
        int bad = 0;
        for (int i = 0; i < L->cons[c].nrows; ++i) bad |= !(fabs(r[L->cons[c].row + i]) <= tol);
        if (bad && used + strlen(L->cons[c].name) + 5 < size)
            used += (size_t)snprintf(out + used, size - used, "%s'%s'", used ? ", " : "", L->cons[c].name);
    }
}

/* A = G G^T into the workspace (G in w->dense); returns the largest row norm squared. */
static double gram(const sd_model *m, sd_loops_data *w, const unsigned char *skip)
{
    const int nc = m->loops->nrows, nv = m->nv;
    const double *G = w->dense;
    double ref = 0.0;
    for (int a = 0; a < nc; ++a)
        for (int b = 0; b <= a; ++b) {
            double s = 0.0;
            for (int j = 0; j < nv; ++j)
                if (!(skip && skip[j])) s += G[a * nv + j] * G[b * nv + j];
            w->Sc[a * nc + b] = w->Sc[b * nc + a] = s;
            if (a == b) ref = fmax(ref, s);
        }
    /* rows of G are unit moments and forces (entries 1 or lever arms in m): a row below this is
     * round-off of a constraint on bodies the tree cannot move */
    return fmax(ref, 1e-12);
}

int sd_loops_rank_of_rows(const sd_model *m, sd_loops_data *w, double *dropped)
{
    const sd_loops_model *L = m->loops;
    const int nc = L->nrows, nv = m->nv;
    sd_row_space *s = &w->rows;
    int rank = 0;
    double worst = 0.0;
    memset(w->basis, 0, (size_t)nc * (size_t)nc * sizeof(double));
    for (int g = 0; g < L->ngroups; ++g) {
        const int *rows = L->group_rows + L->group_row0[g], nr = L->group_row0[g + 1] - L->group_row0[g];
        for (int i = 0; i < nr; ++i) /* the group's rows of G (row-major) into A (column-major) */
            for (int j = 0; j < nv; ++j) s->A[i + (size_t)nr * j] = w->dense[(size_t)rows[i] * nv + j];
        const int r = sd_row_space_factor(s, nr, nv);
        if (r < 0) return -1;
        worst = fmax(worst, sd_row_space_dropped(s, nr, nv, r));
        for (int j = 0; j < r; ++j, ++rank) /* the kept combinations, scattered onto the group's rows */
            for (int i = 0; i < nr; ++i) w->basis[(size_t)rank * nc + rows[i]] = s->U[i + (size_t)nr * j];
    }
    if (dropped) *dropped = worst;
    return rank;
}

sd_status sd_constraint_rank(const sd_model *m, sd_data *d, const double *q, int *rank, int *mobility)
{
    sd_status st = sd_check_call(m, d, "sd_constraint_rank", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    int r = 0;
    if (m->loops) { /* the rank rule of rank_rule.h on G's rows, loop group by loop group */
        sd_loops_data *w = d->loops;
        if ((st = sd_constraint_jacobian(m, d, q, w->dense)) != SD_OK) return st;
        r = sd_loops_rank_of_rows(m, w, NULL);
        if (r < 0) return sd_data_fail(d, SD_E_SINGULAR, "sd_constraint_rank: the SVD of G failed");
    }
    if (rank) *rank = r;
    if (mobility) *mobility = m->nv - r;
    return SD_OK;
}

sd_status sd_assemble_configuration(const sd_model *m, sd_data *d, const double *q_guess, const unsigned char *locked,
                                    double tol, int max_iter, double *q_out, double *residual)
{
    sd_status st = sd_check_call(m, d, "sd_assemble_configuration", q_guess, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!q_out || !(tol > 0.0) || max_iter < 1)
        return sd_data_fail(d, SD_E_ARGUMENT, "sd_assemble_configuration: NULL q_out, tol <= 0 or max_iter < 1");
    memmove(q_out, q_guess, (size_t)m->nq * sizeof(double));
    if (residual) *residual = 0.0;
    if (!m->loops) return SD_OK;
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nc = L->nrows, nv = m->nv;
    double *r = w->rhs, *rt = w->lambda, *y = w->gamma, *delta = w->vv, *G = w->dense, *A = w->Sc;
    w->lambda_valid = 0; /* its array is scratch here */
    if ((st = sd_constraint_residuals(m, d, q_out, NULL, r, NULL)) != SD_OK) return st;
    double err = max_abs(r, nc), ss = sum_sq(r, nc), unreachable = -1.0;
    int it = 0;
    for (; it < max_iter && err > tol; ++it) {
        if ((st = sd_constraint_jacobian(m, d, q_out, G)) != SD_OK) return st;
        for (int j = 0; j < nv && locked; ++j)
            if (locked[j])
                for (int a = 0; a < nc; ++a) G[a * nv + j] = 0.0;
        gram(m, w, NULL); /* A = G_f G_f^T */
        for (int a = 0; a < nc; ++a) rt[a] = -r[a];
        if (sd_loops_psd_solve(d, A, nc, rt, y, 0.0, 1e-12) < 0)
            return sd_data_fail(d, SD_E_SINGULAR, "sd_assemble_configuration: eigen-solver failed");
        for (int j = 0; j < nv; ++j) { /* delta = G_f^T y: the minimum-norm Gauss-Newton step */
            double s = 0.0;
            for (int a = 0; a < nc; ++a) s += G[a * nv + j] * y[a];
            delta[j] = s;
        }
        /* the Gauss-Newton step descends |r|^2; halve it until it does */
        double step = 1.0, ss_t = INFINITY;
        for (int halving = 0; halving < 30; ++halving, step *= 0.5) {
            sd_configuration_integrate(m, q_out, delta, step, w->vq);
            if ((st = sd_constraint_residuals(m, d, w->vq, NULL, rt, NULL)) != SD_OK) return st;
            ss_t = sum_sq(rt, nc);
            if (ss_t < ss) break;
        }
        if (!(ss_t < ss)) { /* no descent: a local minimum that does not close the loops */
            /* what the step could remove at first order: r + G_f delta is the part of r that no
             * motion of the free speeds reaches (G_f's rows are zero along it) */
            for (int a = 0; a < nc; ++a) {
                double s = r[a];
                for (int j = 0; j < nv; ++j) s += G[a * nv + j] * delta[j];
                rt[a] = s;
            }
            unreachable = max_abs(rt, nc);
            break;
        }
        memcpy(q_out, w->vq, (size_t)m->nq * sizeof(double));
        memcpy(r, rt, (size_t)nc * sizeof(double));
        ss = ss_t;
        err = max_abs(r, nc);
    }
    if (residual) *residual = err;
    if (err <= tol) return sd_check_output(d, "sd_assemble_configuration", "q_out", q_out, (size_t)m->nq, SD_CAUSE_OVERFLOW);
    char names[200];
    offending(m, r, tol, names, sizeof names);
    if (unreachable > 0.5 * err) /* the least-squares closure: no configuration nearby does better */
        return sd_data_fail(d, SD_E_SINGULAR,
                            "assembly cannot close constraints %s: a residual of %.3g (> %.3g) lies where no free "
                            "speed moves it (their rows of G over the free speeds vanish there: the locked speeds or "
                            "the geometry forbid closure); q_out is the least-squares closure",
                            names, unreachable, tol);
    if (unreachable >= 0.0)
        return sd_data_fail(d, SD_E_SINGULAR,
                            "assembly did not close constraints %s: stuck at a local minimum of the residual (largest "
                            "%.3g > %.3g), no closed configuration near the guess",
                            names, err, tol);
    return sd_data_fail(d, SD_E_SINGULAR, "assembly did not close constraints %s in %d steps (largest residual %.3g > %.3g)",
                        names, it, err, tol);
}

/* The projection on a flexible model (the compliance of closed_dynamics.c's engine path):
 * lambda = -(G M^-1 G*)^+ G u, u_out = u + M^-1 G* lambda, with G and M^-1 G* dense. */
static sd_status project_dense(const sd_model *m, sd_data *d, const double *q, const double *u, double *u_out)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nc = L->nrows, nv = m->nv;
    sd_loops_world_placements(m, d);
    sd_status st = sd_loops_frame_weights(m, d);
    double ref = 0.0;
    if (st != SD_OK || (st = sd_loops_compliance_dense(m, d, q, &ref)) != SD_OK) return st;
    for (int i = 0; i < nc; ++i) { /* G u */
        double s = 0.0;
        for (int j = 0; j < nv; ++j) s += w->dense[(size_t)i * nv + j] * u[j];
        w->gamma[i] = s;
    }
    w->rank = sd_loops_psd_solve(d, w->Sc, nc, w->gamma, w->lambda, ref, 1e-10);
    if (w->rank < 0) return sd_data_fail(d, SD_E_SINGULAR, "sd_project_velocities: eigen-solver failed");
    memmove(u_out, u, (size_t)nv * sizeof(double));
    for (int i = 0; i < nc; ++i) /* u_out -= M^-1 G* (G M^-1 G*)^+ G u */
        for (int j = 0; j < nv; ++j) u_out[j] -= w->Z[(size_t)i * nv + j] * w->lambda[i];
    return sd_check_output(d, "sd_project_velocities", "u_out", u_out, (size_t)nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_project_velocities(const sd_model *m, sd_data *d, const double *q, const double *u, double *u_out)
{
    sd_status st = sd_check_call(m, d, "sd_project_velocities", q, u, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!u || !u_out) return sd_data_fail(d, SD_E_ARGUMENT, "sd_project_velocities: NULL u or u_out");
    if (!m->loops) {
        memmove(u_out, u, (size_t)m->nv * sizeof(double));
        return SD_OK;
    }
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    w->lambda_valid = 0;
    sd_update_motion(m, d, q, u, NULL, 0);
    if (m->nflex > 0) return project_dense(m, d, q, u, u_out);
    if ((st = sd_riccati_gather(m, d, NULL)) != SD_OK) return st; /* the factors of M at q (004 Eq 33) */
    sd_loops_world_placements(m, d);
    if ((st = sd_loops_frame_weights(m, d)) != SD_OK) return st;
    for (int i = 0; i < L->nrows; ++i) w->gamma[i] = 0.0;
    for (int fi = 0; fi < L->nframes; ++fi) { /* G u = sum_f Ew_f^T V(k_f) */
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        for (int i = 0; i < c->nrows; ++i) w->gamma[c->row + i] += sd_s6_dot(w->Ew + f->ew + 6 * i, d->V + 6 * f->body);
    }
    const double ref = sd_loops_compliance(m, d);
    w->rank = sd_loops_psd_solve(d, w->Sc, L->nrows, w->gamma, w->lambda, ref, 1e-10);
    if (w->rank < 0) return sd_data_fail(d, SD_E_SINGULAR, "sd_project_velocities: eigen-solver failed");
    for (int i = 0; i < L->nrows; ++i) w->lambda[i] = -w->lambda[i]; /* the impulse that removes G u */
    memmove(u_out, u, (size_t)m->nv * sizeof(double));
    sd_loops_correction_sweep(m, d, w->lambda, u_out, 0, 0); /* u_out += M^-1 G* lambda */
    return sd_check_output(d, "sd_project_velocities", "u_out", u_out, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_constrained_inverse_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                          const double *qdd, const double *f_ext, const unsigned char *actuated,
                                          double *tau, double *lambda)
{
    if (!m || !d) return SD_E_ARGUMENT;
    if (!tau) return sd_data_fail(d, SD_E_ARGUMENT, "sd_constrained_inverse_dynamics: NULL tau");
    const int nv = m->nv;
    if (!m->loops) return sd_inverse_dynamics(m, d, q, u, qdd, f_ext, tau);
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nc = L->nrows;
    double *tid = w->vv, *G = w->dense, *A = w->Sc, *b = w->rhs;
    w->lambda_valid = 0;
    sd_status st = sd_inverse_dynamics(m, d, q, u, qdd, f_ext, tid); /* tau_ID = M qdd + C - J* f_ext */
    if (st != SD_OK) return st;
    sd_loops_world_placements(m, d);
    if ((st = sd_loops_frame_weights(m, d)) != SD_OK) return st;
    /* qdd must keep the loops closed: G qdd + Gdot u = 0, the row rates at the Newton-Euler accelerations */
    double a0[6] = {0, 0, 0, 0, 0, 0}, scale = 1.0;
    if (d->alpha_has_gravity) sd_base_acceleration(m, a0);
    sd_loops_row_rates(m, d, d->alpha, a0, qdd, w->gamma);
    for (int fi = 0; fi < L->nframes; ++fi) /* the size of the terms the rates are made of */
        for (int r = 0; r < 6; ++r) scale = fmax(scale, fabs(d->alpha[6 * L->frames[fi].body + r]));
    if (!(max_abs(w->gamma, nc) <= 1e-8 * scale)) {
        char names[200];
        offending(m, w->gamma, 1e-8 * scale, names, sizeof names);
        return sd_data_fail(d, SD_E_ARGUMENT,
                            "sd_constrained_inverse_dynamics: qdd does not keep constraints %s closed "
                            "(G qdd + Gdot u up to %.3g)",
                            names, max_abs(w->gamma, nc));
    }
    sd_loops_dense_jacobian(m, d, G);
    double ref = 0.0;
    for (int a = 0; a < nc; ++a) { /* A = G_U G_U^T, b = G_U tau_U over the unactuated speeds */
        double s = 0.0, rowsq = 0.0;
        for (int j = 0; j < nv; ++j) {
            rowsq += G[a * nv + j] * G[a * nv + j];
            if (!(actuated && actuated[j])) s += G[a * nv + j] * tid[j];
        }
        b[a] = s;
        ref = fmax(ref, rowsq);
        for (int c = 0; c <= a; ++c) {
            double t = 0.0;
            for (int j = 0; j < nv; ++j)
                if (!(actuated && actuated[j])) t += G[a * nv + j] * G[c * nv + j];
            A[a * nc + c] = A[c * nc + a] = t;
        }
    }
    w->rank = sd_loops_psd_solve(d, A, nc, b, w->lambda, fmax(ref, 1e-12), 1e-10); /* floor: see gram() */
    if (w->rank < 0) return sd_data_fail(d, SD_E_SINGULAR, "sd_constrained_inverse_dynamics: eigen-solver failed");
    double tscale = 1e-300, worst = 0.0;
    int worst_j = -1;
    for (int j = 0; j < nv; ++j) tscale = fmax(tscale, fabs(tid[j]));
    for (int j = 0; j < nv; ++j) { /* T = tau_ID - G* lambda: zero on U when the motion is producible */
        double s = tid[j];
        for (int a = 0; a < nc; ++a) s -= G[a * nv + j] * w->lambda[a];
        tau[j] = s;
        if (!(actuated && actuated[j]) && fabs(s) > worst) worst = fabs(s), worst_j = j;
    }
    if (worst > 1e-8 * tscale) {
        const int k = m->v_body[worst_j];
        return sd_data_fail(d, SD_E_SINGULAR,
                            "sd_constrained_inverse_dynamics: the actuated hinges cannot produce this motion: "
                            "unactuated joint '%s' would need a force of %.3g",
                            m->desc[k].joint_name, worst);
    }
    for (int j = 0; j < nv; ++j)
        if (!(actuated && actuated[j])) tau[j] = 0.0;
    if ((st = sd_check_output(d, "sd_constrained_inverse_dynamics", "tau", tau, (size_t)nv, SD_CAUSE_OVERFLOW)) !=
        SD_OK)
        return st;
    w->lambda_valid = 1;
    if (lambda) memcpy(lambda, w->lambda, (size_t)nc * sizeof(double));
    return SD_OK;
}
