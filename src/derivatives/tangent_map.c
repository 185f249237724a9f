/*
 * src/derivatives/tangent_map.c — sd_configuration_tangent_map (soadyn/derivatives.h): the
 * Jacobian T = dq/d delta of the retraction q (+) delta at delta = 0 (hinge.c, sd_hinge_integrate),
 * and a left inverse of it.
 *
 * A quaternion w moves as w exp(delta) (the body-side exponential), whose derivative at 0 along e_c
 * is w (x) [0; e_c / 2]; with the quaternion product as a matrix, w (x) x = Lw x and Lw^T Lw = |w|^2,
 * so 2 [0 1] Lw^T / |w|^2 is a left inverse of the 4 x 3 block 1/2 Lw [0; 1]. A free hinge's
 * position moves as p + R(w) delta_v (the body's axes): the block R, inverse R^T (R a rotation).
 * Every other coordinate (revolute, prismatic, universal, planar, modal) is its own tangent.
 */
#include <string.h>

#include "internal.h"

/* Lw, the 4 x 4 matrix of x -> w (x) x (row-major), quaternions (w, x, y, z). */
static void quat_left_matrix(const double *w, double L[16])
{
    const double a = w[0], b = w[1], c = w[2], d = w[3];
    const double rows[16] = {a, -b, -c, -d, b, a, -d, c, c, d, a, -b, d, -c, b, a};
    memcpy(L, rows, sizeof rows);
}

/* The quaternion block at coordinates q0 (of q) and speeds v0: T's 4 x 3 block, Tinv's 3 x 4. */
static void quaternion_block(const double *w, int nq, int nv, int q0, int v0, double *T, double *Tinv)
{
    double L[16];
    quat_left_matrix(w, L);
    const double n2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + w[3] * w[3];
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 3; ++c) {
            if (T) T[(size_t)(q0 + r) * nv + v0 + c] = 0.5 * L[4 * r + 1 + c];
            if (Tinv) Tinv[(size_t)(v0 + c) * nq + q0 + r] = 2.0 * L[4 * r + 1 + c] / n2;
        }
}

void sd_configuration_tangent_map(const sd_model *m, const double *q, double *T, double *Tinv)
{
    if (!m || !q) return;
    const int nq = m->nq, nv = m->nv;
    if (T) memset(T, 0, (size_t)nq * nv * sizeof(double));
    if (Tinv) memset(Tinv, 0, (size_t)nq * nv * sizeof(double));
    for (int k = 0; k < m->n; ++k) {
        const int qk = m->q_index[k], vk = m->v_index[k];
        if (m->hinge[k] == SD_HINGE_SPHERICAL) {
            quaternion_block(q + qk, nq, nv, qk, vk, T, Tinv);
        } else if (m->hinge[k] == SD_HINGE_FREE) {
            double R[9];
            sd_quat_to_m3(q + qk + 3, R);
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) {
                    if (T) T[(size_t)(qk + r) * nv + vk + 3 + c] = R[3 * r + c];
                    if (Tinv) Tinv[(size_t)(vk + 3 + c) * nq + qk + r] = R[3 * r + c];
                }
            quaternion_block(q + qk + 3, nq, nv, qk + 3, vk, T, Tinv);
        } else {
            for (int i = 0; i < m->nq_k[k]; ++i) {
                if (T) T[(size_t)(qk + i) * nv + vk + i] = 1.0;
                if (Tinv) Tinv[(size_t)(vk + i) * nq + qk + i] = 1.0;
            }
        }
        const int modes = m->n_modes ? m->n_modes[k] : 0; /* a flexible body's modal coordinates */
        for (int i = 0; i < modes; ++i) {
            if (T) T[(size_t)(m->mode_q_index[k] + i) * nv + m->mode_v_index[k] + i] = 1.0;
            if (Tinv) Tinv[(size_t)(m->mode_v_index[k] + i) * nq + m->mode_q_index[k] + i] = 1.0;
        }
    }
}
