/*
 * src/loops/constraint_kinematics.c — what the constraints are at one state: world placements of
 * the frames, the task-frame weights Ew_f (the rows of G as spatial forces on bodies), the row rates
 * G qdd + Gdot u from body accelerations (never by finite differences), G* lambda, the residuals
 * and the dense G.
 *
 * Cut constraints (WELD, BALL, REVOLUTE, PRISMATIC, POINT_IN_PLANE, PLANAR) use one common frame
 * at evaluation: the axes R of F_A (turning with A) at the origin p of F_B (moving with B). With T
 * the columns of R,
 *   Delta = [T^T (w_B - w_A); T^T (v_B(p) - v_A(p))]                  (the rows pick components)
 *   d/dt T^T (w_B - w_A) = T^T (wdot_B - wdot_A - w_A x Delta_w)
 *   d/dt T^T (v_B(p) - v_A(p)) = T^T (a_B(p) - a_A(p) - 2 w_A x Delta_v)
 * because dT/dt = w_A x T, and p moves with B so that d/dt v_A(p) = a_A(p) + w_A x Delta_v
 * (a_X(p): classical acceleration of X's material point at p). These rates evaluated at the
 * free accelerations of 000 Eq 46a are gamma = G qdd_f + Gdot u (000 Eq 46b with U = 0), so no
 * separate Gdot u pass exists. A uniform gravity offset in the body accelerations (the
 * articulated-body sweep gives the base -g) is the same at every point of every body, and the
 * world is given it too, so it cancels in every difference.
 *
 * Glossary: see loops_internal.h and internal.h.
 */
#include <math.h>
#include <string.h>

#include "algorithms/node_kinds.h"
#include "loops_internal.h"

void sd_loops_world_placements(const sd_model *m, sd_data *d)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    sd_transform *Xw = w->Xw;
    w->lambda_valid = 0; /* lambda belongs to the placements it was computed with */
    for (int i = 0; i < L->nkin; ++i) { /* a scatter over the kin bodies only (parents come first) */
        const int k = L->kin_bodies[i], p = m->parent[k];
        if (p < 0) Xw[i] = d->Xup[k];
        else sd_transform_compose(&Xw[L->kin_slot[p]], &d->Xup[k], &Xw[i]);
    }
    /* F_A and F_B once here: the frame weights and the row rates read them */
    for (int c = 0; c < L->ncons; ++c) {
        const sd_loop_constraint *con = &L->cons[c];
        if (con->type == SD_CONSTRAINT_COUPLING) continue;
        for (int side = 0; side < 2; ++side) {
            const int k = side ? con->body_b : con->body_a;
            const sd_transform *frame = side ? &con->frame_b : &con->frame_a;
            if (k < 0) w->Xf[2 * c + side] = *frame;
            else sd_transform_compose(&Xw[L->kin_slot[k]], frame, &w->Xf[2 * c + side]);
        }
    }
}

static const sd_transform *body_world(const sd_model *m, const sd_data *d, int k)
{
    return &d->loops->Xw[m->loops->kin_slot[k]];
}

void sd_loops_frame_world(const sd_model *m, const sd_data *d, int c, int side, sd_transform *out)
{
    (void)m;
    *out = d->loops->Xf[2 * c + side];
}

sd_status sd_constraint_frame_world(const sd_model *m, const sd_data *d, int c, int side, sd_transform *out)
{
    if (!m || !d || !out || !m->loops || !d->loops || c < 0 || c >= m->loops->ncons || side < 0 || side > 1 ||
        m->loops->cons[c].type == SD_CONSTRAINT_COUPLING)
        return SD_E_ARGUMENT;
    sd_loops_frame_world(m, d, c, side, out);
    return SD_OK;
}

/* The spatial force of a moment n and a force f (world axes) at the world point p, on body k (world
 * placement Xk) whose gather frame has its origin at o: about k's origin in body axes,
 * F = [R^T n + r x R^T f; R^T f] with r = R^T (p - p_k), and in world axes about o,
 * Fw = [n + (p - o) x f; f]. */
static void force_on_body(const sd_transform *Xk, const double o[3], const double p[3], const double n[3],
                          const double f[3], double sign, double F[6], double Fw[6])
{
    double rel[3], r[3], nb[3], fb[3], rxf[3];
    for (int i = 0; i < 3; ++i) rel[i] = p[i] - Xk->p[i];
    sd_m3t_mul_v(Xk->R, rel, r);
    sd_m3t_mul_v(Xk->R, n, nb);
    sd_m3t_mul_v(Xk->R, f, fb);
    sd_v3_cross(r, fb, rxf);
    for (int i = 0; i < 3; ++i) {
        F[i] = sign * (nb[i] + rxf[i]);
        F[3 + i] = sign * fb[i];
    }
    for (int i = 0; i < 3; ++i) rel[i] = p[i] - o[i];
    sd_v3_cross(rel, f, rxf);
    for (int i = 0; i < 3; ++i) {
        Fw[i] = sign * (n[i] + rxf[i]);
        Fw[3 + i] = sign * f[i];
    }
}

sd_status sd_loops_frame_weights(const sd_model *m, sd_data *d)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        double *W = w->Ew + f->ew, *Ww = w->Eww + f->ew; /* 6 x nrows, column-major */
        const sd_transform *Xk = body_world(m, d, f->body);
        const double *o = w->Xw[L->fb_root[L->fb_slot[f->body]]].p;
        if (c->type == SD_CONSTRAINT_COUPLING) {
            /* u_k = s^T (V_k - phi* V_parent) / s^T s for a 1-dof hinge with H* = s: the row is a
             * force s/|s|^2 on body k and its reaction -phi s/|s|^2 on the parent (roles 2-5:
             * hinge a, its parent, hinge b, its parent; hinge b weighted by -ratio) */
            const int hinge_b = f->role >= 4, k = hinge_b ? c->body_b : c->body_a;
            const double *s = d->S + 6 * m->v_index[k];
            const double wt = (hinge_b ? -c->ratio : 1.0) / sd_s6_dot(s, s);
            double F[6];
            for (int r = 0; r < 6; ++r) F[r] = wt * s[r];
            if (f->role == 3 || f->role == 5) {
                double Fp[6];
                sd_force_to_parent(&d->Xup[k], F, Fp);
                for (int r = 0; r < 6; ++r) W[r] = -Fp[r];
            } else
                memcpy(W, F, sizeof F);
            double rk[3];
            for (int i = 0; i < 3; ++i) rk[i] = Xk->p[i] - o[i];
            sd_loops_force_to_world(Xk->R, rk, W, Ww);
            continue;
        }
        const sd_transform *XA = &w->Xf[2 * f->constraint], *XB = &w->Xf[2 * f->constraint + 1];
        const double sign = f->role == 1 ? 1.0 : -1.0; /* B receives +, A the reaction */
        if (c->type == SD_CONSTRAINT_DISTANCE) {
            double dv[3], e[3];
            for (int i = 0; i < 3; ++i) dv[i] = XB->p[i] - XA->p[i];
            const double len = sd_v3_norm(dv);
            if (!(len > 1e-12 * (1.0 + c->length)))
                return sd_data_fail(d, SD_E_SINGULAR,
                                    "constraint '%s': the frames of a distance constraint coincide (no direction)",
                                    c->name);
            for (int i = 0; i < 3; ++i) e[i] = dv[i] / len;
            const double zero[3] = {0, 0, 0};
            force_on_body(Xk, o, f->role == 1 ? XB->p : XA->p, zero, e, sign, W, Ww);
            continue;
        }
        for (int i = 0; i < c->nsel; ++i) { /* a unit moment or force along F_A's axes, at F_B's origin */
            const int s = c->sel[i];
            double n[3] = {0, 0, 0}, fv[3] = {0, 0, 0};
            for (int j = 0; j < 3; ++j) (s < 3 ? n : fv)[j] = XA->R[3 * j + s % 3];
            force_on_body(Xk, o, XB->p, n, fv, sign, W + 6 * i, Ww + 6 * i);
        }
    }
    return SD_OK;
}

/* World-axes motion of body k's material point at p: angular velocity w, velocity v, angular
 * acceleration wd and classical acceleration acl (alpha: spatial, body frame; k = -1 is the world,
 * whose acceleration is a0). */
static void point_motion(const sd_model *m, const sd_data *d, const double *alpha, const double a0[6], int k,
                         const double p[3], double w[3], double v[3], double wd[3], double acl[3])
{
    if (k < 0) {
        for (int i = 0; i < 3; ++i) w[i] = v[i] = 0.0, wd[i] = a0[i], acl[i] = a0[3 + i];
        return;
    }
    const sd_transform *X = body_world(m, d, k);
    const double *V = d->V + 6 * k, *A = alpha + 6 * k;
    double rel[3], r[3], t[3], vp[3], ap[3];
    for (int i = 0; i < 3; ++i) rel[i] = p[i] - X->p[i];
    sd_m3t_mul_v(X->R, rel, r);
    sd_v3_cross(V, r, t);
    for (int i = 0; i < 3; ++i) vp[i] = V[3 + i] + t[i]; /* v(p) = v + w x r */
    sd_v3_cross(A, r, t);
    for (int i = 0; i < 3; ++i) ap[i] = A[3 + i] + t[i]; /* spatial acceleration at p */
    sd_v3_cross(V, vp, t);
    for (int i = 0; i < 3; ++i) ap[i] += t[i];            /* classical: + w x v(p) */
    sd_m3_mul_v(X->R, V, w);
    sd_m3_mul_v(X->R, vp, v);
    sd_m3_mul_v(X->R, A, wd);
    sd_m3_mul_v(X->R, ap, acl);
}

void sd_loops_row_rates(const sd_model *m, const sd_data *d, const double *alpha, const double a0[6],
                        const double *qdd, double *ydot)
{
    const sd_loops_model *L = m->loops;
    for (int ci = 0; ci < L->ncons; ++ci) {
        const sd_loop_constraint *c = &L->cons[ci];
        double *y = ydot + c->row;
        if (c->type == SD_CONSTRAINT_COUPLING) { /* G is constant: Gdot = 0 */
            y[0] = qdd[m->v_index[c->body_a]] - c->ratio * qdd[m->v_index[c->body_b]];
            continue;
        }
        const sd_transform *XA = &d->loops->Xf[2 * ci], *XB = &d->loops->Xf[2 * ci + 1];
        double wA[3], vA[3], wdA[3], aA[3], wB[3], vB[3], wdB[3], aB[3], Dv[3], t[3];
        if (c->type == SD_CONSTRAINT_DISTANCE) { /* d/dt e.(v_B - v_A), e = (p_B - p_A)/|p_B - p_A| */
            point_motion(m, d, alpha, a0, c->body_a, XA->p, wA, vA, wdA, aA);
            point_motion(m, d, alpha, a0, c->body_b, XB->p, wB, vB, wdB, aB);
            double dv[3], e[3];
            for (int i = 0; i < 3; ++i) dv[i] = XB->p[i] - XA->p[i], Dv[i] = vB[i] - vA[i];
            const double len = sd_v3_norm(dv);
            for (int i = 0; i < 3; ++i) e[i] = dv[i] / len;
            const double ev = sd_v3_dot(e, Dv);
            double s = 0.0;
            for (int i = 0; i < 3; ++i) s += e[i] * (aB[i] - aA[i]) + (Dv[i] - e[i] * ev) / len * Dv[i];
            y[0] = s;
            continue;
        }
        point_motion(m, d, alpha, a0, c->body_a, XB->p, wA, vA, wdA, aA);
        point_motion(m, d, alpha, a0, c->body_b, XB->p, wB, vB, wdB, aB);
        double Dw[3], ang[3], lin[3], full[6];
        for (int i = 0; i < 3; ++i) Dw[i] = wB[i] - wA[i], Dv[i] = vB[i] - vA[i];
        sd_v3_cross(wA, Dw, t);
        for (int i = 0; i < 3; ++i) ang[i] = wdB[i] - wdA[i] - t[i];
        sd_v3_cross(wA, Dv, t);
        for (int i = 0; i < 3; ++i) lin[i] = aB[i] - aA[i] - 2.0 * t[i];
        sd_m3t_mul_v(XA->R, ang, full);
        sd_m3t_mul_v(XA->R, lin, full + 3);
        for (int i = 0; i < c->nsel; ++i) y[i] = full[c->sel[i]];
    }
}

void sd_loops_constraint_loads(const sd_model *m, const sd_data *d, const double *lambda, const double *f_ext,
                               double *fx, double *tau)
{
    const sd_loops_model *L = m->loops;
    if (f_ext) memcpy(fx, f_ext, 6 * (size_t)m->n * sizeof(double));
    else memset(fx, 0, 6 * (size_t)m->n * sizeof(double));
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        const double *W = d->loops->Ew + f->ew;
        double F[6] = {0, 0, 0, 0, 0, 0};
        for (int i = 0; i < c->nrows; ++i)
            for (int r = 0; r < 6; ++r) F[r] += W[6 * i + r] * lambda[c->row + i];
        for (int r = 0; r < 6; ++r) fx[6 * f->body + r] += F[r];
        /* a coupling's reaction on the hinge's parent is phi(p, k) of the force on k (constraint
         * frame weights, roles 2 and 4): its modal part goes to the parent's modal speeds */
        if (c->type == SD_CONSTRAINT_COUPLING && (f->role == 2 || f->role == 4))
            sd_node_attachment_force(m, d->nodes, f->body, F, -1.0, tau);
    }
}

sd_status sd_constraint_jacobian(const sd_model *m, sd_data *d, const double *q, double *G)
{
    sd_status st = sd_check_call(m, d, "sd_constraint_jacobian", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!G) return sd_data_fail(d, SD_E_ARGUMENT, "sd_constraint_jacobian: NULL G");
    const sd_loops_model *L = m->loops;
    if (!L) return SD_OK; /* no rows */
    /* a child riding on a node is placed by the motion scatter (the rigid placement pass does not
     * know nodes); its velocities at zero speed are a by-product */
    if (d->nodes) sd_update_motion(m, d, q, NULL, NULL, 0);
    else sd_update_placements(m, d, q, 0);
    sd_loops_world_placements(m, d);
    if ((st = sd_loops_frame_weights(m, d)) != SD_OK) return st;
    sd_loops_dense_jacobian(m, d, G);
    return SD_OK;
}

void sd_loops_dense_jacobian(const sd_model *m, const sd_data *d, double *G)
{
    const sd_loops_model *L = m->loops;
    memset(G, 0, (size_t)L->nrows * (size_t)m->nv * sizeof(double));
    for (int ci = 0; ci < L->ncons; ++ci) { /* a coupling's row is u_a - ratio u_b, whatever the tree */
        const sd_loop_constraint *c = &L->cons[ci];
        if (c->type != SD_CONSTRAINT_COUPLING) continue;
        double *row = G + (size_t)c->row * (size_t)m->nv;
        row[m->v_index[c->body_a]] += 1.0;
        row[m->v_index[c->body_b]] -= c->ratio;
    }
    for (int fi = 0; fi < L->nframes; ++fi) { /* row i of G = J* applied to a unit multiplier */
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        if (c->type == SD_CONSTRAINT_COUPLING) continue;
        for (int i = 0; i < c->nrows; ++i) {
            double F[6], Fp[6];
            memcpy(F, d->loops->Ew + f->ew + 6 * i, sizeof F);
            double *row = G + (size_t)(c->row + i) * (size_t)m->nv;
            /* the path of 004 Sec 7: each hinge's speeds, and the modes of a flexible ancestor that
             * the path leaves at a node (a frame moves with its body's F_k, as sd_jacobian_world's
             * points: the body's own modes have zero columns) */
            for (int j = f->body; j >= 0; j = m->parent[j]) {
                for (int s = 0; s < m->nv_k[j]; ++s)
                    row[m->v_index[j] + s] += sd_s6_dot(d->S + 6 * (m->v_index[j] + s), F);
                sd_node_attachment_force(m, d->nodes, j, F, 1.0, row);
                sd_force_to_parent(&d->Xup[j], F, Fp);
                memcpy(F, Fp, sizeof F);
            }
        }
    }
}

sd_status sd_constraint_residuals(const sd_model *m, sd_data *d, const double *q, const double *u, double *pos,
                                  double *vel)
{
    sd_status st = sd_check_call(m, d, "sd_constraint_residuals", q, u, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (vel && !u) return sd_data_fail(d, SD_E_ARGUMENT, "sd_constraint_residuals: vel asked without u");
    const sd_loops_model *L = m->loops;
    if (!L) return SD_OK;
    sd_update_motion(m, d, q, u, NULL, 0);
    sd_loops_world_placements(m, d);
    if (vel) { /* G u = sum_f Ew_f^T V(k_f) */
        if ((st = sd_loops_frame_weights(m, d)) != SD_OK) return st;
        memset(vel, 0, (size_t)L->nrows * sizeof(double));
        for (int fi = 0; fi < L->nframes; ++fi) {
            const sd_loop_frame *f = &L->frames[fi];
            const sd_loop_constraint *c = &L->cons[f->constraint];
            if (c->type == SD_CONSTRAINT_COUPLING) continue; /* below, from the speeds themselves */
            for (int i = 0; i < c->nrows; ++i) vel[c->row + i] += sd_s6_dot(d->loops->Ew + f->ew + 6 * i, d->V + 6 * f->body);
        }
        for (int ci = 0; ci < L->ncons; ++ci) {
            const sd_loop_constraint *c = &L->cons[ci];
            if (c->type == SD_CONSTRAINT_COUPLING)
                vel[c->row] = u[m->v_index[c->body_a]] - c->ratio * u[m->v_index[c->body_b]];
        }
    }
    if (!pos) return SD_OK;
    for (int ci = 0; ci < L->ncons; ++ci) {
        const sd_loop_constraint *c = &L->cons[ci];
        double *r = pos + c->row;
        if (c->type == SD_CONSTRAINT_COUPLING) {
            r[0] = q[m->q_index[c->body_a]] - c->ratio * q[m->q_index[c->body_b]] - c->offset;
            continue;
        }
        sd_transform XA, XB;
        sd_loops_frame_world(m, d, ci, 0, &XA);
        sd_loops_frame_world(m, d, ci, 1, &XB);
        sd_loops_frame_residual(c, &XA, &XB, r);
    }
    return SD_OK;
}

void sd_loops_frame_residual(const sd_loop_constraint *c, const sd_transform *XA, const sd_transform *XB, double *r)
{
    double dp[3], full[6], Rrel[9];
    for (int i = 0; i < 3; ++i) dp[i] = XB->p[i] - XA->p[i];
    if (c->type == SD_CONSTRAINT_DISTANCE) {
        r[0] = sd_v3_norm(dp) - c->length;
        return;
    }
    sd_m3t_mul_v(XA->R, dp, full + 3); /* translation R_A^T (p_B - p_A) */
    sd_m3t_mul(XA->R, XB->R, Rrel);
    if (c->type == SD_CONSTRAINT_REVOLUTE || c->type == SD_CONSTRAINT_PLANAR) {
        /* b = R_A^T R_B e_z: (-b_y, b_x) rates as Delta_w x, y */
        full[0] = -Rrel[5];
        full[1] = Rrel[2];
        full[2] = 0.0;
    } else {
        double quat[4];
        sd_m3_to_quat(Rrel, quat);
        sd_quat_log(quat, full);
    }
    for (int i = 0; i < c->nsel; ++i) r[i] = full[c->sel[i]];
}
