/*
 * tests/flex/test_node_engine.c — the node engine (src/algorithms/node_*.c) against independent
 * computations:
 *   (a) rigid random trees (half with armature, joint damping and springs) through the engine
 *       (a workspace given the node workspace runs the node instances) = the rigid fast path:
 *       M, forward dynamics by Cholesky on the engine's M, the armature's kinetic energy from the
 *       workspace's u (the fast path recovers u from V); the motion scatter, the accelerations,
 *       Newton-Euler, composite bodies, com, momentum, energies and the Jacobian are one code for both
 *       (kinematics.c, inverse_dynamics.c, mass_matrix.c), checked against independent computations
 *       by (b), (c), (e), (f), (h) and the rigid tests;
 *   (b) flexible trees: M and C equal a dense model built from the FE nodes as point masses and the
 *       bodies' rigid parts (sum of J^T m J; C from the classical accelerations at qdd = 0), the
 *       world kinematics written here from p_k + R_k l_j(eta) and the node frames exp(Pi_r eta);
 *   (c) tau = M qdd + C on random flexible trees (1-10 modes, full and linearised, mixed hinges);
 *   (d) the rigid limit: a flexible body with 0 modes equals the rigid body of the same inertia; with
 *       modes at eta = eta-dot = 0 the hinge block of M and C equals the rigid model's;
 *   (e) Jacobian columns against finite differences of positions and orientations;
 *   (f) power balance: d/dt (T + U_gravity + U_strain + U_springs) = u.tau - damping u.u - eta-dot.D eta-dot
 *       along the motion (armature, joint damping and springs on half the trees);
 *   (g) a point force changes ID by -J^T F;
 *   (h) M's columns by Newton-Euler at qdd = e_i (no composite bodies) on random mixed trees.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/node_engine.h"
#include "flex/flex_body.h"
#include "internal.h"
#include "random_flex.h"
#include "random_tree.h"
#include "test_util.h"

static double *vec(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

/* Solve M x = b by Cholesky (dense.c), M copied. */
static int solve_spd(const double *M, int n, const double *b, double *x)
{
    double *L = vec(n * n);
    memcpy(L, M, (size_t)(n * n) * sizeof(double));
    memcpy(x, b, (size_t)n * sizeof(double));
    const int bad = sd_cholesky_factor(L, n, 0.0);
    if (bad < 0) sd_cholesky_solve(L, n, x);
    free(L);
    return bad < 0;
}

/* ---------------------------------------------------------------- (a) rigid models through the engine */

static void test_rigid_through_engine(void)
{
    uint64_t rng = 11;
    double worst[8] = {0};
    for (int trial = 0; trial < 40; ++trial) {
        const int n = 1 + (int)(sd_random_uniform(&rng) * 12);
        sd_model *m = NULL;
        if (trial % 2) { /* with armature, joint damping and springs */
            random_flex_spec spec = {n, 1, RF_ALL_RIGID | RF_JOINT_DYNAMICS | (trial % 3 == 0 ? RF_FREE_ROOT : 0), 0};
            m = random_flex_tree(&rng, &spec);
        } else {
            m = random_tree(&rng, n, trial % 3 == 0 ? RT_FREE_ROOT : 0);
        }
        sd_data *d = sd_data_new(m), *e = sd_data_new(m);
        e->nodes = sd_node_data_new(m); /* sd_data_free frees it */
        CHECK(e->nodes != NULL);
        const int nv = m->nv, nq = m->nq;
        double *q = vec(nq), *u = vec(nv), *qdd = vec(nv), *fext = vec(6 * n);
        double *t1 = vec(nv), *M1 = vec(nv * nv + 6 * nv), *M2 = vec(nv * nv + 6 * nv), *c2 = vec(nv), *x = vec(nv);
        random_state(m, &rng, q, u, qdd);
        random_vector(&rng, fext, 6 * n, 1.0);
        CHECK(sd_mass_matrix(m, d, q, M1) == SD_OK);
        CHECK(sd_mass_matrix(m, e, q, M2) == SD_OK); /* the node instance */
        worst[2] = fmax(worst[2], test_rel_diff(M2, M1, nv * nv));
        /* forward dynamics by Cholesky on the engine's M and C */
        CHECK(sd_forward_dynamics_cholesky(m, d, q, u, qdd, fext, t1) == SD_OK); /* qdd taken as tau */
        CHECK(sd_bias_forces(m, e, q, u, fext, c2) == SD_OK);
        for (int i = 0; i < nv; ++i) c2[i] = qdd[i] - c2[i];
        CHECK(solve_spd(M2, nv, c2, x));
        worst[3] = fmax(worst[3], test_rel_diff(x, t1, nv));
        /* the armature's kinetic energy: from the workspace's u, or recovered from V by the fast path */
        CHECK(sd_kinematics(m, d, q, u, qdd) == SD_OK);
        CHECK(sd_kinematics(m, e, q, u, qdd) == SD_OK);
        double a = 0.0, b = 0.0;
        CHECK(sd_kinetic_energy(m, d, &a) == SD_OK && sd_kinetic_energy(m, e, &b) == SD_OK);
        worst[5] = fmax(worst[5], test_rel_diff(&b, &a, 1));
        free(q); free(u); free(qdd); free(fext); free(t1); free(M1); free(M2); free(c2); free(x);
        sd_data_free(d);
        sd_data_free(e);
        sd_model_free(m);
    }
    printf("(a) rigid trees, engine vs fast path: M %.2g, FD %.2g, kinetic energy with armature %.2g\n", worst[2],
           worst[3], worst[5]);
    for (int i = 2; i < 6; ++i) CHECK(worst[i] < (i == 3 ? 1e-9 : 1e-12));
}

/* ---------------------------------------------------------------- (c) tau = M qdd + C */

static void test_id_equals_m_qdd_plus_c(void)
{
    uint64_t rng = 23;
    double worst = 0, worst_fd = 0;
    const int flag_sets[] = {0, RF_LINEARISED | RF_JOINT_DYNAMICS, RF_MIXED_MASS | RF_FREE_ROOT,
                             RF_CHAIN | RF_ON_NODES | RF_JOINT_DYNAMICS, RF_ALL_FLEXIBLE | RF_ON_NODES,
                             RF_NO_RIGID_PART | RF_ALL_FLEXIBLE | RF_JOINT_DYNAMICS};
    for (int trial = 0; trial < 60; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 7), 1 + trial % 10, flag_sets[trial % 6], 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv, nq = m->nq, n = m->n;
        double *q = vec(nq), *u = vec(nv), *qdd = vec(nv), *fext = vec(6 * n), *tau = vec(nv), *c = vec(nv),
               *M = vec(nv * nv), *r = vec(nv), *x = vec(nv);
        random_flex_state(m, &rng, 0.3, q, u, qdd);
        random_vector(&rng, fext, 6 * n, 1.0);
        CHECK(sd_inverse_dynamics(m, d, q, u, qdd, fext, tau) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, fext, c) == SD_OK);
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        for (int i = 0; i < nv; ++i) {
            double s = c[i];
            for (int j = 0; j < nv; ++j) s += M[i * nv + j] * qdd[j];
            r[i] = s;
        }
        worst = fmax(worst, test_rel_diff(r, tau, nv));
        CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, fext, x) == SD_OK);
        worst_fd = fmax(worst_fd, test_rel_diff(x, qdd, nv));
        free(q); free(u); free(qdd); free(fext); free(tau); free(c); free(M); free(r); free(x);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(c) flexible trees: |ID - (M qdd + C)| %.2g, Cholesky FD of ID's tau vs qdd %.2g\n", worst, worst_fd);
    CHECK(worst < 1e-11);
    CHECK(worst_fd < 1e-8);
}

/* ---------------------------------------------------------------- (h) M by columns of Newton-Euler */

/* Column i of M as the inverse dynamics at qdd = e_i, u = 0 and no gravity, less the same at qdd = 0
 * (the elastic and joint spring forces): Newton-Euler (004 Alg 3.1; 001 Eq 38, 42-44) shares nothing
 * with the composite-body recursion (mass_matrix.c) but the node masses M_m. Random trees mixing rigid
 * bodies of every hinge type and flexible bodies, children on nodes and on frames, full and
 * linearised mass models, with and without armature; M to 1e-10 of its largest entry, and exactly
 * symmetric. */
static void test_mass_matrix_by_columns(void)
{
    uint64_t rng = 61;
    double worst = 0;
    long asymmetric = 0, flexible = 0;
    const int flag_sets[] = {0,
                             RF_ON_NODES | RF_JOINT_DYNAMICS,
                             RF_ALL_FLEXIBLE | RF_ON_NODES | RF_FREE_ROOT,
                             RF_CHAIN | RF_ON_NODES | RF_MIXED_MASS,
                             RF_LINEARISED | RF_FREE_ROOT | RF_JOINT_DYNAMICS,
                             RF_NO_RIGID_PART | RF_ALL_FLEXIBLE | RF_ON_NODES,
                             RF_CHAIN | RF_ALL_FLEXIBLE};
    const double no_gravity[3] = {0, 0, 0};
    for (int trial = 0; trial < 70; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 10), 1 + trial % 6, flag_sets[trial % 7], 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        CHECK(sd_model_set_gravity(m, no_gravity, NULL) == SD_OK);
        flexible += m->nflex;
        sd_data *d = sd_data_new(m);
        const int nv = m->nv;
        double *q = vec(m->nq), *qdd = vec(nv), *t0 = vec(nv), *t = vec(nv), *M = vec(nv * nv), *Mr = vec(nv * nv);
        random_flex_state(m, &rng, 0.3, q, NULL, NULL);
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        CHECK(sd_inverse_dynamics(m, d, q, NULL, NULL, NULL, t0) == SD_OK);
        double scale = 0, err = 0;
        for (int i = 0; i < nv; ++i) {
            qdd[i] = 1.0;
            CHECK(sd_inverse_dynamics(m, d, q, NULL, qdd, NULL, t) == SD_OK);
            qdd[i] = 0.0;
            for (int j = 0; j < nv; ++j) {
                Mr[j * nv + i] = t[j] - t0[j];
                scale = fmax(scale, fabs(Mr[j * nv + i]));
            }
        }
        for (int i = 0; i < nv * nv; ++i) err = fmax(err, fabs(M[i] - Mr[i]));
        for (int i = 0; i < nv; ++i)
            for (int j = 0; j < i; ++j) asymmetric += M[i * nv + j] != M[j * nv + i];
        worst = fmax(worst, err / scale);
        free(q); free(qdd); free(t0); free(t); free(M); free(Mr);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(h) M vs its columns by Newton-Euler (qdd = e_i, u = 0, no gravity), 70 trees mixing rigid and %ld "
           "flexible bodies: %.2g of max |M|, %ld asymmetric entries\n", flexible, worst, asymmetric);
    CHECK(worst < 1e-10);
    CHECK(asymmetric == 0);
}

/* ---------------------------------------------------------------- (b) the dense nodal reference */

/* J_l(theta) = I + (1 - cos a)/a^2 [theta x] + (a - sin a)/a^3 [theta x]^2, the left Jacobian of SO(3):
 * the world-fixed angular velocity of exp(theta) is J_l(theta) theta-dot. */
static void left_jacobian(const double th[3], double J[9])
{
    const double a2 = sd_v3_dot(th, th), a = sqrt(a2);
    double c1, c2;
    if (a < 1e-4) {
        c1 = 0.5 - a2 / 24.0;
        c2 = 1.0 / 6.0 - a2 / 120.0;
    } else {
        c1 = (1.0 - cos(a)) / a2;
        c2 = (a - sin(a)) / (a2 * a);
    }
    double K[9], K2[9];
    sd_m3_skew(th, K);
    sd_m3_mul(K, K, K2);
    for (int i = 0; i < 9; ++i) J[i] = (i % 4 == 0 ? 1.0 : 0.0) + c1 * K[i] + c2 * K2[i];
}

static const sd_flex_desc *fdesc(const sd_model *m, int k) { return m->flex && m->flex[k] ? sd_flex_body_desc(m->flex[k]) : NULL; }
static const double *mode_entry(const sd_flex_desc *fd, int r, int j) { return fd->modes + (size_t)r * 6 * fd->n_nodes + 6 * j; }

/* Number of points of the reference: per body its rigid part (at its com), then its FE nodes. */
static int ref_npoints(const sd_model *m)
{
    int P = 0;
    for (int k = 0; k < m->n; ++k) P += 1 + (fdesc(m, k) ? fdesc(m, k)->n_nodes : 0);
    return P;
}

/* World kinematics written from the model's description alone (the hinge transforms and motion
 * subspaces of hinge.c, which the rigid tests cover): each body's rotation R and origin o, angular
 * velocity w and origin velocity v (world), and every point's position x, velocity xv and mass. */
typedef struct ref_state {
    double *R, *o, *w, *v; /* 9n, 3n, 3n, 3n */
    double *x, *xv, *mass; /* 3P, 3P, P */
} ref_state;

static void ref_alloc(const sd_model *m, ref_state *s)
{
    const int n = m->n, P = ref_npoints(m);
    s->R = vec(9 * n); s->o = vec(3 * n); s->w = vec(3 * n); s->v = vec(3 * n);
    s->x = vec(3 * P); s->xv = vec(3 * P); s->mass = vec(P);
}

static void ref_free(ref_state *s)
{
    free(s->R); free(s->o); free(s->w); free(s->v); free(s->x); free(s->xv); free(s->mass);
}

static void ref_eval(const sd_model *m, const double *q, const double *u, ref_state *s)
{
    int pt = 0;
    for (int k = 0; k < m->n; ++k) {
        const int p = m->parent[k], t = m->parent_node ? m->parent_node[k] : -1;
        double S[36];
        sd_transform XJ, Jp; /* the joint frame in the parent body frame (deformed node frame) */
        sd_hinge_transform(m, k, q + m->q_index[k], &XJ, S);
        Jp = m->placement[k];
        double wN[3] = {0, 0, 0}, vN[3] = {0, 0, 0}, oN[3] = {0, 0, 0}; /* node frame's motion on p (world) */
        if (p >= 0 && t >= 0) {
            const sd_flex_desc *fd = fdesc(m, p);
            const double *eta = q + m->mode_q_index[p], *etad = u + m->mode_v_index[p];
            double th[3] = {0, 0, 0}, l[3], thd[3] = {0, 0, 0}, ld[3] = {0, 0, 0};
            memcpy(l, fd->node_position + 3 * t, sizeof l);
            for (int r = 0; r < fd->n_modes; ++r)
                for (int i = 0; i < 3; ++i) {
                    th[i] += mode_entry(fd, r, t)[i] * eta[r];
                    l[i] += mode_entry(fd, r, t)[3 + i] * eta[r];
                    thd[i] += mode_entry(fd, r, t)[i] * etad[r];
                    ld[i] += mode_entry(fd, r, t)[3 + i] * etad[r];
                }
            /* (R_t, l_t) * (1, -l0_t) * placement */
            double quat[4], Rt[9], Jl[9], tmp[3];
            sd_quat_exp(th, quat);
            sd_quat_to_m3(quat, Rt);
            sd_transform N = {{0}, {0}}, shift;
            memcpy(N.R, Rt, sizeof Rt);
            memcpy(N.p, l, sizeof l);
            sd_transform_identity(&shift);
            for (int i = 0; i < 3; ++i) shift.p[i] = -fd->node_position[3 * t + i];
            sd_transform a;
            sd_transform_compose(&N, &shift, &a);
            sd_transform_compose(&a, &m->placement[k], &Jp);
            left_jacobian(th, Jl);
            sd_m3_mul_v(Jl, thd, tmp);
            sd_m3_mul_v(s->R + 9 * p, tmp, wN);
            sd_m3_mul_v(s->R + 9 * p, ld, vN);
            sd_m3_mul_v(s->R + 9 * p, l, oN);
            for (int i = 0; i < 3; ++i) oN[i] += s->o[3 * p + i];
        }
        sd_transform B; /* the body in its parent */
        sd_transform_compose(&Jp, &XJ, &B);
        double *R = s->R + 9 * k, *o = s->o + 3 * k, *w = s->w + 3 * k, *v = s->v + 3 * k;
        if (p < 0) {
            memcpy(R, B.R, 9 * sizeof(double));
            memcpy(o, B.p, 3 * sizeof(double));
        } else {
            sd_m3_mul(s->R + 9 * p, B.R, R);
            sd_m3_mul_v(s->R + 9 * p, B.p, o);
            for (int i = 0; i < 3; ++i) o[i] += s->o[3 * p + i];
        }
        /* velocities: the parent's, the node frame's, the hinge's (S u in body axes) */
        double rw[3] = {0, 0, 0}, rv[3] = {0, 0, 0}, tw[3], tv[3];
        for (int i = 0; i < m->nv_k[k]; ++i)
            for (int r = 0; r < 3; ++r) {
                rw[r] += S[6 * i + r] * u[m->v_index[k] + i];
                rv[r] += S[6 * i + 3 + r] * u[m->v_index[k] + i];
            }
        sd_m3_mul_v(R, rw, tw);
        sd_m3_mul_v(R, rv, tv);
        for (int i = 0; i < 3; ++i) {
            w[i] = tw[i];
            v[i] = tv[i];
        }
        if (p >= 0) {
            double d[3], c[3], dN[3], cN[3];
            for (int i = 0; i < 3; ++i) d[i] = o[i] - s->o[3 * p + i];
            sd_v3_cross(s->w + 3 * p, d, c);
            for (int i = 0; i < 3; ++i) dN[i] = o[i] - oN[i];
            sd_v3_cross(wN, dN, cN);
            for (int i = 0; i < 3; ++i) {
                w[i] += s->w[3 * p + i] + wN[i];
                v[i] += s->v[3 * p + i] + c[i] + vN[i] + (t >= 0 ? cN[i] : 0.0);
            }
        }
        /* points: the rigid part at its com, then the nodes at l0_j + Pi_t^j eta */
        {
            double lc[3], d[3], c[3];
            sd_m3_mul_v(R, m->com + 3 * k, lc);
            for (int i = 0; i < 3; ++i) s->x[3 * pt + i] = o[i] + lc[i];
            for (int i = 0; i < 3; ++i) d[i] = lc[i];
            sd_v3_cross(w, d, c);
            for (int i = 0; i < 3; ++i) s->xv[3 * pt + i] = v[i] + c[i];
            s->mass[pt++] = m->mass[k];
        }
        const sd_flex_desc *fd = fdesc(m, k);
        if (!fd) continue;
        const double *eta = q + m->mode_q_index[k], *etad = u + m->mode_v_index[k];
        /* the linearised model (001 Sec 6) puts the body's own nodes at l0_j in its mass matrix */
        const double deformed = fd->mass_model == SD_FLEX_LINEARISED ? 0.0 : 1.0;
        for (int j = 0; j < fd->n_nodes; ++j) {
            double l[3], ld[3] = {0, 0, 0}, wl[3], wld[3], c[3];
            memcpy(l, fd->node_position + 3 * j, sizeof l);
            for (int r = 0; r < fd->n_modes; ++r)
                for (int i = 0; i < 3; ++i) {
                    l[i] += deformed * mode_entry(fd, r, j)[3 + i] * eta[r];
                    ld[i] += mode_entry(fd, r, j)[3 + i] * etad[r];
                }
            sd_m3_mul_v(R, l, wl);
            sd_m3_mul_v(R, ld, wld);
            sd_v3_cross(w, wl, c);
            for (int i = 0; i < 3; ++i) {
                s->x[3 * pt + i] = o[i] + wl[i];
                s->xv[3 * pt + i] = v[i] + c[i] + wld[i];
            }
            s->mass[pt++] = fd->node_mass[j];
        }
    }
}

/* The dense reference M and C (without f_ext) of a model whose FE nodes are point masses. */
static void dense_reference(const sd_model *m, const double *q, const double *u, double *M, double *C)
{
    const int n = m->n, nv = m->nv, P = ref_npoints(m);
    ref_state s, sa;
    ref_alloc(m, &s);
    ref_alloc(m, &sa);
    double *Jv = vec(3 * P * nv), *Jw = vec(3 * n * nv), *e = vec(nv), *qt = vec(m->nq);
    for (int i = 0; i < nv; ++i) { /* Jacobian columns: the velocities at u = e_i */
        memset(e, 0, (size_t)nv * sizeof(double));
        e[i] = 1.0;
        ref_eval(m, q, e, &s);
        for (int r = 0; r < 3 * P; ++r) Jv[r * nv + i] = s.xv[r];
        for (int r = 0; r < 3 * n; ++r) Jw[r * nv + i] = s.w[r];
    }
    /* classical accelerations at qdd = 0: d/dt of the velocities along q(t) = q (+) u t, u fixed
     * (five-point stencil, error O(h^4)) */
    const double h = 1e-3, wts[4] = {1.0, -8.0, 8.0, -1.0}, ts[4] = {-2.0, -1.0, 1.0, 2.0};
    double *acc = vec(3 * P), *alpha = vec(3 * n);
    for (int st = 0; st < 4; ++st) {
        sd_configuration_integrate(m, q, u, ts[st] * h, qt);
        ref_eval(m, qt, u, &sa);
        for (int r = 0; r < 3 * P; ++r) acc[r] += wts[st] * sa.xv[r] / (12.0 * h);
        for (int r = 0; r < 3 * n; ++r) alpha[r] += wts[st] * sa.w[r] / (12.0 * h);
    }
    ref_eval(m, q, u, &s);
    memset(M, 0, (size_t)nv * nv * sizeof(double));
    memset(C, 0, (size_t)nv * sizeof(double));
    int pt = 0;
    for (int k = 0; k < n; ++k) {
        const sd_flex_desc *fd = fdesc(m, k);
        const int npk = 1 + (fd ? fd->n_nodes : 0);
        for (int a = 0; a < npk; ++a, ++pt) { /* point masses: m Jv^T Jv, Jv^T m (a - g) */
            const double mp = s.mass[pt];
            for (int i = 0; i < nv; ++i) {
                for (int j = 0; j < nv; ++j) {
                    double sum = 0.0;
                    for (int r = 0; r < 3; ++r) sum += Jv[(3 * pt + r) * nv + i] * Jv[(3 * pt + r) * nv + j];
                    M[i * nv + j] += mp * sum;
                }
                for (int r = 0; r < 3; ++r) C[i] += Jv[(3 * pt + r) * nv + i] * mp * (acc[3 * pt + r] - m->gravity[r]);
            }
        }
        /* the rigid part's rotation: Jw^T Ic_w Jw, Jw^T (Ic_w alpha + w x Ic_w w) */
        double Iw[9], T[9], Iww[3], tq[3], Ia[3], wx[3];
        sd_m3_mul(s.R + 9 * k, m->inertia_com + 9 * k, T);
        sd_m3_mul_t(T, s.R + 9 * k, Iw);
        sd_m3_mul_v(Iw, s.w + 3 * k, Iww);
        sd_v3_cross(s.w + 3 * k, Iww, wx);
        sd_m3_mul_v(Iw, alpha + 3 * k, Ia);
        for (int r = 0; r < 3; ++r) tq[r] = Ia[r] + wx[r];
        for (int i = 0; i < nv; ++i) {
            double Ji[3], IJ[3];
            for (int r = 0; r < 3; ++r) Ji[r] = Jw[(3 * k + r) * nv + i];
            sd_m3_mul_v(Iw, Ji, IJ);
            for (int j = 0; j < nv; ++j) {
                double sum = 0.0;
                for (int r = 0; r < 3; ++r) sum += IJ[r] * Jw[(3 * k + r) * nv + j];
                M[i * nv + j] += sum;
            }
            C[i] += sd_v3_dot(Ji, tq);
        }
        if (!fd) continue;
        const int nm = fd->n_modes, vi = m->mode_v_index[k];
        const double *eta = q + m->mode_q_index[k], *etad = u + vi;
        for (int r = 0; r < nm; ++r) /* K_m eta + D_m eta-dot (001 Eq 40) */
            for (int c = 0; c < nm; ++c)
                C[vi + r] += fd->stiffness[r * nm + c] * eta[c] + (fd->damping ? fd->damping[r * nm + c] * etad[c] : 0.0);
    }
    free(Jv); free(Jw); free(e); free(qt); free(acc); free(alpha);
    ref_free(&s);
    ref_free(&sa);
}

static void test_dense_nodal_reference(void)
{
    uint64_t rng = 37;
    double worst_M = 0, worst_C = 0, worst_E = 0, worst_J = 0;
    const int flag_sets[] = {RF_POINT_MASSES, RF_POINT_MASSES | RF_FREE_ROOT, RF_POINT_MASSES | RF_CHAIN | RF_ON_NODES,
                             RF_POINT_MASSES | RF_ALL_FLEXIBLE | RF_ON_NODES,
                             RF_POINT_MASSES | RF_ALL_FLEXIBLE | RF_NO_RIGID_PART | RF_ON_NODES};
    for (int trial = 0; trial < 40; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 6), 1 + trial % 10, flag_sets[trial % 5], 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv, nq = m->nq;
        double *q = vec(nq), *u = vec(nv), *M = vec(nv * nv), *C = vec(nv), *Mr = vec(nv * nv), *Cr = vec(nv);
        random_flex_state(m, &rng, 0.3, q, u, NULL);
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        CHECK(sd_bias_forces(m, d, q, u, NULL, C) == SD_OK);
        dense_reference(m, q, u, Mr, Cr);
        /* energies, centre of mass and momentum from the reference's points */
        CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
        {
            ref_state s;
            ref_alloc(m, &s);
            ref_eval(m, q, u, &s);
            double T = 0, U = 0, mass = 0, com[3] = {0, 0, 0}, h[6] = {0, 0, 0, 0, 0, 0};
            for (int pt = 0; pt < ref_npoints(m); ++pt) {
                const double mp = s.mass[pt], *x = s.x + 3 * pt, *xv = s.xv + 3 * pt;
                double mv[3] = {mp * xv[0], mp * xv[1], mp * xv[2]}, xm[3];
                T += 0.5 * sd_v3_dot(mv, xv);
                U -= mp * sd_v3_dot(m->gravity, x);
                mass += mp;
                sd_v3_cross(x, mv, xm);
                for (int i = 0; i < 3; ++i) {
                    com[i] += mp * x[i];
                    h[i] += xm[i];
                    h[3 + i] += mv[i];
                }
            }
            for (int k = 0; k < m->n; ++k) { /* the rigid parts' spin */
                double Iw[9], T9[9], Iww[3];
                sd_m3_mul(s.R + 9 * k, m->inertia_com + 9 * k, T9);
                sd_m3_mul_t(T9, s.R + 9 * k, Iw);
                sd_m3_mul_v(Iw, s.w + 3 * k, Iww);
                T += 0.5 * sd_v3_dot(s.w + 3 * k, Iww);
                for (int i = 0; i < 3; ++i) h[i] += Iww[i];
            }
            for (int i = 0; i < 3; ++i) com[i] /= mass;
            double Te, Ue, come[3], he[6];
            CHECK(sd_kinetic_energy(m, d, &Te) == SD_OK && sd_potential_energy(m, d, &Ue) == SD_OK);
            CHECK(sd_center_of_mass_world(m, d, come) == SD_OK && sd_spatial_momentum_world(m, d, he) == SD_OK);
            const double ref[2] = {T, U}, eng[2] = {Te, Ue};
            worst_E = fmax(worst_E, test_rel_diff(eng, ref, 2));
            worst_E = fmax(worst_E, test_rel_diff(come, com, 3));
            worst_E = fmax(worst_E, test_rel_diff(he, h, 6));
            /* Jacobian of a point on a random body: J u = the reference's point velocity */
            const int body = (int)(sd_random_uniform(&rng) * m->n);
            double pt[3], *J = vec(6 * nv), Ju[6] = {0}, vr[6], Rp[3], c[3];
            random_vector(&rng, pt, 3, 0.5);
            CHECK(sd_jacobian_world(m, d, body, pt, J) == SD_OK);
            for (int r = 0; r < 6; ++r)
                for (int j = 0; j < nv; ++j) Ju[r] += J[r * nv + j] * u[j];
            sd_m3_mul_v(s.R + 9 * body, pt, Rp);
            sd_v3_cross(s.w + 3 * body, Rp, c);
            for (int i = 0; i < 3; ++i) {
                vr[i] = s.w[3 * body + i];
                vr[3 + i] = s.v[3 * body + i] + c[i];
            }
            worst_J = fmax(worst_J, test_rel_diff(Ju, vr, 6));
            free(J);
            ref_free(&s);
        }
        const double eM = test_rel_diff(M, Mr, nv * nv), eC = test_rel_diff(C, Cr, nv);
        if (eM > 1e-10 || eC > 1e-10) printf("  trial %d (n %d, nv %d): M %.2g, C %.2g\n", trial, m->n, nv, eM, eC);
        worst_M = fmax(worst_M, eM);
        worst_C = fmax(worst_C, eC);
        free(q); free(u); free(M); free(C); free(Mr); free(Cr);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(b) dense nodal reference (full model, point masses, 40 trees): M %.2g, C %.2g (C's reference "
           "accelerations by a 5-point stencil)\n",
           worst_M, worst_C);
    printf("    energies, com, momentum vs the reference's points %.2g; J u vs the reference's point velocity %.2g\n",
           worst_E, worst_J);
    CHECK(worst_M < 1e-10);
    CHECK(worst_C < 1e-10);
    CHECK(worst_E < 1e-12);
    CHECK(worst_J < 1e-12);
}

/* The linearised model's M: the same reference with each body's own nodes at l0_j (children still
 * ride on the deformed node frames: flex_body.h, attachments are exact). */
static void test_linearised_mass_matrix(void)
{
    uint64_t rng = 43;
    double worst = 0;
    for (int trial = 0; trial < 20; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 6), 1 + trial % 10,
                                 RF_POINT_MASSES | RF_MIXED_MASS | (trial % 2 ? RF_ON_NODES : RF_FREE_ROOT), 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv;
        double *q = vec(m->nq), *u = vec(nv), *M = vec(nv * nv), *Mr = vec(nv * nv), *Cr = vec(nv);
        random_flex_state(m, &rng, 0.3, q, u, NULL);
        CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
        dense_reference(m, q, u, Mr, Cr);
        worst = fmax(worst, test_rel_diff(M, Mr, nv * nv));
        free(q); free(u); free(M); free(Mr); free(Cr);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("    linearised and full bodies mixed: M vs the reference with the linearised bodies' nodes at l0 %.2g\n",
           worst);
    CHECK(worst < 1e-10);
}

/* ---------------------------------------------------------------- (e) Jacobian by finite differences */

static void test_jacobian_fd(void)
{
    uint64_t rng = 53;
    double worst = 0;
    for (int trial = 0; trial < 30; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 6), 1 + trial % 10,
                                 (trial % 2 ? RF_ON_NODES : 0) | (trial % 3 ? 0 : RF_FREE_ROOT), 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv, nq = m->nq;
        double *q = vec(nq), *qp = vec(nq), *qm = vec(nq), *e = vec(nv), *J = vec(6 * nv), *Jfd = vec(6 * nv);
        random_flex_state(m, &rng, 0.3, q, NULL, NULL);
        const int body = (int)(sd_random_uniform(&rng) * m->n);
        double pt[3];
        random_vector(&rng, pt, 3, 0.5);
        CHECK(sd_kinematics(m, d, q, NULL, NULL) == SD_OK);
        CHECK(sd_jacobian_world(m, d, body, pt, J) == SD_OK);
        const double h = 1e-6;
        for (int i = 0; i < nv; ++i) {
            memset(e, 0, (size_t)nv * sizeof(double));
            e[i] = 1.0;
            sd_configuration_integrate(m, q, e, h, qp);
            sd_configuration_integrate(m, q, e, -h, qm);
            sd_transform Xp, Xm;
            CHECK(sd_kinematics(m, d, qp, NULL, NULL) == SD_OK && sd_body_placement_world(m, d, body, &Xp) == SD_OK);
            CHECK(sd_kinematics(m, d, qm, NULL, NULL) == SD_OK && sd_body_placement_world(m, d, body, &Xm) == SD_OK);
            double xp[3], xm[3], Rd[9], quat[4], w[3];
            sd_transform_point(&Xp, pt, xp);
            sd_transform_point(&Xm, pt, xm);
            sd_m3_mul_t(Xp.R, Xm.R, Rd); /* R(+h) R(-h)^T = exp(2 h w) */
            sd_m3_to_quat(Rd, quat);
            sd_quat_log(quat, w);
            for (int r = 0; r < 3; ++r) {
                Jfd[r * nv + i] = w[r] / (2 * h);
                Jfd[(3 + r) * nv + i] = (xp[r] - xm[r]) / (2 * h);
            }
        }
        worst = fmax(worst, test_rel_diff(J, Jfd, 6 * nv));
        free(q); free(qp); free(qm); free(e); free(J); free(Jfd);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(e) Jacobian vs central differences of positions and orientations (h 1e-6): %.2g\n", worst);
    CHECK(worst < 1e-7);
}

/* ---------------------------------------------------------------- (f) power balance */

/* E = T + U_gravity + U_strain at (q, u). */
static double total_energy(const sd_model *m, sd_data *d, const double *q, const double *u)
{
    double T = 0, U = 0, S = 0, Sp = 0;
    CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
    CHECK(sd_kinetic_energy(m, d, &T) == SD_OK);
    CHECK(sd_potential_energy(m, d, &U) == SD_OK);
    CHECK(sd_strain_energy(m, d, &S) == SD_OK);
    CHECK(sd_spring_energy(m, d, q, &Sp) == SD_OK);
    return T + U + S + Sp;
}

static void test_power_balance(void)
{
    uint64_t rng = 71;
    double worst = 0;
    const int flag_sets[] = {0, RF_ON_NODES | RF_ALL_FLEXIBLE | RF_JOINT_DYNAMICS, RF_FREE_ROOT,
                             RF_CHAIN | RF_ON_NODES | RF_JOINT_DYNAMICS};
    for (int trial = 0; trial < 30; ++trial) {
        random_flex_spec spec = {1 + (int)(sd_random_uniform(&rng) * 6), 1 + trial % 10, flag_sets[trial % 4], 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv, nq = m->nq;
        double *q = vec(nq), *u = vec(nv), *tau = vec(nv), *qdd = vec(nv), *dq = vec(nv), *qa = vec(nq),
               *qb = vec(nq), *ua = vec(nv), *ub = vec(nv);
        random_flex_state(m, &rng, 0.3, q, u, tau);
        CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, NULL, qdd) == SD_OK);
        /* the power of tau and of the modal damping (K_m eta is in the strain energy) */
        double power = 0.0;
        for (int i = 0; i < nv; ++i) power += u[i] * tau[i];
        for (int v = 0; v < nv; ++v) power -= m->damping[v] * u[v] * u[v]; /* joint damping (0 on modes) */
        for (int k = 0; k < m->n; ++k) {
            const sd_flex_desc *fd = fdesc(m, k);
            if (!fd || !fd->damping) continue;
            const int nm = fd->n_modes;
            const double *ed = u + m->mode_v_index[k];
            for (int r = 0; r < nm; ++r)
                for (int c = 0; c < nm; ++c) power -= ed[r] * fd->damping[r * nm + c] * ed[c];
        }
        /* dE/dt by central differences along q(t) = q (+) (u t + qdd t^2 / 2), u(t) = u + qdd t (both
         * exact to the order a central difference needs: error O(h^2)), extrapolated (Richardson) to
         * O(h^4): the accelerations of random trees reach a few hundred */
        double D[2];
        for (int level = 0; level < 2; ++level) {
            const double h = level == 0 ? 4e-5 : 2e-5;
            for (int i = 0; i < nv; ++i) dq[i] = u[i] * h + 0.5 * qdd[i] * h * h;
            sd_configuration_integrate(m, q, dq, 1.0, qa);
            for (int i = 0; i < nv; ++i) dq[i] = -u[i] * h + 0.5 * qdd[i] * h * h;
            sd_configuration_integrate(m, q, dq, 1.0, qb);
            for (int i = 0; i < nv; ++i) {
                ua[i] = u[i] + qdd[i] * h;
                ub[i] = u[i] - qdd[i] * h;
            }
            D[level] = (total_energy(m, d, qa, ua) - total_energy(m, d, qb, ub)) / (2 * h);
        }
        const double dEdt = (4.0 * D[1] - D[0]) / 3.0;
        double scale = 1.0;
        for (int i = 0; i < nv; ++i) scale = fmax(scale, fabs(u[i] * tau[i]));
        const double err = fabs(dEdt - power) / scale;
        if (err > 1e-8) printf("  trial %d (n %d, nv %d): dE/dt %.12g, power %.12g\n", trial, m->n, nv, dEdt, power);
        worst = fmax(worst, err);
        free(q); free(u); free(tau); free(qdd); free(dq); free(qa); free(qb); free(ua); free(ub);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(f) power balance d/dt (T + U_g + U_strain + U_springs) = u.tau - damping u.u - eta-dot.D eta-dot (full model, node inertias, armature, "
           "Richardson on h 4e-5, 2e-5): %.2g\n",
           worst);
    CHECK(worst < 1e-8);
}

/* ---------------------------------------------------------------- (d) the rigid limit */

/* A chain with one flexible body b1 (nm modes, stiffness k_scale K0) and children on its node 1 (b2)
 * and on its frame (b3), b4 on b2; or (rigid) the same with b1 a rigid body of the same total
 * inertia (its rigid part plus the nodes). Every random number is drawn from a fixed seed, so the
 * two models share everything but b1's flexibility. */
static sd_model *limit_model(int nm, double k_scale, int rigid, int one_dof)
{
    uint64_t rng = 97;
    const char *names[5] = {"b0", "b1", "b2", "b3", "b4"}, *parents[5] = {NULL, "b0", "b1", "b1", "b2"};
    const sd_hinge_type hinges[5] = {SD_HINGE_REVOLUTE, one_dof ? SD_HINGE_PRISMATIC : SD_HINGE_SPHERICAL,
                                     SD_HINGE_REVOLUTE, one_dof ? SD_HINGE_REVOLUTE : SD_HINGE_PLANAR,
                                     one_dof ? SD_HINGE_REVOLUTE : SD_HINGE_UNIVERSAL};
    enum { NN = 4 };
    double pos[3 * NN], mass[NN], inertia[9 * NN], modes[6 * NN * 10], K[100], D[100];
    random_vector(&rng, pos, 3 * NN, 0.5);
    for (int j = 0; j < NN; ++j) {
        mass[j] = 0.3 + 0.5 * sd_random_uniform(&rng);
        double a[3];
        random_vector(&rng, a, 3, 1.0);
        for (int i = 0; i < 9; ++i) inertia[9 * j + i] = (i % 4 == 0 ? 0.02 : 0.0) + 0.005 * a[i / 3] * a[i % 3];
    }
    random_vector(&rng, modes, 6 * NN * 10, 0.2);
    for (int r = 0; r < 10; ++r)
        for (int c = 0; c < 10; ++c) {
            K[r * 10 + c] = r == c ? k_scale * (1.0 + r) : 0.0;
            D[r * 10 + c] = r == c ? 1.4 * sqrt(k_scale * (1.0 + r)) : 0.0; /* about critical damping */
        }
    double Kc[100], Dc[100]; /* nm x nm leading blocks */
    for (int r = 0; r < nm; ++r)
        for (int c = 0; c < nm; ++c) {
            Kc[r * nm + c] = K[r * 10 + c];
            Dc[r * nm + c] = D[r * 10 + c];
        }
    double modes_nm[6 * NN * 10];
    memcpy(modes_nm, modes, sizeof modes_nm); /* column-major: the first nm columns */
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.3, -0.2, -9.81};
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < 5; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = parents[k];
        d.hinge = hinges[k];
        double w[3];
        random_vector(&rng, w, 3, 2.0);
        double quat[4];
        sd_quat_exp(w, quat);
        sd_quat_to_m3(quat, d.placement.R);
        random_vector(&rng, d.placement.p, 3, 0.5);
        random_vector(&rng, d.axis, 3, 1.0);
        random_vector(&rng, d.axis2, 3, 1.0);
        d.mass = 0.5 + sd_random_uniform(&rng);
        random_vector(&rng, d.com, 3, 0.2);
        for (int i = 0; i < 9; ++i) d.inertia[i] = i % 4 == 0 ? 0.05 * d.mass : 0.0;
        if (k == 2 && !rigid) d.parent_node = 1;
        if (k == 1 && rigid) { /* the rigid part and the nodes as one rigid body */
            double M = d.mass, c[3];
            for (int i = 0; i < 3; ++i) c[i] = d.mass * d.com[i];
            for (int j = 0; j < NN; ++j) {
                M += mass[j];
                for (int i = 0; i < 3; ++i) c[i] += mass[j] * pos[3 * j + i];
            }
            for (int i = 0; i < 3; ++i) c[i] /= M;
            double I[9];
            for (int i = 0; i < 9; ++i) I[i] = d.inertia[i];
            const double *pts[NN + 1];
            double ms[NN + 1];
            pts[0] = d.com;
            ms[0] = d.mass;
            for (int j = 0; j < NN; ++j) {
                pts[j + 1] = pos + 3 * j;
                ms[j + 1] = mass[j];
                for (int i = 0; i < 9; ++i) I[i] += inertia[9 * j + i];
            }
            for (int a = 0; a < NN + 1; ++a) { /* parallel axes */
                double r[3] = {pts[a][0] - c[0], pts[a][1] - c[1], pts[a][2] - c[2]};
                const double r2 = sd_v3_dot(r, r);
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j) I[3 * i + j] += ms[a] * ((i == j) * r2 - r[i] * r[j]);
            }
            d.mass = M;
            memcpy(d.com, c, sizeof c);
            memcpy(d.inertia, I, sizeof I);
        }
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "limit_model: %s\n", err.message);
            abort();
        }
    }
    if (!rigid) {
        sd_flex_desc fd;
        sd_flex_desc_init(&fd);
        fd.n_nodes = NN;
        fd.node_position = pos;
        fd.node_mass = mass;
        fd.node_inertia = inertia;
        fd.n_modes = nm;
        fd.modes = nm ? modes_nm : NULL;
        fd.stiffness = nm ? Kc : NULL;
        fd.damping = nm ? Dc : NULL;
        if (sd_builder_set_flexible(b, "b1", &fd, &err) != SD_OK) {
            fprintf(stderr, "limit_model: %s\n", err.message);
            abort();
        }
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "limit_model: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    return m;
}

/* Copy the hinge entries of a rigid model's vector x (layout of r) into the flexible model f's
 * layout (modal entries eta_fill * 1, or 0), or back (to_rigid). */
static void map_hinges(const sd_model *r, const sd_model *f, const double *xr, double *xf, int speeds)
{
    for (int k = 0; k < r->n; ++k) {
        const int n = speeds ? r->nv_k[k] : r->nq_k[k];
        for (int i = 0; i < n; ++i)
            xf[(speeds ? f->v_index[k] : f->q_index[k]) + i] = xr[(speeds ? r->v_index[k] : r->q_index[k]) + i];
    }
}

static void test_rigid_limit(void)
{
    uint64_t rng = 101;
    sd_model *mr = limit_model(0, 1.0, 1, 0), *m0 = limit_model(0, 1.0, 0, 0);
    CHECK(sd_model_nflexible(m0) == 1 && sd_model_body_nmodes(m0, 1) == 0 && m0->nv == mr->nv);
    sd_data *dr = sd_data_new(mr), *d0 = sd_data_new(m0);
    const int nv = mr->nv, nq = mr->nq, n = mr->n;
    double *q = vec(nq), *u = vec(nv), *w = vec(nv), *f = vec(6 * n), *a = vec(nv * nv + 6 * nv),
           *b = vec(nv * nv + 6 * nv);
    double worst0 = 0;
    for (int trial = 0; trial < 10; ++trial) { /* (d1) 0 modes: the engine on the flexible body = rigid */
        random_state(mr, &rng, q, u, w);
        random_vector(&rng, f, 6 * n, 1.0);
        CHECK(sd_inverse_dynamics(mr, dr, q, u, w, f, a) == SD_OK && sd_inverse_dynamics(m0, d0, q, u, w, f, b) == SD_OK);
        worst0 = fmax(worst0, test_rel_diff(b, a, nv));
        CHECK(sd_mass_matrix(mr, dr, q, a) == SD_OK && sd_mass_matrix(m0, d0, q, b) == SD_OK);
        worst0 = fmax(worst0, test_rel_diff(b, a, nv * nv));
        CHECK(sd_forward_dynamics_cholesky(mr, dr, q, u, w, f, a) == SD_OK &&
              sd_forward_dynamics_cholesky(m0, d0, q, u, w, f, b) == SD_OK);
        worst0 = fmax(worst0, test_rel_diff(b, a, nv) * 1e-2); /* a solve: allow cond(M) */
        CHECK(sd_kinematics(mr, dr, q, u, w) == SD_OK && sd_kinematics(m0, d0, q, u, w) == SD_OK);
        CHECK(sd_kinetic_energy(mr, dr, a) == SD_OK && sd_kinetic_energy(m0, d0, b) == SD_OK);
        CHECK(sd_potential_energy(mr, dr, a + 1) == SD_OK && sd_potential_energy(m0, d0, b + 1) == SD_OK);
        CHECK(sd_center_of_mass_world(mr, dr, a + 2) == SD_OK && sd_center_of_mass_world(m0, d0, b + 2) == SD_OK);
        CHECK(sd_spatial_momentum_world(mr, dr, a + 5) == SD_OK && sd_spatial_momentum_world(m0, d0, b + 5) == SD_OK);
        worst0 = fmax(worst0, test_rel_diff(b, a, 11));
        const double pt[3] = {0.1, -0.2, 0.3};
        CHECK(sd_jacobian_world(mr, dr, 4, pt, a) == SD_OK && sd_jacobian_world(m0, d0, 4, pt, b) == SD_OK);
        worst0 = fmax(worst0, test_rel_diff(b, a, 6 * nv));
    }
    printf("(d) a flexible body with 0 modes vs the rigid body of the same inertia: ID, M, FD, energies, com, "
           "momentum, J %.2g\n",
           worst0);
    CHECK(worst0 < 1e-12);
    sd_data_free(d0);
    sd_model_free(m0);
    /* (d2) 4 modes: at eta = eta-dot = 0 the hinge block of M and the hinge rows of C are the rigid
     * model's (any stiffness); off it they move linearly in eta */
    sd_model *m4 = limit_model(4, 1e6, 0, 0);
    sd_data *d4 = sd_data_new(m4);
    const int nv4 = m4->nv;
    double *q4 = vec(m4->nq), *u4 = vec(nv4), *M4 = vec(nv4 * nv4), *C4 = vec(nv4), *Mh = vec(nv * nv), *Ch = vec(nv);
    double *Mr = vec(nv * nv), *Cr = vec(nv), dev[3] = {0, 0, 0};
    random_state(mr, &rng, q, u, NULL);
    CHECK(sd_mass_matrix(mr, dr, q, Mr) == SD_OK && sd_bias_forces(mr, dr, q, u, NULL, Cr) == SD_OK);
    double eta_dir[4];
    random_vector(&rng, eta_dir, 4, 1.0);
    const double scales[3] = {0.0, 1e-6, 1e-7};
    for (int level = 0; level < 3; ++level) {
        memset(q4, 0, (size_t)m4->nq * sizeof(double));
        memset(u4, 0, (size_t)nv4 * sizeof(double));
        map_hinges(mr, m4, q, q4, 0);
        map_hinges(mr, m4, u, u4, 1);
        for (int r = 0; r < 4; ++r) q4[m4->mode_q_index[1] + r] = scales[level] * eta_dir[r];
        CHECK(sd_mass_matrix(m4, d4, q4, M4) == SD_OK && sd_bias_forces(m4, d4, q4, u4, NULL, C4) == SD_OK);
        for (int k = 0; k < n; ++k) /* the hinge block, in the rigid model's layout */
            for (int i = 0; i < mr->nv_k[k]; ++i) {
                const int ri = mr->v_index[k] + i, fi = m4->v_index[k] + i;
                Ch[ri] = C4[fi];
                for (int l = 0; l < n; ++l)
                    for (int j = 0; j < mr->nv_k[l]; ++j) Mh[ri * nv + mr->v_index[l] + j] = M4[fi * nv4 + m4->v_index[l] + j];
            }
        dev[level] = fmax(test_rel_diff(Mh, Mr, nv * nv), test_rel_diff(Ch, Cr, nv));
    }
    printf("    4 modes, K 1e6: hinge block of M and C vs rigid at eta = 0: %.2g; at |eta| 1e-6: %.2g, 1e-7: %.2g\n",
           dev[0], dev[1], dev[2]);
    CHECK(dev[0] < 1e-12);
    CHECK(dev[1] > 0 && fabs(dev[1] / dev[2] - 10.0) < 1.0); /* linear in eta */
    free(q4); free(u4); free(M4); free(C4); free(Mh); free(Ch); free(Mr); free(Cr);
    sd_data_free(d4);
    sd_model_free(m4);
    free(q); free(u); free(w); free(f); free(a); free(b);
    sd_data_free(dr);
    sd_model_free(mr);
}

/* RK4 on (q, u) with the Cholesky forward dynamics at tau = 0 (1-dof hinges: q is Euclidean). */
static void simulate(const sd_model *m, double T, double dt, double *q, double *u)
{
    sd_data *d = sd_data_new(m);
    const int nq = m->nq, nv = m->nv;
    double *k1 = vec(2 * nv), *k2 = vec(2 * nv), *k3 = vec(2 * nv), *k4 = vec(2 * nv), *qs = vec(nq), *us = vec(nv),
           *tau = vec(nv);
    double *ks[4] = {k1, k2, k3, k4};
    const double c[4] = {0.0, 0.5, 0.5, 1.0};
    int ok = 1;
    for (double t = 0; t < T - 0.5 * dt; t += dt) {
        for (int s = 0; s < 4; ++s) {
            for (int i = 0; i < nq; ++i) qs[i] = q[i] + (s ? c[s] * dt * ks[s - 1][i] : 0.0);
            for (int i = 0; i < nv; ++i) us[i] = u[i] + (s ? c[s] * dt * ks[s - 1][nv + i] : 0.0);
            memcpy(ks[s], us, (size_t)nv * sizeof(double));
            ok &= sd_forward_dynamics_cholesky(m, d, qs, us, tau, NULL, ks[s] + nv) == SD_OK;
        }
        for (int i = 0; i < nv; ++i) {
            q[i] += dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
            u[i] += dt / 6 * (k1[nv + i] + 2 * k2[nv + i] + 2 * k3[nv + i] + k4[nv + i]);
        }
    }
    CHECK(ok);
    free(k1); free(k2); free(k3); free(k4); free(qs); free(us); free(tau);
    sd_data_free(d);
}

/* (d3) stiff modes: the motion of a model with stiff, damped modes approaches the rigid model's
 * as O(1/K) (the modes follow their quasi-static deflection, of size force / K). */
static void test_stiff_limit(void)
{
    sd_model *mr = limit_model(0, 1.0, 1, 1);
    const int nv = mr->nv;
    double *qr = vec(nv), *ur = vec(nv);
    for (int i = 0; i < nv; ++i) {
        qr[i] = 0.3 * sin(1.0 + i);
        ur[i] = 0.5 * cos(2.0 + i);
    }
    double *q0 = vec(nv), *u0 = vec(nv);
    memcpy(q0, qr, (size_t)nv * sizeof(double));
    memcpy(u0, ur, (size_t)nv * sizeof(double));
    const double T = 0.2, dt = 2e-5;
    simulate(mr, T, dt, qr, ur);
    double dev[2];
    const double ks[2] = {1e5, 1e7};
    for (int level = 0; level < 2; ++level) {
        sd_model *mf = limit_model(3, ks[level], 0, 1);
        const int nvf = mf->nv;
        double *qf = vec(nvf), *uf = vec(nvf), *qh = vec(nv);
        map_hinges(mr, mf, q0, qf, 0);
        map_hinges(mr, mf, u0, uf, 1);
        simulate(mf, T, dt, qf, uf);
        for (int k = 0; k < mr->n; ++k)
            for (int i = 0; i < mr->nq_k[k]; ++i) qh[mr->q_index[k] + i] = qf[mf->q_index[k] + i];
        dev[level] = test_rel_diff(qh, qr, nv);
        free(qf); free(uf); free(qh);
        sd_model_free(mf);
    }
    printf("    stiff damped modes, 0.2 s of motion (RK4, 2e-5 s): hinge q vs rigid %.2g at K 1e5, %.2g at K 1e7\n",
           dev[0], dev[1]);
    CHECK(dev[0] < 1e-2 && dev[1] < 1e-4);
    CHECK(dev[0] / dev[1] > 30.0); /* O(1/K) */
    free(qr); free(ur); free(q0); free(u0);
    sd_model_free(mr);
}

/* ---------------------------------------------------------------- (g) external forces */

/* A force F at a point of a body (sd_external_force_at_point) changes the inverse dynamics by
 * -J_lin^T F, J the point's Jacobian: f_ext and the Jacobian agree on what a point on a flexible body is
 * (it moves with F_k; ancestors' modes move it through the nodes the path rides on). */
static void test_point_force_and_refusals(void)
{
    uint64_t rng = 131;
    double worst = 0, worst_joint = 0;
    for (int trial = 0; trial < 20; ++trial) {
        random_flex_spec spec = {2 + (int)(sd_random_uniform(&rng) * 5), 1 + trial % 10, RF_ON_NODES, 0};
        sd_model *m = random_flex_tree(&rng, &spec);
        sd_data *d = sd_data_new(m);
        const int nv = m->nv, nq = m->nq, n = m->n;
        double *q = vec(nq), *u = vec(nv), *qdd = vec(nv), *f = vec(6 * n), *t0 = vec(nv), *t1 = vec(nv),
               *J = vec(6 * nv + nv * nv), *r = vec(nv);
        random_flex_state(m, &rng, 0.3, q, u, qdd);
        const int body = (int)(sd_random_uniform(&rng) * n);
        double pt[3], F[3];
        random_vector(&rng, pt, 3, 0.5);
        random_vector(&rng, F, 3, 2.0);
        CHECK(sd_kinematics(m, d, q, u, NULL) == SD_OK);
        CHECK(sd_jacobian_world(m, d, body, pt, J) == SD_OK);
        CHECK(sd_external_force_at_point(m, d, body, pt, F, f) == SD_OK);
        CHECK(sd_inverse_dynamics(m, d, q, u, qdd, NULL, t0) == SD_OK);
        CHECK(sd_inverse_dynamics(m, d, q, u, qdd, f, t1) == SD_OK);
        for (int i = 0; i < nv; ++i) {
            r[i] = t0[i];
            for (int a = 0; a < 3; ++a) r[i] -= J[(3 + a) * nv + i] * F[a];
        }
        worst = fmax(worst, test_rel_diff(t1, r, nv));
        /* the inter-body force in the joint frame: the body frame is XJ(q_k) in it, also on a node */
        for (int k = 0; k < n; ++k) {
            double fb[6], fj[6], fr[6], S[36];
            sd_transform XJ;
            CHECK(sd_interbody_force(m, d, k, SD_FRAME_BODY, fb) == SD_OK);
            CHECK(sd_interbody_force(m, d, k, SD_FRAME_JOINT, fj) == SD_OK);
            sd_hinge_transform(m, k, q + m->q_index[k], &XJ, S);
            sd_force_to_parent(&XJ, fb, fr);
            worst_joint = fmax(worst_joint, test_rel_diff(fj, fr, 6));
        }
        free(q); free(u); free(qdd); free(f); free(t0); free(t1); free(J); free(r);
        sd_data_free(d);
        sd_model_free(m);
    }
    printf("(g) point force: ID(f_ext) = ID - J_lin^T F on flexible trees %.2g; inter-body force in the joint "
           "frame (hinges on nodes) %.2g\n",
           worst, worst_joint);
    CHECK(worst < 1e-12);
    CHECK(worst_joint < 1e-12);
    /* strain energy: 0 on a rigid model, and only after placements */
    sd_model *m = random_tree(&rng, 3, 0);
    sd_data *d = sd_data_new(m);
    double E = -1, *q = vec(m->nq);
    CHECK(sd_strain_energy(m, d, &E) == SD_E_ARGUMENT);
    sd_configuration_neutral(m, q);
    CHECK(sd_kinematics(m, d, q, NULL, NULL) == SD_OK && sd_strain_energy(m, d, &E) == SD_OK && E == 0.0);
    free(q);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    test_rigid_through_engine();
    test_id_equals_m_qdd_plus_c();
    test_mass_matrix_by_columns();
    test_dense_nodal_reference();
    test_linearised_mass_matrix();
    test_jacobian_fd();
    test_power_balance();
    test_rigid_limit();
    test_stiff_limit();
    test_point_force_and_refusals();
    return test_summary("test_node_engine");
}
