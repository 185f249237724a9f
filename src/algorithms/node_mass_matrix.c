/*
 * src/algorithms/node_mass_matrix.c — the mass matrix over nodes by composite bodies (001 Lemma 3.1,
 * Eq 47-50): a tips-to-base gather of R(k) ((6+nm)^2), R(k) = M_m(k) + sum over children c of
 * phi(k, c) R^rr(c) phi*(k, c): a child hands its parent only its rigid 6x6 block, through
 * phi(k, c) = [Xup(c)^T; Y(c)^T] (001 Eq 16-17, 50: Phi(k, c) = A(k) B(k, c)). For each node k the
 * columns X = R(k) H*(k) give the diagonal block H(k) X; the off-diagonal blocks of the ancestors
 * come from walking X^r to the root, X(p) = phi(p, j) X^r(j) (Eq 50). Body axes throughout.
 */
#include <string.h>

#include "node_engine.h"

sd_status sd_nodes_mass_matrix(const sd_model *m, sd_data *d, const double *q, double *M)
{
    const char *fn = "sd_mass_matrix";
    const sd_status st = sd_check_call(m, d, fn, q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!M) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL M", fn);
    struct sd_node_data *nd = d->nodes;
    const int nv = m->nv;
    sd_update_motion(m, d, q, NULL, NULL, 0);
    d->current &= ~SD_CURRENT_VELOCITIES; /* the placements and masses were wanted, not u = 0 */
    memcpy(nd->R, nd->Mm, (size_t)nd->mat_total * sizeof(double));
    memset(M, 0, (size_t)nv * (size_t)nv * sizeof(double));
    double *Xa = nd->X, *Xb = nd->X + (size_t)nd->max_dim * (size_t)nd->max_cols;
    for (int k = m->n - 1; k >= 0; --k) {
        const int dim = nd->dim[k], nvk = m->nv_k[k], nm = sd_node_nmodes(m, k), nc = nvk + nm, p = m->parent[k];
        const double *R = nd->R + nd->mat_off[k], *S = d->S + 6 * m->v_index[k];
        /* X = R(k) H*(k), dim x nc column-major: H*(k) = diag(H*_hinge, I) (001 Eq 15 on F_k) */
        double *X = Xa;
        for (int c = 0; c < nc; ++c)
            for (int i = 0; i < dim; ++i) {
                double s;
                if (c < nvk) {
                    s = 0.0;
                    for (int j = 0; j < 6; ++j) s += R[i * dim + j] * S[6 * c + j];
                } else {
                    s = R[i * dim + 6 + (c - nvk)];
                }
                X[dim * c + i] = s;
            }
        /* M(j, k) = H(j) X(j) for j = k and its ancestors, X(j) carried up by phi (Eq 50) */
        int j = k, dj = dim;
        for (;;) {
            const int nvj = m->nv_k[j], ncj = nvj + sd_node_nmodes(m, j);
            const double *Sj = d->S + 6 * m->v_index[j];
            for (int c = 0; c < nc; ++c) {
                const int col = sd_node_speed_index(m, k, c);
                for (int i = 0; i < ncj; ++i) {
                    const double v = i < nvj ? sd_s6_dot(Sj + 6 * i, X + dj * c) : X[dj * c + 6 + (i - nvj)];
                    const int row = sd_node_speed_index(m, j, i);
                    M[(size_t)row * nv + col] = v;
                    M[(size_t)col * nv + row] = v;
                }
            }
            const int pj = m->parent[j];
            if (pj < 0) break;
            const int dp = nd->dim[pj];
            double *Xn = X == Xa ? Xb : Xa;
            const double *Y = nd->att_off[j] >= 0 ? nd->Y + nd->att_off[j] : NULL;
            for (int c = 0; c < nc; ++c) { /* X(pj) = [Xup^T; Y^T] X^r(j) */
                sd_force_to_parent(&d->Xup[j], X + dj * c, Xn + dp * c);
                for (int r = 0; r < dp - 6; ++r) Xn[dp * c + 6 + r] = Y ? sd_s6_dot(Y + 6 * r, X + dj * c) : 0.0;
            }
            X = Xn;
            j = pj;
            dj = dp;
        }
        if (p < 0) continue;
        /* R(p) += phi(p, k) R^rr(k) phi*(p, k) (Eq 47) */
        const int dp = nd->dim[p];
        double *Rp = nd->R + nd->mat_off[p];
        const double *Y = nd->att_off[k] >= 0 ? nd->Y + nd->att_off[k] : NULL;
        double W[36], Z[36], col[6], out[6];
        for (int c = 0; c < 6; ++c) { /* W = phi R^rr: columns of R^rr (forces) to the parent */
            for (int i = 0; i < 6; ++i) col[i] = R[i * dim + c];
            sd_force_to_parent(&d->Xup[k], col, W + 6 * c);
        }
        for (int c = 0; c < 6; ++c) { /* Z = R^rr phi* = W^T (R^rr symmetric), column c = row c of W */
            for (int i = 0; i < 6; ++i) Z[6 * c + i] = W[6 * i + c];
        }
        for (int c = 0; c < 6; ++c) { /* rigid block: phi Z */
            sd_force_to_parent(&d->Xup[k], Z + 6 * c, out);
            for (int i = 0; i < 6; ++i) Rp[i * dp + c] += out[i];
        }
        if (!Y) continue;
        const int nmp = dp - 6;
        for (int r = 0; r < nmp; ++r) {
            for (int c = 0; c < 6; ++c) { /* Y^T Z and its transpose */
                const double v = sd_s6_dot(Y + 6 * r, Z + 6 * c);
                Rp[(6 + r) * dp + c] += v;
                Rp[c * dp + 6 + r] += v;
            }
            double RY[6]; /* R^rr Y_r, then Y_s^T R^rr Y_r */
            for (int i = 0; i < 6; ++i) {
                double s = 0.0;
                for (int l = 0; l < 6; ++l) s += R[i * dim + l] * Y[6 * r + l];
                RY[i] = s;
            }
            for (int s2 = 0; s2 < nmp; ++s2) Rp[(6 + s2) * dp + 6 + r] += sd_s6_dot(Y + 6 * s2, RY);
        }
    }
    if (m->has_armature) /* the rotors' reflected inertia on the hinge speeds' diagonal (dynamics.h) */
        for (int k = 0; k < m->n; ++k)
            for (int i = 0; i < m->nv_k[k]; ++i) M[(size_t)(m->v_index[k] + i) * nv + m->v_index[k] + i] += m->armature[m->v_index[k] + i];
    if (sd_all_finite(M, (size_t)nv * (size_t)nv)) return SD_OK;
    return sd_check_output(d, fn, "M", M, (size_t)nv * (size_t)nv, SD_CAUSE_OVERFLOW);
}
