/*
 * tests/loops/test_four_bar.c — a planar Grashof crank-rocker four-bar (ground d = 0.4, crank
 * a = 0.1, coupler b = 0.35, rocker c = 0.3; s + l = 0.5 < p + q = 0.65, the crank the shortest
 * link and next to the ground), gravity in its plane:
 *   - cut at each of its four joints in turn: the same link accelerations, and the inter-body force
 *     of a joint that is a tree hinge in one cut equals the cut-joint force (lambda) when it is the
 *     cut in another;
 *   - the one-coordinate Lagrangian (N* M N, N spanning the null space of G) gives the same qdd;
 *   - closed by a full revolute (5 rows, rank 2) and by a ball (3 rows, rank 2): the same qdd;
 *   - closed by two point-in-plane rows (the coupler-rocker pin kept in two planes of the coupler,
 *     normals in the mechanism's plane): rank 2 of 2 rows (none redundant), the same qdd and pin
 *     force as the revolute closure, and the same motion over half a second;
 *   - assembly with the crank locked gives the coupler and rocker angles of the circle
 *     intersection, which keep Freudenstein's equation; with the locked crank's axis tilted 1e-6
 *     rad off the plane's normal, assembly returns the least-squares closure with SD_E_SINGULAR
 *     saying no free speed moves the out-of-plane gap left (its predicted size, to 1e-6 of it);
 *   - a second of motion (RK4 on the closed-loop accelerations): the angles keep Freudenstein's
 *     equation K1 cos t4 - K2 cos t2 + K3 = cos(t2 - t4), energy is conserved;
 *   - bad constraint descriptions: errors that name the constraint and its file:line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loops/loops_oracle.h"
#include "test_util.h"

static const double LA = 0.1, LB = 0.35, LC = 0.3, LD = 0.4; /* crank, coupler, rocker, ground */
static const double MASS[3] = {0.5, 1.2, 0.9};
static const double G_PLANE[3] = {0.0, -9.81, 0.0};

/* Link angles (crank t2, coupler t3, rocker t4 from O4) and joint points at crank angle t2, on the
 * branch with the coupler above the ground line: circle intersection, independent of Freudenstein. */
static void four_bar_pose(double t2, double th[3], double P[4][3])
{
    const double A[2] = {LA * cos(t2), LA * sin(t2)}, O4[2] = {LD, 0.0};
    const double dx = O4[0] - A[0], dy = O4[1] - A[1], dist = sqrt(dx * dx + dy * dy);
    const double along = (LB * LB - LC * LC + dist * dist) / (2 * dist), h = sqrt(LB * LB - along * along);
    const double B[2] = {A[0] + along * dx / dist - h * dy / dist, A[1] + along * dy / dist + h * dx / dist};
    th[0] = t2;
    th[1] = atan2(B[1] - A[1], B[0] - A[0]);
    th[2] = atan2(B[1] - O4[1], B[0] - O4[0]);
    const double pts[4][2] = {{0, 0}, {A[0], A[1]}, {B[0], B[1]}, {LD, 0}}; /* O2, A, B, O4 */
    for (int i = 0; i < 4; ++i) P[i][0] = pts[i][0], P[i][1] = pts[i][1], P[i][2] = 0.0;
}

/* Link angular rates from the crank's: vB = w2 k x a + w3 k x b = w4 k x c. */
static void four_bar_rates(const double th[3], double w2, double w[3])
{
    const double a[2] = {LA * cos(th[0]), LA * sin(th[0])}, b[2] = {LB * cos(th[1]), LB * sin(th[1])},
                 c[2] = {LC * cos(th[2]), LC * sin(th[2])};
    /* w3 (-b_y, b_x) - w4 (-c_y, c_x) = -w2 (-a_y, a_x) */
    const double m11 = -b[1], m12 = c[1], m21 = b[0], m22 = -c[0], r1 = w2 * a[1], r2 = -w2 * a[0];
    const double det = m11 * m22 - m12 * m21;
    w[0] = w2;
    w[1] = (r1 * m22 - m12 * r2) / det;
    w[2] = (m11 * r2 - r1 * m21) / det;
}

/* The tree of one cut: for each link (0 crank, 1 coupler, 2 rocker) its tree parent link (-1:
 * ground) and the joint point (0 O2, 1 A, 2 B, 3 O4) where it hangs from it; the cut joint's point and
 * its two sides (link or -1). */
typedef struct cut_layout {
    int order[3], parent[3], pivot[3];
    int cut_point, side_a, side_b;
} cut_layout;

static const cut_layout CUTS[4] = {
    /* cut J1 (O2): ground-J4-rocker-J3-coupler-J2-crank */
    {{2, 1, 0}, {1, 2, -1}, {1, 2, 3}, 0, -1, 0},
    /* cut J2 (A): ground-J1-crank; ground-J4-rocker-J3-coupler */
    {{0, 2, 1}, {-1, 2, -1}, {0, 2, 3}, 1, 0, 1},
    /* cut J3 (B): ground-J1-crank-J2-coupler; ground-J4-rocker */
    {{0, 1, 2}, {-1, 0, -1}, {0, 1, 3}, 2, 1, 2},
    /* cut J4 (O4): ground-J1-crank-J2-coupler-J3-rocker */
    {{0, 1, 2}, {-1, 0, 1}, {0, 1, 2}, 3, -1, 2},
};
static const char *LINK_NAMES[3] = {"crank", "coupler", "rocker"};
/* the two joint points of each link */
static const int LINK_ENDS[3][2] = {{0, 1}, {1, 2}, {3, 2}};

static double REF_TH[3], REF_P[4][3]; /* the reference pose: every tree coordinate zero there */
static double CRANK_TILT = 0.0; /* the crank's axis turned by this about x, off the plane's normal */

/* Build the four-bar cut as `cut`, closed by ncons constraints at the cut point, of types[i] and
 * axes (plane normals) axes[i] (NULL: the default z). Body frames sit at each link's tree pivot with
 * world axes at the reference pose. */
static sd_model *four_bar_closed(int cut, int ncons, const sd_constraint_type *types, const double (*axes)[3],
                                 const char *source)
{
    const cut_layout *L = &CUTS[cut];
    sd_builder *b = sd_builder_new();
    sd_builder_set_gravity(b, G_PLANE);
    sd_error err;
    for (int i = 0; i < 3; ++i) {
        const int link = L->order[i], par = L->parent[link];
        const double *piv = REF_P[L->pivot[link]];
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = LINK_NAMES[link];
        d.parent = par < 0 ? NULL : LINK_NAMES[par];
        d.hinge = SD_HINGE_REVOLUTE;
        const double *ppiv = par < 0 ? NULL : REF_P[L->pivot[par]];
        for (int j = 0; j < 3; ++j) d.placement.p[j] = piv[j] - (ppiv ? ppiv[j] : 0.0);
        d.mass = MASS[link];
        if (link == 0) d.axis[0] = 0.0, d.axis[1] = sin(CRANK_TILT), d.axis[2] = cos(CRANK_TILT);
        const double *e0 = REF_P[LINK_ENDS[link][0]], *e1 = REF_P[LINK_ENDS[link][1]];
        double dir[3], len;
        for (int j = 0; j < 3; ++j) {
            d.com[j] = 0.5 * (e0[j] + e1[j]) - piv[j];
            dir[j] = e1[j] - e0[j];
        }
        len = sd_v3_norm(dir);
        for (int j = 0; j < 3; ++j) dir[j] /= len;
        for (int r = 0; r < 3; ++r) /* a rod: m L^2/12 (I - dd^T), plus a little thickness */
            for (int c = 0; c < 3; ++c)
                d.inertia[3 * r + c] = d.mass * len * len / 12.0 * ((r == c) - dir[r] * dir[c]) + d.mass * 1e-3 * (r == c);
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    for (int i = 0; i < ncons; ++i) {
        sd_constraint_desc c;
        sd_constraint_desc_init(&c);
        char name[16];
        snprintf(name, sizeof name, i ? "loop%d" : "loop", i);
        c.name = name;
        c.type = types[i];
        if (axes) memcpy(c.axis, axes[i], sizeof c.axis);
        c.source_file = source;
        c.source_line = source ? 7 : 0;
        const double *pc = REF_P[L->cut_point];
        c.body_a = L->side_a < 0 ? NULL : LINK_NAMES[L->side_a];
        c.body_b = LINK_NAMES[L->side_b];
        for (int j = 0; j < 3; ++j) {
            c.frame_a.p[j] = pc[j] - (L->side_a < 0 ? 0.0 : REF_P[L->pivot[L->side_a]][j]);
            c.frame_b.p[j] = pc[j] - REF_P[L->pivot[L->side_b]][j];
        }
        CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
    }
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

/* ... closed by one constraint of `type` (REVOLUTE or BALL) */
static sd_model *four_bar(int cut, sd_constraint_type type, const char *source)
{
    return four_bar_closed(cut, 1, &type, NULL, source);
}

/* ... closed by two point-in-plane rows: the pin kept in the planes of normals x and y through the
 * cut point (F_A's axes are the world's at the reference pose, so both normals lie in the
 * mechanism's plane) */
static sd_model *four_bar_point_in_plane(int cut)
{
    static const sd_constraint_type types[2] = {SD_CONSTRAINT_POINT_IN_PLANE, SD_CONSTRAINT_POINT_IN_PLANE};
    static const double normals[2][3] = {{1, 0, 0}, {0, 1, 0}};
    return four_bar_closed(cut, 2, types, normals, NULL);
}

/* q, u of the cut's tree at crank angle t2 and rate w2. */
static void cut_state(const sd_model *m, int cut, double t2, double w2, double *q, double *u)
{
    const cut_layout *L = &CUTS[cut];
    double th[3], P[4][3], w[3];
    four_bar_pose(t2, th, P);
    four_bar_rates(th, w2, w);
    for (int link = 0; link < 3; ++link) {
        const int k = sd_model_body_index(m, LINK_NAMES[link]), par = L->parent[link];
        q[sd_model_q_index(m, k)] = (th[link] - REF_TH[link]) - (par < 0 ? 0.0 : th[par] - REF_TH[par]);
        u[sd_model_v_index(m, k)] = w[link] - (par < 0 ? 0.0 : w[par]);
    }
}

/* Absolute angular accelerations (or angles, with offsets) of the links from the tree's. */
static void link_values(const sd_model *m, int cut, const double *x, double out[3])
{
    const cut_layout *L = &CUTS[cut];
    for (int i = 0; i < 3; ++i) {
        const int link = L->order[i], par = L->parent[link];
        out[link] = x[sd_model_v_index(m, sd_model_body_index(m, LINK_NAMES[link]))] + (par < 0 ? 0.0 : out[par]);
    }
}

static void test_cuts_and_forces(void)
{
    const double t2 = 1.9, w2 = 2.5;
    double acc[4][3], fcut[4][6];
    sd_model *models[4];
    sd_data *datas[4];
    for (int cut = 0; cut < 4; ++cut) {
        sd_model *m = models[cut] = four_bar(cut, SD_CONSTRAINT_REVOLUTE, NULL);
        sd_data *d = datas[cut] = sd_data_new(m);
        double q[3], u[3], tau[3] = {0, 0, 0}, qdd[3], lam[5], pos[5], vel[5];
        cut_state(m, cut, t2, w2, q, u);
        CHECK(sd_constraint_residuals(m, d, q, u, pos, vel) == SD_OK);
        for (int i = 0; i < 5; ++i) CHECK(fabs(pos[i]) < 1e-12 && fabs(vel[i]) < 1e-12);
        sd_closed_loop_options opt = {.interbody_forces = 1};
        CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lam, &opt) == SD_OK);
        CHECK(sd_closed_loop_rank(d) == 2);
        link_values(m, cut, qdd, acc[cut]);
        CHECK(sd_constraint_force(m, d, 0, SD_CONSTRAINT_FRAME_WORLD, fcut[cut]) == SD_OK);
    }
    for (int cut = 1; cut < 4; ++cut)
        CHECK_ARRAY_CLOSE(acc[cut], acc[0], 3, 1e-10, "link accelerations: the same whichever joint is cut");
    printf("link accelerations %.12g %.12g %.12g\n", acc[0][0], acc[0][1], acc[0][2]);
    /* joint J of cut c is a tree hinge of another cut c': its force there (parent on child, world axes
     * about the child's origin, which is the joint point) equals lambda's force when it is the cut.
     * The cut's force acts on side B; the tree force acts on the child. */
    for (int cut = 0; cut < 4; ++cut)
        for (int other = 0; other < 4; ++other) {
            if (other == cut) continue;
            const cut_layout *L = &CUTS[cut], *O = &CUTS[other];
            /* in `other`, which link hangs from the joint at L->cut_point, and from which side */
            for (int link = 0; link < 3; ++link) {
                if (O->pivot[link] != L->cut_point) continue;
                double f[6], expect[6];
                CHECK(sd_interbody_force(models[other], datas[other], sd_model_body_index(models[other], LINK_NAMES[link]),
                                         SD_FRAME_WORLD, f) == SD_OK);
                const double sign = link == L->side_b ? 1.0 : -1.0; /* the child is B, or A (reaction) */
                for (int i = 0; i < 6; ++i) expect[i] = sign * fcut[cut][i];
                CHECK_ARRAY_CLOSE(f, expect, 6, 1e-10, "tree-hinge force in one cut = cut-joint force in another");
            }
        }
    for (int cut = 0; cut < 4; ++cut) {
        sd_data_free(datas[cut]);
        sd_model_free(models[cut]);
    }
}

/* The one-coordinate Lagrangian: qdd = N s'' + q_p with G q_p = -Gdot u, N* M (N s'' + q_p) = N*(T - C). */
static void test_lagrangian_and_redundancy(void)
{
    sd_model *m = four_bar(3, SD_CONSTRAINT_REVOLUTE, NULL), *mb = four_bar(3, SD_CONSTRAINT_BALL, NULL);
    sd_data *d = sd_data_new(m), *db = sd_data_new(mb);
    double q[3], u[3], tau[3] = {0.3, 0, 0}, qdd[3], qdd_b[3], M[9], c[3], G[15], gdu[5];
    cut_state(m, 3, 0.7, -1.3, q, u);
    CHECK(sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, NULL, NULL) == SD_OK);
    CHECK(sd_closed_loop_rank(d) == 2 && sd_model_nconstraint_rows(m) == 5);
    int rank = -1, mobility = -1;
    CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
    CHECK(rank == 2 && mobility == 1);
    CHECK(sd_closed_loop_forward_dynamics(mb, db, q, u, tau, NULL, qdd_b, NULL, NULL) == SD_OK);
    CHECK(sd_closed_loop_rank(db) == 2 && sd_model_nconstraint_rows(mb) == 3);
    CHECK_ARRAY_CLOSE(qdd_b, qdd, 3, 1e-10, "closed by a ball (rank 2 of 3) = by a full revolute (rank 2 of 5)");
    CHECK(sd_mass_matrix(m, d, q, M) == SD_OK);
    CHECK(sd_bias_forces(m, d, q, u, NULL, c) == SD_OK);
    CHECK(sd_constraint_jacobian(m, d, q, G) == SD_OK);
    CHECK(oracle_gdot_u(m, d, q, u, 1e-3, gdu));
    /* N: the null vector of G (3 columns, rank 2): the eigenvector of G*G with eigenvalue 0 */
    double GtG[9] = {0}, V[9], w[3], N[3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int a = 0; a < 5; ++a) GtG[3 * i + j] += G[3 * a + i] * G[3 * a + j];
    oracle_eigen(GtG, 3, w, V);
    int e0 = 0;
    for (int i = 1; i < 3; ++i)
        if (w[i] < w[e0]) e0 = i;
    for (int i = 0; i < 3; ++i) N[i] = V[3 * i + e0];
    /* q_p = -G^+ Gdot u (minimum norm): -(G*G)^+ G* Gdot u */
    double Gtg[3] = {0}, qp[3];
    for (int i = 0; i < 3; ++i)
        for (int a = 0; a < 5; ++a) Gtg[i] -= G[3 * a + i] * gdu[a];
    for (int i = 0; i < 9; ++i) GtG[i] = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int a = 0; a < 5; ++a) GtG[3 * i + j] += G[3 * a + i] * G[3 * a + j];
    oracle_pinv_solve(GtG, 3, Gtg, qp, 1e-10, 0.0);
    double NMN = 0.0, rhs = 0.0;
    for (int i = 0; i < 3; ++i) {
        double MN = 0.0, Mqp = 0.0;
        for (int j = 0; j < 3; ++j) MN += M[3 * i + j] * N[j], Mqp += M[3 * i + j] * qp[j];
        NMN += N[i] * MN;
        rhs += N[i] * (tau[i] - c[i] - Mqp);
    }
    double qdd_l[3];
    for (int i = 0; i < 3; ++i) qdd_l[i] = N[i] * rhs / NMN + qp[i];
    CHECK_ARRAY_CLOSE(qdd, qdd_l, 3, 1e-9, "closed-loop qdd vs the one-coordinate Lagrangian N* M N");
    sd_data_free(d);
    sd_data_free(db);
    sd_model_free(m);
    sd_model_free(mb);
}

static double energy(const sd_model *m, sd_data *d, const double *q, const double *u)
{
    double T = 0.0, U = 0.0;
    sd_kinematics(m, d, q, u, NULL);
    CHECK(sd_kinetic_energy(m, d, &T) == SD_OK && sd_potential_energy(m, d, &U) == SD_OK);
    return T + U;
}

/* `steps` RK4 steps of h on the closed-loop accelerations (revolute coordinates only: plain
 * vectors); returns the largest position residual met. */
static double rk4_unforced(const sd_model *m, sd_data *d, double *q, double *u, int steps, double h)
{
    const double tau[3] = {0, 0, 0};
    const int nc = sd_model_nconstraint_rows(m);
    double worst_pos = 0.0;
    for (int step = 0; step < steps; ++step) {
        double k[4][6], qs[3], us[3];
        for (int s = 0; s < 4; ++s) {
            const double c = s == 0 ? 0.0 : (s == 3 ? 1.0 : 0.5);
            for (int i = 0; i < 3; ++i) {
                qs[i] = q[i] + c * h * (s ? k[s - 1][i] : 0.0);
                us[i] = u[i] + c * h * (s ? k[s - 1][3 + i] : 0.0);
            }
            for (int i = 0; i < 3; ++i) k[s][i] = us[i];
            CHECK(sd_closed_loop_forward_dynamics(m, d, qs, us, tau, NULL, k[s] + 3, NULL, NULL) == SD_OK);
        }
        for (int i = 0; i < 3; ++i) {
            q[i] += h / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
            u[i] += h / 6 * (k[0][3 + i] + 2 * k[1][3 + i] + 2 * k[2][3 + i] + k[3][3 + i]);
        }
        double pos[6];
        sd_constraint_residuals(m, d, q, NULL, pos, NULL);
        for (int i = 0; i < nc; ++i) worst_pos = fmax(worst_pos, fabs(pos[i]));
    }
    return worst_pos;
}

static void test_motion_freudenstein(void)
{
    sd_model *m = four_bar(3, SD_CONSTRAINT_REVOLUTE, NULL);
    sd_data *d = sd_data_new(m);
    double q[3], u[3];
    cut_state(m, 3, 0.4, 3.0, q, u);
    const double e0 = energy(m, d, q, u);
    const double worst_pos = rk4_unforced(m, d, q, u, 4000, 2.5e-4);
    double th[3];
    link_values(m, 3, q, th); /* angles relative to the reference, summed along the chain */
    for (int i = 0; i < 3; ++i) th[i] += REF_TH[i];
    const double K1 = LD / LA, K2 = LD / LC, K3 = (LA * LA - LB * LB + LC * LC + LD * LD) / (2 * LA * LC);
    const double fr = K1 * cos(th[2]) - K2 * cos(th[0]) + K3 - cos(th[0] - th[2]);
    const double e1 = energy(m, d, q, u);
    printf("after 1 s: crank %.6f rad, Freudenstein residual %.3g, position residual %.3g, energy drift %.3g\n", th[0],
           fr, worst_pos, fabs(e1 - e0) / fabs(e0));
    CHECK(fabs(fr) < 1e-8);
    CHECK(worst_pos < 1e-8);
    CHECK(fabs(e1 - e0) < 1e-8 * fabs(e0));
    sd_data_free(d);
    sd_model_free(m);
}

/* Point-in-plane closure: two rows, both independent, where the revolute has five of rank 2. */
static void test_point_in_plane_closure(void)
{
    for (int cut = 0; cut < 4; ++cut) {
        sd_model *mr = four_bar(cut, SD_CONSTRAINT_REVOLUTE, NULL), *mp = four_bar_point_in_plane(cut);
        sd_data *dr = sd_data_new(mr), *dp = sd_data_new(mp);
        CHECK(sd_model_nconstraints(mp) == 2 && sd_model_nconstraint_rows(mp) == 2);
        CHECK(strcmp(sd_constraint_type_name(sd_model_constraint_type(mp, 0)), "point_in_plane") == 0);
        double q[3], u[3], tau[3] = {0.2, -0.1, 0.05}, qdd_r[3], qdd_p[3], lam_r[5], lam_p[2], pos[2], vel[2];
        double f_r[6], f_p[6], f_p2[6];
        cut_state(mp, cut, 1.3, -2.2, q, u);
        CHECK(sd_constraint_residuals(mp, dp, q, u, pos, vel) == SD_OK);
        for (int i = 0; i < 2; ++i) CHECK(fabs(pos[i]) < 1e-12 && fabs(vel[i]) < 1e-12);
        int rank = -1, mobility = -1;
        CHECK(sd_constraint_rank(mp, dp, q, &rank, &mobility) == SD_OK && rank == 2 && mobility == 1);
        CHECK(sd_closed_loop_forward_dynamics(mr, dr, q, u, tau, NULL, qdd_r, lam_r, NULL) == SD_OK);
        CHECK(sd_closed_loop_forward_dynamics(mp, dp, q, u, tau, NULL, qdd_p, lam_p, NULL) == SD_OK);
        CHECK(sd_closed_loop_rank(dp) == 2); /* no redundant row */
        CHECK_ARRAY_CLOSE(qdd_p, qdd_r, 3, 1e-10, "four-bar qdd: point-in-plane rows = revolute closure");
        /* the pin force: the two normal forces together = the revolute's (world axes, at the pin) */
        CHECK(sd_constraint_force(mr, dr, 0, SD_CONSTRAINT_FRAME_WORLD, f_r) == SD_OK);
        CHECK(sd_constraint_force(mp, dp, 0, SD_CONSTRAINT_FRAME_WORLD, f_p) == SD_OK);
        CHECK(sd_constraint_force(mp, dp, 1, SD_CONSTRAINT_FRAME_WORLD, f_p2) == SD_OK);
        for (int i = 0; i < 6; ++i) f_p[i] += f_p2[i];
        CHECK_ARRAY_CLOSE(f_p, f_r, 6, 1e-10, "four-bar pin force: two point-in-plane rows = revolute closure");
        if (cut == 3) { /* half a second of motion */
            double qr[3], ur[3];
            memcpy(qr, q, sizeof q);
            memcpy(ur, u, sizeof u);
            const double pos_r = rk4_unforced(mr, dr, qr, ur, 2000, 2.5e-4);
            const double pos_p = rk4_unforced(mp, dp, q, u, 2000, 2.5e-4);
            printf("point-in-plane four-bar after 0.5 s: q %.12f %.12f %.12f, revolute's %.12f %.12f %.12f; "
                   "residuals %.2g, %.2g\n", q[0], q[1], q[2], qr[0], qr[1], qr[2], pos_p, pos_r);
            CHECK_ARRAY_CLOSE(q, qr, 3, 1e-10, "four-bar motion: point-in-plane rows = revolute closure");
            CHECK_ARRAY_CLOSE(u, ur, 3, 1e-10, "four-bar speeds: point-in-plane rows = revolute closure");
            CHECK(pos_p < 1e-8);
        }
        sd_data_free(dr);
        sd_data_free(dp);
        sd_model_free(mr);
        sd_model_free(mp);
    }
}

/* Assembly with the crank locked: the coupler and rocker angles follow from the crank's
 * (Freudenstein), as the circle intersection gives them. */
static void test_assembly_freudenstein(void)
{
    sd_model *m = four_bar(3, SD_CONSTRAINT_REVOLUTE, NULL);
    sd_data *d = sd_data_new(m);
    const int crank = sd_model_body_index(m, "crank");
    double q[3] = {0, 0, 0}, qa[3], res, th[3], P[4][3], th_a[3];
    unsigned char locked[3] = {0, 0, 0};
    locked[sd_model_v_index(m, crank)] = 1;
    for (int i = 0; i < 6; ++i) {
        const double t2 = REF_TH[0] + 0.15 * (i - 2);
        q[sd_model_q_index(m, crank)] = t2 - REF_TH[0];
        CHECK(sd_assemble_configuration(m, d, q, locked, 1e-13, 50, qa, &res) == SD_OK);
        CHECK(qa[sd_model_q_index(m, crank)] == q[sd_model_q_index(m, crank)]);
        four_bar_pose(t2, th, P);
        link_values(m, 3, qa, th_a);
        for (int k = 0; k < 3; ++k) th_a[k] += REF_TH[k];
        CHECK_ARRAY_CLOSE(th_a, th, 3, 1e-10, "assembled link angles vs the circle intersection");
        const double K1 = LD / LA, K2 = LD / LC, K3 = (LA * LA - LB * LB + LC * LC + LD * LD) / (2 * LA * LC);
        CHECK(fabs(K1 * cos(th_a[2]) - K2 * cos(th_a[0]) + K3 - cos(th_a[0] - th_a[2])) < 1e-10);
    }
    sd_data_free(d);
    sd_model_free(m);
}

/* A message names the constraint and the place it came from. */
static void expect_error(sd_constraint_desc *c, int at_build, const char *must_contain)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "link";
    d.hinge = SD_HINGE_REVOLUTE;
    d.mass = 1.0;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1;
    sd_builder_add_body(b, &d, &err);
    d.name = "ball";
    d.parent = "link";
    d.hinge = SD_HINGE_SPHERICAL;
    sd_builder_add_body(b, &d, &err);
    c->source_file = "robot.urdf";
    c->source_line = 42;
    sd_status st = sd_builder_add_constraint(b, c, &err);
    if (at_build) {
        CHECK(st == SD_OK);
        sd_model *m = NULL;
        st = sd_builder_build(b, &m, &err);
        CHECK(m == NULL);
    }
    CHECK(st == SD_E_MODEL);
    const int ok = strstr(err.message, must_contain) && strstr(err.message, "robot.urdf:42") &&
                   (!c->name || strstr(err.message, c->name));
    if (!ok) fprintf(stderr, "message: %s (expected '%s')\n", err.message, must_contain);
    CHECK(ok);
    sd_builder_free(b);
}

static void test_bad_input(void)
{
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.body_b = "nowhere";
    expect_error(&c, 1, "nowhere");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_b = "link";
    c.axis[2] = 0.0;
    expect_error(&c, 0, "axis");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_DISTANCE;
    c.body_b = "link";
    expect_error(&c, 0, "distance");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_COUPLING;
    c.joint_a = c.joint_b = "link";
    expect_error(&c, 0, "itself");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_COUPLING;
    c.joint_a = "link";
    c.joint_b = "ball";
    expect_error(&c, 1, "spherical");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.body_a = c.body_b = "link";
    expect_error(&c, 1, "itself");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.body_b = "link";
    c.frame_b.p[1] = NAN;
    expect_error(&c, 0, "frame");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_COUPLING;
    c.joint_a = "link";
    c.joint_b = "ghost";
    expect_error(&c, 1, "ghost");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_POINT_IN_PLANE;
    c.body_b = "link";
    c.axis[2] = 0.0;
    expect_error(&c, 0, "plane's normal is zero");
    sd_constraint_desc_init(&c);
    c.name = "bad";
    c.type = SD_CONSTRAINT_PLANAR;
    c.body_b = "link";
    c.axis[0] = NAN;
    expect_error(&c, 0, "plane's normal is zero or not finite");
    sd_constraint_desc_init(&c);
    c.name = NULL;
    expect_error(&c, 0, "no name");
}


/* Cut at A (ground-crank; ground-rocker-coupler), the crank locked with its axis tilted by eps off
 * the plane's normal: turned by phi it lifts A out of the plane by
 * z = sin(eps) (-a_x sin(phi) + cos(eps) a_y (1 - cos(phi))) (Rodrigues), while the rocker and
 * coupler turn about the exact normal: no motion of theirs moves the ball's z row. Assembly then returns the least-squares closure (in-plane rows at round-off,
 * z left exactly) with SD_E_SINGULAR saying so - cassie_v2.sdf's right plantar loop with its foot
 * locked, 2.2e-8 m (test_cassie_sdf_mjcf). Without the tilt the same lock closes the loop. */
static void test_assembly_tilted_lock(void)
{
    CRANK_TILT = 1e-6;
    sd_model *m = four_bar(1, SD_CONSTRAINT_BALL, NULL);
    CRANK_TILT = 0.0;
    sd_data *d = sd_data_new(m);
    const int crank = sd_model_body_index(m, "crank");
    const double phi = 0.3, ax = REF_P[1][0] - REF_P[0][0], ay = REF_P[1][1] - REF_P[0][1];
    const double z = sin(1e-6) * (-ax * sin(phi) + cos(1e-6) * ay * (1 - cos(phi)));
    double q[3] = {0, 0, 0}, qa[3], res = 0.0, r[3];
    unsigned char locked[3] = {0, 0, 0};
    const int vc = sd_model_v_index(m, crank);
    CHECK(vc >= 0 && vc < 3);
    if (vc >= 0 && vc < 3) locked[vc] = 1;
    q[sd_model_q_index(m, crank)] = phi;
    CHECK(sd_assemble_configuration(m, d, q, locked, 1e-13, 50, qa, &res) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(d), "no free speed moves it") != NULL);
    CHECK(sd_constraint_residuals(m, d, qa, NULL, r, NULL) == SD_OK);
    printf("tilted locked crank: assembly stops at %.6e m (predicted out-of-plane gap %.6e m), in-plane rows "
           "%.1e %.1e\n  %s\n", res, fabs(z), r[0], r[1], sd_data_error(d));
    CHECK(fabs(res - fabs(z)) < 1e-6 * fabs(z) && fabs(fabs(r[2]) - fabs(z)) < 1e-6 * fabs(z));
    CHECK(fabs(r[0]) < 1e-14 && fabs(r[1]) < 1e-14);
    sd_data_free(d);
    sd_model_free(m);
    m = four_bar(1, SD_CONSTRAINT_BALL, NULL); /* the same lock without the tilt: closed to round-off */
    d = sd_data_new(m);
    CHECK(sd_assemble_configuration(m, d, q, locked, 1e-13, 50, qa, &res) == SD_OK && res <= 1e-13);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    four_bar_pose(1.0, REF_TH, REF_P);
    test_cuts_and_forces();
    test_lagrangian_and_redundancy();
    test_motion_freudenstein();
    test_point_in_plane_closure();
    test_assembly_freudenstein();
    test_assembly_tilted_lock();
    test_bad_input();
    return test_summary("test_four_bar");
}
