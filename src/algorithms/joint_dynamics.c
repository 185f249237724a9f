/*
 * src/algorithms/joint_dynamics.c — the joint-level terms a hinge may add to the rigid equations of
 * motion (soadyn/dynamics.h, "Joint-level dynamics"):
 *   armature J (a rotor's reflected inertia): diag(J) added to M, i.e. to D(k) = H P H* + J(k) in the
 *     Riccati gather of 004 Eq 33 and to M's diagonal in the composite-body M (those files add it;
 *     here only its kinetic energy 1/2 J u^2);
 *   passive forces tau_passive = -damping u - stiffness (q - spring_ref), which belong to the bias C;
 *   on a free hinge, the armature's velocity terms (below);
 *   the springs' energy.
 * A free hinge's armature sits where MuJoCo puts it: on the linear velocity in the joint frame's
 * axes, R v (R the body's orientation in the joint frame, u = (omega, v) in body axes), and on
 * omega. Its kinetic energy 1/2 J (|R v|^2 + |omega|^2) equals 1/2 J |u|^2 (one armature per
 * hinge), so M keeps J on its diagonal; but d/dt (R v) = R (v-dot + omega x v), so the linear rows
 * carry J (v-dot + omega x v): the term J (omega x v) belongs to C. With it the armature is the
 * mass J at the body origin with the inertia J 1 about it, which obeys Newton: the momentum is
 * conserved. Per-speed values (soadyn/params.h) make it the body-fixed spatial inertia
 * I_J = diag(J_w, J_v) about the origin, whose velocity term is u x* (I_J u) =
 * [omega x (J_w omega) + v x (J_v v); omega x (J_v v)] (004's spatial cross product; each part
 * vanishes but omega x J v for one armature per hinge), here as -(that) in tau_passive. It does no
 * work: u . (u x* f) = 0.
 * A spherical hinge's spring pulls toward the neutral orientation with -stiffness r, r = theta n the
 * rotation vector of the body in the joint frame (theta in [0, pi], the shorter way round, as
 * MuJoCo's ball joints): with u the body-frame angular velocity, d(|r|^2 / 2)/dt = r . u (the
 * right Jacobian of SO(3) leaves r unchanged), so -stiffness r is the force of the energy
 * 1/2 stiffness theta^2. The builder refuses springs on other multi-speed hinges.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

void sd_quat_rotation_vector(const double *qk, double r[3])
{
    const double sgn = qk[0] < 0 ? -1.0 : 1.0; /* q and -q are one rotation: take w >= 0 */
    const double w = sgn * qk[0], s = sqrt(qk[1] * qk[1] + qk[2] * qk[2] + qk[3] * qk[3]);
    const double f = s > 0 ? sgn * 2.0 * atan2(s, w) / s : 0.0;
    for (int i = 0; i < 3; ++i) r[i] = f * qk[1 + i];
}

/* tau -= u x* (I_J u) on a free hinge's speeds u = (omega, v), I_J = diag(armature) (above). */
static void free_armature_velocity_term(const double *armature, const double *uk, double *tau)
{
    const double *w = uk, *v = uk + 3;
    double Jw[3], Jv[3], a[3], b[3], c[3];
    for (int i = 0; i < 3; ++i) {
        Jw[i] = armature[i] * w[i];
        Jv[i] = armature[3 + i] * v[i];
    }
    sd_v3_cross(w, Jw, a);
    sd_v3_cross(v, Jv, b);
    sd_v3_cross(w, Jv, c);
    for (int i = 0; i < 3; ++i) {
        tau[i] -= a[i] + b[i];
        tau[3 + i] -= c[i];
    }
}

/* Whether body k's hinge is free with some armature. */
static int free_with_armature(const sd_model *m, int k)
{
    if (m->hinge[k] != SD_HINGE_FREE) return 0;
    const double *J = m->armature + m->v_index[k];
    return J[0] != 0.0 || J[1] != 0.0 || J[2] != 0.0 || J[3] != 0.0 || J[4] != 0.0 || J[5] != 0.0;
}

void sd_passive_hinge(const sd_model *m, int k, const double *q, const double *u, double *out)
{
    const int nk = m->nv_k[k], vk = m->v_index[k];
    const double *qk = q + m->q_index[k];
    for (int i = 0; i < nk; ++i) out[i] = u ? -m->damping[vk + i] * u[vk + i] : 0.0;
    if (u && m->has_free_armature && free_with_armature(m, k))
        free_armature_velocity_term(m->armature + vk, u + vk, out);
    if (nk == 0 || m->stiffness[vk] == 0.0) return; /* one stiffness per hinge: the builder copies it */
    if (m->hinge[k] == SD_HINGE_SPHERICAL) {
        double r[3];
        sd_quat_rotation_vector(qk, r);
        for (int i = 0; i < 3; ++i) out[i] -= m->stiffness[vk + i] * r[i];
    } else { /* revolute, prismatic: one coordinate per speed */
        out[0] -= m->stiffness[vk] * (qk[0] - m->spring_ref[vk]);
    }
}

/* Whether any speed has a spring: an or of the stiffnesses' bits without the sign (so -0 counts as
 * none, as the test == 0.0 below), which vectorises: about one instruction a speed, where the
 * per-body spring loop costs ~14 a body even when no hinge has a spring (damping only, the common
 * case in robot descriptions). */
static int any_spring(const double *stiffness, int nv)
{
    const uint64_t magnitude = 0x7FFFFFFFFFFFFFFFu;
    uint64_t acc = 0;
    for (int v = 0; v < nv; ++v) {
        uint64_t bits;
        memcpy(&bits, stiffness + v, sizeof bits);
        acc |= bits & magnitude;
    }
    return acc != 0;
}

/* tau -= tau_passive over the whole tree, for the rigid sweeps (inverse dynamics): the damping as
 * one loop over the speeds with the model's per-speed array, tau += damping u, then the springs of
 * the hinges that have one (the builder copies a hinge's stiffness to all its speeds, so one test per
 * hinge); same terms as sd_passive_hinge, without its call and loop per body. */
void sd_passive_subtract(const sd_model *m, const double *q, const double *u, double *tau)
{
    const double *damping = m->damping, *stiffness = m->stiffness;
    if (u) {
        for (int v = 0; v < m->nv; ++v) tau[v] += damping[v] * u[v];
        if (m->has_free_armature)
            for (int k = 0; k < m->n; ++k) {
                const int vk = m->v_index[k];
                if (!free_with_armature(m, k)) continue;
                double t[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
                free_armature_velocity_term(m->armature + vk, u + vk, t);
                for (int i = 0; i < 6; ++i) tau[vk + i] -= t[i];
            }
    }
    if (!any_spring(stiffness, m->nv)) return;
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k];
        if (m->nv_k[k] == 0 || stiffness[vk] == 0.0) continue;
        const double *qk = q + m->q_index[k];
        if (m->hinge[k] == SD_HINGE_SPHERICAL) {
            double r[3];
            sd_quat_rotation_vector(qk, r);
            for (int i = 0; i < 3; ++i) tau[vk + i] += stiffness[vk + i] * r[i];
        } else { /* revolute, prismatic: one coordinate per speed */
            tau[vk] += stiffness[vk] * (qk[0] - m->spring_ref[vk]);
        }
    }
}

double sd_spring_energy_at(const sd_model *m, const double *q)
{
    double e = 0.0;
    for (int k = 0; k < m->n; ++k) {
        const int vk = m->v_index[k];
        if (m->nv_k[k] == 0 || m->stiffness[vk] == 0.0) continue;
        const double *qk = q + m->q_index[k];
        double x2;
        if (m->hinge[k] == SD_HINGE_SPHERICAL) {
            double r[3];
            sd_quat_rotation_vector(qk, r);
            x2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        } else {
            x2 = (qk[0] - m->spring_ref[vk]) * (qk[0] - m->spring_ref[vk]);
        }
        e += 0.5 * m->stiffness[vk] * x2;
    }
    return e;
}

double sd_armature_energy_of_speeds(const sd_model *m, const double *u)
{
    double e = 0.0;
    for (int v = 0; v < m->nv; ++v) e += 0.5 * m->armature[v] * u[v] * u[v]; /* zero on modal speeds */
    return e;
}

double sd_armature_energy(const sd_model *m, const sd_data *d)
{
    double e = 0.0;
    for (int k = 0; k < m->n; ++k) {
        const int nk = m->nv_k[k], vk = m->v_index[k];
        int any = 0;
        for (int i = 0; i < nk; ++i) any |= m->armature[vk + i] > 0;
        if (!any) continue;
        /* the hinge's speeds from the velocities: V(k) = phi* V(parent) + H* u(k), H* of full column
         * rank, so u(k) solves (H H*) u = H (V(k) - phi* V(parent)) */
        double rel[6], A[36], u[6];
        if (m->parent[k] < 0) {
            for (int r = 0; r < 6; ++r) rel[r] = d->V[6 * k + r];
        } else {
            sd_motion_to_child(&d->Xup[k], d->V + 6 * m->parent[k], rel);
            for (int r = 0; r < 6; ++r) rel[r] = d->V[6 * k + r] - rel[r];
        }
        const double *S = d->S + 6 * vk;
        for (int i = 0; i < nk; ++i) {
            u[i] = sd_s6_dot(S + 6 * i, rel);
            for (int j = 0; j < nk; ++j) A[i * nk + j] = sd_s6_dot(S + 6 * i, S + 6 * j);
        }
        if (sd_cholesky_factor(A, nk, 0.0) >= 0) continue; /* H* has full rank: not reached */
        sd_cholesky_solve(A, nk, u);
        for (int i = 0; i < nk; ++i) e += 0.5 * m->armature[vk + i] * u[i] * u[i];
    }
    return e;
}

sd_status sd_passive_forces(const sd_model *m, sd_data *d, const double *q, const double *u, double *tau_passive)
{
    const char *fn = "sd_passive_forces";
    const sd_status st = sd_check_call(m, d, fn, q, u, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!tau_passive) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL tau_passive", fn);
    for (int v = 0; v < m->nv; ++v) tau_passive[v] = 0.0; /* modal speeds: none */
    if (m->has_passive)
        for (int k = 0; k < m->n; ++k) sd_passive_hinge(m, k, q, u, tau_passive + m->v_index[k]);
    return sd_check_output(d, fn, "tau_passive", tau_passive, (size_t)m->nv, SD_CAUSE_OVERFLOW);
}

sd_status sd_spring_energy(const sd_model *m, sd_data *d, const double *q, double *E)
{
    const char *fn = "sd_spring_energy";
    const sd_status st = sd_check_call(m, d, fn, q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!E) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    *E = m->has_passive ? sd_spring_energy_at(m, q) : 0.0;
    return sd_check_output(d, fn, "E", E, 1, SD_CAUSE_OVERFLOW);
}
