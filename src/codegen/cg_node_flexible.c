/*
 * src/codegen/cg_node_flexible.c — the flexible node kind's operations, emitted (cg_gen.h): what
 * node_flexible.c and flex_body.c compute for the engine, on the generator's scalars. A node of
 * dimension 6 + nf: M_m(eta) and b_m(eta, eta-dot, V) of the lumped model (001 Eq 25, 38-40;
 * flex_body.c's file comment), the elimination of the modes in the articulated sweep (001 Eq 62-63),
 * and the node frames a child riding on a flexible parent moves with (node_engine.h "nodes on
 * nodes"). The modal integrals are the body's constants: they fold into the generated file, and what
 * is written is the part that depends on eta, eta-dot and V (the linearised mass model's M_m is a
 * constant altogether).
 *
 * Each operation follows the library's order of operations, so the generated code and the library
 * differ by round-off only where the frames differ (the composite inertia: body axes here, world axes
 * in mass_matrix.c).
 */
#include <math.h>
#include <stdlib.h>

#include "cg_gen.h"
#include "algorithms/node_engine.h"
#include "flex/flex_body.h"

/* ---- the layout of a node's ext block (cg_gen.h) ----
 * Flexible node (nf modes): the blocks of cg_node (Y, bf, ff, Rrf, Rff, Prf, Pff, zf, eps_f, nu_f),
 * then kind_state: M_m's rigid block as 13 numbers, M^rf (6 x nf), M^ff, the F_r of flex_body.c
 * (9 per mode), S (9), and the elimination's L (nf x nf), 1 / L(i, i), g^T (nf x 6).
 * Child on a node (ny = the parent's modes), after it: the node frame N (12), c placed in N (12),
 * S_t (6 x ny), theta (3) and the SO(3) coefficients c1, c2, d1, d2 its acceleration term needs. */
enum { FLEX_STATE_FIXED = 13 + 9, ATTACH_FIXED = 12 + 12 + 3 + 4 };

static size_t flex_state_size(int nf) { return FLEX_STATE_FIXED + (size_t)nf * (6 + nf + 9 + nf + 1 + 6); }
static size_t attach_state_size(int ny) { return ATTACH_FIXED + 6 * (size_t)ny; }

static int is_flexible(const sd_model *m, int k) { return sd_node_kind_of(m, k) == SD_NODE_FLEXIBLE; }
static int is_attached(const sd_model *m, int k) { return sd_node_parent_node(m, k) >= 0; }

size_t cg_node_ext_size(const sd_model *m, int k)
{
    const int nf = is_flexible(m, k) ? sd_node_nmodes(m, k) : 0;
    const int ny = is_attached(m, k) ? sd_node_nmodes(m, m->parent[k]) : 0;
    size_t n = 6 * (size_t)ny + (size_t)nf * (5 + 4 * 6) + 2 * (size_t)nf * (size_t)nf;
    if (is_flexible(m, k)) n += flex_state_size(nf);
    if (is_attached(m, k)) n += attach_state_size(ny);
    return n;
}

void cg_node_ext_layout(const sd_model *m, int k, cg_node *nd, cg_val *ext)
{
    const int nf = is_flexible(m, k) ? sd_node_nmodes(m, k) : 0;
    nd->nf = nf;
    nd->vf = nf ? m->mode_v_index[k] : 0;
    nd->ny = is_attached(m, k) ? sd_node_nmodes(m, m->parent[k]) : 0;
    nd->ext = ext;
    nd->next = cg_node_ext_size(m, k);
    cg_val *x = ext;
    nd->Y = x, x += 6 * nd->ny;
    nd->bf = x, x += nf;
    nd->ff = x, x += nf;
    nd->zf = x, x += nf;
    nd->eps_f = x, x += nf;
    nd->nu_f = x, x += nf;
    nd->Rrf = x, x += 6 * nf;
    nd->Prf = x, x += 6 * nf;
    nd->Rff = x, x += nf * nf;
    nd->Pff = x, x += nf * nf;
    nd->kind_state = x;
}

/* The pieces of kind_state (above). */
typedef struct flex_state {
    cg_val *M13, *Mrf, *Mff, *F, *S, *L, *rinv, *gT;
} flex_state;

static flex_state flex_state_of(const cg_node *nd)
{
    const int nf = nd->nf;
    flex_state s;
    cg_val *x = nd->kind_state;
    s.M13 = x, x += 13;
    s.Mrf = x, x += 6 * nf;
    s.Mff = x, x += nf * nf;
    s.F = x, x += 9 * nf;
    s.S = x, x += 9;
    s.L = x, x += nf * nf;
    s.rinv = x, x += nf;
    s.gT = x;
    return s;
}

/* The attachment block's pieces after N and T (12 scalars each: R, p). */
typedef struct attach_state {
    cg_val *St, *theta, *coef; /* coef: c1, c2, d1, d2 */
} attach_state;

/* The attachment block of node c (after the flexible kind's state when c is flexible too). */
static cg_val *attach_block(const sd_model *m, int c, const cg_node *nd)
{
    return nd->kind_state + (is_flexible(m, c) ? flex_state_size(nd->nf) : 0);
}

static void xform_store(const cg_xform *X, cg_val *out)
{
    for (int i = 0; i < 9; ++i) out[i] = X->R[i];
    for (int i = 0; i < 3; ++i) out[9 + i] = X->p[i];
}

static void xform_load(const cg_val *in, cg_xform *X)
{
    for (int i = 0; i < 9; ++i) X->R[i] = in[i];
    for (int i = 0; i < 3; ++i) X->p[i] = in[9 + i];
}

static sd_flex_integrals integrals_of(const sd_model *m, int k)
{
    sd_flex_integrals fi;
    sd_flex_body_integrals(m->flex[k], &fi);
    return fi;
}

/* fn(a), done at generation when a is a constant. */
static cg_val call1(cg_emit *e, const char *name, double (*fn)(double), cg_val a)
{
    return cg_is_const(a) ? cg_const(fn(a.c)) : cg_call1(e, name, a);
}

static void skew(cg_emit *e, const cg_val a[3], cg_val out[9])
{
    const cg_val z = cg_const(0.0);
    out[0] = z, out[1] = cg_neg(e, a[2]), out[2] = a[1];
    out[3] = a[2], out[4] = z, out[5] = cg_neg(e, a[0]);
    out[6] = cg_neg(e, a[1]), out[7] = a[0], out[8] = z;
}

/* ==== M_m and b_m of the lumped model (flex_body.c: mass_bias_kernel, sd_flex_elastic) ==== */

/* M_m(eta) into kind_state: F_r, h, S and mode r's column (N0_r + axial(F_r), Hp_r), M^ff, and the
 * rigid block (m, h, Io = I0 + tr(S) 1 - S, S symmetrised). The linearised model: M_m(0), constants. */
static void flexible_mass(cg_gen *g, int k)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    const sd_flex_integrals fi = integrals_of(m, k);
    const flex_state st = flex_state_of(nd);
    const int nm = nd->nf, full = fi.mass_model != SD_FLEX_LINEARISED;
    const cg_val *eta = g->q + m->mode_q_index[k];
    cg_val h[3], *S = st.S;
    for (int a = 0; a < 3; ++a) h[a] = cg_const(fi.h0[a]);
    for (int i = 0; i < 9; ++i) S[i] = cg_const(0.0);
    for (int r = 0; r < nm; ++r) {
        cg_val *F = st.F + 9 * r;
        const double *A = fi.A + 9 * r, *Hp = fi.Hp + 3 * r, *N0 = fi.N0 + 3 * r;
        for (int i = 0; i < 9; ++i) F[i] = cg_const(0.0);
        if (full) {
            for (int s = 0; s < nm; ++s) /* F_r = sum_s eta_s C_sr */
                for (int i = 0; i < 9; ++i)
                    F[i] = cg_add(e, F[i], cg_mul(e, eta[s], cg_const(fi.C[((size_t)r * nm + s) * 9 + i])));
            for (int a = 0; a < 3; ++a) {
                h[a] = cg_add(e, h[a], cg_mul(e, eta[r], cg_const(Hp[a])));
                for (int b = 0; b < 3; ++b)
                    S[3 * a + b] = cg_add(e, S[3 * a + b],
                                          cg_mul(e, eta[r], cg_add(e, cg_const(A[3 * a + b] + A[3 * b + a]), F[3 * a + b])));
            }
        }
        const cg_val N[3] = {cg_sub(e, F[5], F[7]), cg_sub(e, F[6], F[2]), cg_sub(e, F[1], F[3])}; /* axial(F_r) */
        for (int a = 0; a < 3; ++a) {
            st.Mrf[6 * r + a] = full ? cg_add(e, cg_const(N0[a]), N[a]) : cg_const(fi.M0[a * (6 + nm) + 6 + r]);
            st.Mrf[6 * r + 3 + a] = cg_const(Hp[a]);
        }
        for (int s = 0; s < nm; ++s) st.Mff[r * nm + s] = cg_const(fi.Mff[(size_t)r * nm + s]);
    }
    const cg_val trS = cg_add(e, cg_add(e, S[0], S[4]), S[8]);
    st.M13[0] = cg_const(fi.m);
    for (int a = 0; a < 3; ++a) {
        st.M13[1 + a] = h[a];
        for (int b = 0; b < 3; ++b) {
            const cg_val Sab = cg_mul(e, cg_const(0.5), cg_add(e, S[3 * a + b], S[3 * b + a]));
            cg_val Io = cg_const(0.5 * (fi.I0[3 * a + b] + fi.I0[3 * b + a]));
            if (a == b) Io = cg_add(e, Io, trS);
            st.M13[4 + 3 * a + b] = cg_sub(e, Io, Sab);
        }
    }
}

/* b_m (001 Eq 39; flex_body.c bias_mode, bias_rigid) with the elastic and damping forces K_m eta +
 * D_m eta-dot (001 Eq 40) and -f_ext on the rigid part: into b (6) and bf (nf). */
static void flexible_bias(cg_gen *g, int k)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    const sd_flex_integrals fi = integrals_of(m, k);
    const flex_state st = flex_state_of(nd);
    const int nm = nd->nf;
    const cg_val *eta = g->q + m->mode_q_index[k], *eta_dot = g->u + nd->vf, *w = nd->V, *h = st.M13 + 1;
    const cg_val *S = st.S;
    cg_val wxv[3], Om[9], W[9], Hpd[3], JQd[3];
    const cg_val w2 = cg_dot(e, w, w, 3);
    cg_v3_cross(e, w, nd->V + 3, wxv);
    for (int a = 0; a < 3; ++a) {
        Hpd[a] = JQd[a] = cg_const(0.0);
        for (int b = 0; b < 3; ++b) {
            const cg_val ww = cg_mul(e, w[a], w[b]);
            Om[3 * a + b] = a == b ? cg_sub(e, ww, w2) : ww;
        }
    }
    for (int i = 0; i < 9; ++i) W[i] = cg_const(0.0);
    for (int r = 0; r < nm; ++r) {
        const double *A = fi.A + 9 * r, *Hp = fi.Hp + 3 * r, *JQ = fi.JQ + 3 * r;
        const cg_val pr = eta_dot[r];
        cg_val gr[3] = {cg_const(0.0), cg_const(0.0), cg_const(0.0)}, OmE = cg_const(0.0), Hpc[3];
        for (int s = 0; s < nm; ++s)
            for (int c = 0; c < 3; ++c)
                gr[c] = cg_add(e, gr[c], cg_mul(e, eta_dot[s], cg_const(fi.G2[((size_t)r * nm + s) * 3 + c])));
        for (int i = 0; i < 9; ++i) {
            const cg_val E = cg_add(e, st.F[9 * r + i], cg_const(A[i]));
            OmE = cg_add(e, OmE, cg_mul(e, Om[i], E));
            W[i] = cg_add(e, W[i], cg_mul(e, pr, E));
        }
        for (int a = 0; a < 3; ++a) {
            Hpd[a] = cg_add(e, Hpd[a], cg_mul(e, pr, cg_const(Hp[a])));
            JQd[a] = cg_add(e, JQd[a], cg_mul(e, pr, cg_const(JQ[a])));
            Hpc[a] = cg_const(Hp[a]);
        }
        cg_val br = cg_add(e, cg_add(e, cg_dot(e, Hpc, wxv, 3), OmE), cg_dot(e, w, gr, 3));
        cg_val fe = cg_const(0.0); /* K_m eta + D_m eta-dot, row r */
        for (int c = 0; c < nm; ++c) {
            cg_val t = cg_mul(e, cg_const(fi.K[(size_t)r * nm + c]), eta[c]);
            if (fi.D) t = cg_add(e, t, cg_mul(e, cg_const(fi.D[(size_t)r * nm + c]), eta_dot[c]));
            fe = cg_add(e, fe, t);
        }
        nd->bf[r] = cg_add(e, br, fe);
    }
    const cg_val trS = cg_add(e, cg_add(e, S[0], S[4]), S[8]), trW = cg_add(e, cg_add(e, W[0], W[4]), W[8]);
    cg_val L[3], t[3], u[3], wxh[3], wxwxh[3], wxHpd[3];
    for (int a = 0; a < 3; ++a) { /* L = Io omega + JQ eta-dot, Io with S as it is (flex_body.c bias_rigid) */
        cg_val s = JQd[a];
        for (int b = 0; b < 3; ++b) {
            cg_val Io = cg_const(fi.I0[3 * a + b]);
            if (a == b) Io = cg_add(e, Io, trS);
            s = cg_add(e, s, cg_mul(e, cg_sub(e, Io, S[3 * a + b]), w[b]));
        }
        L[a] = s;
    }
    cg_v3_cross(e, h, wxv, t);
    cg_v3_cross(e, w, L, u);
    cg_v3_cross(e, w, h, wxh);
    cg_v3_cross(e, w, wxh, wxwxh);
    cg_v3_cross(e, w, Hpd, wxHpd);
    const cg_val two = cg_const(2.0);
    for (int a = 0; a < 3; ++a) {
        const cg_val Ww = cg_add(e, cg_add(e, cg_mul(e, W[a], w[0]), cg_mul(e, W[3 + a], w[1])), cg_mul(e, W[6 + a], w[2]));
        const cg_val moment = cg_add(e, cg_add(e, t[a], u[a]), cg_mul(e, two, cg_sub(e, cg_mul(e, w[a], trW), Ww)));
        const cg_val force = cg_add(e, cg_add(e, cg_mul(e, cg_const(fi.m), wxv[a]), wxwxh[a]), cg_mul(e, two, wxHpd[a]));
        nd->b[a] = cg_sub(e, moment, g->f_ext[6 * k + a]);
        nd->b[3 + a] = cg_sub(e, force, g->f_ext[6 * k + 3 + a]);
    }
}

/* M(k) as one (6 + nf)^2 row-major matrix from its blocks. */
static void full_mass(cg_gen *g, const cg_node *nd, cg_val *M)
{
    const flex_state st = flex_state_of(nd);
    const int nf = nd->nf, n = 6 + nf;
    cg_val rr[36];
    cg_rigid_inertia_to_sym6(&g->e, st.M13, rr);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) M[i * n + j] = rr[6 * i + j];
    for (int r = 0; r < nf; ++r) {
        for (int i = 0; i < 6; ++i) M[i * n + 6 + r] = M[(6 + r) * n + i] = st.Mrf[6 * r + i];
        for (int s = 0; s < nf; ++s) M[(6 + r) * n + 6 + s] = st.Mff[r * nf + s];
    }
}

/* ==== the flexible kind's operations ==== */

static void flexible_placement(cg_gen *g, int k)
{
    cg_hinge_placement(g, k);
    flexible_mass(g, k);
}

static void flexible_velocities(cg_gen *g, int k)
{
    cg_hinge_velocities(g, k);
    flexible_bias(g, k);
}

/* f_m = M_m [alpha; eta-ddot] + b_m (node_flexible.c sd_flexible_own_force), eta-ddot the function's
 * accelerations (Newton-Euler: the input qdd). */
static void flexible_own_force(cg_gen *g, int k, const cg_val alpha[6], cg_val f[6])
{
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    const int nf = nd->nf, n = 6 + nf;
    cg_val M[(6 + 16) * (6 + 16)], *Mp = M, *heap = NULL;
    if (n > 6 + 16) {
        heap = malloc((size_t)n * (size_t)n * sizeof *heap);
        if (!heap) {
            g->out_of_memory = 1;
            return;
        }
        Mp = heap;
    }
    full_mass(g, nd, Mp);
    for (int i = 0; i < n; ++i) {
        cg_val s = i < 6 ? nd->b[i] : nd->bf[i - 6];
        for (int j = 0; j < n; ++j) s = cg_add(e, s, cg_mul(e, Mp[i * n + j], j < 6 ? alpha[j] : g->w[nd->vf + j - 6]));
        if (i < 6) f[i] = s;
        else nd->ff[i - 6] = s;
    }
    free(heap);
}

static void flexible_composite_start(cg_gen *g, int k, cg_val R[13])
{
    cg_node *nd = &g->node[k];
    const flex_state st = flex_state_of(nd);
    for (int i = 0; i < 13; ++i) R[i] = st.M13[i];
    for (int i = 0; i < 6 * nd->nf; ++i) nd->Rrf[i] = st.Mrf[i];
    for (int i = 0; i < nd->nf * nd->nf; ++i) nd->Rff[i] = st.Mff[i];
}

static void flexible_articulated_start(cg_gen *g, int k, cg_val P[36])
{
    cg_node *nd = &g->node[k];
    const flex_state st = flex_state_of(nd);
    cg_rigid_inertia_to_sym6(&g->e, st.M13, P);
    for (int i = 0; i < 6 * nd->nf; ++i) nd->Prf[i] = st.Mrf[i];
    for (int i = 0; i < nd->nf * nd->nf; ++i) nd->Pff[i] = st.Mff[i];
}

/* 001 Eq 62 (node_flexible.c eliminate_modes_kernel): D_f = P^ff = L L^T with reciprocal pivots,
 * g^T = D_f^-1 P^fr through W = L^-1 P^fr, P_R = P^rr - W^T W into P. A pivot not above 1e-13 times
 * D_f's largest diagonal entry is the library's singular D_f. */
static void flexible_eliminate(cg_gen *g, int k)
{
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    const flex_state st = flex_state_of(nd);
    const int nm = nd->nf;
    if (nm == 0) return;
    cg_val *L = st.L, *rinv = st.rinv, *gT = st.gT, scale = cg_const(0.0);
    for (int i = 0; i < nm; ++i) scale = cg_call2(e, "fmax", call1(e, "fabs", fabs, nd->Pff[i * nm + i]), scale);
    const cg_val min_pivot = cg_mul(e, cg_const(1e-13), scale);
    char buf[40], buf2[40];
    for (int i = 0; i < nm; ++i) {
        for (int j = 0; j < i; ++j) {
            cg_val s = nd->Pff[i * nm + j];
            for (int l = 0; l < j; ++l) s = cg_sub(e, s, cg_mul(e, L[i * nm + l], L[j * nm + l]));
            L[i * nm + j] = cg_mul(e, s, rinv[j]);
        }
        cg_val dii = nd->Pff[i * nm + i];
        for (int l = 0; l < i; ++l) dii = cg_sub(e, dii, cg_mul(e, L[i * nm + l], L[i * nm + l]));
        cg_line(e, "    if (!(%s > %s)) %s\n", cg_text(dii, buf), cg_text(min_pivot, buf2), g->singular_return);
        const cg_val lii = call1(e, "sqrt", sqrt, dii);
        L[i * nm + i] = lii;
        rinv[i] = cg_div(e, cg_const(1.0), lii);
        for (int c = 0; c < 6; ++c) {
            cg_val w = nd->Prf[6 * i + c];
            for (int j = 0; j < i; ++j) w = cg_sub(e, w, cg_mul(e, L[i * nm + j], gT[6 * j + c]));
            gT[6 * i + c] = cg_mul(e, w, rinv[i]);
        }
    }
    for (int r = 0; r < 6; ++r)
        for (int c = r; c < 6; ++c) {
            cg_val x = nd->P[6 * r + c];
            for (int i = 0; i < nm; ++i) x = cg_sub(e, x, cg_mul(e, gT[6 * i + r], gT[6 * i + c]));
            nd->P[6 * r + c] = nd->P[6 * c + r] = x;
        }
    for (int i = nm - 1; i >= 0; --i)
        for (int c = 0; c < 6; ++c) {
            cg_val w = gT[6 * i + c];
            for (int j = i + 1; j < nm; ++j) w = cg_sub(e, w, cg_mul(e, L[j * nm + i], gT[6 * j + c]));
            gT[6 * i + c] = cg_mul(e, w, rinv[i]);
        }
}

/* eps_f = T_f - z_f, z += g eps_f, nu_f = D_f^-1 eps_f = L^-T L^-1 eps_f (001 Eq 63). */
static void flexible_own_residual(cg_gen *g, int k, const cg_val *T)
{
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[k];
    const flex_state st = flex_state_of(nd);
    const int nm = nd->nf;
    for (int i = 0; i < nm; ++i) {
        nd->eps_f[i] = cg_sub(e, T[nd->vf + i], nd->zf[i]);
        for (int r = 0; r < 6; ++r) nd->z[r] = cg_add(e, nd->z[r], cg_mul(e, st.gT[6 * i + r], nd->eps_f[i]));
    }
    for (int i = 0; i < nm; ++i) {
        cg_val s = nd->eps_f[i];
        for (int l = 0; l < i; ++l) s = cg_sub(e, s, cg_mul(e, st.L[i * nm + l], nd->nu_f[l]));
        nd->nu_f[i] = cg_mul(e, s, st.rinv[i]);
    }
    for (int i = nm - 1; i >= 0; --i) {
        cg_val s = nd->nu_f[i];
        for (int j = i + 1; j < nm; ++j) s = cg_sub(e, s, cg_mul(e, st.L[j * nm + i], nd->nu_f[j]));
        nd->nu_f[i] = cg_mul(e, s, st.rinv[i]);
    }
}

/* eta-ddot = nu_f - g* alpha (001 Eq 63, second half). */
static void flexible_own_scatter(cg_gen *g, int k, const cg_val alpha[6], cg_val *x)
{
    cg_node *nd = &g->node[k];
    const flex_state st = flex_state_of(nd);
    for (int i = 0; i < nd->nf; ++i) x[nd->vf + i] = cg_sub(&g->e, nd->nu_f[i], cg_dot(&g->e, st.gT + 6 * i, alpha, 6));
}

const cg_kind_ops cg_flexible_kind = {
    .placement = flexible_placement,
    .velocities = flexible_velocities,
    .own_force = flexible_own_force,
    .composite_start = flexible_composite_start,
    .articulated_start = flexible_articulated_start,
    .passive = cg_hinge_passive,
    .eliminate = flexible_eliminate,
    .own_residual = flexible_own_residual,
    .own_scatter = flexible_own_scatter,
};

/* ==== node frames: a child riding on node t of its flexible parent (flex_body.c "node frames",
 * node_flexible.c sd_attached_motion) ==== */

/* The SO(3) coefficients c0, c1, c2, d1, d2 of s = |theta|^2 (flex_body.c so3_coeffs): the Taylor
 * series below s = 1e-2, the closed forms above, chosen at run time (the closed forms evaluated at a
 * harmless s = 1 when not chosen). */
static void so3_coeffs(cg_emit *e, cg_val s, cg_val out[5])
{
    const cg_val one = cg_const(1.0);
#define C(x) cg_const(x)
#define SUB(a, b) cg_sub(e, a, b)
#define MUL(a, b) cg_mul(e, a, b)
#define DIV(a, b) cg_div(e, a, b)
    const cg_val taylor[5] = {
        SUB(one, MUL(DIV(s, C(6.0)), SUB(one, MUL(DIV(s, C(20.0)), SUB(one, MUL(DIV(s, C(42.0)), SUB(one, DIV(s, C(72.0))))))))),
        SUB(C(0.5), MUL(DIV(s, C(24.0)), SUB(one, MUL(DIV(s, C(30.0)), SUB(one, MUL(DIV(s, C(56.0)), SUB(one, DIV(s, C(90.0))))))))),
        SUB(C(1.0 / 6.0),
            MUL(DIV(s, C(120.0)), SUB(one, MUL(DIV(s, C(42.0)), SUB(one, MUL(DIV(s, C(72.0)), SUB(one, DIV(s, C(110.0))))))))),
        cg_add(e, C(-1.0 / 24.0),
               MUL(s, SUB(C(2.0 / 720.0),
                          MUL(s, SUB(C(3.0 / 40320.0), MUL(s, SUB(C(4.0 / 3628800.0), DIV(MUL(s, C(5.0)), C(479001600.0))))))))),
        cg_add(e, C(-1.0 / 120.0),
               MUL(s, SUB(C(2.0 / 5040.0),
                          MUL(s, SUB(C(3.0 / 362880.0), MUL(s, SUB(C(4.0 / 39916800.0), DIV(MUL(s, C(5.0)), C(6227020800.0))))))))),
    };
    const cg_val below = SUB(s, C(1e-2));
    if (cg_is_const(below) && below.c < 0) {
        for (int i = 0; i < 5; ++i) out[i] = taylor[i];
        return;
    }
    const cg_val sc = cg_select_negative(e, below, one, s);
    const cg_val a = call1(e, "sqrt", sqrt, sc), sa = call1(e, "sin", sin, a), ca = call1(e, "cos", cos, a);
    const cg_val omc = SUB(one, ca), amsa = SUB(a, sa), ss2 = MUL(C(2.0), MUL(sc, sc));
    const cg_val closed[5] = {
        DIV(sa, a),
        DIV(omc, sc),
        DIV(amsa, MUL(sc, a)),
        DIV(SUB(MUL(a, sa), MUL(C(2.0), omc)), ss2),
        DIV(SUB(MUL(a, omc), MUL(C(3.0), amsa)), MUL(ss2, a)),
    };
    for (int i = 0; i < 5; ++i) out[i] = cg_select_negative(e, below, taylor[i], closed[i]);
#undef C
#undef SUB
#undef MUL
#undef DIV
}

/* Q_t x and P_t x: the rotation and translation rows of node t's mode shapes times x (nm). */
static void node_deflection(cg_emit *e, const sd_flex_integrals *fi, int t, const cg_val *x, cg_val rot[3], cg_val tr[3])
{
    for (int a = 0; a < 3; ++a) rot[a] = tr[a] = cg_const(0.0);
    for (int r = 0; r < fi->nm; ++r) {
        const double *Q = fi->modes + (size_t)r * 6 * (size_t)fi->n_nodes + 6 * (size_t)t;
        for (int a = 0; a < 3; ++a) {
            rot[a] = cg_add(e, rot[a], cg_mul(e, cg_const(Q[a]), x[r]));
            tr[a] = cg_add(e, tr[a], cg_mul(e, cg_const(Q[3 + a]), x[r]));
        }
    }
}

static attach_state attach_state_of(const sd_model *m, int c, const cg_node *nd)
{
    cg_val *x = attach_block(m, c, nd);
    attach_state s;
    s.St = x + 24;
    s.theta = s.St + 6 * nd->ny;
    s.coef = s.theta + 3;
    return s;
}

void cg_attached_placement(cg_gen *g, int c, const cg_xform *XJ)
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[c];
    const int p = m->parent[c], t = m->parent_node[c];
    const sd_flex_integrals fi = integrals_of(m, p);
    const attach_state st = attach_state_of(m, c, nd);
    cg_val *block = attach_block(m, c, nd), d[3], co[5], T[9], T2[9], Jr[9];
    cg_xform N, Tc, Xnp;
    node_deflection(e, &fi, t, g->q + m->mode_q_index[p], st.theta, d);
    so3_coeffs(e, cg_dot(e, st.theta, st.theta, 3), co);
    skew(e, st.theta, T);
    cg_m3_mul(e, T, T, T2);
    const double *l0 = fi.node_position + 3 * t;
    for (int i = 0; i < 9; ++i) {
        const cg_val I = cg_const(i % 4 == 0 ? 1.0 : 0.0);
        N.R[i] = cg_add(e, cg_add(e, I, cg_mul(e, co[0], T[i])), cg_mul(e, co[1], T2[i]));
        Jr[i] = cg_add(e, cg_sub(e, I, cg_mul(e, co[1], T[i])), cg_mul(e, co[2], T2[i]));
    }
    for (int a = 0; a < 3; ++a) N.p[a] = cg_add(e, cg_const(l0[a]), d[a]);
    for (int r = 0; r < fi.nm; ++r) { /* S_t = [J_r(theta) Pi_r^t; R_t^T Pi_t^t] */
        const double *Q = fi.modes + (size_t)r * 6 * (size_t)fi.n_nodes + 6 * (size_t)t;
        const cg_val Qr[3] = {cg_const(Q[0]), cg_const(Q[1]), cg_const(Q[2])};
        const cg_val Pr[3] = {cg_const(Q[3]), cg_const(Q[4]), cg_const(Q[5])};
        cg_m3_mul_v(e, Jr, Qr, st.St + 6 * r);
        cg_m3t_mul_v(e, N.R, Pr, st.St + 6 * r + 3);
    }
    cg_xform_const(m->node_placement[c].R, m->node_placement[c].p, &Xnp);
    cg_xform_compose(e, &Xnp, XJ, &Tc);
    cg_xform_compose(e, &N, &Tc, &nd->Xup);
    for (int r = 0; r < nd->ny; ++r) cg_motion_to_child(e, &Tc, st.St + 6 * r, nd->Y + 6 * r); /* Y = X(c <- N) S_t */
    xform_store(&N, block);
    xform_store(&Tc, block + 12);
    for (int i = 0; i < 4; ++i) st.coef[i] = co[1 + i];
}

void cg_attached_velocity(cg_gen *g, int c, cg_val V[6], cg_val a[6])
{
    const sd_model *m = g->m;
    cg_emit *e = &g->e;
    cg_node *nd = &g->node[c];
    const int p = m->parent[c], t = m->parent_node[c], nmp = nd->ny;
    const cg_val *eta_dot = g->u + g->node[p].vf;
    if (V) { /* V += Y(c) eta-dot(p) */
        cg_child_motion_modes(g, c, eta_dot, V);
        return;
    }
    const sd_flex_integrals fi = integrals_of(m, p);
    const attach_state st = attach_state_of(m, c, nd);
    const cg_val *block = attach_block(m, c, nd), *theta = st.theta;
    const cg_val c1 = st.coef[0], c2 = st.coef[1], d1 = st.coef[2], d2 = st.coef[3];
    cg_xform N, Tc;
    xform_load(block, &N);
    xform_load(block + 12, &Tc);
    /* cN = d(S_t)/dt eta-dot (flex_body.c node_bias_from) */
    cg_val th_dot[3], d_dot[3], x[3], txx[3], dxx[3], wn[3], Rtd[3], wxRtd[3], cN[6];
    node_deflection(e, &fi, t, eta_dot, th_dot, d_dot);
    const cg_val sdot = cg_mul(e, cg_const(2.0), cg_dot(e, theta, th_dot, 3));
    cg_v3_cross(e, theta, th_dot, x);
    cg_v3_cross(e, theta, x, txx);
    cg_v3_cross(e, th_dot, x, dxx);
    for (int i = 0; i < 3; ++i) {
        cN[i] = cg_add(e, cg_add(e, cg_mul(e, cg_mul(e, cg_neg(e, d1), sdot), x[i]), cg_mul(e, cg_mul(e, d2, sdot), txx[i])),
                       cg_mul(e, c2, dxx[i]));
        wn[i] = cg_add(e, cg_sub(e, th_dot[i], cg_mul(e, c1, x[i])), cg_mul(e, c2, txx[i]));
    }
    cg_m3t_mul_v(e, N.R, d_dot, Rtd);
    cg_v3_cross(e, wn, Rtd, wxRtd);
    for (int i = 0; i < 3; ++i) cN[3 + i] = cg_neg(e, wxRtd[i]);
    /* the node frame on p: cN += V_N x w, V_N = X(N <- p) V(p) + w, w = S_t eta-dot(p); a += X(c <- N) cN */
    cg_val w[6], VN[6], cc[6], ac[6];
    for (int i = 0; i < 6; ++i) w[i] = cg_const(0.0);
    for (int r = 0; r < nmp; ++r)
        for (int i = 0; i < 6; ++i) w[i] = cg_add(e, w[i], cg_mul(e, st.St[6 * r + i], eta_dot[r]));
    cg_motion_to_child(e, &N, g->node[p].V, VN);
    for (int i = 0; i < 6; ++i) VN[i] = cg_add(e, VN[i], w[i]);
    cg_motion_cross(e, VN, w, cc);
    for (int i = 0; i < 6; ++i) cN[i] = cg_add(e, cN[i], cc[i]);
    cg_motion_to_child(e, &Tc, cN, ac);
    for (int i = 0; i < 6; ++i) a[i] = cg_add(e, a[i], ac[i]);
}

/* ==== phi(p, c) beyond the rigid 6 (node_flexible.c: add_cols, add_to_parent_modes,
 * inertia_modes_kernel) ==== */

void cg_child_motion_modes(cg_gen *g, int c, const cg_val *x_parent, cg_val out[6])
{
    const cg_node *nd = &g->node[c];
    for (int r = 0; r < nd->ny; ++r)
        for (int i = 0; i < 6; ++i) out[i] = cg_add(&g->e, out[i], cg_mul(&g->e, nd->Y[6 * r + i], x_parent[r]));
}

void cg_force_to_parent_modes(cg_gen *g, int c, const cg_val f[6], cg_val *acc_p)
{
    const cg_node *nd = &g->node[c];
    for (int r = 0; r < nd->ny; ++r) acc_p[r] = cg_add(&g->e, acc_p[r], cg_dot(&g->e, nd->Y + 6 * r, f, 6));
}

void cg_inertia_to_parent_modes(cg_gen *g, int c, const cg_val *sym6, const cg_val *ri, cg_val *Irf_p, cg_val *Iff_p)
{
    cg_emit *e = &g->e;
    const cg_node *nd = &g->node[c];
    const int nmp = nd->ny;
    for (int r = 0; r < nmp; ++r) {
        cg_val w[6], wp[6];
        if (sym6) cg_m6_mul_v(e, sym6, nd->Y + 6 * r, w);
        else cg_rigid_inertia_mul(e, ri, nd->Y + 6 * r, w);
        cg_force_to_parent(e, &nd->Xup, w, wp);
        for (int i = 0; i < 6; ++i) Irf_p[6 * r + i] = cg_add(e, Irf_p[6 * r + i], wp[i]);
        for (int s = 0; s <= r; ++s) {
            const cg_val v = cg_dot(e, nd->Y + 6 * s, w, 6);
            Iff_p[s * nmp + r] = cg_add(e, Iff_p[s * nmp + r], v);
            if (s != r) Iff_p[r * nmp + s] = cg_add(e, Iff_p[r * nmp + s], v);
        }
    }
}
