/*
 * src/algorithms/mass_matrix.c — the mass matrix by composite body inertias over nodes, the one copy
 * for every kind of node (004 Alg 4.1-4.2, Eq 20; 001 Lemma 3.1, Eq 47-50 for flexible nodes): a
 * tips-to-base gather of R(k); for each node speed, X = R(k) H*(k) gives the entries
 * M(l, k) = H(l) phi(l, k) X of k and every ancestor l. Everything is held in world axes about the
 * world origin, where phi is the identity for a child on its parent's frame and a composite inertia's
 * rigid block is 13 numbers that add up; a flexible node's modal blocks and a child riding on a
 * flexible parent's node (phi*(p, c) = [1, Y_w(c)]) are the node kinds' operations (node_kinds.h).
 * Entries of unrelated bodies are zero (004 Sec 7) and never computed.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "internal.h"
#include "node_kinds.h"

/* x y + z in one fused instruction where the processor has it (a -march=native build), whatever the
 * compiler's contraction setting: the row runs below are nothing but these independent sums. */
static inline double mm_madd(double x, double y, double z)
{
#if defined(__FMA__)
    return fma(x, y, z);
#else
    return x * y + z;
#endif
}

/* One entry X . H*(a) of the 6 x nv row-stored H* (6 multiply-adds). */
static inline double mm_entry(const double *restrict X, const double *restrict ST, size_t n, int a)
{
    double e = X[0] * ST[a];
    for (int j = 1; j < 6; ++j) e = mm_madd(X[j], ST[j * n + a], e);
    return e;
}

/* X's numbers as the group kernel takes them: broadcast to 4 lanes with AVX2 and FMA, else as they
 * are. Made once per row (the compiler did not hoist the broadcasts out of the runs' loops). */
#if defined(__AVX2__) && defined(__FMA__)
typedef __m256d mm_lanes;
static inline mm_lanes mm_splat(double x) { return _mm256_set1_pd(x); }
#else
typedef double mm_lanes;
static inline mm_lanes mm_splat(double x) { return x; }
#endif

/* The 4 entries row[a .. a+3] = X . H*(a .. a+3): with AVX2 and FMA one vector of 4 in 6 fused
 * multiply-adds (the auto-vectorised loop re-broadcast X and recomputed its trip count for every
 * run, ~30 instructions a run, more than the entries on a humanoid's short runs). */
static inline void mm_group4(const mm_lanes x[6], const double *restrict S0, const double *restrict S1,
                             const double *restrict S2, const double *restrict S3, const double *restrict S4,
                             const double *restrict S5, double *restrict row, int a)
{
#if defined(__AVX2__) && defined(__FMA__)
    __m256d e = _mm256_mul_pd(x[0], _mm256_loadu_pd(S0 + a));
    e = _mm256_fmadd_pd(x[1], _mm256_loadu_pd(S1 + a), e);
    e = _mm256_fmadd_pd(x[2], _mm256_loadu_pd(S2 + a), e);
    e = _mm256_fmadd_pd(x[3], _mm256_loadu_pd(S3 + a), e);
    e = _mm256_fmadd_pd(x[4], _mm256_loadu_pd(S4 + a), e);
    e = _mm256_fmadd_pd(x[5], _mm256_loadu_pd(S5 + a), e);
    _mm256_storeu_pd(row + a, e);
#else
    for (int t = a; t < a + 4; ++t)
        row[t] = mm_madd(x[5], S5[t], mm_madd(x[4], S4[t], mm_madd(x[3], S3[t], mm_madd(x[2], S2[t], mm_madd(x[1], S1[t], x[0] * S0[t])))));
#endif
}

/* Row r's entries M(r, a) = X . H*(a) for a = r and every ancestor speed, with the H* of every
 * speed stored by rows (6 x nv): 6 multiply-adds per entry along contiguous memory (mm_group4)
 * instead of a 6-vector dot per entry at the end of a walk over v_parent. The ancestor speeds come
 * as runs (mm_ancestor_runs) from [lo(k), hi) down to column 0; the columns between runs belong to
 * unrelated bodies, whose entries are zero (004 Sec 7). A run goes down from its top in whole
 * groups of 4 and so may write up to 3 entries below its lo: every column below is written
 * afterwards (the next runs and the zeros between them), so a short run (a tree's segments are
 * short) costs no scalar remainder; only near column 0 is there one. Inlined into the sweep: as a
 * call it saved and restored registers and re-read the model per row (callgrind, -O3 -march=native:
 * HyQ 13785 -> 13485, Talos 33075 -> 32306 instructions per M; iiwa unchanged). */
static inline __attribute__((always_inline)) void mm_row(const double *restrict X, const double *restrict ST, int nv,
                                                         const int *runs, int k, int hi, double *restrict row)
{
    const size_t n = (size_t)nv;
    const double *restrict S0 = ST, *restrict S1 = ST + n, *restrict S2 = ST + 2 * n, *restrict S3 = ST + 3 * n,
                 *restrict S4 = ST + 4 * n, *restrict S5 = ST + 5 * n;
    const mm_lanes x[6] = {mm_splat(X[0]), mm_splat(X[1]), mm_splat(X[2]), mm_splat(X[3]), mm_splat(X[4]), mm_splat(X[5])};
    int lo = runs[3 * k + 1], up = runs[3 * k + 2];
    for (;;) {
        int a = hi - 4; /* the group [a, a + 4) */
        for (; a > lo - 4 && a >= 0; a -= 4) mm_group4(x, S0, S1, S2, S3, S4, S5, row, a);
        if (a + 4 > lo) { /* near column 0: the group [0, 4) again when it ends within the run
                             * (its entries from lo up are the same numbers, those below are
                             * written later); never past hi, where the entries are done */
            if (hi >= 4) mm_group4(x, S0, S1, S2, S3, S4, S5, row, 0);
            else
                for (int t = lo; t < a + 4; ++t) row[t] = mm_entry(X, ST, n, t);
        }
        const int next_hi = up < 0 ? 0 : runs[3 * up];
        for (a = lo - 4; a > next_hi - 4 && a >= 0; a -= 4) /* the zeros, the same way down */
            for (int t = 0; t < 4; ++t) row[a + t] = 0.0;
        for (int t = next_hi; t < a + 4; ++t) row[t] = 0.0;
        if (up < 0) return;
        hi = next_hi;
        lo = runs[3 * up + 1];
        up = runs[3 * up + 2];
    }
}

/* H* moved to the world when it is sgn e_sel (sd_hinge_select, sel >= 0: a revolute or prismatic
 * hinge along a body axis): w = sgn R_sel and v = p x w for a revolute about e_sel, w = 0 and
 * v = sgn R_(sel-3) for a prismatic hinge; the numbers sd_motion_to_parent gives (its products with
 * the zeros of s are zeros), 3 multiplications and a cross product where it takes 18 + 6. */
static inline void mm_axis_to_world(const sd_transform *X, int sel, double sgn, double out[6])
{
    const double *R = X->R, *p = X->p;
    if (sel < 3) {
        for (int i = 0; i < 3; ++i) out[i] = sgn * R[3 * i + sel];
        sd_v3_cross(p, out, out + 3); /* as sd_motion_to_parent, whose v = R 0 adds nothing */
    } else {
        for (int i = 0; i < 3; ++i) {
            out[i] = 0.0;
            out[3 + i] = sgn * R[3 * i + sel - 3];
        }
    }
}

/* A body's inertia M(k) moved to the world about its origin, in the 13-number form
 * [m, m c_w, R Ic R^T + m (|c_w|^2 1 - c_w c_w^T)] with c_w = R c + p (sd_rigid_inertia_to_parent):
 * T = R Ic, then only the 6 entries T_i . R_j with j >= i of the symmetric product. */
static inline void mm_inertia_to_world(const sd_transform *X, double m, const double c[3], const double Ic[9],
                                       double out[13])
{
#if defined(__AVX2__) && defined(__FMA__)
    /* The same products in the same order, in rows of 4 lanes (the 4th unused): A = R Ic by rows
     * (T above), R's columns by 6 shuffles, row i of R Ic R^T = sum_l A(i, l) R's column l, the
     * parallel-axis term by rows, then the upper triangle copied below it as above (exact
     * symmetry). Loads stay inside R, p, Ic (row 2 of Ic from Ic + 5, p from R + 8, both rotated);
     * the last row's store is masked (out[13] is the next body's or past d->Rc). */
    const double *R = X->R;
    const __m256d r0 = _mm256_loadu_pd(R), r1 = _mm256_loadu_pd(R + 3), r2 = _mm256_loadu_pd(R + 6);
    const __m256d i0 = _mm256_loadu_pd(Ic), i1 = _mm256_loadu_pd(Ic + 3),
                  i2 = _mm256_permute4x64_pd(_mm256_loadu_pd(Ic + 5), 0x39);
    const __m256d pv = _mm256_permute4x64_pd(_mm256_loadu_pd(R + 8), 0x39); /* (p0, p1, p2, R8) */
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r2),
                  t3 = _mm256_unpackhi_pd(r2, r2);
    const __m256d c0 = _mm256_permute2f128_pd(t0, t2, 0x20), c1 = _mm256_permute2f128_pd(t1, t3, 0x20),
                  c2v = _mm256_permute2f128_pd(t0, t2, 0x31); /* R's columns */
    const __m256d cwv = _mm256_fmadd_pd(c2v, _mm256_set1_pd(c[2]),
                                        _mm256_fmadd_pd(c1, _mm256_set1_pd(c[1]), _mm256_fmadd_pd(c0, _mm256_set1_pd(c[0]), pv)));
    double cw[4];
    _mm256_storeu_pd(cw, cwv);
    const double c2 = mm_madd(cw[2], cw[2], mm_madd(cw[1], cw[1], cw[0] * cw[0]));
    const __m256d mv = _mm256_set1_pd(m), c2b = _mm256_set1_pd(c2), zero = _mm256_setzero_pd();
    __m256d f[3];
    for (int i = 0; i < 3; ++i) {
        const __m256d a = _mm256_fmadd_pd(_mm256_set1_pd(R[3 * i + 2]), i2,
                                          _mm256_fmadd_pd(_mm256_set1_pd(R[3 * i + 1]), i1, _mm256_mul_pd(_mm256_set1_pd(R[3 * i]), i0)));
        const __m256d a0 = _mm256_permute4x64_pd(a, 0x00), a1 = _mm256_permute4x64_pd(a, 0x55),
                      a2 = _mm256_permute4x64_pd(a, 0xAA);
        const __m256d w = _mm256_fmadd_pd(a2, c2v, _mm256_fmadd_pd(a1, c1, _mm256_mul_pd(a0, c0)));
        const __m256d diag = i == 0 ? _mm256_blend_pd(zero, c2b, 1) : i == 1 ? _mm256_blend_pd(zero, c2b, 2)
                                                                            : _mm256_blend_pd(zero, c2b, 4);
        const __m256d par = _mm256_sub_pd(diag, _mm256_mul_pd(_mm256_set1_pd(cw[i]), cwv));
        f[i] = _mm256_add_pd(w, _mm256_mul_pd(mv, par));
    }
    const __m256d g1 = _mm256_blend_pd(f[1], _mm256_permute4x64_pd(f[0], 0x01), 1);          /* (W01, W11, W12) */
    const __m256d u = _mm256_permute4x64_pd(_mm256_unpacklo_pd(f[0], f[1]), 0x0E);           /* (W02, W12, ..) */
    const __m256d g2 = _mm256_blend_pd(u, f[2], 4);                                          /* (W02, W12, W22) */
    out[0] = m;
    _mm256_storeu_pd(out + 1, _mm256_mul_pd(mv, cwv)); /* out[4] is row 0's, written next */
    _mm256_storeu_pd(out + 4, f[0]);
    _mm256_storeu_pd(out + 7, g1);
    _mm256_maskstore_pd(out + 10, _mm256_set_epi64x(0, -1, -1, -1), g2);
#else
    const double *R = X->R;
    double cw[3], T[9];
    for (int i = 0; i < 3; ++i) {
        cw[i] = mm_madd(R[3 * i + 2], c[2], mm_madd(R[3 * i + 1], c[1], mm_madd(R[3 * i], c[0], X->p[i])));
        for (int j = 0; j < 3; ++j)
            T[3 * i + j] = mm_madd(R[3 * i + 2], Ic[6 + j], mm_madd(R[3 * i + 1], Ic[3 + j], R[3 * i] * Ic[j]));
    }
    const double c2 = mm_madd(cw[2], cw[2], mm_madd(cw[1], cw[1], cw[0] * cw[0]));
    out[0] = m;
    for (int i = 0; i < 3; ++i) {
        out[1 + i] = m * cw[i];
        for (int j = i; j < 3; ++j) {
            const double v = mm_madd(T[3 * i + 2], R[3 * j + 2], mm_madd(T[3 * i + 1], R[3 * j + 1], T[3 * i] * R[3 * j])) +
                             m * ((i == j) * c2 - cw[i] * cw[j]);
            out[4 + 3 * i + j] = out[4 + 3 * j + i] = v;
        }
    }
#endif
}

/* Whether every |x[i]| < 2^e (so NaN and infinity fail): the absolute value's bits plus
 * 2^63 - bits(2^e) carry into bit 63 exactly when they are at least 2^e's; an and, an add and an or
 * per number, vectorised. */
static int mm_all_below(const double *x, size_t n, int e)
{
    const uint64_t abs_mask = 0x7FFFFFFFFFFFFFFFu, bound = (uint64_t)(1023 + e) << 52;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t bits;
        memcpy(&bits, x + i, sizeof bits);
        acc |= (bits & abs_mask) + (0x8000000000000000u - bound);
    }
    return !(acc >> 63);
}

/* R(parent) += R(k), 13 numbers (both live in d->Rc). With AVX2 three vectors of 4 and one scalar:
 * the loop was not vectorised (it compiled to 13 scalar load-add-stores, ~45 instructions a body). */
static inline void mm_add13(double *restrict Rp, const double *restrict Rk)
{
#if defined(__AVX2__) && defined(__FMA__)
    for (int i = 0; i < 12; i += 4) _mm256_storeu_pd(Rp + i, _mm256_add_pd(_mm256_loadu_pd(Rp + i), _mm256_loadu_pd(Rk + i)));
    Rp[12] += Rk[12];
#else
    for (int i = 0; i < 13; ++i) Rp[i] += Rk[i];
#endif
}

/* Rows are mirrored onto the upper triangle in blocks of this many, each as soon as its rows are
 * done: the block is still in cache (32 rows of the 1000-link chain are 256 KiB, in L2) and its
 * columns of the upper triangle are a few cache lines per row. */
enum { MM_MIRROR_BLOCK = 32 };

/* The ancestor table, base to tips: top(k) is one past the last speed on the path from the base to
 * k, lo(k) the first speed of the contiguous run of the path's speeds that ends there, up(k) the body
 * whose path's speeds come next below lo(k) (-1: none). A chain is one run, a tree one run per
 * serial segment (004 Sec 7); a node's speeds are its hinge's and then its modes' (node_engine.h).
 * Held as ints in Y's memory (3 per body; ints, not doubles: the conversions both ways cost more than
 * the table's logic). */
SD_ENGINE_SWEEPS void mm_ancestor_runs(const sd_model *m, int *T, const struct sd_node_data *nd)
{
    for (int k = 0; k < m->n; ++k) {
        const int p = m->parent[k], nk = sd_node_speeds(m, nd, k), vk = m->v_index[k];
        const int ptop = p < 0 ? 0 : T[3 * p], plo = p < 0 ? 0 : T[3 * p + 1], pup = p < 0 ? -1 : T[3 * p + 2];
        int *t = T + 3 * k;
        if (nk == 0) { t[0] = ptop; t[1] = plo; t[2] = pup; }          /* a fixed hinge adds no speed */
        else if (p >= 0 && ptop == vk) { t[0] = vk + nk; t[1] = plo; t[2] = pup; } /* the run goes on */
        else { t[0] = vk + nk; t[1] = vk; t[2] = p >= 0 && ptop > 0 ? p : -1; } /* a new run */
    }
}

/* Placements and world placements; with a node workspace also the node masses M_m and the
 * attachment maps Y(c) (the motion scatter at u = 0, whose velocities were not asked for). */
SD_ENGINE_SWEEPS void mm_placements(const sd_model *m, sd_data *d, const double *q, const struct sd_node_data *nd)
{
    if (!nd) {
        sd_update_placements(m, d, q, 1);
        return;
    }
    sd_update_motion(m, d, q, NULL, NULL, 1);
    d->current &= ~SD_CURRENT_VELOCITIES;
}

/* The composite-body recursion over nodes, written once (node_kinds.h: nd NULL, every node rigid).
 * Returns whether every entry is finite. */
SD_ENGINE_SWEEPS int composite_sweeps(const sd_model *m, sd_data *d, const double *q, double *M,
                                      struct sd_node_data *nd)
{
    const int nv = m->nv;
    mm_placements(m, d, q, nd);
    /* H*(l) in world axes about the world origin, where every phi(l, j) of a child on its parent's
     * frame is the identity: an entry is then a dot product instead of a transform per step. Stored
     * by rows (6 x nv; in psi, 36 per body, on a rigid model, where nv <= 6 n) so that a run of
     * ancestors is one vectorised pass (mm_row). A modal speed's H* is zero (the modes do not move
     * F_k): its entries come from the node's kind (sd_node_row_modal_entries). */
    double *ST = nd ? nd->ST : d->psi;
    int *runs = (int *)d->Y;
    double *SW = d->S_world; /* the same H* by columns (the M^-1 sweep's scratch, free here): each
                              * X = R H* reads its 6 numbers contiguously instead of at stride nv */
    for (int c = 0; c < nv; ++c) {
        double *s = SW + 6 * c;
        const int b = m->v_body[c], sel = d->hinge_sel[b];
        if (sd_node_speed_is_modal(m, nd, c)) memset(s, 0, 6 * sizeof(double));
        else if (sel >= 0) mm_axis_to_world(&d->Xworld[b], sel, d->hinge_sgn[b], s);
        else sd_motion_to_parent(&d->Xworld[b], d->S + 6 * c, s);
        for (int r = 0; r < 6; ++r) ST[(size_t)r * nv + c] = s[r];
    }
    mm_ancestor_runs(m, runs, nd);
    /* Composite body inertias R(k) in world axes about the world origin (004 Eq 20; 001 Eq 47). There
     * phi R phi* of a child on its parent's frame is R itself, and a sum of rigid inertias is the sum
     * of their 13 numbers, so the gather is additions; R(k) starts as M(k) moved to the world (a
     * flexible node's M_m with its modal blocks, node_kinds.h). */
    for (int k = 0; k < m->n; ++k) {
        if (sd_node_is_flexible(m, nd, k)) sd_flexible_composite_start(m, d, nd, k, d->Rc + 13 * k);
        else mm_inertia_to_world(&d->Xworld[k], m->mass[k], m->com + 3 * k, m->inertia_com + 9 * k, d->Rc + 13 * k);
        sd_node_attachment_to_world(m, d, nd, k);
    }
    /* Every entry finite, proved from the factors instead of reading the nv^2 entries: with each
     * |H*| < 2^250 and each body's 13 numbers < 2^200, a composite (a sum of < 2^31 bodies) is
     * < 2^231, an X = R H* (sums of <= 5 products, sd_rigid_inertia_mul) < 2^484, an entry (6
     * products) < 2^737, and an armature < 2^500 keeps a diagonal finite. Else (and on a model with
     * flexible nodes, whose modal blocks this does not bound) M is read. */
    const int bounded = !nd && mm_all_below(ST, 6 * (size_t)nv, 250) && mm_all_below(d->Rc, 13 * (size_t)m->n, 200) &&
                        (!m->has_armature || mm_all_below(m->armature, (size_t)nv, 500));
    int unmirrored = nv; /* rows [unmirrored, nv) are on both sides of the diagonal */
    const double *armature = m->has_armature ? m->armature : NULL; /* read once, not per row */
    for (int k = m->n - 1; k >= 0; --k) { /* tips to base (004 Alg 4.2; 001 Eq 47-50) */
        const int nk = m->nv_k[k], nc = sd_node_speeds(m, nd, k), vk = m->v_index[k];
        const double *Rk = d->Rc + 13 * k;
        for (int i = 0; i < nc; ++i) {
            /* X = R^r(k) H*(k) e_i, once per speed (F = I^c S of the composite-body algorithm); a
             * modal speed's is R^rf(k)'s column */
            double X[6];
            if (i < nk) sd_rigid_inertia_mul(Rk, SW + 6 * (vk + i), X);
            else sd_flexible_composite_modal_column(nd, k, i - nk, X);
            /* M(vk + i, a) = H(a) phi(a, k) X for a = k's speeds up to vk + i and its ancestors': row
             * vk + i of the lower triangle (004 Eq 20; 001 Eq 50); the modal columns by the kinds */
            mm_row(X, ST, nv, runs, k, vk + i + 1, M + (size_t)(vk + i) * nv);
            sd_node_row_modal_entries(m, nd, k, i, X, M + (size_t)(vk + i) * nv);
            if (armature && i < nk) /* the rotors' reflected inertia, a diagonal of hinge speeds (dynamics.h) */
                M[(size_t)(vk + i) * nv + vk + i] += armature[vk + i];
        }
        if (m->parent[k] >= 0) { /* R(parent) += phi R(k) phi* (004 Eq 20; 001 Eq 47) */
            mm_add13(d->Rc + 13 * m->parent[k], Rk);
            sd_node_composite_to_parent_modes(m, nd, k, Rk);
        }
        /* rows from vk up are done (bodies come in decreasing speed order): mirror the whole blocks,
         * counted from nv down so that the groups of 4 rows left over are at column 0 (short rows) */
        if (vk <= unmirrored - MM_MIRROR_BLOCK) { /* a whole block more is done (no division per body) */
            const int block = nv - (nv - vk) / MM_MIRROR_BLOCK * MM_MIRROR_BLOCK;
            sd_mirror_lower_rows(M, nv, block, unmirrored);
            unmirrored = block;
        }
    }
    sd_mirror_lower_rows(M, nv, 0, unmirrored);
    return bounded || sd_all_finite(M, (size_t)nv * (size_t)nv); /* finite by the bound, else read */
}

SD_NOINLINE static int composite_rigid(const sd_model *m, sd_data *d, const double *q, double *M)
{
    return composite_sweeps(m, d, q, M, NULL);
}
SD_NOINLINE static int composite_nodes(const sd_model *m, sd_data *d, const double *q, double *M)
{
    return composite_sweeps(m, d, q, M, d->nodes);
}

SD_NOINLINE int sd_mass_matrix_fill(const sd_model *m, sd_data *d, const double *q, double *M)
{
    if (d->nodes) return composite_nodes(m, d, q, M); /* the two instances (node_kinds.h) */
    return composite_rigid(m, d, q, M);
}

sd_status sd_mass_matrix(const sd_model *m, sd_data *d, const double *q, double *M)
{
    SD_RUN_COMPILED(m, d, mass_matrix, (q, M));
    const sd_status st = sd_check_call(m, d, "sd_mass_matrix", q, NULL, NULL, NULL, NULL);
    if (st != SD_OK) return st;
    if (!M) return sd_data_fail(d, SD_E_ARGUMENT, "sd_mass_matrix: NULL M");
    if (sd_mass_matrix_fill(m, d, q, M)) return SD_OK;
    return sd_check_output(d, "sd_mass_matrix", "M", M, (size_t)m->nv * (size_t)m->nv, SD_CAUSE_OVERFLOW);
}
