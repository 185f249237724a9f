/*
 * src/algorithms/operational_space.c — the operational-space compliance J M^-1 J* = B* Omega B of a few task
 * frames, Omega = psi* H* D^-1 H psi (004 Eq 59-60), by the backward-Lyapunov recursions of
 * 004 Lemma 5 / Alg 4.3, and the operational-space inertia as its inverse.
 *
 *   psi(parent, k) = phi(parent, k) tau_bar(k),  tau_bar(k) = I - G(k) H(k)         (004 Eq 35)
 *   Y(k) = Omega(k, k) = psi*(parent, k) Y(parent) psi(parent, k) + H*(k) D^-1(k) H(k)  (Eq 24)
 *   Omega(a, b) = psi*(c, a) Y(c) psi(c, b), c the nearest common ancestor      (Eq 25, Alg 4.3)
 * so a fixed number of frames costs one O(N) scatter plus their paths to the base.
 */
#include <string.h>

#include "internal.h"
#include "node_engine.h"

/* C = A B for 6x6 row-major matrices (C must not alias). */
static void mat6_mul(const double *A, const double *B, double *C)
{
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            double s = 0.0;
            for (int k = 0; k < 6; ++k) s += A[6 * i + k] * B[6 * k + j];
            C[6 * i + j] = s;
        }
}

/* C = A^T B for 6x6 row-major matrices (C must not alias). */
static void mat6_tmul(const double *A, const double *B, double *C)
{
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            double s = 0.0;
            for (int k = 0; k < 6; ++k) s += A[6 * k + i] * B[6 * k + j];
            C[6 * i + j] = s;
        }
}

static void mat6_identity(double *A)
{
    memset(A, 0, 36 * sizeof(double));
    for (int i = 0; i < 6; ++i) A[7 * i] = 1.0;
}

/* psi(parent, k) as a 6x6 matrix acting on forces in body k's frame, giving forces in the parent's. */
static void psi_matrix(const sd_model *m, const sd_data *d, int k, double *psi)
{
    const int nk = m->nv_k[k], vk = m->v_index[k];
    double tau_bar[36];
    for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) {
            double s = r == c;
            for (int i = 0; i < nk; ++i) s -= d->G[6 * (vk + i) + r] * d->S[6 * (vk + i) + c];
            tau_bar[6 * r + c] = s;
        }
    for (int c = 0; c < 6; ++c) { /* column c of phi tau_bar = phi applied to column c of tau_bar */
        double col[6], out[6];
        for (int r = 0; r < 6; ++r) col[r] = tau_bar[6 * r + c];
        sd_force_to_parent(&d->Xup[k], col, out);
        for (int r = 0; r < 6; ++r) psi[6 * r + c] = out[r];
    }
}

/* The Y(k) scatter of 004 Eq 24 for every body. */
static void lyapunov_scatter(const sd_model *m, sd_data *d)
{
    for (int k = 0; k < m->n; ++k) {
        const int nk = m->nv_k[k], vk = m->v_index[k];
        double *Y = d->Y + 36 * k, *psi = d->psi + 36 * k;
        psi_matrix(m, d, k, psi);
        memset(Y, 0, 36 * sizeof(double));
        if (m->parent[k] >= 0) {
            double T[36];
            mat6_mul(d->Y + 36 * m->parent[k], psi, T);
            mat6_tmul(psi, T, Y);
        }
        const double *Dinv = d->Dinv + 36 * k;
        for (int i = 0; i < nk; ++i) /* + H* D^-1 H */
            for (int j = 0; j < nk; ++j)
                for (int r = 0; r < 6; ++r)
                    for (int c = 0; c < 6; ++c)
                        Y[6 * r + c] += d->S[6 * (vk + j) + r] * Dinv[j * nk + i] * d->S[6 * (vk + i) + c];
    }
}

/* T = psi(c, k), the product of psi along the path from ancestor c down to k (identity if k = c). */
static void psi_path(const sd_model *m, const sd_data *d, int c, int k, double *T)
{
    mat6_identity(T);
    for (int j = k; j != c; j = m->parent[j]) {
        double t[36];
        mat6_mul(d->psi + 36 * j, T, t); /* psi(c, k) = psi(c, parent j) ... psi(parent j, j) ... */
        memcpy(T, t, sizeof t);
    }
}

static int common_ancestor(const sd_model *m, int a, int b)
{
    while (a >= 0 && !sd_model_is_ancestor(m, a, b)) a = m->parent[a];
    return a;
}

/* The 6x6 matrix of a placement's motion map body -> frame (a frame's velocity from its body's). */
static void motion_matrix(const sd_transform *X, double *Tm)
{
    for (int c = 0; c < 6; ++c) {
        double e[6] = {0, 0, 0, 0, 0, 0}, out[6];
        e[c] = 1.0;
        sd_motion_to_child(X, e, out);
        for (int r = 0; r < 6; ++r) Tm[6 * r + c] = out[r];
    }
}

/* Lambda_inv = B* Omega B by columns on a model with a node workspace (a flexible body's modes): for each
 * task direction i of frame a, the force B_a e_i on its body goes through the gather (psi, H), D^-1 and
 * the scatter (H*, psi*) of the factors (004 Eq 59-60 applied to a vector, node_kinds.h), and every
 * frame b reads its body's response, B_b* alpha. 6 nframes O(N) sweeps: the 6x6 Lyapunov recursion
 * above is the rigid kind's (its psi(parent, k) would be dim(parent) x dim(k) on nodes). */
static void compliance_by_columns(const sd_model *m, sd_data *d, int nframes, const sd_task_frame *frames,
                                  double *Lambda_inv)
{
    const int N = 6 * nframes;
    double *y = d->nodes->nu_f; /* nv of scratch */
    for (int a = 0; a < nframes; ++a) {
        double Ma[36];
        motion_matrix(&frames[a].placement, Ma);
        for (int i = 0; i < 6; ++i) {
            double f[6];
            for (int r = 0; r < 6; ++r) f[r] = Ma[6 * i + r]; /* B_a e_i: row i of the motion map */
            sd_nodes_force_response(m, d, frames[a].body, f, y);
            for (int b = 0; b < nframes; ++b) {
                double Mb[36];
                const double *alpha = d->alpha + 6 * frames[b].body;
                motion_matrix(&frames[b].placement, Mb);
                for (int j = 0; j < 6; ++j) Lambda_inv[(6 * b + j) * N + 6 * a + i] = sd_s6_dot(Mb + 6 * j, alpha);
            }
        }
    }
    d->current &= ~SD_CURRENT_ACCELERATIONS; /* the sweeps used alpha as scratch */
    sd_mirror_upper(Lambda_inv, N); /* symmetric to the last bit, as the recursion's */
}

sd_status sd_operational_space_compliance(const sd_model *m, sd_data *d, const double *q, int nframes,
                                          const sd_task_frame *frames, double *Lambda_inv)
{
    const char *fn = "sd_operational_space_compliance";
    if (!frames || !Lambda_inv || nframes < 1) return sd_data_fail(d, SD_E_ARGUMENT, "%s: no frames or no output", fn);
    for (int i = 0; i < nframes; ++i)
        if (frames[i].body < 0 || frames[i].body >= (m ? m->n : 0))
            return sd_data_fail(d, SD_E_ARGUMENT, "%s: frames[%d].body = %d is out of range (the model has %d bodies)",
                                fn, i, frames[i].body, m ? m->n : 0);
    sd_status st = sd_articulated_inertias(m, d, q);
    if (st != SD_OK) return st;
    if (d->nodes) {
        compliance_by_columns(m, d, nframes, frames, Lambda_inv);
        return sd_check_output(d, fn, "Lambda_inv", Lambda_inv, (size_t)6 * nframes * 6 * nframes, SD_CAUSE_TINY_INERTIA);
    }
    lyapunov_scatter(m, d);
    const int N = 6 * nframes;
    for (int a = 0; a < nframes; ++a)
        for (int b = a; b < nframes; ++b) {
            const int ka = frames[a].body, kb = frames[b].body, c = common_ancestor(m, ka, kb);
            double block[36] = {0};
            if (c >= 0) { /* Omega(a, b) = psi*(c, a) Y(c) psi(c, b), then B_a* . B_b */
                double Ta[36], Tb[36], t1[36], t2[36], Ma[36], Mb[36];
                psi_path(m, d, c, ka, Ta);
                psi_path(m, d, c, kb, Tb);
                mat6_mul(d->Y + 36 * c, Tb, t1);
                mat6_tmul(Ta, t1, t2);
                motion_matrix(&frames[a].placement, Ma);
                motion_matrix(&frames[b].placement, Mb);
                mat6_mul(Ma, t2, t1);
                for (int i = 0; i < 6; ++i) /* block = Ma t2 Mb^T */
                    for (int j = 0; j < 6; ++j) {
                        double s = 0.0;
                        for (int k = 0; k < 6; ++k) s += t1[6 * i + k] * Mb[6 * j + k];
                        block[6 * i + j] = s;
                    }
            }
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 6; ++j) {
                    Lambda_inv[(6 * a + i) * N + 6 * b + j] = block[6 * i + j];
                    Lambda_inv[(6 * b + j) * N + 6 * a + i] = block[6 * i + j];
                }
        }
    return sd_check_output(d, fn, "Lambda_inv", Lambda_inv, (size_t)N * (size_t)N, SD_CAUSE_TINY_INERTIA);
}

sd_status sd_operational_space_inertia(const sd_model *m, sd_data *d, const double *q, int nframes,
                                       const sd_task_frame *frames, double *Lambda)
{
    sd_status st = sd_operational_space_compliance(m, d, q, nframes, frames, Lambda);
    if (st != SD_OK) return st;
    const int N = 6 * nframes;
    double scale = 0.0;
    for (int i = 0; i < N; ++i) scale = Lambda[i * N + i] > scale ? Lambda[i * N + i] : scale;
    if (sd_cholesky_factor(Lambda, N, 1e-12 * scale) >= 0)
        return sd_data_fail(d, SD_E_SINGULAR,
                            "operational-space compliance is singular: the task frames are not independently "
                            "movable (fewer hinge speeds than task directions)");
    sd_cholesky_inverse(Lambda, N);
    return sd_check_output(d, "sd_operational_space_inertia", "Lambda", Lambda, (size_t)N * (size_t)N,
                           SD_CAUSE_OVERFLOW);
}
