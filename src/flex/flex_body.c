/*
 * src/flex/flex_body.c — one flexible body's modal model (001 Sec 2): the checked copy of its
 * description, the modal integrals precomputed from it, and the node operations the node engine
 * asks for (M_m, b_m, the elastic force, the strain energy, the node frames of attached children).
 *
 * The lumped model (flex_body.h): node j has mass m_j, rotary inertia J_j (constant in body axes), and
 * sits at l_j = l0_j + P_j eta, where P_j = Pi_t^j and Q_j = Pi_r^j (3 x nm each). Its velocity is
 * omega_j = omega + Q_j eta-dot, v_j = v + omega x l_j + P_j eta-dot (001 Eq 23). Everything that
 * depends on eta is at most quadratic in eta, so the sums over nodes are taken once, at construction
 * (the "modal integrals" of 001 Sec 2.2, summed over lumped masses):
 *   m    = sum m_j (+ the rigid part)            Hp_r = sum m_j P_j,r          (3 per mode)
 *   h0   = sum m_j l0_j (+ rigid)                 JQ_r = sum J_j Q_j,r          (3 per mode)
 *   I0   = sum J_j + m_j (|l0|^2 1 - l0 l0^T) (+ the rigid part's inertia about the origin)
 *   N0_r = JQ_r + sum m_j l0_j x P_j,r          A_r  = sum m_j l0_j P_j,r^T    (9 per mode)
 *   C_rs = sum m_j P_j,r P_j,s^T                (9 per pair of modes)
 *   M_ff = sum Q_j^T J_j Q_j + m_j P_j^T P_j    (constant, 001 Sec 2.2)
 * and, for the bias, G2_sr = 2 sum m_j P_j,s x P_j,r (the Coriolis coupling of two modes). With F_r(eta) = sum_s eta_s C_sr = sum m_j (P_j eta) P_j,r^T, an
 * evaluation costs O(9 nm^2) whatever the number of nodes.
 */
#include "flex/flex_body.h"
#include "flex/flex_body_internal.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/model_bounds.h"

/* A mode shape's entry per unit modal coordinate: a translation (m) or a rotation (rad) that a unit
 * of eta causes. Mass-normalised modes of a body of mass m have entries near 1/sqrt(m): 1e6 covers
 * bodies down to a picogram. */
#define SD_FLEX_MAX_MODE_ENTRY 1e6
/* A modal stiffness or damping entry (N or N m per unit of eta, or per unit of eta-dot). With mass
 * normalised modes K_m = diag(omega^2): 1e30 is a natural frequency of 1e15 rad/s, far beyond any
 * structure; with other scalings it bounds K eta well below overflow. */
#define SD_FLEX_MAX_MODAL_COEFF 1e30
/* Largest model accepted: M_m is (6 + nm)^2 and C holds 9 nm^2 numbers (nm = 1000: 72 MB). */
#define SD_FLEX_MAX_MODES 1000
#define SD_FLEX_MAX_NODES 10000000
/* Relative tolerance of the symmetry and semi-definiteness checks (round-off of data files written
 * with 16 digits passes, a typing error does not), and of the definiteness of M_ff. */
#define SD_FLEX_SYM_TOL 1e-9
#define SD_FLEX_PD_TOL 1e-12

/* ---------------------------------------------------------------- construction */

static sd_status fail(sd_error *err, const char *body, const char *file, sd_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static sd_status fail(sd_error *err, const char *body, const char *file, sd_status st, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (file)
        return sd_error_set(err, st, "body '%s' (flexible model from %s): %s", body ? body : "?", file, what);
    return sd_error_set(err, st, "body '%s' (flexible model): %s", body ? body : "?", what);
}

void sd_flex_body_free(sd_flex_body *fb)
{
    if (!fb) return;
    free(fb->pos); free(fb->mass); free(fb->inertia); free(fb->modes); free(fb->K); free(fb->D);
    free(fb->source_file);
    free(fb->Hp); free(fb->JQ); free(fb->N0); free(fb->A); free(fb->C); free(fb->G2);
    free(fb->Mff); free(fb->M0);
    free(fb);
}

static double *copy_array(const double *src, size_t count, size_t *bytes)
{
    double *d = malloc((count ? count : 1) * sizeof(double));
    if (d && src) memcpy(d, src, count * sizeof(double));
    *bytes += count * sizeof(double);
    return d;
}

static double *zeros(size_t count, size_t *bytes)
{
    *bytes += count * sizeof(double);
    return calloc(count ? count : 1, sizeof(double));
}

/* Check that the n x n row-major matrix a (named `what`, entries bounded by `bound`) is finite,
 * bounded, symmetric to SD_FLEX_SYM_TOL relative to its largest entry, and positive semi-definite;
 * symmetrise it in place. `unit` names the index ("mode" or "axis"). */
static sd_status check_sym_psd(double *a, int n, double bound, const char *what, const char *unit,
                               const char *body, const char *file, sd_error *err)
{
    double scale = 0.0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            const double x = a[i * n + j];
            if (!isfinite(x))
                return fail(err, body, file, SD_E_MODEL, "%s[%d][%d] is not finite (%g)", what, i, j, x);
            if (fabs(x) > bound)
                return fail(err, body, file, SD_E_MODEL, "%s[%d][%d] = %g is beyond the bound %g of physical models",
                            what, i, j, x, bound);
            if (fabs(x) > scale) scale = fabs(x);
        }
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            const double x = a[i * n + j], y = a[j * n + i];
            if (fabs(x - y) > SD_FLEX_SYM_TOL * scale)
                return fail(err, body, file, SD_E_MODEL, "%s[%d][%d] = %.17g != %s[%d][%d] = %.17g (not symmetric)",
                            what, i, j, x, what, j, i, y);
            a[i * n + j] = a[j * n + i] = 0.5 * (x + y);
        }
    if (scale == 0.0) return SD_OK;
    double *w = malloc((size_t)n * n * sizeof(double));
    int *piv = malloc((size_t)n * sizeof(int));
    if (!w || !piv) {
        free(w); free(piv);
        return fail(err, body, file, SD_E_MEMORY, "out of memory checking %s", what);
    }
    memcpy(w, a, (size_t)n * n * sizeof(double));
    int bad = -1;
    const int rank = sd_pivoted_cholesky(w, n, SD_FLEX_SYM_TOL, piv, &bad);
    free(w); free(piv);
    (void)rank;
    if (bad >= 0)
        return fail(err, body, file, SD_E_MODEL,
                    "%s is not positive semi-definite (a negative direction found at %s %d)", what, unit, bad);
    return SD_OK;
}

static void precompute(sd_flex_body *fb, double rigid_mass, const double rigid_com[3], const double rigid_Ic[9]);
static void fill_mass(const sd_flex_body *fb, const double *eta, double *Mm);

sd_flex_body *sd_flex_body_new(const sd_flex_desc *desc, double rigid_mass, const double rigid_com[3],
                               const double rigid_inertia_com[9], const char *body_name, sd_error *err)
{
    const char *body = body_name ? body_name : "?";
    if (!desc) {
        sd_error_set(err, SD_E_ARGUMENT, "body '%s': flexible model description is NULL", body);
        return NULL;
    }
    const char *file = desc->source_file;
    const int n = desc->n_nodes, nm = desc->n_modes;
#define FAIL(st, ...) do { fail(err, body, file, st, __VA_ARGS__); return NULL; } while (0)
    if (n < 0 || n > SD_FLEX_MAX_NODES)
        FAIL(SD_E_MODEL, "n_nodes = %d (expected 0 .. %d)", n, SD_FLEX_MAX_NODES);
    if (nm < 0 || nm > SD_FLEX_MAX_MODES)
        FAIL(SD_E_MODEL, "n_modes = %d (expected 0 .. %d)", nm, SD_FLEX_MAX_MODES);
    if (nm >= 1 && n < 1) FAIL(SD_E_MODEL, "n_modes = %d but no nodes (modes are defined at nodes)", nm);
    if (desc->mass_model != SD_FLEX_FULL && desc->mass_model != SD_FLEX_LINEARISED)
        FAIL(SD_E_MODEL, "unknown mass_model %d", (int)desc->mass_model);
    if (n > 0 && !desc->node_position) FAIL(SD_E_MODEL, "node_position is NULL with %d nodes", n);
    if (n > 0 && !desc->node_mass) FAIL(SD_E_MODEL, "node_mass is NULL with %d nodes", n);
    if (nm > 0 && !desc->modes) FAIL(SD_E_MODEL, "modes is NULL with %d modes", nm);
    if (nm > 0 && !desc->stiffness) FAIL(SD_E_MODEL, "stiffness is NULL with %d modes", nm);
    if (!(rigid_mass >= 0.0) || !isfinite(rigid_mass)) FAIL(SD_E_MODEL, "rigid part mass %g is not a finite number >= 0", rigid_mass);

    /* numbers: finite and within the bounds, node by node */
    for (int j = 0; j < n; ++j) {
        for (int a = 0; a < 3; ++a) {
            const double x = desc->node_position[3 * j + a];
            if (!isfinite(x)) FAIL(SD_E_MODEL, "node_position[%d][%d] is not finite (%g)", j, a, x);
            if (fabs(x) > SD_MAX_LENGTH)
                FAIL(SD_E_MODEL, "node_position[%d][%d] = %g m is beyond the bound %g m of physical models", j, a, x,
                     SD_MAX_LENGTH);
        }
        const double mj = desc->node_mass[j];
        if (!isfinite(mj)) FAIL(SD_E_MODEL, "node_mass[%d] is not finite (%g)", j, mj);
        if (mj < 0.0) FAIL(SD_E_MODEL, "node_mass[%d] = %g kg is negative", j, mj);
        if (mj > SD_MAX_MASS) FAIL(SD_E_MODEL, "node_mass[%d] = %g kg is beyond the bound %g kg of physical models", j, mj, SD_MAX_MASS);
    }
    for (int r = 0; r < nm; ++r)
        for (int i = 0; i < 6 * n; ++i) {
            const double x = desc->modes[(size_t)r * 6 * n + i];
            if (!isfinite(x)) FAIL(SD_E_MODEL, "modes[node %d, row %d][mode %d] is not finite (%g)", i / 6, i % 6, r, x);
            if (fabs(x) > SD_FLEX_MAX_MODE_ENTRY)
                FAIL(SD_E_MODEL, "modes[node %d, row %d][mode %d] = %g is beyond the bound %g per unit modal coordinate",
                     i / 6, i % 6, r, x, SD_FLEX_MAX_MODE_ENTRY);
        }

    sd_flex_body *fb = calloc(1, sizeof *fb);
    if (!fb) FAIL(SD_E_MEMORY, "out of memory");
#undef FAIL
#define FAILB(st, ...) do { fail(err, body, file, st, __VA_ARGS__); sd_flex_body_free(fb); return NULL; } while (0)
    size_t bytes = sizeof *fb;
    const size_t nmz = (size_t)nm, nz = (size_t)n, n6 = 6 + nmz;
    fb->n = n;
    fb->nm = nm;
    fb->pos = copy_array(desc->node_position, 3 * nz, &bytes);
    fb->mass = copy_array(desc->node_mass, nz, &bytes);
    fb->inertia = desc->node_inertia ? copy_array(desc->node_inertia, 9 * nz, &bytes) : NULL;
    fb->modes = copy_array(desc->modes, 6 * nz * nmz, &bytes);
    fb->K = copy_array(desc->stiffness, nmz * nmz, &bytes);
    fb->D = desc->damping ? copy_array(desc->damping, nmz * nmz, &bytes) : NULL;
    if (file) {
        fb->source_file = malloc(strlen(file) + 1);
        if (fb->source_file) strcpy(fb->source_file, file);
        bytes += strlen(file) + 1;
    }
    fb->Hp = zeros(3 * nmz, &bytes);
    fb->JQ = zeros(3 * nmz, &bytes);
    fb->N0 = zeros(3 * nmz, &bytes);
    fb->A = zeros(9 * nmz, &bytes);
    fb->C = zeros(9 * nmz * nmz, &bytes);
    fb->G2 = zeros(3 * nmz * nmz, &bytes);
    fb->Mff = zeros(nmz * nmz, &bytes);
    fb->M0 = zeros(n6 * n6, &bytes);
    fb->bytes = bytes;
    if (!fb->pos || !fb->mass || (desc->node_inertia && !fb->inertia) || !fb->modes || !fb->K ||
        (desc->damping && !fb->D) || (file && !fb->source_file) || !fb->Hp || !fb->JQ || !fb->N0 || !fb->A ||
        !fb->C || !fb->G2 || !fb->Mff || !fb->M0)
        FAILB(SD_E_MEMORY, "out of memory (%zu bytes)", bytes);

    char what[64];
    if (fb->inertia)
        for (int j = 0; j < n; ++j) {
            snprintf(what, sizeof what, "node_inertia[%d]", j);
            if (check_sym_psd(fb->inertia + 9 * j, 3, SD_MAX_MASS * SD_MAX_LENGTH * SD_MAX_LENGTH, what, "axis",
                              body, file, err) != SD_OK) {
                sd_flex_body_free(fb);
                return NULL;
            }
        }
    if (nm > 0 && check_sym_psd(fb->K, nm, SD_FLEX_MAX_MODAL_COEFF, "stiffness", "mode", body, file, err) != SD_OK) {
        sd_flex_body_free(fb);
        return NULL;
    }
    if (fb->D && nm > 0 &&
        check_sym_psd(fb->D, nm, SD_FLEX_MAX_MODAL_COEFF, "damping", "mode", body, file, err) != SD_OK) {
        sd_flex_body_free(fb);
        return NULL;
    }

    fb->desc.n_nodes = n;
    fb->desc.node_position = fb->pos;
    fb->desc.node_mass = fb->mass;
    fb->desc.node_inertia = fb->inertia;
    fb->desc.n_modes = nm;
    fb->desc.modes = fb->modes;
    fb->desc.stiffness = fb->K;
    fb->desc.damping = fb->D;
    fb->desc.mass_model = desc->mass_model;
    fb->desc.source_file = fb->source_file;

    static const double zero3[3] = {0, 0, 0}, zero9[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    precompute(fb, rigid_mass, rigid_com ? rigid_com : zero3, rigid_inertia_com ? rigid_inertia_com : zero9);

    /* M_ff positive definite: the modes are independent in the mass metric (001 Sec 2.2). */
    if (nm > 0) {
        double *w = malloc(nmz * nmz * sizeof(double));
        int *piv = malloc(nmz * sizeof(int));
        if (!w || !piv) {
            free(w); free(piv);
            FAILB(SD_E_MEMORY, "out of memory");
        }
        memcpy(w, fb->Mff, nmz * nmz * sizeof(double));
        /* The rank is judged against the mass the modes could move, the body's whole mass times the
         * largest shape entry squared, not against M_ff's own largest entry: a mode that moves only a
         * node of negligible mass (say 1e-309 kg of a 1 kg body) has an M_ff that is fine relative to
         * itself, but its accelerations overflow (found by fuzz_flex). */
        double body_mass = rigid_mass, shape_max = 0.0, mff_max = 0.0;
        for (int j = 0; j < fb->n; ++j) body_mass += fb->mass[j];
        for (size_t i = 0; i < 6 * (size_t)fb->n * (size_t)nm; ++i) shape_max = fmax(shape_max, fabs(fb->modes[i]));
        for (int i = 0; i < nm * nm; ++i) mff_max = fmax(mff_max, fabs(fb->Mff[i]));
        const double moved = body_mass * shape_max * shape_max;
        const double rtol = mff_max > 0.0 ? SD_FLEX_PD_TOL * fmax(1.0, moved / mff_max) : SD_FLEX_PD_TOL;
        int bad = -1;
        const int rank = sd_pivoted_cholesky(w, nm, rtol, piv, &bad);
        free(w);
        const int first_dependent = rank < nm ? piv[rank] : -1;
        free(piv);
        if (rank < nm)
            FAILB(SD_E_MODEL,
                  "the modal mass matrix M_ff = Pi^T M_s Pi has rank %d < %d modes: mode %d depends on the others "
                  "in the mass metric (or moves no mass)", rank, nm, first_dependent);
    }
    fill_mass(fb, NULL, fb->M0);
#undef FAILB
    return fb;
}

int sd_flex_body_nmodes(const sd_flex_body *fb) { return fb->nm; }
int sd_flex_body_nnodes(const sd_flex_body *fb) { return fb->n; }
sd_flex_mass_model sd_flex_body_mass_model(const sd_flex_body *fb) { return fb->desc.mass_model; }
const double *sd_flex_body_node_position(const sd_flex_body *fb, int j) { return fb->pos + 3 * j; }
const sd_flex_desc *sd_flex_body_desc(const sd_flex_body *fb) { return &fb->desc; }
size_t sd_flex_body_size(const sd_flex_body *fb) { return fb->bytes; }
const double *sd_flex_body_modal_mass(const sd_flex_body *fb) { return fb->Mff; }

/* The modal integrals of the file comment, summed once over the nodes (and the rigid part). */
static void precompute(sd_flex_body *fb, double rigid_mass, const double rigid_com[3], const double rigid_Ic[9])
{
    const int n = fb->n, nm = fb->nm;
    const size_t col = 6 * (size_t)n;
    double m = rigid_mass, h0[3], I0[9];
    const double c2 = sd_v3_dot(rigid_com, rigid_com);
    for (int a = 0; a < 3; ++a) {
        h0[a] = rigid_mass * rigid_com[a];
        for (int b = 0; b < 3; ++b)
            I0[3 * a + b] = rigid_Ic[3 * a + b] + rigid_mass * ((a == b) * c2 - rigid_com[a] * rigid_com[b]);
    }
    for (int j = 0; j < n; ++j) {
        const double mj = fb->mass[j], *l0 = fb->pos + 3 * j;
        const double *J = fb->inertia ? fb->inertia + 9 * j : NULL;
        const double l2 = sd_v3_dot(l0, l0);
        m += mj;
        for (int a = 0; a < 3; ++a) {
            h0[a] += mj * l0[a];
            for (int b = 0; b < 3; ++b) I0[3 * a + b] += (J ? J[3 * a + b] : 0.0) + mj * ((a == b) * l2 - l0[a] * l0[b]);
        }
        for (int r = 0; r < nm; ++r) {
            const double *Qr = fb->modes + r * col + 6 * j, *Pr = Qr + 3;
            double JQr[3] = {0, 0, 0}, lxP[3];
            if (J) sd_m3_mul_v(J, Qr, JQr);
            sd_v3_cross(l0, Pr, lxP);
            for (int a = 0; a < 3; ++a) {
                fb->Hp[3 * r + a] += mj * Pr[a];
                fb->JQ[3 * r + a] += JQr[a];
                fb->N0[3 * r + a] += JQr[a] + mj * lxP[a];
                for (int b = 0; b < 3; ++b) fb->A[9 * r + 3 * a + b] += mj * l0[a] * Pr[b];
            }
            for (int s = 0; s < nm; ++s) {
                const double *Qs = fb->modes + s * col + 6 * j, *Ps = Qs + 3;
                double *C = fb->C + ((size_t)r * nm + s) * 9; /* C_sr */
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) C[3 * a + b] += mj * Ps[a] * Pr[b];
                /* G2_sr = 2 m P_s x P_r: the Coriolis coupling 2 omega x (P eta-dot) seen by mode r */
                double PsxPr[3], JQs[3] = {0, 0, 0};
                sd_v3_cross(Ps, Pr, PsxPr);
                if (J) sd_m3_mul_v(J, Qs, JQs);
                double *G = fb->G2 + ((size_t)r * nm + s) * 3;
                for (int a = 0; a < 3; ++a) G[a] += 2.0 * mj * PsxPr[a];
                fb->Mff[(size_t)r * nm + s] += sd_v3_dot(Qr, JQs) + mj * sd_v3_dot(Pr, Ps);
            }
        }
    }
    for (int r = 0; r < nm; ++r) /* exactly symmetric whatever the summation order */
        for (int s = r + 1; s < nm; ++s)
            fb->Mff[(size_t)r * nm + s] = fb->Mff[(size_t)s * nm + r] =
                0.5 * (fb->Mff[(size_t)r * nm + s] + fb->Mff[(size_t)s * nm + r]);
    for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b) I0[3 * a + b] = I0[3 * b + a] = 0.5 * (I0[3 * a + b] + I0[3 * b + a]);
    fb->m = m;
    memcpy(fb->h0, h0, sizeof h0);
    memcpy(fb->I0, I0, sizeof I0);
}

/* F_r(eta) = sum_s eta_s C_sr = sum_j m_j (P_j eta) P_j,r^T: the first moment of the deflections
 * against mode r. */
#define SD_FLEX_INLINE static inline __attribute__((always_inline))

SD_FLEX_INLINE void modal_F(const sd_flex_body *fb, int nm, const double *eta, int r, double F[9])
{
    const double *C = fb->C + (size_t)r * nm * 9;
    for (int i = 0; i < 9; ++i) F[i] = 0.0;
    for (int s = 0; s < nm; ++s, C += 9) {
        const double e = eta[s];
        for (int i = 0; i < 9; ++i) F[i] += e * C[i];
    }
}

/* The axial vector of the antisymmetric part of F: sum_j m_j (P_j eta) x P_j,r. */
static inline void axial(const double F[9], double out[3])
{
    out[0] = F[5] - F[7];
    out[1] = F[6] - F[2];
    out[2] = F[1] - F[3];
}

double sd_flex_first_moment(const sd_flex_body *fb, const double *eta, double h[3])
{
    for (int a = 0; a < 3; ++a) h[a] = fb->h0[a];
    for (int r = 0; r < fb->nm; ++r)
        for (int a = 0; a < 3; ++a) h[a] += eta[r] * fb->Hp[3 * r + a];
    return fb->m;
}

/* M_m and b_m are sums over the modes of terms of F_r, which costs 9 nm per mode: each is written as
 * a per-mode step and a closing step, so that sd_flex_mass_bias forms F_r once for both. What both
 * accumulate over the modes: h = h0 + Hp eta and S (below). */
typedef struct deflected_moments {
    double h[3], S[9];
} deflected_moments;

static inline void moments_begin(const sd_flex_body *fb, deflected_moments *dm)
{
    for (int a = 0; a < 3; ++a) dm->h[a] = fb->h0[a];
    for (int i = 0; i < 9; ++i) dm->S[i] = 0.0;
}

/* F_r(eta) and mode r's share of h and S (eta NULL: eta = 0, F_r = 0 and no share). */
SD_FLEX_INLINE void moments_mode(const sd_flex_body *fb, int nm, const double *eta, int r, double F[9],
                                 deflected_moments *dm)
{
    if (!eta) {
        for (int i = 0; i < 9; ++i) F[i] = 0.0;
        return;
    }
    const double *A = fb->A + 9 * r, *Hp = fb->Hp + 3 * r, e = eta[r];
    modal_F(fb, nm, eta, r, F);
    for (int a = 0; a < 3; ++a) {
        dm->h[a] += e * Hp[a];
        for (int b = 0; b < 3; ++b) dm->S[3 * a + b] += e * (A[3 * a + b] + A[3 * b + a] + F[3 * a + b]);
    }
}

/* M_m(eta) of the lumped model (001 Eq 25; eta NULL: eta = 0):
 *   [ Io(eta)    [h x]    N(eta) ]        h = h0 + Hp eta, N_r = N0_r + sum m_j (P_j eta) x P_j,r,
 *   [ -[h x]     m 1      Hp     ]        Io = I0 + tr(S) 1 - S,
 *   [ N^T        Hp^T     M_ff   ]        S = sum m_j (l_j l_j^T - l0_j l0_j^T) = sum_r eta_r (A_r + A_r^T + F_r).
 * Mode r's row and column: */
SD_FLEX_INLINE void mass_mode(const sd_flex_body *fb, int nm, int r, const double F[9], double *Mm)
{
    const int n6 = 6 + nm;
    const double *N0 = fb->N0 + 3 * r, *Hp = fb->Hp + 3 * r;
    double N[3];
    axial(F, N);
    for (int a = 0; a < 3; ++a) {
        Mm[a * n6 + 6 + r] = Mm[(6 + r) * n6 + a] = N0[a] + N[a];
        Mm[(3 + a) * n6 + 6 + r] = Mm[(6 + r) * n6 + 3 + a] = Hp[a];
    }
    memcpy(Mm + (6 + r) * n6 + 6, fb->Mff + (size_t)r * nm, (size_t)nm * sizeof(double));
}

/* The rigid block, from h and S. */
static inline void mass_rigid(const sd_flex_body *fb, const deflected_moments *dm, double *Mm)
{
    const int n6 = 6 + fb->nm;
    const double *S = dm->S, trS = S[0] + S[4] + S[8];
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            /* S is symmetric up to rounding; average it so that M_m is exactly symmetric */
            const double Sab = 0.5 * (S[3 * a + b] + S[3 * b + a]);
            const double Io = 0.5 * (fb->I0[3 * a + b] + fb->I0[3 * b + a]) + (a == b) * trS - Sab;
            Mm[a * n6 + b] = Io;
            Mm[(3 + a) * n6 + 3 + b] = a == b ? fb->m : 0.0;
        }
    double H[9];
    sd_m3_skew(dm->h, H);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            Mm[a * n6 + 3 + b] = H[3 * a + b];  /* [h x] */
            Mm[(3 + b) * n6 + a] = H[3 * a + b]; /* its transpose -[h x] */
        }
}

static void fill_mass(const sd_flex_body *fb, const double *eta, double *Mm)
{
    deflected_moments dm;
    moments_begin(fb, &dm);
    for (int r = 0; r < fb->nm; ++r) {
        double F[9];
        moments_mode(fb, fb->nm, eta, r, F, &dm);
        mass_mode(fb, fb->nm, r, F, Mm);
    }
    mass_rigid(fb, &dm, Mm);
}

void sd_flex_mass(const sd_flex_body *fb, const double *eta, double *Mm)
{
    if (fb->desc.mass_model == SD_FLEX_LINEARISED) { /* 001 Sec 6: constant, at eta = 0 */
        const size_t n6 = 6 + (size_t)fb->nm;
        memcpy(Mm, fb->M0, n6 * n6 * sizeof(double));
        return;
    }
    fill_mass(fb, eta, Mm);
}

/* b_m (001 Eq 39) of the lumped model, eta NULL meaning eta = 0: the Euler-Lagrange (Boltzmann-Hamel)
 * velocity terms of the kinetic energy 1/2 chi^T M_m(eta) chi in the quasi-velocities chi = [V; eta-dot],
 *   b_m = [V x* (M_m chi)_rigid; 0] + (dM_m/dt) chi - [0; 1/2 chi^T (dM_m/d eta_r) chi].
 * For the point masses this is sum_j J_j^T [0; m_j a_j] (J_j the node's velocity map, flex_body.h),
 *   a_j = omega x v + omega x (omega x l_j) + 2 omega x (P_j eta-dot),
 * the classical acceleration of node j at zero generalized acceleration (Coriolis of the moving
 * frame, centripetal, Coriolis of the deflection rate). For the nodal inertias, constant in body
 * axes, it is [omega x J_j omega_j; 0; 0]: the moment 001 Eq 33 names, and no modal term (the modal
 * momentum Q_j^T J_j omega_j has no velocity-dependent rate when J_j and Q_j are fixed in F_k; the
 * projection Q_j^T (omega x J_j omega_j) would break chi^T b_m = 1/2 chi^T dM_m/dt chi, the power
 * balance of this energy). Summed with the modal integrals (W = sum m_j l_j ldot_j^T,
 * E_r = sum m_j l_j P_j,r^T = A_r + F_r, Omega = omega omega^T - |omega|^2 1):
 *   force   m omega x v + omega x (omega x h) + 2 omega x (Hp eta-dot)
 *   moment  h x (omega x v) + omega x (Io omega + JQ eta-dot) + 2 (omega tr W - W^T omega)
 *   mode r  Hp_r . (omega x v) + Omega : E_r + omega . sum_s eta-dot_s G2_sr
 * The rigid part is in m, h and Io: its V x* M V has the same form. What the modes accumulate
 * besides h and S: */
typedef struct bias_sums {
    double wxv[3], Om[9], W[9], Hpd[3], JQd[3];
} bias_sums;

static inline void bias_begin(const double V[6], bias_sums *bs)
{
    const double *w = V, *v = V + 3, w2 = sd_v3_dot(w, w);
    sd_v3_cross(w, v, bs->wxv);
    for (int a = 0; a < 3; ++a) {
        bs->Hpd[a] = bs->JQd[a] = 0.0;
        for (int b = 0; b < 3; ++b) bs->Om[3 * a + b] = w[a] * w[b] - (a == b) * w2;
    }
    for (int i = 0; i < 9; ++i) bs->W[i] = 0.0;
}

/* b_m's row of mode r, from F_r. */
SD_FLEX_INLINE void bias_mode(const sd_flex_body *fb, int nm, int r, const double F[9], const double *eta_dot,
                              const double V[6], bias_sums *bs, double *bm)
{
    const double *A = fb->A + 9 * r, *Hp = fb->Hp + 3 * r, *JQ = fb->JQ + 3 * r, pr = eta_dot[r];
    double g[3] = {0, 0, 0}, OmE = 0.0;
    for (int s = 0; s < nm; ++s) {
        const double ps = eta_dot[s], *G = fb->G2 + ((size_t)r * nm + s) * 3;
        g[0] += ps * G[0]; g[1] += ps * G[1]; g[2] += ps * G[2];
    }
    for (int i = 0; i < 9; ++i) {
        const double E = F[i] + A[i];
        OmE += bs->Om[i] * E;
        bs->W[i] += pr * E;
    }
    for (int a = 0; a < 3; ++a) {
        bs->Hpd[a] += pr * Hp[a];
        bs->JQd[a] += pr * JQ[a];
    }
    bm[6 + r] = sd_v3_dot(Hp, bs->wxv) + OmE + sd_v3_dot(V, g);
}

/* b_m's rigid rows, from h, S and the sums. */
static inline void bias_rigid(const sd_flex_body *fb, const deflected_moments *dm, const bias_sums *bs,
                              const double V[6], double *bm)
{
    const double *w = V, *S = dm->S, *W = bs->W, trS = S[0] + S[4] + S[8], trW = W[0] + W[4] + W[8];
    double L[3], t[3], u[3];
    for (int a = 0; a < 3; ++a) { /* L = Io omega + JQ eta-dot */
        double s = bs->JQd[a];
        for (int b = 0; b < 3; ++b) s += (fb->I0[3 * a + b] + (a == b) * trS - S[3 * a + b]) * w[b];
        L[a] = s;
    }
    /* moment */
    sd_v3_cross(dm->h, bs->wxv, t);
    sd_v3_cross(w, L, u);
    for (int a = 0; a < 3; ++a)
        bm[a] = t[a] + u[a] + 2.0 * (w[a] * trW - (W[a] * w[0] + W[3 + a] * w[1] + W[6 + a] * w[2]));
    /* force */
    double wxh[3], wxwxh[3], wxHpd[3];
    sd_v3_cross(w, dm->h, wxh);
    sd_v3_cross(w, wxh, wxwxh);
    sd_v3_cross(w, bs->Hpd, wxHpd);
    for (int a = 0; a < 3; ++a) bm[3 + a] = fb->m * bs->wxv[a] + wxwxh[a] + 2.0 * wxHpd[a];
}

static void bias(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6], double *bm)
{
    deflected_moments dm;
    bias_sums bs;
    moments_begin(fb, &dm);
    bias_begin(V, &bs);
    for (int r = 0; r < fb->nm; ++r) {
        double F[9];
        moments_mode(fb, fb->nm, eta, r, F, &dm);
        bias_mode(fb, fb->nm, r, F, eta_dot, V, &bs, bm);
    }
    bias_rigid(fb, &dm, &bs, V, bm);
}

/* The linearised model (001 Sec 6, the "ruthless" linearisation of Padilla and von Flotow): the
 * same terms with the nodes at l0_j (eta = 0 in h, Io, E_r): exact in V, linear in eta-dot (the lumped
 * model's bias has no term of second order in eta-dot), and without the eta-dependent ones
 * (centrifugal stiffening/softening). Like every ruthless linearisation it is not exactly
 * energy-conserving: chi^T b_m = sum m_j (v + omega x l0_j) . (omega x P_j eta-dot), of first order in
 * the deformation rates. */
void sd_flex_bias(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6], double *bm)
{
    bias(fb, fb->desc.mass_model == SD_FLEX_LINEARISED ? NULL : eta, eta_dot, V, bm);
}

/* The full model's M_m and b_m for nm modes, F_r formed once for both: always inlined, so that the
 * instances below for nm = 1 .. 10 (sd_flex_mass_bias) unroll the sums over the modes. */
SD_FLEX_INLINE void mass_bias_kernel(int nm, const sd_flex_body *fb, const double *eta, const double *eta_dot,
                                     const double V[6], double *Mm, double *bm)
{
    deflected_moments dm;
    bias_sums bs;
    moments_begin(fb, &dm);
    bias_begin(V, &bs);
    for (int r = 0; r < nm; ++r) {
        double F[9];
        moments_mode(fb, nm, eta, r, F, &dm);
        mass_mode(fb, nm, r, F, Mm);
        bias_mode(fb, nm, r, F, eta_dot, V, &bs, bm);
    }
    mass_rigid(fb, &dm, Mm);
    bias_rigid(fb, &dm, &bs, V, bm);
}

void sd_flex_mass_bias(const sd_flex_body *fb, const double *eta, const double *eta_dot, const double V[6],
                       double *Mm, double *bm)
{
    if (fb->desc.mass_model == SD_FLEX_LINEARISED) {
        sd_flex_mass(fb, eta, Mm);
        bias(fb, NULL, eta_dot, V, bm);
        return;
    }
    switch (fb->nm) {
    case 1: mass_bias_kernel(1, fb, eta, eta_dot, V, Mm, bm); break;
    case 2: mass_bias_kernel(2, fb, eta, eta_dot, V, Mm, bm); break;
    case 3: mass_bias_kernel(3, fb, eta, eta_dot, V, Mm, bm); break;
    case 4: mass_bias_kernel(4, fb, eta, eta_dot, V, Mm, bm); break;
    case 5: mass_bias_kernel(5, fb, eta, eta_dot, V, Mm, bm); break;
    case 6: mass_bias_kernel(6, fb, eta, eta_dot, V, Mm, bm); break;
    case 7: mass_bias_kernel(7, fb, eta, eta_dot, V, Mm, bm); break;
    case 8: mass_bias_kernel(8, fb, eta, eta_dot, V, Mm, bm); break;
    case 9: mass_bias_kernel(9, fb, eta, eta_dot, V, Mm, bm); break;
    case 10: mass_bias_kernel(10, fb, eta, eta_dot, V, Mm, bm); break;
    default: mass_bias_kernel(fb->nm, fb, eta, eta_dot, V, Mm, bm); break;
    }
}

/* 001 Eq 40 with modal damping: K_m eta + D_m eta-dot. */
void sd_flex_elastic(const sd_flex_body *fb, const double *eta, const double *eta_dot, double *fe)
{
    const int nm = fb->nm;
    for (int r = 0; r < nm; ++r) {
        const double *K = fb->K + (size_t)r * nm, *D = fb->D ? fb->D + (size_t)r * nm : NULL;
        double s = 0.0;
        for (int c = 0; c < nm; ++c) s += K[c] * eta[c] + (D ? D[c] * eta_dot[c] : 0.0);
        fe[r] = s;
    }
}

double sd_flex_strain_energy(const sd_flex_body *fb, const double *eta)
{
    const int nm = fb->nm;
    double E = 0.0;
    for (int r = 0; r < nm; ++r) {
        const double *K = fb->K + (size_t)r * nm;
        double s = 0.0;
        for (int c = 0; c < nm; ++c) s += K[c] * eta[c];
        E += eta[r] * s;
    }
    return 0.5 * E;
}

/* ---------------------------------------------------------------- node frames */

/* The coefficients of exp and of the right Jacobian of SO(3) as functions of s = |theta|^2:
 *   R   = 1 + c0 [theta x] + c1 [theta x]^2,    c0 = sin a / a, c1 = (1 - cos a)/a^2,
 *   J_r = 1 - c1 [theta x] + c2 [theta x]^2,    c2 = (a - sin a)/a^3,
 * and d1 = dc1/ds, d2 = dc2/ds. Below a = 0.1 the closed forms lose up to eps/a^2 to cancellation,
 * so their Taylor series are used there (five terms: the first omitted one is below 1e-20). */
void sd_flex_so3_coeffs(double s, double *c0, double *c1, double *c2, double *d1, double *d2)
{
    if (s < 1e-2) {
        *c0 = 1.0 - s / 6.0 * (1.0 - s / 20.0 * (1.0 - s / 42.0 * (1.0 - s / 72.0)));
        *c1 = 0.5 - s / 24.0 * (1.0 - s / 30.0 * (1.0 - s / 56.0 * (1.0 - s / 90.0)));
        *c2 = 1.0 / 6.0 - s / 120.0 * (1.0 - s / 42.0 * (1.0 - s / 72.0 * (1.0 - s / 110.0)));
        *d1 = -1.0 / 24.0 + s * (2.0 / 720.0 - s * (3.0 / 40320.0 - s * (4.0 / 3628800.0 - s * 5.0 / 479001600.0)));
        *d2 = -1.0 / 120.0 + s * (2.0 / 5040.0 - s * (3.0 / 362880.0 - s * (4.0 / 39916800.0 - s * 5.0 / 6227020800.0)));
        return;
    }
    const double a = sqrt(s), sa = sin(a), ca = cos(a);
    *c0 = sa / a;
    *c1 = (1.0 - ca) / s;
    *c2 = (a - sa) / (s * a);
    *d1 = (a * sa - 2.0 * (1.0 - ca)) / (2.0 * s * s);
    *d2 = (a * (1.0 - ca) - 3.0 * (a - sa)) / (2.0 * s * s * a);
}

/* theta = Q_t eta and the node's displacement P_t eta. */
void sd_flex_node_deflection(const sd_flex_body *fb, int t, const double *eta, double theta[3], double d[3])
{
    const size_t col = 6 * (size_t)fb->n;
    for (int a = 0; a < 3; ++a) theta[a] = d[a] = 0.0;
    for (int r = 0; r < fb->nm; ++r) {
        const double *Q = fb->modes + r * col + 6 * (size_t)t, e = eta[r];
        for (int a = 0; a < 3; ++a) {
            theta[a] += Q[a] * e;
            d[a] += Q[3 + a] * e;
        }
    }
}

/* What the node frame's pose, S_t and bias share: theta = Q_t eta, the displacement P_t eta, the
 * coefficients of sd_flex_so3_coeffs and R_t (formed once when a caller asks for all of them). */
typedef struct node_rotation {
    double theta[3], d[3], c0, c1, c2, d1, d2, R[9], T[9], T2[9];
} node_rotation;

static void node_rotation_at(const sd_flex_body *fb, int t, const double *eta, node_rotation *nr)
{
    sd_flex_node_deflection(fb, t, eta, nr->theta, nr->d);
    sd_flex_so3_coeffs(sd_v3_dot(nr->theta, nr->theta), &nr->c0, &nr->c1, &nr->c2, &nr->d1, &nr->d2);
    sd_m3_skew(nr->theta, nr->T);
    sd_m3_mul(nr->T, nr->T, nr->T2);
    for (int i = 0; i < 9; ++i) nr->R[i] = ((i % 4 == 0) ? 1.0 : 0.0) + nr->c0 * nr->T[i] + nr->c1 * nr->T2[i];
}

static void node_frame_from(const sd_flex_body *fb, int t, const node_rotation *nr, sd_transform *pose, double *S)
{
    memcpy(pose->R, nr->R, sizeof nr->R);
    const double *l0 = fb->pos + 3 * t;
    for (int a = 0; a < 3; ++a) pose->p[a] = l0[a] + nr->d[a];
    if (!S) return;
    double Jr[9];
    for (int i = 0; i < 9; ++i) Jr[i] = ((i % 4 == 0) ? 1.0 : 0.0) - nr->c1 * nr->T[i] + nr->c2 * nr->T2[i];
    const size_t col = 6 * (size_t)fb->n;
    for (int r = 0; r < fb->nm; ++r) { /* S_t = [J_r(theta) Pi_r^t; R_t^T Pi_t^t] */
        const double *Q = fb->modes + r * col + 6 * (size_t)t;
        sd_m3_mul_v(Jr, Q, S + 6 * r);
        sd_m3t_mul_v(nr->R, Q + 3, S + 6 * r + 3);
    }
}

/* d(S_t)/dt eta-dot at eta-ddot = 0, with thetadot = Q_t eta-dot, ddot = P_t eta-dot (the node's
 * deflection rate in body axes) and omega_n = J_r thetadot (the node's relative angular velocity in its
 * own axes):
 *   angular  dJ_r/dt thetadot = -c1' theta x thetadot + c2' theta x (theta x thetadot)
 *                               + c2 thetadot x (theta x thetadot),   c' = 2 (theta . thetadot) dc/ds
 *            (the terms of dJ_r/dt that end in [thetadot x] thetadot vanish);
 *   linear   d(R_t^T)/dt ddot = -omega_n x (R_t^T ddot), since dR_t/dt = R_t [omega_n x]. */
static void node_bias_from(const sd_flex_body *fb, int t, const node_rotation *nr, const double *eta_dot, double c[6])
{
    double th_dot[3], d_dot[3];
    const double *theta = nr->theta;
    sd_flex_node_deflection(fb, t, eta_dot, th_dot, d_dot);
    const double sdot = 2.0 * sd_v3_dot(theta, th_dot);
    double x[3], txx[3], dxx[3];
    sd_v3_cross(theta, th_dot, x);
    sd_v3_cross(theta, x, txx);
    sd_v3_cross(th_dot, x, dxx);
    for (int a = 0; a < 3; ++a) c[a] = -nr->d1 * sdot * x[a] + nr->d2 * sdot * txx[a] + nr->c2 * dxx[a];
    /* omega_n = J_r thetadot = thetadot - c1 theta x thetadot + c2 theta x (theta x thetadot) */
    double wn[3], Rtd[3], wxRtd[3];
    for (int a = 0; a < 3; ++a) wn[a] = th_dot[a] - nr->c1 * x[a] + nr->c2 * txx[a];
    sd_m3t_mul_v(nr->R, d_dot, Rtd);
    sd_v3_cross(wn, Rtd, wxRtd);
    for (int a = 0; a < 3; ++a) c[3 + a] = -wxRtd[a];
}

void sd_flex_node_frame(const sd_flex_body *fb, int t, const double *eta, sd_transform *pose, double *S)
{
    node_rotation nr;
    node_rotation_at(fb, t, eta, &nr);
    node_frame_from(fb, t, &nr, pose, S);
}

void sd_flex_node_motion(const sd_flex_body *fb, int t, const double *eta, const double *eta_dot, sd_transform *pose,
                         double *S, double c[6])
{
    node_rotation nr;
    node_rotation_at(fb, t, eta, &nr);
    node_frame_from(fb, t, &nr, pose, S);
    node_bias_from(fb, t, &nr, eta_dot, c);
}

/* ---------------------------------------------------------------- for the code generator */

void sd_flex_body_integrals(const sd_flex_body *fb, sd_flex_integrals *out)
{
    *out = (sd_flex_integrals){.nm = fb->nm, .n_nodes = fb->n, .mass_model = fb->desc.mass_model, .m = fb->m,
                               .h0 = fb->h0, .I0 = fb->I0, .Hp = fb->Hp, .JQ = fb->JQ, .N0 = fb->N0, .A = fb->A,
                               .C = fb->C, .G2 = fb->G2, .Mff = fb->Mff, .M0 = fb->M0, .K = fb->K, .D = fb->D,
                               .modes = fb->modes, .node_position = fb->pos};
}
