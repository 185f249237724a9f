/*
 * src/loops/closed_dynamics.c — forward dynamics of a tree with closure constraints by the
 * Schur complement of 000 Sec 4 (Eq 45-46):
 *   1. qdd_f = M^-1 (T - C)                    the articulated-body sweep        (000 Eq 46a)
 *   2. gamma = G qdd_f + Gdot u                row rates at the free accelerations (Eq 46b)
 *      Lambda_c = G M^-1 G*                    004 Eq 59-60 (Omega = psi* H* D^-1 H psi) as one
 *                                              gather of the rows' forces on the factors of step 1
 *      lambda = -Lambda_c^+ gamma              minimum norm; the rank by the rule of rank_rule.h
 *                                              on G's rows when Lambda_c's Cholesky fails
 *   3. qdd_delta = M^-1 G* lambda              one acceleration scatter with the step-1 factors
 *                                              P, D, G and the compliance gather's H F (no Riccati
 *                                              step again, no residual gather)
 *   4. qdd = qdd_f + qdd_delta                                                       (Eq 45)
 * Why the compliance and not n_c solves with the step-1 factors: each solve is a full O(N) sweep
 * and there are n_c of them (20 for four revolute loops), while the compliance gather visits only
 * the ancestors of the constraint bodies, with one 6 x (rows reaching the body) product each.
 *
 * Inter-body forces of the closed system (000 Sec 4, last paragraphs): the constraint forces enter
 * step 3 as external forces, so f(k) = [P+ alpha+ + z+]_step1 + [P+ alpha+ + z+]_step3 (000 Eq 17
 * for each sweep, by linearity), and alpha = alpha_step1 + alpha_step3.
 *
 * Glossary: see loops_internal.h and internal.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loops_internal.h"

/* after soadyn's headers: lapacke.h brings <complex.h>, whose macro I would rename spatial.h's
 * inertia arguments */
#include <lapacke.h>

/* max without libm's fmax (a library call in the sweeps' inner loops); the inputs are finite */
static inline double max2(double a, double b) { return a > b ? a : b; }

/* Lambda_c = G M^-1 G* without forming M: with M^-1 = [I - H psi K]* D^-1 [I - H psi K]
 * (004 Lemma 11), G M^-1 G* is Omega of 004 Eq 59-60 (psi* H* D^-1 H psi) applied to the rows'
 * forces, i.e. the sum over bodies k of F(k)^T H*(k) D^-1(k) H(k) F(k) with F gathered tips to base:
 *   F(k) = sum over children j of psi(k, j) F(j) + sum over the frames f on k of Ew_f,
 *   psi(parent, j) F = phi(parent, j) (F - G(j) H(j) F)                       (004 Eq 35)
 * on the step-1 factors (G, D^-1, H*), over the ancestors of the frame bodies only, each on the
 * columns [lo, hi) of the rows that reach it. One 6 x n_c product per body replaces the
 * backward-Lyapunov scatter of Y and the per-pair products of 004 Alg 4.3 (a 6x6 congruence per
 * common ancestor, a product per pair of frames).
 * Why world axes: in one frame for all bodies (world axes, moments about the root's origin) phi is
 * the identity, so F(parent) += F - G H F with no transform of F's columns; each body's H* and G
 * columns are placed in world axes instead (2 nv(k) transforms a body, where body frames take one
 * per column: 6 for a revolute loop, 5 for a spatial one). The products H F are frame-free. The
 * origin is the root's, not the world's, so that the moments' lever arms stay the mechanism's size.
 * H F of every gather body is kept for the correction sweep (eps = H F lambda). Returns the largest
 * diagonal entry (the scale the rank is judged against), floored (see below). */

/* Gather slot i's body placement relative to its root's origin: R, and r = p - o. */
static inline const double *slot_world(const sd_loops_model *L, const sd_loops_data *w, int i, double r[3])
{
    const sd_transform *X = &w->Xw[L->kin_slot[L->fb_bodies[i]]], *root = &w->Xw[L->fb_root[i]];
    for (int j = 0; j < 3; ++j) r[j] = X->p[j] - root->p[j];
    return X->R;
}

/* One gather body's step on the columns [lo, hi) (world axes): H F into HF (nk rows of nc),
 * Lambda_c += (H F)^T D^-1 (H F) on the lower triangle, and F(parent) += F - G H F into Fp (NULL:
 * a root). The one-speed kernel is the common hinge's (revolute, prismatic): per column one dot,
 * one row of Lambda_c and one 6-vector update, with no loops over nk. (restrict: the arrays are
 * distinct, so that the row loops vectorise.) */
static void gather_one_speed(int nc, int lo, int hi, const double Hw[6], const double Gw[6], double dinv,
                             const double *restrict F, double *restrict HF, double *restrict Sc,
                             double *restrict Fp)
{
    for (int col = lo; col < hi; ++col) {
        const double *Fc = F + 6 * col;
        const double h = sd_s6_dot(Hw, Fc), th = dinv * h;
        HF[col] = h;
        double *row = Sc + (size_t)col * nc;
        for (int b = lo; b < col; ++b) row[b] += th * HF[b];
        row[col] += th * h;
        if (Fp) {
            double *out = Fp + 6 * col;
            for (int q = 0; q < 6; ++q) out[q] += Fc[q] - Gw[q] * h;
        }
    }
}

/* The same for nk speeds: Y = D^-1 H F by rows (into DHF, nk x nc), then row a of Lambda_c gets
 * sum_s (H F)(s, a) Y(s, b), each a contiguous row operation. */
static void gather_speeds(int nc, int lo, int hi, int nk, const double *Hw, const double *Gw, const double *Dinv,
                          const double *restrict F, double *restrict HF, double *restrict DHF, double *restrict Sc,
                          double *restrict Fp)
{
    for (int s = 0; s < nk; ++s)
        for (int col = lo; col < hi; ++col) HF[s * nc + col] = sd_s6_dot(Hw + 6 * s, F + 6 * col);
    for (int s = 0; s < nk; ++s) {
        double *y = DHF + s * nc;
        for (int col = lo; col < hi; ++col) y[col] = 0.0;
        for (int q = 0; q < nk; ++q) {
            const double dsq = Dinv[s * nk + q];
            const double *h = HF + q * nc;
            for (int col = lo; col < hi; ++col) y[col] += dsq * h[col];
        }
    }
    for (int a = lo; a < hi; ++a) {
        double *row = Sc + (size_t)a * nc;
        for (int s = 0; s < nk; ++s) {
            const double h = HF[s * nc + a];
            const double *y = DHF + s * nc;
            for (int b = lo; b <= a; ++b) row[b] += h * y[b];
        }
    }
    if (!Fp) return;
    for (int col = lo; col < hi; ++col) { /* F(parent) += F - G H F: phi is the identity in world axes */
        double e[6];
        for (int q = 0; q < 6; ++q) e[q] = F[6 * col + q];
        for (int s = 0; s < nk; ++s) {
            const double h = HF[s * nc + col];
            for (int q = 0; q < 6; ++q) e[q] -= Gw[6 * s + q] * h;
        }
        for (int q = 0; q < 6; ++q) Fp[6 * col + q] += e[q];
    }
}

/* The gather over nc columns: column col_of_row[row] for each row (-1: the row is left out; NULL:
 * every row, column = row), the columns [lo[i], hi[i]) reaching gather slot i. */
static double compliance_columns(const sd_model *m, sd_data *d, int nc, const int *col_of_row, const int *lo_of,
                                 const int *hi_of)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    double *Sc = w->Sc;
    w->gather_nc = nc, w->gather_lo = lo_of, w->gather_hi = hi_of;
    for (int i = 0; i < L->nfb; ++i) /* F = the frame forces on their own bodies */
        memset(w->F + (size_t)6 * nc * i + 6 * lo_of[i], 0, 6 * (size_t)(hi_of[i] - lo_of[i]) * sizeof(double));
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        double *F = w->F + (size_t)6 * nc * L->fb_slot[f->body];
        for (int j = 0; j < c->nrows; ++j) {
            const int col = col_of_row ? col_of_row[c->row + j] : c->row + j;
            if (col < 0) continue;
            for (int q = 0; q < 6; ++q) F[6 * col + q] += w->Eww[f->ew + 6 * j + q];
        }
    }
    memset(Sc, 0, (size_t)nc * (size_t)nc * sizeof(double));
    for (int i = L->nfb - 1; i >= 0; --i) { /* tips-to-base gather */
        const int k = L->fb_bodies[i], vk = m->v_index[k], p = m->parent[k];
        const int nk = w->held && w->held[k] ? 0 : m->nv_k[k]; /* a prescribed hinge: phi passes F on */
        const int lo = lo_of[i], hi = hi_of[i];
        const double *F = w->F + (size_t)6 * nc * i, *Dinv = d->Dinv + 36 * k;
        double Hw[36], Gw[36], r[3]; /* H*(k) and G(k) in world axes, 6 x nk column-major */
        const double *R = slot_world(L, w, i, r);
        for (int s = 0; s < nk; ++s) { /* a root passes nothing on: its G is not needed */
            sd_loops_motion_to_world(R, r, d->S + 6 * (vk + s), Hw + 6 * s);
            if (p >= 0) sd_loops_force_to_world(R, r, d->G + 6 * (vk + s), Gw + 6 * s);
        }
        double *HF = w->HF + (size_t)vk * nc; /* H(k) F(k): nk rows of n_c */
        double *Fp = p >= 0 ? w->F + (size_t)6 * nc * L->fb_slot[p] : NULL;
        if (nk == 1) gather_one_speed(nc, lo, hi, Hw, Gw, Dinv[0], F, HF, Sc, Fp);
        else gather_speeds(nc, lo, hi, nk, Hw, Gw, Dinv, F, HF, w->DHF, Sc, Fp);
    }
    double ref = 0.0;
    for (int a = 0; a < nc; ++a) {
        for (int b = 0; b < a; ++b) Sc[b * nc + a] = Sc[a * nc + b];
        ref = max2(ref, Sc[a * nc + a]);
    }
    /* a floor for constraints whose every frame sits on bodies the tree cannot move (a weld to a
     * body that is welded already): their compliance is round-off, and the floor keeps them rank 0.
     * No real row is this stiff: a unit force on any body moves it at least 1 / (total mass) */
    return max2(ref, 1e-14 / m->total_mass);
}

double sd_loops_compliance(const sd_model *m, sd_data *d)
{
    const sd_loops_model *L = m->loops;
    return compliance_columns(m, d, L->nrows, NULL, L->fb_lo, L->fb_hi);
}

double sd_loops_compliance_subset(const sd_model *m, sd_data *d)
{
    const sd_loops_data *w = d->loops;
    return compliance_columns(m, d, w->nsub, w->sub_col, w->fb_slo, w->fb_shi);
}

_Static_assert(sizeof(lapack_int) == sizeof(int), "the workspace keeps LAPACK's pivots as int");

/* x = A^+ b by LAPACK's pivoted Cholesky (dpstrf, rank-revealing for semi-definite matrices, a
 * Cholesky's cost): P^T A P = L L^T with L n x r, so A^+ = P L (L^T L)^-2 L^T P^T, the minimum-norm
 * solution (the permutation keeps norms). */
int sd_loops_psd_solve(sd_data *d, const double *A, int n, const double *b, double *x, double ref, double rel)
{
    sd_loops_data *w = d->loops;
    double amax = ref;
    for (int i = 0; i < n; ++i) amax = max2(amax, A[i * n + i]);
    memset(x, 0, (size_t)n * sizeof(double));
    if (!(amax > 0.0)) return 0;
    memcpy(w->Sf, A, (size_t)n * (size_t)n * sizeof(double)); /* symmetric: row = column major */
    lapack_int rank = 0;
    const lapack_int info =
        LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', n, w->Sf, n, (lapack_int *)w->piv, &rank, rel * amax, w->work);
    if (info < 0) return -1;
    const double *L = w->Sf; /* L(i, j) = Sf[i + n j], i >= j, j < r */
    int r = 0; /* every kept pivot must pass tol (dpstrf was seen to keep a first pivot below it) */
    while (r < (int)rank && L[r + (size_t)n * r] * L[r + (size_t)n * r] > rel * amax) ++r;
    double *c = w->eig, *t = w->tmp, *K = w->Kf;
    for (int i = 0; i < n; ++i) c[i] = b[w->piv[i] - 1]; /* c = P^T b */
    for (int j = 0; j < r; ++j) { /* t = L^T c */
        double s = 0.0;
        for (int i = j; i < n; ++i) s += L[i + (size_t)n * j] * c[i];
        t[j] = s;
    }
    for (int j = 0; j < r; ++j) /* K = L^T L, r x r */
        for (int k = 0; k <= j; ++k) {
            double s = 0.0;
            for (int i = j; i < n; ++i) s += L[i + (size_t)n * j] * L[i + (size_t)n * k];
            K[j * r + k] = K[k * r + j] = s;
        }
    if (r > 0 && sd_cholesky_factor(K, r, 0.0) >= 0) return -1;
    sd_cholesky_solve(K, r, t); /* t = (L^T L)^-2 L^T c */
    sd_cholesky_solve(K, r, t);
    for (int i = 0; i < n; ++i) { /* x = P L t */
        double s = 0.0;
        for (int j = 0; j < r && j <= i; ++j) s += L[i + (size_t)n * j] * t[j];
        x[w->piv[i] - 1] = s;
    }
    return r;
}

/* lambda = -Lambda_c^+ gamma: Cholesky when every pivot is clearly positive, otherwise the pivoted
 * Cholesky above, which gives the rank and the minimum-norm solution of a semi-definite system at
 * a Cholesky's cost (an eigen-decomposition costs ~10 times more, and redundant rows are the
 * common case: every planar loop closed by a full joint). Rows that are left with a residual
 * (gamma not in the range) are contradictory constraints. */
/* The size of the terms gamma is made of (row weight x body acceleration): when the free
 * accelerations already satisfy a redundant constraint, gamma is round-off of that size and must not
 * be taken for a contradiction. */
static double gamma_floor(const sd_model *m, const sd_data *d)
{
    const sd_loops_model *L = m->loops;
    double floor = 1e-300;
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        const int len = 6 * L->cons[f->constraint].nrows;
        double ew = 0.0, acc = 1.0;
        for (int i = 0; i < len; ++i) ew = max2(ew, fabs(d->loops->Ew[f->ew + i]));
        for (int r = 0; r < 6; ++r) acc = max2(acc, fabs(d->alpha[6 * f->body + r]));
        floor = max2(floor, 1e-10 * ew * acc);
    }
    return floor;
}

/* The fast path's row subset after a rank-deficient solve whose dropped rows are redundant to
 * round-off (a planar loop closed by a spatial joint): `rank` rows picked by a column-pivoted QR of
 * B^T (the kept combinations; its first pivots are the rows that carry them best), ascending, each
 * row's column among them, and per gather slot the subset columns that reach it (a contiguous range,
 * since the slot's rows are). Rows only nearly redundant get no subset: solving them exactly would
 * not give the kept combinations' answer. */
static void record_subset(const sd_model *m, sd_loops_data *w, double dropped)
{
    const sd_loops_model *L = m->loops;
    const int nc = L->nrows, r = w->rank;
    w->nsub = 0;
    if (r <= 0 || r >= nc || !(dropped <= SD_RANK_EXACT)) return;
    double *Bt = w->Sf; /* r x nc, column-major: B^T */
    for (int i = 0; i < nc; ++i)
        for (int j = 0; j < r; ++j) Bt[j + (size_t)r * i] = w->basis[(size_t)j * nc + i];
    memset(w->piv, 0, (size_t)nc * sizeof(int));
    if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, r, nc, Bt, r, (lapack_int *)w->piv, w->eig, w->work, 4 * nc + 1) != 0)
        return;
    for (int i = 0; i < nc; ++i) w->sub_col[i] = -1;
    for (int j = 0; j < r; ++j) w->sub_col[w->piv[j] - 1] = 0;
    for (int i = 0; i < nc; ++i)
        if (w->sub_col[i] == 0) w->sub_col[i] = w->nsub, w->sub[w->nsub++] = i;
    for (int i = 0; i < L->nfb; ++i) { /* columns of the kept rows below lo, below hi */
        int slo = 0, shi = 0;
        for (int j = 0; j < w->nsub; ++j) slo += w->sub[j] < L->fb_lo[i], shi += w->sub[j] < L->fb_hi[i];
        w->fb_slo[i] = slo;
        w->fb_shi[i] = shi;
    }
}

/* Zero the columns of G (n_c x nv, row-major) of the prescribed hinges' speeds: with their
 * accelerations given, only the free speeds' columns say which rows are independent. */
static void held_columns_zero(const sd_model *m, const sd_loops_data *w, double *G)
{
    if (!w->held) return;
    for (int k = 0; k < m->n; ++k)
        if (w->held[k])
            for (int i = 0; i < m->loops->nrows; ++i)
                for (int s = 0; s < m->nv_k[k]; ++s) G[(size_t)i * m->nv + m->v_index[k] + s] = 0.0;
}

/* lambda = -B (B^T Lambda_c B)^-1 B^T gamma with B the kept row combinations of the rank rule
 * (rank_rule.h, on G's rows): the multipliers of minimum norm when rows are exactly redundant (B
 * spans Lambda_c's range), and when they are only nearly so, those of the combinations the embedded
 * layer keeps too. Returns the largest dropped singular value (relative), or -1 on failure. */
static double solve_kept_combinations(const sd_model *m, sd_data *d)
{
    sd_loops_data *w = d->loops;
    const int nc = m->loops->nrows;
    double dropped = 0.0;
    sd_loops_dense_jacobian(m, d, w->dense);
    held_columns_zero(m, w, w->dense);
    const int r = sd_loops_rank_of_rows(m, w, &dropped);
    if (r < 0) return -1.0;
    w->rank = r;
    const double *B = w->basis, *Sc = w->Sc;
    double *K = w->Kf, *y = w->tmp, *SB = w->Sf; /* SB = Lambda_c B, nc x r column-major */
    for (int j = 0; j < r; ++j)
        for (int i = 0; i < nc; ++i) {
            double t = 0.0;
            for (int k = 0; k < nc; ++k) t += Sc[i * nc + k] * B[(size_t)j * nc + k];
            SB[(size_t)j * nc + i] = t;
        }
    for (int a = 0; a < r; ++a) {
        for (int b = 0; b <= a; ++b) {
            double t = 0.0;
            for (int i = 0; i < nc; ++i) t += B[(size_t)a * nc + i] * SB[(size_t)b * nc + i];
            K[a * r + b] = K[b * r + a] = t;
        }
        double t = 0.0;
        for (int i = 0; i < nc; ++i) t -= B[(size_t)a * nc + i] * w->gamma[i];
        y[a] = t;
    }
    if (r > 0 && sd_cholesky_factor(K, r, 0.0) >= 0) return -1.0;
    sd_cholesky_solve(K, r, y);
    for (int i = 0; i < nc; ++i) {
        double t = 0.0;
        for (int j = 0; j < r; ++j) t += B[(size_t)j * nc + i] * y[j];
        w->lambda[i] = t;
    }
    return dropped;
}

sd_status sd_loops_solve_multipliers(const sd_model *m, sd_data *d, double ref)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nc = L->nrows;
    double scale = 0.0, gnorm = 0.0;
    for (int i = 0; i < nc; ++i) scale = max2(scale, fabs(w->Sc[i * nc + i]));
    for (int i = 0; i < nc; ++i) gnorm = max2(gnorm, fabs(w->gamma[i]));
    memcpy(w->Sf, w->Sc, (size_t)nc * (size_t)nc * sizeof(double));
    /* a mechanism keeps its redundant rows from one call to the next: after a rank-deficient solve
     * the plain Cholesky, which would fail again, is not tried */
    if ((w->rank < 0 || w->rank == nc) && sd_cholesky_factor(w->Sf, nc, 1e-10 * ref) < 0) {
        for (int i = 0; i < nc; ++i) w->lambda[i] = -w->gamma[i];
        sd_cholesky_solve(w->Sf, nc, w->lambda);
        w->rank = nc;
        w->nsub = 0;
        return SD_OK;
    }
    const double dropped = solve_kept_combinations(m, d);
    if (dropped < 0.0)
        return sd_data_fail(d, SD_E_SINGULAR, "constraint compliance G M^-1 G*: the rank-revealing solve failed");
    /* consistency: Lambda_c lambda + gamma = 0 must hold (gamma in the range) */
    double lnorm = 0.0, worst = 0.0;
    for (int i = 0; i < nc; ++i) lnorm = max2(lnorm, fabs(w->lambda[i]));
    const double rtol = 1e-6 * (gnorm + scale * lnorm) + gamma_floor(m, d);
    for (int i = 0; i < nc; ++i) {
        double r = w->gamma[i];
        for (int j = 0; j < nc; ++j) r += w->Sc[i * nc + j] * w->lambda[j];
        w->rhs[i] = r;
        worst = max2(worst, fabs(r));
    }
    if (worst <= rtol) {
        record_subset(m, w, dropped);
        return SD_OK;
    }
    char names[200] = "";
    size_t used = 0;
    for (int c = 0; c < L->ncons; ++c) {
        const sd_loop_constraint *con = &L->cons[c];
        int bad = 0;
        for (int i = 0; i < con->nrows; ++i) bad |= fabs(w->rhs[con->row + i]) > rtol;
        if (bad && used + strlen(con->name) + 4 < sizeof names) {
            used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", used ? ", " : "", con->name);
        }
    }
    return sd_data_fail(d, SD_E_SINGULAR,
                        "constraints %s contradict each other%s: no accelerations satisfy them (rank %d of %d)", names,
                        w->held ? " or the prescribed accelerations" : "", w->rank, nc);
}

/* qdd_delta = M^-1 G* lambda with the step-1 factors (004 Eq 58 with T = 0, no velocity terms and
 * the constraint forces F_f = Ew_f lambda as external forces). Its gather needs no sweep of its own:
 * the residual forces are z(k) = -F(k) lambda with F(k) of the compliance gather, so
 * eps(k) = -H z(k) = H F(k) lambda, nu = D^-1 eps on the gather bodies and 0 elsewhere. Then the
 * scatter alpha+ = phi* alpha(parent) (0 at the base), qdd = nu - G* alpha+, alpha = alpha+ + H* qdd
 * over every body. Adds qdd_delta to x and alpha_delta to d->alpha (add_alpha), and the sweep's
 * forces P+ alpha+ + z+ (000 Eq 17, z+ = z + G eps) to d->f (want_forces). */
void sd_loops_correction_sweep(const sd_model *m, sd_data *d, const double *lambda, double *x, int want_forces,
                               int add_alpha)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nc = w->gather_nc;
    for (int k = 0; k < m->n; ++k) { /* base-to-tips scatter: 004 Eq 58e-g */
        const int nk = m->nv_k[k], vk = m->v_index[k], p = m->parent[k], slot = L->fb_slot[k];
        const double *Sk = d->S + 6 * vk, *Gk = d->G + 6 * vk, *Dinv = d->Dinv + 36 * k;
        const double *HF = w->HF + (size_t)vk * nc;
        double ap[6] = {0, 0, 0, 0, 0, 0}, eps[6] = {0, 0, 0, 0, 0, 0}, qd[6];
        double *alpha = w->alpha + 6 * k;
        if (p >= 0) sd_motion_to_child_plane(&d->Xup[k], d->hinge_plane[k], w->alpha + 6 * p, ap);
        for (int s = 0; slot >= 0 && s < nk; ++s) {
            double t = 0.0;
            for (int col = w->gather_lo[slot]; col < w->gather_hi[slot]; ++col) t += HF[s * nc + col] * lambda[col];
            eps[s] = t;
        }
        if (nk == 1) { /* the common hinge's kernel, as the compliance gather's */
            qd[0] = Dinv[0] * eps[0] - sd_s6_dot(Gk, ap);
            for (int q = 0; q < 6; ++q) alpha[q] = ap[q] + Sk[q] * qd[0];
            x[vk] += qd[0];
        } else {
            sd_dinv_mul(Dinv, nk, eps, qd); /* nu */
            for (int s = 0; s < nk; ++s) qd[s] -= sd_s6_dot(Gk + 6 * s, ap);
            for (int q = 0; q < 6; ++q) alpha[q] = ap[q];
            for (int s = 0; s < nk; ++s) {
                for (int q = 0; q < 6; ++q) alpha[q] += Sk[6 * s + q] * qd[s];
                x[vk + s] += qd[s];
            }
        }
        if (add_alpha)
            for (int q = 0; q < 6; ++q) d->alpha[6 * k + q] += alpha[q];
        if (want_forces) { /* 000 Eq 17 for this sweep, added to step 1's */
            double f[6], zplus[6] = {0, 0, 0, 0, 0, 0};
            if (slot >= 0) { /* z+ = -F lambda (back from world axes) + G eps */
                const double *F = w->F + (size_t)6 * nc * slot;
                double zw[6] = {0, 0, 0, 0, 0, 0}, r[3], rxf[3], n[3];
                for (int col = w->gather_lo[slot]; col < w->gather_hi[slot]; ++col)
                    for (int q = 0; q < 6; ++q) zw[q] -= F[6 * col + q] * lambda[col];
                const double *R = slot_world(L, w, slot, r);
                sd_v3_cross(r, zw + 3, rxf);
                for (int q = 0; q < 3; ++q) n[q] = zw[q] - rxf[q];
                sd_m3t_mul_v(R, n, zplus);
                sd_m3t_mul_v(R, zw + 3, zplus + 3);
                for (int s = 0; s < nk; ++s)
                    for (int q = 0; q < 6; ++q) zplus[q] += Gk[6 * s + q] * eps[s];
            }
            sd_sym6_mul(d->Pplus + 36 * k, ap, f);
            for (int q = 0; q < 6; ++q) d->f[6 * k + q] += f[q] + zplus[q];
        }
    }
}

/* The fast path for redundant rows (the qdd only): the rows recorded by the last rank-deficient
 * solve are a basis of the rest in a real mechanism (a planar four-bar closed by a 5-row revolute
 * has rank 2 at every configuration), so lambda_s = -Lambda_s^-1 gamma_s over them alone (plain
 * Cholesky, relative pivot test) gives the same G* lambda, hence the same qdd, for a compliance
 * gather and a factorisation on rank columns instead of n_c. It is accepted only when every row,
 * kept or not, has G qdd + Gdot u = 0 at the result (the full path's consistency test); otherwise
 * (the subset lost rank here, or the rows contradict each other) step 1's results are restored and
 * the full rank-revealing path decides. Returns 1 when qdd (and d->alpha) hold the answer. */
static int fast_subset_solve(const sd_model *m, sd_data *d, double *qdd)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nc = L->nrows, ns = w->nsub;
    const double ref = sd_loops_compliance_subset(m, d);
    memcpy(w->Sf, w->Sc, (size_t)ns * (size_t)ns * sizeof(double));
    if (sd_cholesky_factor(w->Sf, ns, 1e-10 * ref) >= 0) return 0;
    double *ls = w->tmp;
    for (int j = 0; j < ns; ++j) ls[j] = -w->gamma[w->sub[j]];
    sd_cholesky_solve(w->Sf, ns, ls);
    double gnorm = 0.0, scale = 0.0, lnorm = 0.0;
    for (int i = 0; i < nc; ++i) gnorm = max2(gnorm, fabs(w->gamma[i]));
    for (int j = 0; j < ns; ++j) scale = max2(scale, w->Sc[j * ns + j]), lnorm = max2(lnorm, fabs(ls[j]));
    memset(w->lambda, 0, (size_t)nc * sizeof(double));
    for (int j = 0; j < ns; ++j) w->lambda[w->sub[j]] = ls[j];
    memcpy(w->qdd_save, qdd, (size_t)m->nv * sizeof(double));
    memcpy(w->alpha_save, d->alpha, 6 * (size_t)m->n * sizeof(double));
    sd_loops_correction_sweep(m, d, ls, qdd, 0, 1);
    /* the rates at the result are gamma + G qdd_delta, G qdd_delta = sum_f Ew_f^T alpha_delta(k_f)
     * (G u = sum_f Ew_f^T V(k_f), couplings included: their frames' weights make it so) */
    memcpy(w->rhs, w->gamma, (size_t)nc * sizeof(double));
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_frame *f = &L->frames[fi];
        const sd_loop_constraint *c = &L->cons[f->constraint];
        for (int i = 0; i < c->nrows; ++i)
            w->rhs[c->row + i] += sd_s6_dot(w->Ew + f->ew + 6 * i, w->alpha + 6 * f->body);
    }
    const double rtol = 1e-6 * (gnorm + scale * lnorm) + gamma_floor(m, d);
    double worst = 0.0;
    for (int i = 0; i < nc; ++i) worst = max2(worst, fabs(w->rhs[i]));
    if (worst <= rtol) {
        w->rank = ns;
        return 1;
    }
    memcpy(qdd, w->qdd_save, (size_t)m->nv * sizeof(double));
    memcpy(d->alpha, w->alpha_save, 6 * (size_t)m->n * sizeof(double));
    return 0;
}

/* Why a dense compliance on flexible models: a flexible node eliminates its modes inside the
 * Riccati step (001 Eq 62), so psi of 004 Eq 35 is no longer phi (I - G H) on the per-body arrays
 * that compliance_columns reads. O(nv^3); the one place to switch to an O(N) M^-1 solve once the
 * engine offers it on flexible models. Calls sd_mass_matrix, which recomputes the placements and
 * clears the velocities: the callers have used them already. */
sd_status sd_loops_compliance_dense(const sd_model *m, sd_data *d, const double *q, double *ref)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    const int nv = m->nv, nc = L->nrows;
    sd_loops_dense_jacobian(m, d, w->dense); /* at the placements of step 1 */
    sd_status st = sd_mass_matrix(m, d, q, w->Mff);
    if (st != SD_OK) return st;
    int nf = 0;
    for (int j = 0; j < nv; ++j) {
        const int k = m->v_body[j];
        const int hinge = j >= m->v_index[k] && j < m->v_index[k] + m->nv_k[k];
        if (!(w->held && w->held[k] && hinge)) w->free_speed[nf++] = j;
    }
    w->nfree = nf;
    double *A = w->Mff; /* M_ff packed in place (row i of M_ff only reads rows >= i of M) */
    for (int a = 0; a < nf; ++a)
        for (int b = 0; b < nf; ++b) A[a * nf + b] = w->Mff[(size_t)w->free_speed[a] * nv + w->free_speed[b]];
    double mmax = 0.0;
    for (int a = 0; a < nf; ++a) mmax = max2(mmax, A[a * nf + a]);
    if (nf > 0 && sd_cholesky_factor(A, nf, 1e-13 * mmax) >= 0)
        return sd_data_fail(d, SD_E_SINGULAR,
                            "sd_closed_loop_forward_dynamics: the mass matrix over the free speeds is singular (a "
                            "massless subtree that a free hinge moves)");
    memset(w->Z, 0, (size_t)nc * (size_t)nv * sizeof(double));
    for (int c = 0; c < nc; ++c) {
        double *z = w->Z + (size_t)c * nv;
        for (int a = 0; a < nf; ++a) z[a] = w->dense[(size_t)c * nv + w->free_speed[a]];
        sd_cholesky_solve(A, nf, z); /* packed on the free speeds, scattered below */
        for (int a = nf - 1; a >= 0; --a) {
            const double v = z[a];
            z[a] = 0.0;
            z[w->free_speed[a]] = v;
        }
    }
    double *Sc = w->Sc, r = 0.0;
    for (int a = 0; a < nc; ++a)
        for (int b = 0; b <= a; ++b) {
            double t = 0.0;
            for (int j = 0; j < nv; ++j) t += w->dense[(size_t)a * nv + j] * w->Z[(size_t)b * nv + j];
            Sc[a * nc + b] = Sc[b * nc + a] = t;
            if (a == b) r = max2(r, t);
        }
    *ref = max2(r, 1e-14 / m->total_mass); /* the floor of compliance_columns */
    return SD_OK;
}

/* The engine path of the forward dynamics (the top of this file, steps 1-4), for flexible models
 * and prescribed hinges: the compliance by the gather on step 1's factors (a prescribed hinge
 * passes its row forces on unprojected: 000 Sec 3, P+ = P) or densely (flexible models), and step 3
 * as a second forward-dynamics sweep with the constraint forces as loads, which gives qdd, the
 * prescribed hinges' forces and every inter-body force of the closed system at once (000 Sec 4: the
 * multipliers are the cut joints' forces, external to the tree). tau_io: nv, tau on input (the
 * prescribed entries ignored), the prescribed hinges' forces on output. */
static sd_status engine_path(const sd_model *m, sd_data *d, const double *q, const double *u, double *tau_io,
                             const double *f_ext, double *qdd, const sd_fd_options *o)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = d->loops;
    double ref = 0.0;
    sd_status st;
    if (m->nflex > 0) {
        if ((st = sd_loops_compliance_dense(m, d, q, &ref)) != SD_OK) return st;
    } else
        ref = sd_loops_compliance(m, d);
    if ((st = sd_loops_solve_multipliers(m, d, ref)) != SD_OK) return st;
    if (tau_io) memcpy(w->tau_work, tau_io, (size_t)m->nv * sizeof(double));
    else memset(w->tau_work, 0, (size_t)m->nv * sizeof(double));
    sd_loops_constraint_loads(m, d, w->lambda, f_ext, w->fx, w->tau_work);
    if ((st = sd_forward_dynamics_ex(m, d, q, u, w->tau_work, w->fx, qdd, o)) != SD_OK) return st;
    if (o->prescribed)
        for (int k = 0; k < m->n; ++k)
            if (o->prescribed[k])
                for (int i = 0; i < m->nv_k[k]; ++i) tau_io[m->v_index[k] + i] = w->tau_work[m->v_index[k] + i];
    return sd_check_output(d, "sd_closed_loop_forward_dynamics", "lambda", w->lambda, (size_t)L->nrows,
                           SD_CAUSE_TINY_INERTIA);
}

sd_status sd_closed_loop_forward_dynamics(const sd_model *m, sd_data *d, const double *q, const double *u,
                                          const double *tau, const double *f_ext, double *qdd, double *lambda,
                                          const sd_closed_loop_options *options)
{
    const char *fn = "sd_closed_loop_forward_dynamics";
    sd_fd_options o = {0};
    o.interbody_forces = options && options->interbody_forces;
    o.prescribed = options ? options->prescribed : NULL;
    if (!m || !d) return SD_E_ARGUMENT;
    if (o.prescribed && !options->tau_out)
        return sd_data_fail(d, SD_E_ARGUMENT, "%s: prescribed hinges need tau_out for their forces", fn);
    if (d->loops) d->loops->lambda_valid = 0, d->loops->held = NULL;
    /* step 1; with prescribed hinges their forces are written, so it works on tau_out */
    double *tau_io = (double *)tau; /* only read without prescribed hinges */
    if (o.prescribed) {
        if (!tau) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL tau", fn);
        if (tau != options->tau_out) memmove(options->tau_out, tau, (size_t)m->nv * sizeof(double));
        tau_io = options->tau_out;
    }
    sd_status st = sd_forward_dynamics_ex(m, d, q, u, tau_io, f_ext, qdd, &o);
    if (st != SD_OK || !m->loops) return st;
    const sd_loops_model *L = m->loops;
    sd_loops_world_placements(m, d);
    if ((st = sd_loops_frame_weights(m, d)) != SD_OK) return st;
    double a0[6];
    sd_base_acceleration(m, a0);
    sd_loops_row_rates(m, d, d->alpha, a0, qdd, d->loops->gamma); /* gamma = G qdd_f + Gdot u */
    if (m->nflex > 0 || o.prescribed) {
        d->loops->held = o.prescribed;
        st = engine_path(m, d, q, u, tau_io, f_ext, qdd, &o);
        d->loops->held = NULL;
        if (st != SD_OK) return st;
    } else {
        const int multipliers_wanted = lambda || o.interbody_forces;
        if (!multipliers_wanted && d->loops->nsub > 0 && fast_subset_solve(m, d, qdd)) {
            /* lambda solves the rows but is not the minimum-norm one: not readable as forces */
            return sd_check_output(d, fn, "qdd", qdd, (size_t)m->nv, SD_CAUSE_TINY_INERTIA);
        }
        const double ref = sd_loops_compliance(m, d);
        if ((st = sd_loops_solve_multipliers(m, d, ref)) != SD_OK) return st;
        sd_loops_correction_sweep(m, d, d->loops->lambda, qdd, o.interbody_forces, 1);
        if ((st = sd_check_output(d, fn, "lambda", d->loops->lambda, (size_t)L->nrows, SD_CAUSE_TINY_INERTIA)) !=
                SD_OK ||
            (st = sd_check_output(d, fn, "qdd", qdd, (size_t)m->nv, SD_CAUSE_TINY_INERTIA)) != SD_OK)
            return st;
    }
    d->loops->lambda_valid = 1;
    if (lambda) memcpy(lambda, d->loops->lambda, (size_t)L->nrows * sizeof(double));
    return SD_OK;
}

int sd_closed_loop_rank(const sd_data *d) { return d && d->loops ? d->loops->rank : -1; }

sd_status sd_constraint_force(const sd_model *m, const sd_data *d, int ci, sd_constraint_frame frame, double f[6])
{
    if (!m || !d || !f || !m->loops || !d->loops || ci < 0 || ci >= m->loops->ncons) return SD_E_ARGUMENT;
    if (!d->loops->lambda_valid) return SD_E_ARGUMENT; /* no closed-loop call computed lambda */
    const sd_loop_constraint *c = &m->loops->cons[ci];
    const double *lam = d->loops->lambda + c->row;
    memset(f, 0, 6 * sizeof(double));
    if (c->type == SD_CONSTRAINT_COUPLING) {
        f[0] = lam[0];
        f[1] = -c->ratio * lam[0];
        return SD_OK;
    }
    sd_transform XA, XB;
    sd_loops_frame_world(m, d, ci, 0, &XA);
    sd_loops_frame_world(m, d, ci, 1, &XB);
    double world[6] = {0, 0, 0, 0, 0, 0};
    if (c->type == SD_CONSTRAINT_DISTANCE) { /* lambda e on B at its frame's origin */
        double dv[3];
        for (int i = 0; i < 3; ++i) dv[i] = XB.p[i] - XA.p[i];
        const double len = sd_v3_norm(dv);
        for (int i = 0; i < 3; ++i) world[3 + i] = lam[0] * dv[i] / len;
    } else { /* lambda's entries are moments and forces along F_A's axes */
        double local[6] = {0, 0, 0, 0, 0, 0};
        for (int i = 0; i < c->nsel; ++i) local[c->sel[i]] = lam[i];
        sd_m3_mul_v(XA.R, local, world);
        sd_m3_mul_v(XA.R, local + 3, world + 3);
    }
    if (frame == SD_CONSTRAINT_FRAME_WORLD) {
        memcpy(f, world, sizeof world);
    } else {
        sd_m3t_mul_v(XA.R, world, f);
        sd_m3t_mul_v(XA.R, world + 3, f + 3);
    }
    return SD_OK;
}
