/*
 * src/algorithms/node_flexible.c — the flexible node kind's operations for the recursions written
 * once over nodes (node_kinds.h), and the attachment terms of a child riding on a node of a flexible
 * parent. Node k's vectors are [rigid part (6); modal part (nm)] at nd->vec_off[k], its matrices
 * dim x dim row-major at nd->mat_off[k] (node_engine.h); M_m, b_m are the motion scatter's (below).
 */
#include <math.h>
#include <string.h>

#include "flex/flex_body.h"
#include "node_kinds.h"

/* y (6) += A x for a 6 x n column-major A. */
static void add_cols(const double *A, int n, const double *x, double y[6])
{
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < 6; ++i) y[i] += A[6 * r + i] * x[r];
}

/* ---- motion (the scatter of kinematics.c) ---- */

void sd_node_motion_begin(const sd_model *m, struct sd_node_data *nd, const double *q, const double *u)
{
    memcpy(nd->q, q, (size_t)m->nq * sizeof(double));
    if (u) memcpy(nd->u, u, (size_t)m->nv * sizeof(double));
    else memset(nd->u, 0, (size_t)m->nv * sizeof(double));
}

/* A child c riding on node t of its flexible parent p (frames: p, the deformed node frame
 * N = N_t(eta_p), the joint frame fixed to N, c; node_engine.h):
 *   Xup(c) = pose(N) * node_placement(c) * XJ(q_c) = pose(N) * T,   T = c placed in N
 *   V(c)   = X(c <- p) V(p) + Y(c) eta-dot_p + H*(c) u_c,           Y(c) = X(c <- N) S_t   (001 Eq 12-14)
 *   a(c)   = V(c) x H*(c) u_c + d(H*)/dt u_c + X(c <- N) (S_t-dot eta-dot_p + V_N x S_t eta-dot_p),
 *            V_N = X(N <- p) V(p) + S_t eta-dot_p                                         (001 Eq 27)
 * Both extra terms follow from alpha_B = X(B <- A) alpha_A + V_B x w + w-dot for a frame B moving at
 * the relative twist w (B's axes) on a frame A, applied to N on p and to c on N. b(c) is the rigid
 * V x* M V - f_ext (a flexible c replaces it in sd_node_motion_store). */
void sd_attached_motion(const sd_model *m, sd_data *d, struct sd_node_data *nd, int c, const double *q,
                        const double *u, const double *f_ext, int with_world)
{
    const int p = m->parent[c], t = m->parent_node[c], nmp = sd_node_nmodes(m, p);
    double *St = nd->scratch; /* S_t of the node c rides on, 6 x nm(p) */
    sd_transform XJ, T;
    sd_hinge_transform(m, c, q + m->q_index[c], &XJ, d->S + 6 * m->v_index[c]);
    sd_transform *N = (sd_transform *)(nd->node_pose + 12 * c);
    double *Yc = nd->Y + nd->att_off[c], cN[6]; /* cN: S_t-dot eta-dot_p, with u */
    const double *eta_dot_p = u ? nd->Vm + nd->vec_off[p] + 6 : NULL;
    if (u) sd_flex_node_motion(m->flex[p], t, q + m->mode_q_index[p], eta_dot_p, N, St, cN);
    else sd_flex_node_frame(m->flex[p], t, q + m->mode_q_index[p], N, St);
    sd_transform_compose(&m->node_placement[c], &XJ, &T);
    sd_transform_compose(N, &T, &d->Xup[c]);
    for (int r = 0; r < nmp; ++r) sd_motion_to_child(&T, St + 6 * r, Yc + 6 * r); /* Y = X(c <- N) S_t */
    if (with_world) sd_transform_compose(&d->Xworld[p], &d->Xup[c], &d->Xworld[c]);
    double *V = d->V + 6 * c, *a = d->a + 6 * c, *b = d->b + 6 * c;
    if (!u) {
        memset(V, 0, 6 * sizeof(double));
        memset(a, 0, 6 * sizeof(double));
        memset(b, 0, 6 * sizeof(double));
    } else {
        const double *Vp = nd->Vm + nd->vec_off[p];
        double vJ[6], cr[6], MV[6];
        sd_hinge_motion(m, d, c, u, vJ);
        sd_motion_to_child(&d->Xup[c], Vp, V);
        for (int i = 0; i < 6; ++i) V[i] += vJ[i];
        add_cols(Yc, nmp, eta_dot_p, V); /* 001 Eq 12: the node's deformation rate */
        sd_hinge_velocity_term(m, c, q + m->q_index[c], u + m->v_index[c], a);
        sd_motion_cross(V, vJ, cr);
        for (int i = 0; i < 6; ++i) a[i] += cr[i];
        /* the node frame's own motion on p */
        double w[6] = {0, 0, 0, 0, 0, 0}, VN[6], cc[6];
        add_cols(St, nmp, eta_dot_p, w);
        sd_motion_to_child(N, Vp, VN);
        for (int i = 0; i < 6; ++i) VN[i] += w[i];
        sd_motion_cross(VN, w, cc);
        for (int i = 0; i < 6; ++i) cN[i] += cc[i];
        sd_motion_to_child(&T, cN, cc);
        for (int i = 0; i < 6; ++i) a[i] += cc[i];
        sd_rigid_inertia_mul(m->rigid + 13 * c, V, MV);
        sd_force_cross(V, MV, b);
    }
    if (f_ext)
        for (int r = 0; r < 6; ++r) b[r] -= f_ext[6 * c + r];
}

/* Node k's M(k) (dim^2), b(k) and V_m, a_m (dim) into the workspace, from the per-body V, a, b of the
 * scatter: a rigid node's are those; a flexible node's are [V; eta-dot], [a; 0], the modal mass
 * matrix M_m and b_m + K_m eta + D_m eta-dot - f_ext (001 Eq 25, 38-40), whose rigid part is also
 * the body's b(k). */
void sd_node_motion_store(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, const double *q,
                          const double *u, const double *f_ext)
{
    const int dim = nd->dim[k], nm = dim - 6;
    double *Vm = nd->Vm + nd->vec_off[k], *am = nd->am + nd->vec_off[k], *bm = nd->bm + nd->vec_off[k];
    double *Mm = nd->Mm + nd->mat_off[k];
    memcpy(Vm, d->V + 6 * k, 6 * sizeof(double));
    memcpy(am, d->a + 6 * k, 6 * sizeof(double));
    if (sd_node_kind_of(m, k) == SD_NODE_RIGID) {
        sd_rigid_inertia_to_sym6(m->rigid + 13 * k, Mm);
        memcpy(bm, d->b + 6 * k, 6 * sizeof(double));
        return;
    }
    const sd_flex_body *fb = m->flex[k];
    const double *eta = q + m->mode_q_index[k];
    if (nm) memset(d->S + 6 * m->mode_v_index[k], 0, 6 * (size_t)nm * sizeof(double)); /* modes do not move F_k */
    for (int r = 0; r < nm; ++r) {
        Vm[6 + r] = u ? u[m->mode_v_index[k] + r] : 0.0;
        am[6 + r] = 0.0;
    }
    if (u) sd_flex_mass_bias(fb, eta, Vm + 6, Vm, Mm, bm);
    else {
        sd_flex_mass(fb, eta, Mm);
        memset(bm, 0, (size_t)dim * sizeof(double));
    }
    if (nm) {
        double *fe = nd->scratch + 6 * nd->max_dim; /* past St */
        sd_flex_elastic(fb, eta, Vm + 6, fe);
        for (int r = 0; r < nm; ++r) bm[6 + r] += fe[r];
    }
    if (f_ext)
        for (int i = 0; i < 6; ++i) bm[i] -= f_ext[6 * k + i];
    memcpy(d->b + 6 * k, bm, 6 * sizeof(double));
}

/* alpha_m(k) = [alpha; eta-ddot] (001 Eq 26: H*(k) = diag(H*_hinge, I) moves the modes by qdd). */
void sd_flexible_acceleration_store(const sd_model *m, struct sd_node_data *nd, int k, const double alpha[6],
                                    const double *qdd)
{
    double *alpha_m = nd->alpha_m + nd->vec_off[k];
    memcpy(alpha_m, alpha, 6 * sizeof(double));
    for (int r = 6; r < nd->dim[k]; ++r) alpha_m[r] = qdd ? qdd[m->mode_v_index[k] + r - 6] : 0.0;
}

/* f_m(k) = M_m(k) alpha_m(k) + b_m(k) (001 Eq 38 without the children), alpha_m = [alpha; eta-ddot]. */
void sd_flexible_own_force(const sd_model *m, struct sd_node_data *nd, int k, const double alpha[6],
                           const double *qdd, double f[6])
{
    const int dim = nd->dim[k];
    const double *M = nd->Mm + nd->mat_off[k], *b = nd->bm + nd->vec_off[k];
    const double *alpha_m = nd->alpha_m + nd->vec_off[k];
    double *fm = nd->fm + nd->vec_off[k];
    sd_flexible_acceleration_store(m, nd, k, alpha, qdd);
    for (int i = 0; i < dim; ++i) {
        double s = b[i];
        for (int j = 0; j < dim; ++j) s += M[i * dim + j] * alpha_m[j];
        fm[i] = s;
    }
    memcpy(f, fm, 6 * sizeof(double));
}

/* T^f(k) = f_m^f(k) (001 Eq 43: H(k) = diag(H_hinge(k), I_nm)). */
void sd_flexible_modal_forces(const sd_model *m, const struct sd_node_data *nd, int k, double *tau)
{
    const double *fm = nd->fm + nd->vec_off[k];
    for (int r = 0; r < nd->dim[k] - 6; ++r) tau[m->mode_v_index[k] + r] = fm[6 + r];
}

/* alpha(c) += Y(c) eta-ddot(p) (001 Eq 26). */
void sd_attached_motion_modes(const sd_model *m, const struct sd_node_data *nd, int c, const double *qdd,
                              double alpha[6])
{
    const int p = m->parent[c], nmp = sd_node_nmodes(m, p);
    const double *Y = nd->Y + nd->att_off[c], *eta_ddot = qdd + m->mode_v_index[p];
    for (int r = 0; r < nmp; ++r)
        for (int i = 0; i < 6; ++i) alpha[i] += Y[6 * r + i] * eta_ddot[r];
}

/* acc_m^f(p) += Y(c)^T f for the node vectors acc_m (fm, zm) of child c's flexible parent p: the second
 * block of phi(p, c) (001 Eq 16-17). */
static void add_to_parent_modes(const sd_model *m, const struct sd_node_data *nd, int c, const double f[6], double *acc)
{
    const int p = m->parent[c];
    const double *Y = nd->Y + nd->att_off[c];
    double *ap = acc + nd->vec_off[p];
    for (int r = 0; r < sd_node_nmodes(m, p); ++r) ap[6 + r] += sd_s6_dot(Y + 6 * r, f);
}

/* f_m^f(p) += Y(c)^T f(c) (001 Eq 38). */
void sd_attached_force_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c, const double f[6])
{
    add_to_parent_modes(m, nd, c, f, nd->fm);
}

/* The joint frame of a hinge on a node: pose(N_t(eta)) * node_placement (sd_interbody_force). */
void sd_nodes_joint_frame(const sd_model *m, const sd_data *d, int k, sd_transform *J)
{
    if (sd_node_parent_node(m, k) < 0) *J = m->placement[k];
    else sd_transform_compose((const sd_transform *)(d->nodes->node_pose + 12 * k), &m->node_placement[k], J);
}

/* ---- what follows from the motion (kinematics.c) ---- */

double sd_flexible_first_moment(const sd_model *m, const sd_data *d, int k, double mx[3])
{
    const sd_transform *X = &d->Xworld[k];
    double h[3], w[3];
    const double mass = sd_flex_first_moment(m->flex[k], d->nodes->q + m->mode_q_index[k], h);
    sd_m3_mul_v(X->R, h, w);
    for (int i = 0; i < 3; ++i) mx[i] = w[i] + mass * X->p[i];
    return mass;
}

/* out = M_m(k) V_m(k) (dim entries). */
static void node_momentum(const struct sd_node_data *nd, int k, double *out)
{
    const int dim = nd->dim[k];
    const double *M = nd->Mm + nd->mat_off[k], *V = nd->Vm + nd->vec_off[k];
    for (int i = 0; i < dim; ++i) {
        double s = 0.0;
        for (int j = 0; j < dim; ++j) s += M[i * dim + j] * V[j];
        out[i] = s;
    }
}

void sd_flexible_momentum(const sd_model *m, const sd_data *d, int k, double h[6])
{
    (void)m;
    double *mv = d->nodes->scratch;
    node_momentum(d->nodes, k, mv);
    memcpy(h, mv, 6 * sizeof(double));
}

double sd_flexible_kinetic_energy(const sd_model *m, const sd_data *d, int k)
{
    (void)m;
    const struct sd_node_data *nd = d->nodes;
    double *mv = nd->scratch, sum = 0.0;
    node_momentum(nd, k, mv);
    const double *V = nd->Vm + nd->vec_off[k];
    for (int i = 0; i < nd->dim[k]; ++i) sum += 0.5 * V[i] * mv[i];
    return sum;
}

sd_status sd_strain_energy(const sd_model *m, sd_data *d, double *E)
{
    const char *fn = "sd_strain_energy";
    const sd_status st = sd_check_reader(m, d, fn, SD_CURRENT_PLACEMENTS);
    if (st != SD_OK) return st;
    if (!E) return sd_data_fail(d, SD_E_ARGUMENT, "%s: NULL output", fn);
    double sum = 0.0; /* 1/2 eta^T K_m eta of each flexible body (soadyn/flex.h) */
    for (int k = 0; k < m->n && d->nodes; ++k)
        if (sd_node_kind_of(m, k) == SD_NODE_FLEXIBLE) sum += sd_flex_strain_energy(m->flex[k], d->nodes->q + m->mode_q_index[k]);
    *E = sum;
    return sd_check_output(d, fn, "E", E, 1, SD_CAUSE_OVERFLOW);
}

/* ==== articulated bodies: the flexible kind's part of the Riccati gather, the residual gather and the
 * acceleration scatter (forward_dynamics.c) and of the innovations sweeps (innovations.c) ====
 *
 * 001 Sec 5 splits a flexible body in two: the body itself, carrying its modal coordinates, and a
 * massless body of zero extent at F_k carrying the hinge (soadyn's hinge acts on F_k: 001 Eq 15 with
 * H(k) = diag(H_hinge, I)). Tips to base the modes are eliminated first by an nm x nm step, then the
 * hinge by the rigid kind's step on the 6x6 that is left, so the parent receives a 6x6 P_R+ and a
 * 6-vector z_R+ as from any rigid child. Node k of dimension n = 6 + nm, vectors [rigid 6; modal nm]:
 *   P(k)    nd->P: M_m(k) + sum over children c of phi(k, c) P_R+(c) phi*(k, c)        (001 Eq 62)
 *   D_f(k)  P^ff(k) = L L^T: L in nd->Dfchol (nm x nm, row-major, lower), 1 / L(i, i) after it (nm)
 *   g(k)    P^rf D_f^-1, stored transposed in nd->g: g^T (nm x 6, row-major), so that row i, the gain
 *           of mode i, is 6 contiguous numbers; G_f = [g; I] in node space
 *   P_R(k)  P^rr - g P^fr, into d->P: the hinge's articulated inertia, as a rigid body's P(k)
 *   z_f(k)  the modal part of nd->zm: b_m^f(k) (elastic and damping forces) + sum Y(c)^T z_R+(c)
 *   eps_f   T_f - z_f, z_R = z_r + g eps_f; nu_f = D_f^-1 eps_f; eta-ddot = nu_f - g* alpha_R (001 Eq 63)
 * The modal node's tau_bar = I - G_f H_f maps its force [f_r; f_f] to f_r - g f_f for the hinge node,
 * so g carries every modal quantity to the rigid 6 and back (001 Eq 51-56: the split chain's K, D).
 *
 * Speed: these run once per node per sweep on blocks of 6 + a few modes, where loop control, calls
 * and divisions cost more than the arithmetic. So every operation below is one always-inlined kernel
 * taking nm, instantiated by a switch for nm = 1 .. 10 (SD_FLEX_DISPATCH), where the compiler unrolls it
 * completely and keeps the 6-vectors in registers (the generic instance serves more modes); the
 * triangular solves multiply by the stored reciprocal pivots instead of dividing (a division's
 * latency, paid nm times in a chain, was a third of the articulated sweep at 5 modes). */

#define SD_FLEX_KERNEL static inline __attribute__((always_inline))

/* One instance of kernel(nm, args...) per fixed mode count, the generic one beyond. */
#define SD_FLEX_DISPATCH(nm, kernel, ...)                                                                       \
    switch (nm) {                                                                                              \
    case 1: kernel(1, __VA_ARGS__); break;                                                                     \
    case 2: kernel(2, __VA_ARGS__); break;                                                                     \
    case 3: kernel(3, __VA_ARGS__); break;                                                                     \
    case 4: kernel(4, __VA_ARGS__); break;                                                                     \
    case 5: kernel(5, __VA_ARGS__); break;                                                                     \
    case 6: kernel(6, __VA_ARGS__); break;                                                                     \
    case 7: kernel(7, __VA_ARGS__); break;                                                                     \
    case 8: kernel(8, __VA_ARGS__); break;                                                                     \
    case 9: kernel(9, __VA_ARGS__); break;                                                                     \
    case 10: kernel(10, __VA_ARGS__); break;                                                                   \
    default: kernel(nm, __VA_ARGS__); break;                                                                   \
    }

SD_COLD static sd_status singular_modes(const sd_model *m, sd_data *d, int k)
{
    if (sd_node_kind_of(m, k) == SD_NODE_AGGREGATE) /* its name is the embedded loop's */
        return sd_data_fail(d, SD_E_SINGULAR,
                            "embedded loop '%s': the articulated inertia D(s) of its independent speeds is singular "
                            "(a massless subtree that its speeds move freely)",
                            m->desc[k].name);
    return sd_data_fail(d, SD_E_SINGULAR,
                        "body '%s': the articulated inertia of its modes D_f(k) is singular (001 Eq 62; modes "
                        "without mass)",
                        m->desc[k].name);
}

/* A pivot of D_f below this times the scale of the inertia it came from is round-off: the mass matrix
 * is singular there (the rigid kind's first test, forward_dynamics.c). */
static const double modal_singular_tol = 1e-13;

/* P(k) of node k as the gather has it when k's turn comes: M_m(k) for a leaf (no child started it). */
static const double *node_articulated_inertia(const sd_model *m, const struct sd_node_data *nd, int k)
{
    return (m->last_child[k] < 0 ? nd->Mm : nd->P) + nd->mat_off[k];
}

/* 001 Eq 62 in one pass over P (n = 6 + nm, row-major; row 6 + i is [P^fr(i, :), P^ff(i, :)]):
 *   D_f = L L^T               row by row, with rinv(i) = 1 / L(i, i)
 *   W   = L^-1 P^fr           (nm x 6, in gT), forward substitution of the 6 columns at once
 *   P_R = P^rr - W^T W        (= P^rr - P^rf D_f^-1 P^fr), its upper half mirrored: exactly symmetric
 *   g^T = L^-T W              (= D_f^-1 P^fr), back substitution in place of W
 * Returns 0, or 1 when a pivot of D_f is not above min_pivot (also NaN). */
SD_FLEX_KERNEL int eliminate_modes_kernel(int nm, const double *restrict P, double min_pivot, double *restrict L,
                                          double *restrict rinv, double *restrict gT, double *restrict PR)
{
    const int n = 6 + nm;
    for (int i = 0; i < nm; ++i) {
        const double *Pi = P + (6 + i) * n;
        double *Li = L + i * nm;
        for (int j = 0; j < i; ++j) {
            double s = Pi[6 + j];
            for (int l = 0; l < j; ++l) s -= Li[l] * L[j * nm + l];
            Li[j] = s * rinv[j];
        }
        double dii = Pi[6 + i];
        for (int l = 0; l < i; ++l) dii -= Li[l] * Li[l];
        if (!(dii > min_pivot)) return 1;
        const double lii = sqrt(dii), ri = 1.0 / lii;
        Li[i] = lii;
        rinv[i] = ri;
        double w[6];
        for (int c = 0; c < 6; ++c) w[c] = Pi[c];
        for (int j = 0; j < i; ++j)
            for (int c = 0; c < 6; ++c) w[c] -= Li[j] * gT[6 * j + c];
        for (int c = 0; c < 6; ++c) gT[6 * i + c] = w[c] * ri;
    }
    for (int r = 0; r < 6; ++r) {
        double row[6];
        for (int c = 0; c < 6; ++c) row[c] = P[r * n + c];
        for (int i = 0; i < nm; ++i)
            for (int c = 0; c < 6; ++c) row[c] -= gT[6 * i + r] * gT[6 * i + c];
        for (int c = r; c < 6; ++c) PR[6 * r + c] = PR[6 * c + r] = row[c];
    }
    for (int i = nm - 1; i >= 0; --i) {
        double w[6];
        for (int c = 0; c < 6; ++c) w[c] = gT[6 * i + c];
        for (int j = i + 1; j < nm; ++j)
            for (int c = 0; c < 6; ++c) w[c] -= L[j * nm + i] * gT[6 * j + c];
        for (int c = 0; c < 6; ++c) gT[6 * i + c] = w[c] * rinv[i];
    }
    return 0;
}
#define ELIMINATE(nm, ...) bad = eliminate_modes_kernel(nm, __VA_ARGS__)

sd_status sd_flexible_eliminate_modes(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, double PR[36])
{
    return sd_flexible_eliminate_from(m, d, nd, k, node_articulated_inertia(m, nd, k), PR);
}

/* The same from a given P(k) (dim x dim, row-major): the aggregate kind's, which forms it from its
 * members' blocks (node_aggregate.c). */
sd_status sd_flexible_eliminate_from(const sd_model *m, sd_data *d, struct sd_node_data *nd, int k, const double *P,
                                     double PR[36])
{
    const int n = nd->dim[k], nm = n - 6;
    if (nm == 0) {
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) PR[6 * i + j] = P[i * n + j];
        return SD_OK;
    }
    double *L = nd->Dfchol + nd->mat_off[k], scale = 0.0;
    for (int i = 0; i < nm; ++i) {
        const double a = fabs(P[(6 + i) * (n + 1)]);
        scale = a > scale ? a : scale;
    }
    int bad = 1;
    if (scale > 0.0) SD_FLEX_DISPATCH(nm, ELIMINATE, P, modal_singular_tol * scale, L, L + nm * nm,
                                      nd->g + nd->mat_off[k], PR)
    return bad ? singular_modes(m, d, k) : SD_OK;
}
#undef ELIMINATE

void sd_flexible_rigid_inertia(const sd_model *m, const struct sd_node_data *nd, int k, double Prr[36])
{
    const int n = nd->dim[k];
    const double *P = node_articulated_inertia(m, nd, k);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) Prr[6 * i + j] = P[i * n + j];
}

/* The blocks of phi(p, c) Pc phi*(p, c) that touch p's nm modes (p of dimension n = 6 + nm): with
 * the columns W_r = Pc Y_r of W = Pc Y(c), P^rf(p) += X W and its transpose, P^ff(p) += Y^T W, each
 * pair (s, r) computed once and written to both triangles (exact symmetry). */
SD_FLEX_KERNEL void inertia_modes_kernel(int nm, double *restrict Pp, const double *restrict Pc,
                                         const sd_transform *X, const double *restrict Y)
{
    const int n = 6 + nm;
    for (int r = 0; r < nm; ++r) {
        double w[6], wp[6];
        sd_sym6_mul(Pc, Y + 6 * r, w);
        sd_force_to_parent(X, w, wp);
        for (int i = 0; i < 6; ++i) {
            Pp[i * n + 6 + r] += wp[i];
            Pp[(6 + r) * n + i] += wp[i];
        }
        for (int s = 0; s <= r; ++s) {
            const double v = sd_s6_dot(Y + 6 * s, w);
            Pp[(6 + s) * n + 6 + r] += v;
            if (s != r) Pp[(6 + r) * n + 6 + s] += v;
        }
    }
}
#define INERTIA_MODES(nm, ...) inertia_modes_kernel(nm, __VA_ARGS__)

/* P(p) += phi(p, c) Pc phi*(p, c) = [X Pc X^T, X Pc Y; Y^T Pc X^T, Y^T Pc Y] for child c of the flexible
 * node p (node_engine.h "parent force"), P(p) started as M_m(p) by its first child (the last index):
 * the rigid block by the rigid kind's fixed-size kernel on a copy of it, the blocks that touch p's
 * modes by the kernel above. */
void sd_flexible_inertia_from_child(const sd_model *m, const sd_data *d, struct sd_node_data *nd, int c,
                                    const double Pc[36])
{
    const int p = m->parent[c], np = nd->dim[p];
    double *Pp = nd->P + nd->mat_off[p];
    if (m->last_child[p] == c) memcpy(Pp, nd->Mm + nd->mat_off[p], (size_t)np * (size_t)np * sizeof(double));
    double rr[36];
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) rr[6 * i + j] = Pp[i * np + j];
    sd_sym6_add_to_parent(&d->Xup[c], Pc, rr);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) Pp[i * np + j] = rr[6 * i + j];
    const int off = nd->att_off[c];
    if (off >= 0) SD_FLEX_DISPATCH(np - 6, INERTIA_MODES, Pp, Pc, &d->Xup[c], nd->Y + off)
}
#undef INERTIA_MODES

/* eps_f = T_f - z_f and z += g eps_f = sum_i eps_f(i) g^T(i, :); eps may be T (innovations.c solves in
 * place). */
SD_FLEX_KERNEL void modal_residual_kernel(int nm, const double *restrict gT, const double *T,
                                          const double *restrict zf, double *eps, double z[6])
{
    double acc[6];
    for (int r = 0; r < 6; ++r) acc[r] = z[r];
    for (int i = 0; i < nm; ++i) {
        const double e = T[i] - zf[i];
        eps[i] = e;
        for (int r = 0; r < 6; ++r) acc[r] += gT[6 * i + r] * e;
    }
    for (int r = 0; r < 6; ++r) z[r] = acc[r];
}
#define MODAL_RESIDUAL(nm, ...) modal_residual_kernel(nm, __VA_ARGS__)

void sd_flexible_modal_residual(const sd_model *m, const struct sd_node_data *nd, int k, const double *T, double *eps,
                                double z[6])
{
    const int nm = nd->dim[k] - 6, mv = m->mode_v_index[k];
    SD_FLEX_DISPATCH(nm, MODAL_RESIDUAL, nd->g + nd->mat_off[k], T + mv, nd->zm + nd->vec_off[k] + 6, eps + mv, z)
}
#undef MODAL_RESIDUAL

/* x = D_f^-1 x = L^-T L^-1 x, multiplying by the reciprocal pivots rinv. */
SD_FLEX_KERNEL void modal_solve_kernel(int nm, const double *restrict L, const double *restrict rinv, double *x)
{
    for (int i = 0; i < nm; ++i) {
        double s = x[i];
        for (int l = 0; l < i; ++l) s -= L[i * nm + l] * x[l];
        x[i] = s * rinv[i];
    }
    for (int i = nm - 1; i >= 0; --i) {
        double s = x[i];
        for (int j = i + 1; j < nm; ++j) s -= L[j * nm + i] * x[j];
        x[i] = s * rinv[i];
    }
}
#define MODAL_SOLVE(nm, ...) modal_solve_kernel(nm, __VA_ARGS__)

void sd_flexible_modal_solve(const sd_model *m, const struct sd_node_data *nd, int k, const double *eps, double *nu)
{
    const int nm = nd->dim[k] - 6, mv = m->mode_v_index[k];
    const double *L = nd->Dfchol + nd->mat_off[k];
    if (nu != eps) memcpy(nu + mv, eps + mv, (size_t)nm * sizeof(double));
    SD_FLEX_DISPATCH(nm, MODAL_SOLVE, L, L + nm * nm, nu + mv)
}
#undef MODAL_SOLVE

/* out_f(i) = nu_f(i) + sign g^T(i, :) alpha. */
SD_FLEX_KERNEL void modal_scatter_kernel(int nm, const double *restrict gT, const double *nu, double sign,
                                         const double *restrict alpha, double *out)
{
    for (int i = 0; i < nm; ++i) {
        double s = 0.0;
        for (int r = 0; r < 6; ++r) s += gT[6 * i + r] * alpha[r];
        out[i] = nu[i] + sign * s;
    }
}
#define MODAL_SCATTER(nm, ...) modal_scatter_kernel(nm, __VA_ARGS__)

void sd_flexible_modal_scatter(const sd_model *m, const struct sd_node_data *nd, int k, const double *nu, double sign,
                               const double alpha[6], double *out)
{
    const int nm = nd->dim[k] - 6, mv = m->mode_v_index[k];
    SD_FLEX_DISPATCH(nm, MODAL_SCATTER, nd->g + nd->mat_off[k], nu + mv, sign, alpha, out + mv)
}
#undef MODAL_SCATTER

void sd_flexible_modal_ne(const sd_model *m, const struct sd_node_data *nd, int k, const double *x, double *y,
                          double w[6])
{
    const int nm = nd->dim[k] - 6, mv = m->mode_v_index[k];
    const double *wf = nd->zm + nd->vec_off[k] + 6, *gT = nd->g + nd->mat_off[k];
    for (int i = 0; i < nm; ++i)
        for (int r = 0; r < 6; ++r) w[r] += gT[6 * i + r] * x[mv + i];
    for (int i = 0; i < nm; ++i) y[mv + i] = x[mv + i] + wf[i];
}

void sd_attached_residual_to_parent_modes(const sd_model *m, struct sd_node_data *nd, int c, const double f[6])
{
    add_to_parent_modes(m, nd, c, f, nd->zm);
}

double sd_flexible_modal_log_det(const struct sd_node_data *nd, int k)
{
    return sd_cholesky_logdet(nd->Dfchol + nd->mat_off[k], nd->dim[k] - 6);
}
/* ---- composite bodies (mass_matrix.c; node_kinds.h says the frame) ---- */

/* R^rr(k) = M_m^rr(k) in world axes about the world origin, 13 numbers: [m, h, Io] read from the
 * block [Io, [h x]; [h x]^T, m 1] of M_m (flex_body.c) and moved as a rigid inertia by X_world(k) =
 * (R, p): every mass element at x goes to R x + p, so h_w = R h + m p and
 *   Io_w = R Io R^T + 2 (R h . p) 1 - R h p^T - p (R h)^T + m (|p|^2 1 - p p^T)
 * (-m [x]^2 summed, [a][b] = b a^T - (a . b) 1); the upper triangle computed, mirrored (exact
 * symmetry). R^rf(k)'s columns move to the world as forces; R^ff(k) is copied. */
void sd_flexible_composite_start(const sd_model *m, const sd_data *d, struct sd_node_data *nd, int k, double Rk[13])
{
    (void)m;
    const int dim = nd->dim[k], nm = dim - 6;
    const double *Mm = nd->Mm + nd->mat_off[k];
    const sd_transform *X = &d->Xworld[k];
    const double *R = X->R, *p = X->p;
    const double mass = Mm[3 * dim + 3], h[3] = {Mm[2 * dim + 4], Mm[5], Mm[dim + 3]};
    double Io[9], hw[3], T[9];
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) Io[3 * a + b] = Mm[a * dim + b];
    sd_m3_mul_v(R, h, hw);
    sd_m3_mul(R, Io, T);
    const double hp = sd_v3_dot(hw, p), p2 = sd_v3_dot(p, p);
    Rk[0] = mass;
    for (int i = 0; i < 3; ++i) {
        Rk[1 + i] = hw[i] + mass * p[i];
        for (int j = i; j < 3; ++j) {
            const double v = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2] +
                             (i == j) * (2.0 * hp + mass * p2) - hw[i] * p[j] - p[i] * hw[j] - mass * p[i] * p[j];
            Rk[4 + 3 * i + j] = Rk[4 + 3 * j + i] = v;
        }
    }
    double *Rrf = nd->R + nd->mat_off[k], *Rff = Rrf + 6 * nm;
    for (int r = 0; r < nm; ++r) {
        double col[6];
        for (int i = 0; i < 6; ++i) col[i] = Mm[i * dim + 6 + r];
        sd_force_to_parent(X, col, Rrf + 6 * r);
        for (int s = 0; s < nm; ++s) Rff[r * nm + s] = Mm[(6 + r) * dim + 6 + s];
    }
}

/* Y_w(c) = X_world(c) Y(c), column by column. */
void sd_attached_composite_start(const sd_model *m, const sd_data *d, struct sd_node_data *nd, int c)
{
    const double *Y = nd->Y + nd->att_off[c];
    double *Yw = nd->Yw + nd->att_off[c];
    for (int r = 0; r < sd_node_nmodes(m, m->parent[c]); ++r) sd_motion_to_parent(&d->Xworld[c], Y + 6 * r, Yw + 6 * r);
}

/* X = R^r(k) e_(6+r) = R^rf(k)'s column r (world axes): the rigid force of modal speed r. */
void sd_flexible_composite_modal_column(const struct sd_node_data *nd, int k, int r, double X[6])
{
    memcpy(X, nd->R + nd->mat_off[k] + 6 * r, 6 * sizeof(double));
}

void sd_nodes_composite_row_modes(const sd_model *m, const struct sd_node_data *nd, int k, int i, const double X[6],
                                  double *row)
{
    const int r = i - m->nv_k[k];
    if (r >= 0) { /* a modal speed: M(k's mode s, k's mode r) = R^ff(k)(s, r), s <= r */
        const int nm = nd->dim[k] - 6;
        const double *Rff = nd->R + nd->mat_off[k] + 6 * nm;
        for (int s = 0; s <= r; ++s) row[m->mode_v_index[k] + s] = Rff[s * nm + r];
    }
    for (int c = k, p = m->parent[k]; p >= 0; c = p, p = m->parent[p]) {
        if (nd->att_off[c] < 0) continue; /* the path leaves p at its frame: p's modes do not move c */
        const double *Yw = nd->Yw + nd->att_off[c];
        for (int s = 0; s < nd->dim[p] - 6; ++s) row[m->mode_v_index[p] + s] = sd_s6_dot(Yw + 6 * s, X);
    }
}

/* R^rf(p) += R^rr(c) Y_w(c); R^ff(p) += Y_w(c)^T R^rr(c) Y_w(c), each pair (s, r) once (exact symmetry). */
void sd_attached_composite_to_parent(const sd_model *m, struct sd_node_data *nd, int c, const double Rc[13])
{
    const int p = m->parent[c], nmp = nd->dim[p] - 6;
    const double *Yw = nd->Yw + nd->att_off[c];
    double *Rrf = nd->R + nd->mat_off[p], *Rff = Rrf + 6 * nmp;
    for (int r = 0; r < nmp; ++r) {
        double RY[6];
        sd_rigid_inertia_mul(Rc, Yw + 6 * r, RY);
        for (int i = 0; i < 6; ++i) Rrf[6 * r + i] += RY[i];
        for (int s = 0; s <= r; ++s) {
            const double v = sd_s6_dot(Yw + 6 * s, RY);
            Rff[s * nmp + r] += v;
            if (s != r) Rff[r * nmp + s] += v;
        }
    }
}
