/*
 * tests/flex/test_flex_body.c — one flexible body's node operations (src/flex/flex_body.c) against
 * independent computations on random bodies (random nodes, masses, optional rotary inertias, random
 * modes, 1..10 modes (11..13 for the fused calls), full and linearised models):
 *   - M_m equals sum_j J_j^T diag(J_j, m_j 1) J_j + the rigid part, with the node velocity maps
 *     J_j = [1 0 Q_j; -[l_j x] 1 P_j] built here (001 Eq 23-25), at random eta (full) and eta = 0
 *     (linearised);
 *   - b_m equals the node-by-node Newton-Euler sum: sum_j J_j^T [0; m_j a_j] with the classical node
 *     acceleration a_j = omega x v + omega x (omega x l_j) + 2 omega x ldot_j, the nodal moments
 *     omega x J_j omega_j and the rigid part's V x* M V;
 *   - b_m equals the Boltzmann-Hamel form of the Lagrangian of 1/2 chi^T M_m chi with dM_m/d eta by
 *     central differences of sd_flex_mass, and chi^T b_m = 1/2 chi^T dM_m/dt chi (power balance);
 *   - S_t against central differences of the node pose, the node bias against central differences
 *     of S_t eta-dot along eta(t) = eta + t eta-dot, for small (series) and large rotations;
 *   - the fused calls (sd_flex_mass_bias, sd_flex_node_motion) equal the single ones (to 1e-14, and
 *     bit for bit);
 *   - a free body (no gravity, no damping) integrated with RK4 on M_m chi-dot + b_m + [0; K eta] = 0
 *     keeps 1/2 chi^T M_m chi + 1/2 eta^T K eta (full model: the bias is the energy's own);
 *   - the elastic force and strain energy; every validation error names the body and the file.
 */
#include <stdint.h>
#include <string.h>

#include <soadyn/flex.h>
#include <soadyn/spatial.h>

#include "flex/flex_body.h"
#include "internal.h"
#include "test_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) /* uniform in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static int irand(int lo, int hi) { return lo + (int)((urand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1); }

#define MAXN 12
#define MAXM 13       /* storage: test_fused_many_modes goes past the fused kernels' fixed instances (1 .. 10) */
#define TRIAL_MODES 10 /* the random trials' modes: 1 .. TRIAL_MODES */
#define MAXN6 (6 + MAXM)

typedef struct rbody {
    int n, nm;
    double pos[3 * MAXN], mass[MAXN], inertia[9 * MAXN], modes[6 * MAXN * MAXM], K[MAXM * MAXM], D[MAXM * MAXM];
    int with_inertia, with_damping;
    double rm, rc[3], rI[9];
    sd_flex_desc d;
} rbody;

/* A = B B^T * scale with B n x k random, plus shift on the diagonal. */
static void random_psd(int n, int k, double scale, double shift, double *A)
{
    double B[MAXM * MAXM];
    for (int i = 0; i < n * k; ++i) B[i] = urand();
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int c = 0; c < k; ++c) s += B[i * k + c] * B[j * k + c];
            A[i * n + j] = scale * s + (i == j) * shift;
        }
}

static void make_body(rbody *b, int nm, int with_inertia, sd_flex_mass_model model)
{
    memset(b, 0, sizeof *b);
    b->nm = nm;
    b->n = 1 + nm / 3 + irand(0, 4);
    if (b->n > MAXN) b->n = MAXN;
    b->with_inertia = with_inertia;
    b->with_damping = urand() > 0.0;
    for (int j = 0; j < b->n; ++j) {
        for (int a = 0; a < 3; ++a) b->pos[3 * j + a] = 2.0 * urand();
        b->mass[j] = 1.1 + urand();
        random_psd(3, 3, 0.05, 0.0, b->inertia + 9 * j);
    }
    for (int i = 0; i < 6 * b->n * nm; ++i) b->modes[i] = 0.5 * urand();
    random_psd(nm, nm, 3.0, 0.1, b->K);
    random_psd(nm, nm, 0.2, 0.0, b->D);
    b->rm = 1.5 + urand();
    for (int a = 0; a < 3; ++a) b->rc[a] = 0.3 * urand();
    random_psd(3, 3, 0.1, 0.05, b->rI);
    sd_flex_desc_init(&b->d);
    b->d.n_nodes = b->n;
    b->d.node_position = b->pos;
    b->d.node_mass = b->mass;
    b->d.node_inertia = with_inertia ? b->inertia : NULL;
    b->d.n_modes = nm;
    b->d.modes = b->modes;
    b->d.stiffness = b->K;
    b->d.damping = b->with_damping ? b->D : NULL;
    b->d.mass_model = model;
    b->d.source_file = "random.json";
}

static const double *Q_of(const rbody *b, int j, int r) { return b->modes + (size_t)r * 6 * b->n + 6 * j; }

/* l_j = l0_j + P_j eta (eta NULL: l0_j) and ldot_j = P_j eta-dot. */
static void node_position(const rbody *b, int j, const double *eta, double l[3])
{
    for (int a = 0; a < 3; ++a) l[a] = b->pos[3 * j + a];
    if (eta)
        for (int r = 0; r < b->nm; ++r)
            for (int a = 0; a < 3; ++a) l[a] += Q_of(b, j, r)[3 + a] * eta[r];
}

/* J_j (6 x n6 row-major): [omega_j; v_j] = J_j chi, 001 Eq 23. */
static void node_jacobian(const rbody *b, int j, const double *eta, double *J)
{
    const int n6 = 6 + b->nm;
    double l[3];
    node_position(b, j, eta, l);
    memset(J, 0, sizeof(double) * 6 * (size_t)n6);
    for (int a = 0; a < 3; ++a) {
        J[a * n6 + a] = 1.0;
        J[(3 + a) * n6 + 3 + a] = 1.0;
    }
    double L[9];
    sd_m3_skew(l, L);
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) J[(3 + a) * n6 + c] = -L[3 * a + c];
    for (int r = 0; r < b->nm; ++r)
        for (int a = 0; a < 6; ++a) J[a * n6 + 6 + r] = Q_of(b, j, r)[a];
}

static void ref_mass(const rbody *b, const double *eta, double *M)
{
    const int n6 = 6 + b->nm;
    double R6[36];
    sd_inertia_from_com(b->rm, b->rc, b->rI, R6);
    memset(M, 0, sizeof(double) * (size_t)n6 * n6);
    for (int i = 0; i < 6; ++i)
        for (int k = 0; k < 6; ++k) M[i * n6 + k] = R6[6 * i + k];
    double J[6 * MAXN6];
    for (int j = 0; j < b->n; ++j) {
        node_jacobian(b, j, eta, J);
        double Ms[36] = {0};
        for (int a = 0; a < 3; ++a) {
            for (int c = 0; c < 3; ++c) Ms[6 * a + c] = b->with_inertia ? b->inertia[9 * j + 3 * a + c] : 0.0;
            Ms[6 * (3 + a) + 3 + a] = b->mass[j];
        }
        for (int p = 0; p < n6; ++p)
            for (int q = 0; q < n6; ++q) {
                double s = 0.0;
                for (int x = 0; x < 6; ++x)
                    for (int y = 0; y < 6; ++y) s += J[x * n6 + p] * Ms[6 * x + y] * J[y * n6 + q];
                M[p * n6 + q] += s;
            }
    }
}

/* Node by node: sum_j J_j^T [omega x J_j omega_j (rigid rows only); m_j a_j] + V x* M_rigid V. */
static void ref_bias(const rbody *b, const double *eta, const double *ed, const double V[6], double *bm)
{
    const int n6 = 6 + b->nm;
    const double *w = V, *v = V + 3;
    double R6[36], MV[6], VxMV[6];
    sd_inertia_from_com(b->rm, b->rc, b->rI, R6);
    for (int i = 0; i < 6; ++i) {
        MV[i] = 0.0;
        for (int k = 0; k < 6; ++k) MV[i] += R6[6 * i + k] * V[k];
    }
    sd_force_cross(V, MV, VxMV);
    memset(bm, 0, sizeof(double) * (size_t)n6);
    for (int i = 0; i < 6; ++i) bm[i] = VxMV[i];
    double J[6 * MAXN6];
    for (int j = 0; j < b->n; ++j) {
        double l[3], ld[3] = {0, 0, 0}, wj[3] = {w[0], w[1], w[2]};
        node_position(b, j, eta, l);
        for (int r = 0; r < b->nm; ++r)
            for (int a = 0; a < 3; ++a) {
                ld[a] += Q_of(b, j, r)[3 + a] * ed[r];
                wj[a] += Q_of(b, j, r)[a] * ed[r];
            }
        double wxv[3], wxl[3], wxwxl[3], wxld[3], aj[3];
        sd_v3_cross(w, v, wxv);
        sd_v3_cross(w, l, wxl);
        sd_v3_cross(w, wxl, wxwxl);
        sd_v3_cross(w, ld, wxld);
        for (int a = 0; a < 3; ++a) aj[a] = wxv[a] + wxwxl[a] + 2.0 * wxld[a];
        node_jacobian(b, j, eta, J);
        for (int p = 0; p < n6; ++p)
            for (int a = 0; a < 3; ++a) bm[p] += J[(3 + a) * n6 + p] * b->mass[j] * aj[a];
        if (b->with_inertia) {
            double Jw[3], g[3];
            sd_m3_mul_v(b->inertia + 9 * j, wj, Jw);
            sd_v3_cross(w, Jw, g);
            for (int a = 0; a < 3; ++a) bm[a] += g[a];
        }
    }
}

static sd_flex_body *new_body(const rbody *b, const char *name)
{
    sd_error err = {0};
    sd_flex_body *fb = sd_flex_body_new(&b->d, b->rm, b->rc, b->rI, name, &err);
    if (!fb) fprintf(stderr, "unexpected failure: %s\n", err.message);
    CHECK(fb != NULL);
    return fb;
}

static void test_mass_and_bias(void)
{
    double worst_M = 0.0, worst_b = 0.0, worst_L = 0.0, worst_P = 0.0;
    for (int trial = 0; trial < 200; ++trial) {
        const int nm = 1 + trial % TRIAL_MODES;
        const sd_flex_mass_model model = (trial / TRIAL_MODES) % 2 ? SD_FLEX_LINEARISED : SD_FLEX_FULL;
        rbody b;
        make_body(&b, nm, (trial / (2 * TRIAL_MODES)) % 2, model);
        sd_flex_body *fb = new_body(&b, "link");
        if (!fb) continue;
        const int n6 = 6 + nm;
        CHECK(sd_flex_body_nmodes(fb) == nm && sd_flex_body_nnodes(fb) == b.n);
        CHECK(sd_flex_body_mass_model(fb) == model);
        CHECK(sd_flex_body_node_position(fb, b.n - 1)[2] == b.pos[3 * b.n - 1]);
        CHECK(sd_flex_body_size(fb) > (size_t)n6 * n6 * sizeof(double));
        double eta[MAXM], ed[MAXM], V[6], chi[MAXN6];
        for (int r = 0; r < nm; ++r) { eta[r] = 0.4 * urand(); ed[r] = 2.0 * urand(); }
        for (int i = 0; i < 6; ++i) V[i] = 2.0 * urand();
        memcpy(chi, V, sizeof V);
        memcpy(chi + 6, ed, sizeof(double) * nm);
        const double *eta_ref = model == SD_FLEX_FULL ? eta : NULL;

        double M[MAXN6 * MAXN6], Mr[MAXN6 * MAXN6];
        sd_flex_mass(fb, eta, M);
        ref_mass(&b, eta_ref, Mr);
        const double eM = test_rel_diff(M, Mr, n6 * n6);
        CHECK_ARRAY_CLOSE(M, Mr, n6 * n6, 1e-12, "M_m vs sum J_j^T M_j J_j");
        if (eM > worst_M) worst_M = eM;
        int sym = 1;
        for (int i = 0; i < n6; ++i)
            for (int k = 0; k < n6; ++k) sym &= M[i * n6 + k] == M[k * n6 + i];
        CHECK(sym);

        double bm[MAXN6], br[MAXN6];
        sd_flex_bias(fb, eta, ed, V, bm);
        ref_bias(&b, eta_ref, ed, V, br);
        const double eb = test_rel_diff(bm, br, n6);
        CHECK_ARRAY_CLOSE(bm, br, n6, 1e-12, "b_m vs node-by-node Newton-Euler");
        if (eb > worst_b) worst_b = eb;
        { /* the fused call (one pass over the modal integrals, its own instance per mode count: a
             * compiler may contract its sums into fused multiply-adds differently) gives the same numbers */
            double Mf[MAXN6 * MAXN6], bf[MAXN6];
            sd_flex_mass_bias(fb, eta, ed, V, Mf, bf);
            CHECK_ARRAY_CLOSE(Mf, M, n6 * n6, 1e-14, "sd_flex_mass_bias's M_m vs sd_flex_mass");
            CHECK_ARRAY_CLOSE(bf, bm, n6, 1e-14, "sd_flex_mass_bias's b_m vs sd_flex_bias");
        }

        double Pdot = 0.0; /* chi^T b_m */
        for (int i = 0; i < n6; ++i) Pdot += chi[i] * bm[i];
        if (model == SD_FLEX_FULL) {
            /* Boltzmann-Hamel: b = [V x* (M chi)_R; 0] + Mdot chi - [0; 1/2 chi^T dM/deta_r chi] */
            const double h = 1e-6;
            double dM[MAXM][MAXN6 * MAXN6], Mdot[MAXN6 * MAXN6] = {0}, e2[MAXM];
            for (int r = 0; r < nm; ++r) {
                double Mp[MAXN6 * MAXN6], Mm[MAXN6 * MAXN6];
                memcpy(e2, eta, sizeof(double) * nm);
                e2[r] = eta[r] + h;
                sd_flex_mass(fb, e2, Mp);
                e2[r] = eta[r] - h;
                sd_flex_mass(fb, e2, Mm);
                for (int i = 0; i < n6 * n6; ++i) {
                    dM[r][i] = (Mp[i] - Mm[i]) / (2.0 * h);
                    Mdot[i] += dM[r][i] * ed[r];
                }
            }
            double Mchi[MAXN6], Mdchi[MAXN6], bl[MAXN6], cross[6];
            for (int i = 0; i < n6; ++i) {
                Mchi[i] = Mdchi[i] = 0.0;
                for (int k = 0; k < n6; ++k) {
                    Mchi[i] += M[i * n6 + k] * chi[k];
                    Mdchi[i] += Mdot[i * n6 + k] * chi[k];
                }
            }
            sd_force_cross(V, Mchi, cross);
            for (int i = 0; i < n6; ++i) bl[i] = (i < 6 ? cross[i] : 0.0) + Mdchi[i];
            for (int r = 0; r < nm; ++r) {
                double q = 0.0;
                for (int i = 0; i < n6; ++i)
                    for (int k = 0; k < n6; ++k) q += chi[i] * dM[r][i * n6 + k] * chi[k];
                bl[6 + r] -= 0.5 * q;
            }
            const double eL = test_rel_diff(bm, bl, n6);
            CHECK_ARRAY_CLOSE(bm, bl, n6, 1e-6, "b_m vs the Lagrangian (finite differences)");
            if (eL > worst_L) worst_L = eL;
            double half = 0.0;
            for (int i = 0; i < n6; ++i) half += 0.5 * chi[i] * Mdchi[i];
            const double eP = fabs(Pdot - half) / fmax(1.0, fabs(half));
            CHECK_CLOSE(Pdot, half, 1e-6);
            if (eP > worst_P) worst_P = eP;
        } else {
            /* ruthless linearisation: M constant, and the documented power leak */
            double M2[MAXN6 * MAXN6], b2[MAXN6];
            double zero[MAXM] = {0};
            sd_flex_mass(fb, zero, M2);
            CHECK(memcmp(M, M2, sizeof(double) * n6 * n6) == 0);
            sd_flex_bias(fb, zero, ed, V, b2);
            CHECK(memcmp(bm, b2, sizeof(double) * n6) == 0);
            double leak = 0.0;
            for (int j = 0; j < b.n; ++j) {
                double u[3], wxl[3], d[3] = {0, 0, 0}, wxd[3];
                sd_v3_cross(V, b.pos + 3 * j, wxl);
                for (int a = 0; a < 3; ++a) u[a] = V[3 + a] + wxl[a];
                for (int r = 0; r < nm; ++r)
                    for (int a = 0; a < 3; ++a) d[a] += Q_of(&b, j, r)[3 + a] * ed[r];
                sd_v3_cross(V, d, wxd);
                leak += b.mass[j] * sd_v3_dot(u, wxd);
            }
            CHECK_CLOSE(Pdot, leak, 1e-12);
        }

        /* elastic force and strain energy */
        double fe[MAXM];
        sd_flex_elastic(fb, eta, ed, fe);
        double E = 0.0;
        for (int r = 0; r < nm; ++r) {
            double s = 0.0, k = 0.0;
            for (int c = 0; c < nm; ++c) {
                s += b.K[r * nm + c] * eta[c] + (b.with_damping ? b.D[r * nm + c] * ed[c] : 0.0);
                k += b.K[r * nm + c] * eta[c];
            }
            CHECK_CLOSE(fe[r], s, 1e-13);
            E += 0.5 * eta[r] * k;
        }
        CHECK_CLOSE(sd_flex_strain_energy(fb, eta), E, 1e-13);
        sd_flex_body_free(fb);
    }
    printf("M_m vs sum J^T M J: worst %.2e; b_m vs Newton-Euler: %.2e; vs Lagrangian (FD): %.2e; power: %.2e\n",
           worst_M, worst_b, worst_L, worst_P);
}


/* chi-dot of a free body: M_m chi-dot = -(b_m + [0; K eta]). */
static void free_rhs(const sd_flex_body *fb, int nm, const double *eta, const double *chi, double *eta_dot,
                     double *chi_dot)
{
    const int n6 = 6 + nm;
    double M[MAXN6 * MAXN6], fe[MAXM], zero[MAXM] = {0};
    sd_flex_mass(fb, eta, M);
    sd_flex_bias(fb, eta, chi + 6, chi, chi_dot);
    sd_flex_elastic(fb, eta, zero, fe);
    for (int i = 0; i < n6; ++i) chi_dot[i] = -chi_dot[i] - (i >= 6 ? fe[i - 6] : 0.0);
    CHECK(sd_cholesky_factor(M, n6, 0.0) < 0);
    sd_cholesky_solve(M, n6, chi_dot);
    memcpy(eta_dot, chi + 6, sizeof(double) * nm);
}

static double free_energy(const sd_flex_body *fb, int nm, const double *eta, const double *chi)
{
    const int n6 = 6 + nm;
    double M[MAXN6 * MAXN6], T = 0.0;
    sd_flex_mass(fb, eta, M);
    for (int i = 0; i < n6; ++i)
        for (int k = 0; k < n6; ++k) T += 0.5 * chi[i] * M[i * n6 + k] * chi[k];
    return T + sd_flex_strain_energy(fb, eta);
}

static void test_free_body_energy(void)
{
    double worst = 0.0;
    for (int trial = 0; trial < 6; ++trial) {
        static const int nms[6] = {1, 2, 4, 6, 8, 10};
        const int nm = nms[trial];
        rbody b;
        make_body(&b, nm, trial % 2, SD_FLEX_FULL);
        b.d.damping = NULL;
        sd_flex_body *fb = new_body(&b, "link");
        if (!fb) continue;
        const int n6 = 6 + nm;
        double eta[MAXM], chi[MAXN6];
        for (int r = 0; r < nm; ++r) eta[r] = 0.2 * urand();
        for (int i = 0; i < n6; ++i) chi[i] = urand();
        const double E0 = free_energy(fb, nm, eta, chi), dt = 1e-3;
        double drift = 0.0;
        for (int step = 0; step < 1000; ++step) { /* RK4 */
            double ke[4][MAXM], kc[4][MAXN6], e2[MAXM], c2[MAXN6];
            static const double w[4] = {0.0, 0.5, 0.5, 1.0};
            for (int st = 0; st < 4; ++st) {
                for (int r = 0; r < nm; ++r) e2[r] = eta[r] + (st ? w[st] * dt * ke[st - 1][r] : 0.0);
                for (int i = 0; i < n6; ++i) c2[i] = chi[i] + (st ? w[st] * dt * kc[st - 1][i] : 0.0);
                free_rhs(fb, nm, e2, c2, ke[st], kc[st]);
            }
            for (int r = 0; r < nm; ++r) eta[r] += dt / 6.0 * (ke[0][r] + 2.0 * ke[1][r] + 2.0 * ke[2][r] + ke[3][r]);
            for (int i = 0; i < n6; ++i) chi[i] += dt / 6.0 * (kc[0][i] + 2.0 * kc[1][i] + 2.0 * kc[2][i] + kc[3][i]);
            drift = fmax(drift, fabs(free_energy(fb, nm, eta, chi) - E0) / E0);
        }
        if (!(drift < 1e-9)) fprintf(stderr, "nm %d: energy drift %.3g\n", nm, drift);
        CHECK(drift < 1e-9);
        if (drift > worst) worst = drift;
        sd_flex_body_free(fb);
    }
    printf("free body, RK4 1 s at 1 ms: worst relative energy drift %.2e\n", worst);
}

/* The rotation vector of R^T R' for two nearby rotations: vee of the skew part of R^T dR. */
static void test_node_frames(void)
{
    double worst_S = 0.0, worst_c = 0.0;
    for (int trial = 0; trial < 120; ++trial) {
        const int nm = 1 + trial % TRIAL_MODES;
        rbody b;
        make_body(&b, nm, trial % 2, trial % 3 ? SD_FLEX_FULL : SD_FLEX_LINEARISED);
        sd_flex_body *fb = new_body(&b, "link");
        if (!fb) continue;
        const int t = irand(0, b.n - 1);
        /* eta scales: rotations near 0 (series), near 0.1 (the switch) and of order 1 */
        static const double scales[4] = {1e-4, 0.05, 0.3, 1.5};
        const double scale = scales[trial % 4];
        double eta[MAXM], ed[MAXM];
        for (int r = 0; r < nm; ++r) { eta[r] = scale * urand(); ed[r] = urand(); }
        sd_transform X, Xp, Xm;
        double S[6 * MAXM], Sp[6 * MAXM], Sm[6 * MAXM], c[6];
        sd_flex_node_frame(fb, t, eta, &X, S);
        { /* the fused call gives the same pose and S_t, and the bias c */
            sd_transform Xc;
            double Sc[6 * MAXM];
            sd_flex_node_motion(fb, t, eta, ed, &Xc, Sc, c);
            CHECK(memcmp(&X, &Xc, sizeof X) == 0 && memcmp(S, Sc, 6 * (size_t)nm * sizeof(double)) == 0);
        }
        double e2[MAXM];
        const double h = 1e-5;
        for (int r = 0; r < nm; ++r) e2[r] = eta[r] + h * ed[r];
        sd_flex_node_frame(fb, t, e2, &Xp, Sp);
        for (int r = 0; r < nm; ++r) e2[r] = eta[r] - h * ed[r];
        sd_flex_node_frame(fb, t, e2, &Xm, Sm);
        double dR[9], W[9], dp[3], twist[6], Sed[6] = {0}, dS[6] = {0};
        for (int i = 0; i < 9; ++i) dR[i] = (Xp.R[i] - Xm.R[i]) / (2.0 * h);
        sd_m3t_mul(X.R, dR, W); /* R^T R' = [omega_n x] */
        twist[0] = 0.5 * (W[7] - W[5]);
        twist[1] = 0.5 * (W[2] - W[6]);
        twist[2] = 0.5 * (W[3] - W[1]);
        for (int a = 0; a < 3; ++a) dp[a] = (Xp.p[a] - Xm.p[a]) / (2.0 * h);
        sd_m3t_mul_v(X.R, dp, twist + 3);
        for (int r = 0; r < nm; ++r)
            for (int i = 0; i < 6; ++i) {
                Sed[i] += S[6 * r + i] * ed[r];
                dS[i] += (Sp[6 * r + i] - Sm[6 * r + i]) / (2.0 * h) * ed[r];
            }
        const double eS = test_rel_diff(Sed, twist, 6), ec = test_rel_diff(c, dS, 6);
        CHECK_ARRAY_CLOSE(Sed, twist, 6, 1e-7, "S_t eta-dot vs finite differences of the node pose");
        CHECK_ARRAY_CLOSE(c, dS, 6, 1e-7, "node bias vs finite differences of S_t eta-dot");
        if (eS > worst_S) worst_S = eS;
        if (ec > worst_c) worst_c = ec;
        /* a rotation: R^T R = 1, det 1 */
        double RtR[9];
        sd_m3t_mul(X.R, X.R, RtR);
        double o = 0.0;
        for (int i = 0; i < 9; ++i) o = fmax(o, fabs(RtR[i] - (i % 4 == 0)));
        CHECK(o < 1e-14);
        sd_flex_body_free(fb);
    }
    /* eta = 0: the undeformed frame (1, l0) and S = [Q; P] */
    rbody b;
    make_body(&b, 4, 1, SD_FLEX_FULL);
    sd_flex_body *fb = new_body(&b, "link");
    if (fb) {
        double zero[MAXM] = {0}, S[6 * MAXM], c[6], ed[MAXM] = {1, -2, 3, 0.5};
        sd_transform X;
        sd_flex_node_frame(fb, 0, zero, &X, S);
        CHECK(X.R[0] == 1.0 && X.R[4] == 1.0 && X.R[8] == 1.0 && X.R[1] == 0.0);
        CHECK(X.p[0] == b.pos[0] && X.p[1] == b.pos[1] && X.p[2] == b.pos[2]);
        CHECK(memcmp(S, b.modes, 6 * sizeof(double)) == 0);
        sd_flex_node_frame(fb, 0, zero, &X, NULL); /* S optional */
        sd_flex_node_motion(fb, 0, zero, ed, &X, S, c);
        /* at eta = 0 only c2 thetadot x (0) and -thetadot x (P ed) remain: check the linear part */
        double th[3] = {0, 0, 0}, d[3] = {0, 0, 0}, x[3];
        for (int r = 0; r < 4; ++r)
            for (int a = 0; a < 3; ++a) { th[a] += Q_of(&b, 0, r)[a] * ed[r]; d[a] += Q_of(&b, 0, r)[3 + a] * ed[r]; }
        sd_v3_cross(th, d, x);
        for (int a = 0; a < 3; ++a) { CHECK_CLOSE(c[a], 0.0, 1e-15); CHECK_CLOSE(c[3 + a], -x[a], 1e-14); }
        sd_flex_body_free(fb);
    }
    printf("S_t vs finite differences: worst %.2e; node bias: %.2e\n", worst_S, worst_c);
}

/* A failing description: the status is SD_E_MODEL and the message names the body, the file and `what`. */
static void expect_error(const sd_flex_desc *d, const char *what, sd_status status)
{
    sd_error err = {0};
    const double rc[3] = {0, 0, 0}, rI[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    sd_flex_body *fb = sd_flex_body_new(d, 1.0, rc, rI, "arm_link", &err);
    CHECK(fb == NULL);
    sd_flex_body_free(fb);
    CHECK(err.status == status);
    const int ok = strstr(err.message, "arm_link") && (!d || !d->source_file || strstr(err.message, d->source_file)) &&
                   strstr(err.message, what);
    if (!ok) fprintf(stderr, "message '%s' lacks '%s'\n", err.message, what);
    CHECK(ok);
}

static void test_validation(void)
{
    rbody b, c;
    make_body(&b, 4, 1, SD_FLEX_FULL);
    b.d.source_file = "models/beam.json";
    expect_error(NULL, "NULL", SD_E_ARGUMENT);

    c = b; c.d.n_nodes = 0; expect_error(&c.d, "no nodes", SD_E_MODEL);
    c = b; c.d.n_modes = -1; expect_error(&c.d, "n_modes", SD_E_MODEL);
    c = b; c.d.n_nodes = -3; expect_error(&c.d, "n_nodes", SD_E_MODEL);
    c = b; c.d.modes = NULL; expect_error(&c.d, "modes is NULL", SD_E_MODEL);
    c = b; c.d.stiffness = NULL; expect_error(&c.d, "stiffness is NULL", SD_E_MODEL);
    c = b; c.d.node_mass = NULL; expect_error(&c.d, "node_mass is NULL", SD_E_MODEL);
    c = b; c.d.node_position = NULL; expect_error(&c.d, "node_position is NULL", SD_E_MODEL);
    c = b; c.d.mass_model = (sd_flex_mass_model)7; expect_error(&c.d, "mass_model", SD_E_MODEL);

    /* non-symmetric K: named entry */
    rbody k = b;
    k.K[2 * 4 + 3] += 1e-3;
    k.d.stiffness = k.K;
    expect_error(&k.d, "stiffness[2][3]", SD_E_MODEL);
    /* symmetric to 1e-12: accepted */
    k = b;
    k.K[2 * 4 + 3] *= 1.0 + 1e-13;
    k.d.stiffness = k.K;
    k.d.node_position = k.pos; k.d.node_mass = k.mass; k.d.node_inertia = k.inertia; k.d.modes = k.modes;
    k.d.damping = k.with_damping ? k.D : NULL;
    sd_error err = {0};
    sd_flex_body *fb = sd_flex_body_new(&k.d, 1.0, k.rc, k.rI, "arm_link", &err);
    CHECK(fb != NULL);
    sd_flex_body_free(fb);
    /* indefinite K */
    k = b;
    for (int i = 0; i < 16; ++i) k.K[i] = (i % 5 == 0) ? 1.0 : 0.0;
    k.K[3 * 4 + 3] = -1e-3;
    k.d.stiffness = k.K;
    expect_error(&k.d, "stiffness is not positive semi-definite", SD_E_MODEL);
    /* semi-definite K (a rigid mode with zero stiffness): accepted */
    k.K[3 * 4 + 3] = 0.0;
    k.d.node_position = k.pos; k.d.node_mass = k.mass; k.d.node_inertia = k.inertia; k.d.modes = k.modes;
    k.d.damping = NULL;
    fb = sd_flex_body_new(&k.d, 1.0, k.rc, k.rI, "arm_link", &err);
    CHECK(fb != NULL);
    sd_flex_body_free(fb);
    /* indefinite damping */
    k = b;
    for (int i = 0; i < 16; ++i) k.D[i] = 0.0;
    k.D[1] = k.D[4] = 0.5; /* [[0, .5], [.5, 0]]: zero diagonal, indefinite */
    k.d.damping = k.D;
    k.d.stiffness = k.K;
    expect_error(&k.d, "damping is not positive semi-definite", SD_E_MODEL);
    /* NaN and infinity */
    k = b; k.pos[4] = NAN; k.d.node_position = k.pos; expect_error(&k.d, "node_position[1][1] is not finite", SD_E_MODEL);
    k = b; k.modes[7] = INFINITY; k.d.modes = k.modes; expect_error(&k.d, "not finite", SD_E_MODEL);
    k = b; k.K[5] = NAN; k.d.stiffness = k.K; expect_error(&k.d, "stiffness[1][1] is not finite", SD_E_MODEL);
    /* beyond the bounds of physical models */
    k = b; k.pos[0] = 1e9; k.d.node_position = k.pos; expect_error(&k.d, "beyond the bound", SD_E_MODEL);
    k = b; k.mass[0] = 1e15; k.d.node_mass = k.mass; expect_error(&k.d, "node_mass[0]", SD_E_MODEL);
    /* negative node mass */
    k = b; k.mass[1] = -0.5; k.d.node_mass = k.mass; expect_error(&k.d, "node_mass[1] = -0.5 kg is negative", SD_E_MODEL);
    /* node inertias: not symmetric, indefinite */
    k = b; k.inertia[9 + 1] += 0.1; k.d.node_inertia = k.inertia; expect_error(&k.d, "node_inertia[1][0][1]", SD_E_MODEL);
    k = b;
    for (int i = 0; i < 9; ++i) k.inertia[9 + i] = (i == 0) ? -1.0 : (i % 4 == 0);
    k.d.node_inertia = k.inertia;
    expect_error(&k.d, "node_inertia[1] is not positive semi-definite", SD_E_MODEL);
    /* dependent modes: mode 3 = mode 0 - 2 mode 1 */
    k = b;
    for (int i = 0; i < 6 * k.n; ++i) k.modes[3 * 6 * k.n + i] = k.modes[i] - 2.0 * k.modes[6 * k.n + i];
    k.d.modes = k.modes;
    expect_error(&k.d, "depends on the others", SD_E_MODEL);
    /* a mode that moves no mass (only rotations at point masses) */
    k = b;
    k.d.node_inertia = NULL;
    for (int j = 0; j < k.n; ++j)
        for (int a = 0; a < 3; ++a) k.modes[2 * 6 * k.n + 6 * j + 3 + a] = 0.0;
    k.d.modes = k.modes;
    expect_error(&k.d, "rank 3 < 4", SD_E_MODEL);
    /* no source file: the message still names the body */
    k = b; k.d.source_file = NULL; k.mass[0] = -1.0; k.d.node_mass = k.mass;
    expect_error(&k.d, "node_mass[0]", SD_E_MODEL);

    /* a rigid body with nodes and no modes is accepted; its M_m is the 6x6 inertia */
    k = b; k.d.n_modes = 0; k.d.modes = NULL; k.d.stiffness = NULL; k.d.damping = NULL;
    fb = sd_flex_body_new(&k.d, 1.0, k.rc, k.rI, "arm_link", &err);
    CHECK(fb != NULL);
    if (fb) {
        double M[36], Mr[36];
        k.nm = 0; k.rm = 1.0;
        sd_flex_mass(fb, NULL, M);
        ref_mass(&k, NULL, Mr);
        CHECK_ARRAY_CLOSE(M, Mr, 36, 1e-13, "M_m of a body without modes");
        sd_flex_body_free(fb);
    }
    /* the description is copied: the caller's arrays may change afterwards */
    k = b;
    k.d.node_position = k.pos; k.d.node_mass = k.mass; k.d.node_inertia = k.inertia; k.d.modes = k.modes;
    k.d.stiffness = k.K; k.d.damping = k.with_damping ? k.D : NULL;
    fb = sd_flex_body_new(&k.d, k.rm, k.rc, k.rI, "arm_link", &err);
    CHECK(fb != NULL);
    if (fb) {
        const sd_flex_desc *d = sd_flex_body_desc(fb);
        k.mass[0] = 123.0;
        CHECK(d->node_mass[0] == b.mass[0] && d->node_mass != k.mass);
        CHECK(strcmp(d->source_file, "models/beam.json") == 0);
        CHECK(d->n_modes == 4 && d->n_nodes == b.n && d->mass_model == SD_FLEX_FULL);
        sd_flex_body_free(fb);
    }
}

/* sd_flex_mass_bias past its fixed instances (11-13 modes, the generic one): against the node sums and
 * the single calls. */
static void test_fused_many_modes(void)
{
    for (int trial = 0; trial < 6; ++trial) {
        const int nm = 11 + trial % 3;
        const sd_flex_mass_model model = trial < 3 ? SD_FLEX_FULL : SD_FLEX_LINEARISED;
        rbody b;
        make_body(&b, nm, trial % 2, model);
        sd_flex_body *fb = new_body(&b, "link");
        if (!fb) continue;
        const int n6 = 6 + nm;
        double eta[MAXM], ed[MAXM], V[6];
        for (int r = 0; r < nm; ++r) { eta[r] = 0.4 * urand(); ed[r] = 2.0 * urand(); }
        for (int i = 0; i < 6; ++i) V[i] = 2.0 * urand();
        double M[MAXN6 * MAXN6], Mr[MAXN6 * MAXN6], bm[MAXN6], br[MAXN6], M1[MAXN6 * MAXN6], b1[MAXN6];
        sd_flex_mass_bias(fb, eta, ed, V, M, bm);
        ref_mass(&b, model == SD_FLEX_FULL ? eta : NULL, Mr);
        ref_bias(&b, model == SD_FLEX_FULL ? eta : NULL, ed, V, br);
        CHECK_ARRAY_CLOSE(M, Mr, n6 * n6, 1e-12, "sd_flex_mass_bias's M_m (11-13 modes) vs sum J_j^T M_j J_j");
        CHECK_ARRAY_CLOSE(bm, br, n6, 1e-12, "sd_flex_mass_bias's b_m (11-13 modes) vs node-by-node Newton-Euler");
        sd_flex_mass(fb, eta, M1);
        sd_flex_bias(fb, eta, ed, V, b1);
        CHECK_ARRAY_CLOSE(M, M1, n6 * n6, 1e-14, "sd_flex_mass_bias vs sd_flex_mass (11-13 modes)");
        CHECK_ARRAY_CLOSE(bm, b1, n6, 1e-14, "sd_flex_mass_bias vs sd_flex_bias (11-13 modes)");
        sd_flex_body_free(fb);
    }
}

int main(void)
{
    test_mass_and_bias();
    test_node_frames();
    test_free_body_energy();
    test_validation();
    test_fused_many_modes(); /* last: the trials above keep their random draws */
    return test_summary("test_flex_body");
}
