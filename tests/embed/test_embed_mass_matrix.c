/*
 * tests/embed/test_embed_mass_matrix.c — the embedded system's mass matrix, inverse dynamics and bias
 * forces (the tree's, projected by N: src/embed/embed_projected.c), against computations that do not
 * go through that projection, on the tree at closed states:
 *   - M_e = N^T M_tree N, N(q) read column by column through sd_embedded_tree_speeds, M_tree from
 *     sd_mass_matrix (armature included), to 1e-12 relative;
 *   - inverse dynamics: the tree-augmented forward dynamics (sd_closed_loop_forward_dynamics, another
 *     code path) at (q, u_tree = N u, tau_tree zero on the dependent speeds) gives qdd_tree; its
 *     independent entries qdd_e must give back tau_e = N^T tau_tree from
 *     sd_embedded_inverse_dynamics, and N^T (tree ID at qdd_tree) is the same tau_e;
 *   - bias forces: C_e = N^T (tree ID at (u_tree, qdd_c)) with qdd_c = qdd_tree - N qdd_e (the
 *     dependent accelerations that u alone causes), and M_e qdd_e + C_e = tau_e;
 *   - ID(FD(tau)) = tau with the embedded forward dynamics;
 * on a four-bar and a slider-crank (models/four_bar.urdf, models/slider_crank.urdf), a geared motor (rotor and link coupled), a
 * 10-link chain with a four-bar at its tip, random trees of every hinge type with random loops
 * (tests/loops/random_loops.h), all with armature, damping, springs and f_ext; and a model with a
 * tree-augmented loop left: the inverse dynamics refuses it naming sd_constrained_inverse_dynamics,
 * the mass matrix is still N^T M N.
 *
 * Usage: test_embed_mass_matrix [models folder] (the URDF cases skipped without it or without io).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/config.h>
#include <soadyn/embed.h>
#include <soadyn/soadyn.h>

#include "loops/random_loops.h"
#include "random_tree.h"
#include "test_util.h"

typedef struct worst {
    double mass, id, id_tree, acc, bias, balance, idfd, cond;
    int states, models;
} worst;

static double max_abs(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s = fmax(s, fabs(x[i]));
    return s;
}

/* max |a - b| / max(floor, max |b|) */
static double rel(const double *a, const double *b, int n, double floor)
{
    double num = 0.0;
    for (int i = 0; i < n; ++i) {
        const double d = fabs(a[i] - b[i]);
        if (isnan(d)) return INFINITY;
        num = fmax(num, d);
    }
    return num / fmax(floor, max_abs(b, n));
}

/* Cholesky L (lower, row-major) of the n x n A; 0 when A is not positive definite. */
static int cholesky(const double *A, int n, double *L)
{
    memset(L, 0, sizeof(double) * (size_t)(n * n));
    for (int j = 0; j < n; ++j) {
        double s = A[j * n + j];
        for (int k = 0; k < j; ++k) s -= L[j * n + k] * L[j * n + k];
        if (!(s > 0.0)) return 0;
        L[j * n + j] = sqrt(s);
        for (int i = j + 1; i < n; ++i) {
            double t = A[i * n + j];
            for (int k = 0; k < j; ++k) t -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = t / L[j * n + j];
        }
    }
    return 1;
}

/* y = N^T x (N nv x ne row-major) */
static void nt_mul(const double *N, int nv, int ne, const double *x, double *y)
{
    for (int j = 0; j < ne; ++j) {
        double s = 0.0;
        for (int i = 0; i < nv; ++i) s += N[i * ne + j] * x[i];
        y[j] = s;
    }
}

/* The model rebuilt with random armature, damping and springs on every hinge that takes them
 * (springs on revolute, prismatic and spherical hinges), its constraints dropped (added after). */
static sd_model *with_joint_dynamics(const sd_model *tree, uint64_t *rng)
{
    sd_builder *b = sd_builder_new();
    double g[3];
    sd_model_gravity(tree, g);
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < sd_model_nbodies(tree); ++k) {
        sd_body_desc d = *sd_model_body_desc(tree, k);
        const sd_hinge_type h = d.hinge;
        d.armature = 0.3 * sd_random_uniform(rng);
        d.damping = 0.5 * sd_random_uniform(rng);
        if (h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC || h == SD_HINGE_SPHERICAL) {
            d.stiffness = 2.0 * sd_random_uniform(rng);
            if (h != SD_HINGE_SPHERICAL) d.spring_ref = 0.4 * (sd_random_uniform(rng) - 0.5);
        }
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "with_joint_dynamics: %s\n", err.message);
            abort();
        }
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "with_joint_dynamics: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    return m;
}

/* Every check at `trials` closed states of m embedded with `loops`, starting from q0 (closed or
 * nearly). Returns 0 when the embedding could not be made (printed; random loops may lock). */
static int check_model(const char *label, const sd_model *m, const double *q0, const char *loops, uint64_t *rng,
                       int trials, worst *w)
{
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.q = q0;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    if (!e) {
        printf("  %-24s not embedded: %s\n", label, err.message);
        return 0;
    }
    sd_embedded_data *ed = sd_embedded_data_new(e);
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), n = sd_model_nbodies(m), ne = sd_embedding_nv(e);
    int all_embedded = 1;
    for (int c = 0; c < sd_model_nconstraints(m); ++c) all_embedded &= sd_embedding_constraint_embedded(e, c) == 1;
    double *q = malloc(sizeof(double) * (size_t)nq), *qn = malloc(sizeof(double) * (size_t)nq);
    double *N = calloc((size_t)(nv * ne) + 1, sizeof(double)), *ei = calloc((size_t)ne + 1, sizeof(double));
    double *col = malloc(sizeof(double) * (size_t)nv), *Mt = malloc(sizeof(double) * (size_t)(nv * nv));
    double *L = calloc((size_t)(ne * ne) + 1, sizeof(double));
    double *Me = calloc((size_t)(ne * ne) + 1, sizeof(double)), *NMN = calloc((size_t)(ne * ne) + 1, sizeof(double));
    double *ue = calloc((size_t)ne + 1, sizeof(double)), *ut = malloc(sizeof(double) * (size_t)nv);
    double *tau_t = calloc((size_t)nv, sizeof(double)), *tau_e = calloc((size_t)ne + 1, sizeof(double));
    double *qdd_t = malloc(sizeof(double) * (size_t)nv), *qdd_e = calloc((size_t)ne + 1, sizeof(double));
    double *qdd_c = malloc(sizeof(double) * (size_t)nv), *tmp = malloc(sizeof(double) * (size_t)nv);
    double *tau_id = calloc((size_t)ne + 1, sizeof(double)), *ref = calloc((size_t)ne + 1, sizeof(double));
    double *ce = calloc((size_t)ne + 1, sizeof(double)), *qdd_fd = calloc((size_t)ne + 1, sizeof(double));
    double *f_ext = calloc((size_t)(6 * n), sizeof(double));
    double *acc_e = malloc(sizeof(double) * (size_t)(6 * n)), *acc_t = malloc(sizeof(double) * (size_t)(6 * n));
    double res = 1.0;
    CHECK(sd_embedded_close(e, ed, q0, q, &res) == SD_OK && res < 1e-12);
    for (int t = 0; t < trials; ++t) {
        if (t > 0) { /* move along the embedded speeds and close again (a new state on the manifold) */
            random_vector(rng, ue, ne, 0.4);
            if (sd_embedded_tree_speeds(e, ed, q, ue, ut) != SD_OK) break;
            sd_configuration_integrate(m, q, ut, 1.0, qn);
            if (sd_embedded_close(e, ed, qn, qn, &res) != SD_OK || !(res < 1e-12)) continue;
            memcpy(q, qn, sizeof(double) * (size_t)nq);
        }
        /* N column by column */
        for (int j = 0; j < ne; ++j) {
            memset(ei, 0, sizeof(double) * (size_t)ne);
            ei[j] = 1.0;
            CHECK(sd_embedded_tree_speeds(e, ed, q, ei, col) == SD_OK);
            for (int i = 0; i < nv; ++i) N[i * ne + j] = col[i];
        }
        /* M_e = N^T M_tree N */
        CHECK(sd_mass_matrix(m, d, q, Mt) == SD_OK);
        for (int a = 0; a < ne; ++a)
            for (int b = 0; b < ne; ++b) {
                double s = 0.0;
                for (int i = 0; i < nv; ++i) {
                    double r = 0.0;
                    for (int j = 0; j < nv; ++j) r += Mt[i * nv + j] * N[j * ne + b];
                    s += N[i * ne + a] * r;
                }
                NMN[a * ne + b] = s;
            }
        const sd_status sm = sd_embedded_mass_matrix(e, ed, q, Me);
        CHECK(sm == SD_OK);
        if (sm != SD_OK) fprintf(stderr, "  %s: %s\n", label, sd_embedded_error(ed));
        const double em = rel(Me, NMN, ne * ne, 1e-300);
        CHECK(em < 1e-12);
        if (!(em < 1e-12)) fprintf(stderr, "  %s: M_e vs N^T M N %.3g\n", label, em);
        w->mass = fmax(w->mass, em);
        /* the tolerance of comparisons through a solve grows with cond(M_e) */
        const double cond = cholesky(NMN, ne, L) ? test_cond_estimate(NMN, L, ne) : INFINITY;
        CHECK(isfinite(cond)); /* N^T M N positive definite */
        w->cond = fmax(w->cond, cond);
        const double tol = test_cond_tolerance(1e-10, cond);

        /* a consistent state: u_tree = N u_e, tau_tree on the independent speeds only, f_ext */
        random_vector(rng, ue, ne, 1.0);
        CHECK(sd_embedded_tree_speeds(e, ed, q, ue, ut) == SD_OK);
        memset(tau_t, 0, sizeof(double) * (size_t)nv);
        for (int i = 0; i < ne; ++i) tau_t[sd_embedding_speed_index(e, i)] = 2.0 * (sd_random_uniform(rng) - 0.5);
        nt_mul(N, nv, ne, tau_t, tau_e);
        for (int k = 0; k < n; ++k) random_vector(rng, f_ext + 6 * k, 6, k % 2 ? 0.5 : 0.0);
        if (all_embedded) {
            /* the tree-augmented accelerations, the reference of the inverse dynamics */
            CHECK(sd_closed_loop_forward_dynamics(m, d, q, ut, tau_t, f_ext, qdd_t, NULL, NULL) == SD_OK);
            sd_embedded_speeds_of_tree(e, qdd_t, qdd_e);
            const sd_status si = sd_embedded_inverse_dynamics(e, ed, q, ue, qdd_e, f_ext, tau_id);
            CHECK(si == SD_OK);
            if (si != SD_OK) fprintf(stderr, "  %s: %s\n", label, sd_embedded_error(ed));
            const double eid = rel(tau_id, tau_e, ne, 1.0);
            CHECK(eid < tol);
            if (!(eid < tol)) fprintf(stderr, "  %s: ID vs tree-augmented FD %.3g (tol %.3g)\n", label, eid, tol);
            w->id = fmax(w->id, eid);
            /* the bodies' accelerations left in the tree workspace */
            sd_data *td = sd_embedded_tree_data(ed);
            for (int k = 0; k < n; ++k) CHECK(sd_body_acceleration(m, td, k, acc_e + 6 * k) == SD_OK);
            /* N^T (tree ID at qdd_tree) = tau_e: the loop forces do no work on N's directions */
            CHECK(sd_inverse_dynamics(m, d, q, ut, qdd_t, f_ext, tmp) == SD_OK);
            for (int k = 0; k < n; ++k) CHECK(sd_body_acceleration(m, d, k, acc_t + 6 * k) == SD_OK);
            const double ea = rel(acc_e, acc_t, 6 * n, 1.0);
            CHECK(ea < tol);
            w->acc = fmax(w->acc, ea);
            nt_mul(N, nv, ne, tmp, ref);
            const double et = rel(ref, tau_e, ne, 1.0);
            CHECK(et < tol);
            w->id_tree = fmax(w->id_tree, et);
            /* C_e = N^T (tree ID at (u_tree, qdd_c)) */
            for (int i = 0; i < nv; ++i) {
                double s = qdd_t[i];
                for (int j = 0; j < ne; ++j) s -= N[i * ne + j] * qdd_e[j];
                qdd_c[i] = s;
            }
            CHECK(sd_inverse_dynamics(m, d, q, ut, qdd_c, f_ext, tmp) == SD_OK);
            nt_mul(N, nv, ne, tmp, ref);
            CHECK(sd_embedded_bias_forces(e, ed, q, ue, f_ext, ce) == SD_OK);
            const double ec = rel(ce, ref, ne, 1.0);
            CHECK(ec < tol);
            if (!(ec < tol)) fprintf(stderr, "  %s: C_e vs N^T C %.3g (tol %.3g)\n", label, ec, tol);
            w->bias = fmax(w->bias, ec);
        } else {
            /* accelerations that break the tree-augmented loops are refused, naming them
             * (test_embed_inverse_mixed checks the consistent ones against the dense solve) */
            random_vector(rng, qdd_e, ne, 1.0);
            const sd_status si = sd_embedded_inverse_dynamics(e, ed, q, ue, qdd_e, f_ext, tau_id);
            CHECK(si == SD_OK || si == SD_E_ARGUMENT);
            if (si == SD_E_ARGUMENT) CHECK(strstr(sd_embedded_error(ed), "tree-augmented constraints") != NULL);
            CHECK(sd_embedded_bias_forces(e, ed, q, ue, f_ext, ce) == SD_OK);
        }
        /* M_e qdd_e + C_e = tau (with the tree-augmented qdd_e: = tau_e) */
        for (int a = 0; a < ne; ++a) {
            double s = ce[a];
            for (int b = 0; b < ne; ++b) s += Me[a * ne + b] * qdd_e[b];
            ref[a] = s;
        }
        if (all_embedded) {
            const double eb = rel(ref, tau_e, ne, 1.0);
            CHECK(eb < tol);
            w->balance = fmax(w->balance, eb);
            /* ID(FD(tau)) = tau */
            const sd_status sf = sd_embedded_forward_dynamics(e, ed, q, ue, tau_e, f_ext, qdd_fd, NULL, NULL);
            CHECK(sf == SD_OK);
            if (sf == SD_OK) {
                CHECK(sd_embedded_inverse_dynamics(e, ed, q, ue, qdd_fd, f_ext, tau_id) == SD_OK);
                const double ef = rel(tau_id, tau_e, ne, 1.0);
                CHECK(ef < tol);
                if (!(ef < tol)) fprintf(stderr, "  %s: ID(FD(tau)) vs tau %.3g (tol %.3g)\n", label, ef, tol);
                w->idfd = fmax(w->idfd, ef);
            }
        }
        w->states++;
    }
    w->models++;
    free(q); free(qn); free(N); free(ei); free(col); free(Mt); free(L); free(Me); free(NMN); free(ue); free(ut);
    free(tau_t); free(tau_e); free(qdd_t); free(qdd_e); free(qdd_c); free(tmp); free(tau_id); free(ref);
    free(ce); free(qdd_fd); free(f_ext); free(acc_e); free(acc_t);
    sd_data_free(d);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
    return 1;
}

static void print_worst(const char *name, const worst *w)
{
    printf("  %-26s %2d models %3d states | M_e vs N^T M N %.1e | ID vs TA FD %.1e, N^T tree ID %.1e, alpha %.1e | "
           "C_e %.1e | M qdd + C - tau %.1e | ID(FD) %.1e | cond(M_e) up to %.1e\n",
           name, w->models, w->states, w->mass, w->id, w->id_tree, w->acc, w->bias, w->balance, w->idfd, w->cond);
}

/* ---------------------------------------------------------------- mechanisms */

static void add_body(sd_builder *b, const char *name, const char *parent, sd_hinge_type h, const double p[3],
                     const double axis[3], double mass, const double com[3], double armature, double damping,
                     double stiffness)
{
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = name;
    d.parent = parent;
    d.hinge = h;
    for (int j = 0; j < 3; ++j) d.placement.p[j] = p[j], d.axis[j] = axis[j], d.com[j] = com[j];
    d.mass = mass;
    for (int j = 0; j < 3; ++j) d.inertia[4 * j] = mass * (0.01 + 0.003 * j);
    d.armature = armature;
    d.damping = damping;
    d.stiffness = stiffness;
    sd_error err;
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
}

/* A planar crank-rocker four-bar on body `ground` (NULL: the inertial frame), in its x-y plane at
 * `origin`, closed by a revolute constraint at the coupler-rocker joint: links named prefix_crank,
 * prefix_coupler, prefix_rocker, every tree coordinate zero at the closed reference pose (crank at
 * 1 rad). */
static void add_four_bar(sd_builder *b, const char *ground, const double origin[3], const char *prefix,
                         const char *loop_name)
{
    const double LA = 0.1, LB = 0.35, LC = 0.3, LD = 0.4, t2 = 1.0, z[3] = {0, 0, 1};
    const double A[3] = {LA * cos(t2), LA * sin(t2), 0.0}, O4[3] = {LD, 0.0, 0.0};
    const double dx = O4[0] - A[0], dy = O4[1] - A[1], dist = sqrt(dx * dx + dy * dy);
    const double along = (LB * LB - LC * LC + dist * dist) / (2 * dist), h = sqrt(LB * LB - along * along);
    const double B[3] = {A[0] + along * dx / dist - h * dy / dist, A[1] + along * dy / dist + h * dx / dist, 0.0};
    char crank[64], coupler[64], rocker[64];
    snprintf(crank, sizeof crank, "%s_crank", prefix);
    snprintf(coupler, sizeof coupler, "%s_coupler", prefix);
    snprintf(rocker, sizeof rocker, "%s_rocker", prefix);
    double c1[3], c2[3], c3[3];
    for (int j = 0; j < 3; ++j) c1[j] = 0.5 * A[j], c2[j] = 0.5 * (B[j] - A[j]), c3[j] = 0.5 * (B[j] - O4[j]);
    add_body(b, crank, ground, SD_HINGE_REVOLUTE, origin, z, 0.5, c1, 0.05, 0.1, 0.5);
    add_body(b, coupler, crank, SD_HINGE_REVOLUTE, A, z, 1.2, c2, 0.02, 0.05, 0.0);
    const double p4[3] = {origin[0] + O4[0], origin[1] + O4[1], origin[2] + O4[2]};
    add_body(b, rocker, ground, SD_HINGE_REVOLUTE, p4, z, 0.9, c3, 0.0, 0.2, 1.0);
    sd_constraint_desc c;
    sd_constraint_desc_init(&c);
    c.name = loop_name;
    c.type = SD_CONSTRAINT_REVOLUTE;
    c.body_a = coupler;
    c.body_b = rocker;
    for (int j = 0; j < 3; ++j) c.frame_a.p[j] = B[j] - A[j], c.frame_b.p[j] = B[j] - O4[j];
    c.embed = 1;
    sd_error err;
    CHECK(sd_builder_add_constraint(b, &c, &err) == SD_OK);
}

static sd_model *build(sd_builder *b)
{
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_builder_build(b, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "build: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

/* A 10-link spatial chain (axes turning from link to link) with a four-bar on its tip, and a
 * pendulum hanging from the coupler (a rigid node whose parent body is inside the aggregate). */
static sd_model *chain_with_four_bar(void)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, -9.81, -3.0};
    sd_builder_set_gravity(b, g);
    char name[16], parent[16];
    for (int i = 0; i < 10; ++i) {
        snprintf(name, sizeof name, "l%d", i);
        snprintf(parent, sizeof parent, "l%d", i - 1);
        const double p[3] = {i ? 0.3 : 0.0, 0.02 * i, 0.0}, axis[3] = {sin(0.7 * i), cos(0.7 * i), 0.3};
        const double com[3] = {0.15, 0.01, -0.02};
        add_body(b, name, i ? parent : NULL, SD_HINGE_REVOLUTE, p, axis, 1.0 + 0.1 * i, com, 0.01 * i, 0.05, 0.3);
    }
    const double origin[3] = {0.3, 0.0, 0.05};
    add_four_bar(b, "l9", origin, "fb", "tip_loop");
    const double p[3] = {0.1, 0.05, 0.0}, axis[3] = {1, 0, 0}, com[3] = {0, -0.1, 0};
    add_body(b, "pendulum", "fb_coupler", SD_HINGE_REVOLUTE, p, axis, 0.3, com, 0.01, 0.02, 0.0);
    return build(b);
}

/* 002 Eq 17: a base link turning about x; on it the bundled geared motor (sd_builder_add_geared_motor:
 * the rotor, fast and light, and the driven link, q_rotor = 30 q_link), and a second link after it. */
static sd_model *geared_motor(void)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, 0.0, -9.81}, x[3] = {1, 0, 0}, y[3] = {0, 1, 0};
    sd_builder_set_gravity(b, g);
    const double o[3] = {0, 0, 0}, p2[3] = {0.4, 0, 0}, cb[3] = {0.1, 0, 0}, c2[3] = {0.15, 0, 0.02};
    add_body(b, "base", NULL, SD_HINGE_REVOLUTE, o, x, 3.0, cb, 0.1, 0.2, 1.0);
    sd_geared_motor_desc gm;
    sd_geared_motor_desc_init(&gm);
    gm.name = "link";
    gm.parent = "base";
    gm.placement.p[0] = 0.2;
    gm.mass = 1.5;
    gm.com[0] = 0.2, gm.com[1] = 0.01;
    for (int j = 0; j < 3; ++j) gm.inertia[4 * j] = 0.02 + 0.01 * j;
    gm.rotor_placement.p[0] = 0.1, gm.rotor_placement.p[2] = 0.05;
    gm.rotor_axis[0] = 0.1, gm.rotor_axis[1] = 0.0, gm.rotor_axis[2] = 1.0;
    gm.rotor_mass = 0.2;
    gm.rotor_com[0] = 0.001, gm.rotor_com[1] = 0.002;
    gm.rotor_inertia[0] = gm.rotor_inertia[4] = 2e-4, gm.rotor_inertia[8] = 3e-4;
    gm.ratio = 30.0;
    gm.damping = 0.1;
    sd_error err;
    CHECK(sd_builder_add_geared_motor(b, &gm, &err) == SD_OK);
    add_body(b, "link2", "link", SD_HINGE_REVOLUTE, p2, y, 0.8, c2, 0.01, 0.05, 0.2);
    return build(b);
}

/* A 6-link chain with a four-bar on l5, embedded, and one on l2 left tree-augmented. */
static sd_model *mixed_model(void)
{
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.0, -9.81, 0.0};
    sd_builder_set_gravity(b, g);
    char name[16], parent[16];
    for (int i = 0; i < 6; ++i) {
        snprintf(name, sizeof name, "l%d", i);
        snprintf(parent, sizeof parent, "l%d", i - 1);
        const double p[3] = {i ? 0.3 : 0.0, 0.0, 0.0}, axis[3] = {0.2 * i, 1.0, 0.5}, com[3] = {0.15, 0.0, 0.01};
        add_body(b, name, i ? parent : NULL, SD_HINGE_REVOLUTE, p, axis, 1.0, com, 0.02, 0.05, 0.1);
    }
    const double o1[3] = {0.3, 0, 0}, o2[3] = {0.1, 0.1, 0};
    add_four_bar(b, "l5", o1, "a", "embedded_loop");
    add_four_bar(b, "l2", o2, "b", "augmented_loop");
    return build(b);
}

static void test_mechanisms(const char *models, uint64_t *rng)
{
    worst w = {0};
    sd_model *ms[3] = {chain_with_four_bar(), geared_motor(), mixed_model()};
    const char *labels[3] = {"chain + four-bar", "geared motor", "mixed (one TA loop)"};
    const char *loops[3] = {NULL, NULL, "embedded_loop"};
    for (int i = 0; i < 3; ++i) {
        if (!ms[i]) continue;
        double *q0 = calloc((size_t)sd_model_nq(ms[i]), sizeof(double));
        CHECK(check_model(labels[i], ms[i], q0, loops[i], rng, 6, &w));
        free(q0);
        sd_model_free(ms[i]);
    }
#if SOADYN_HAS_IO
    if (models) {
        const char *files[2] = {"four_bar.urdf", "slider_crank.urdf"};
        for (int i = 0; i < 2; ++i) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", models, files[i]);
            sd_model *m = NULL;
            sd_error err;
            const sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
            CHECK(st == SD_OK);
            if (st != SD_OK) {
                fprintf(stderr, "  %s\n", err.message);
                continue;
            }
            double *q0 = calloc((size_t)sd_model_nq(m), sizeof(double));
            CHECK(check_model(files[i], m, q0, "all", rng, 6, &w));
            free(q0);
            sd_model_free(m);
        }
    } else {
        printf("  no models folder given: four_bar.urdf and slider_crank.urdf skipped\n");
    }
#else
    (void)models;
    printf("  built without io: four_bar.urdf and slider_crank.urdf skipped\n");
#endif
    print_worst("mechanisms", &w);
}

/* Random trees of every hinge type (some chains, some with a free root, some with massless
 * bodies), joint dynamics on every hinge, closed by random loops of every kind, all embedded. */
static void test_random(uint64_t *rng)
{
    worst w = {0};
    int tried = 0, skipped = 0;
    for (int i = 0; i < 60; ++i) {
        const int flags = (i % 3 == 0 ? RT_CHAIN : 0) | (i % 4 == 1 ? RT_FREE_ROOT : 0) | (i % 5 == 2 ? RT_MASSLESS : 0);
        sd_model *t0 = random_tree(rng, 3 + i % 10, flags);
        sd_model *tree = with_joint_dynamics(t0, rng);
        const int nq = sd_model_nq(tree), nv = sd_model_nv(tree);
        double *q0 = malloc(sizeof(double) * (size_t)nq), *u = malloc(sizeof(double) * (size_t)nv),
               *x = malloc(sizeof(double) * (size_t)nv);
        random_state(tree, rng, q0, u, x);
        sd_model *m = close_randomly(tree, rng, q0, NULL);
        if (m) {
            ++tried;
            char label[32];
            snprintf(label, sizeof label, "random tree %d", i);
            if (!check_model(label, m, q0, "all", rng, 3, &w)) ++skipped;
            sd_model_free(m);
        }
        free(q0);
        free(u);
        free(x);
        sd_model_free(tree);
        sd_model_free(t0);
    }
    printf("  random trees: %d closed by random loops, %d not embeddable (locked or contradicting loops)\n", tried,
           skipped);
    CHECK(tried - skipped >= tried / 2);
    print_worst("random trees with loops", &w);
}

/* Bad calls: a workspace of another embedding, a non-finite input (named with its index), NULL
 * outputs; the inverse dynamics refuses NULL qdd (the bias forces are its qdd = 0 form). */
static void test_bad_calls(void)
{
    sd_model *m1 = chain_with_four_bar(), *m2 = geared_motor();
    if (!m1 || !m2) return;
    sd_embedding *e1 = sd_embedding_new(m1, NULL, NULL), *e2 = sd_embedding_new(m2, NULL, NULL);
    CHECK(e1 && e2);
    if (e1 && e2) {
        sd_embedded_data *ed1 = sd_embedded_data_new(e1), *ed2 = sd_embedded_data_new(e2);
        const int nq = sd_model_nq(m1), ne = sd_embedding_nv(e1);
        double *q = calloc((size_t)nq, sizeof(double)), *v = calloc((size_t)ne, sizeof(double));
        double *out = calloc((size_t)(ne * ne), sizeof(double));
        CHECK(sd_embedded_mass_matrix(e1, ed2, q, out) == SD_E_ARGUMENT);
        CHECK(strstr(sd_embedded_error(ed2), "another embedding") != NULL);
        CHECK(sd_embedded_mass_matrix(e1, ed1, q, NULL) == SD_E_ARGUMENT);
        v[ne - 1] = NAN;
        CHECK(sd_embedded_inverse_dynamics(e1, ed1, q, NULL, v, NULL, out) == SD_E_ARGUMENT);
        char want[64];
        snprintf(want, sizeof want, "qdd[%d]", ne - 1);
        CHECK(strstr(sd_embedded_error(ed1), want) != NULL);
        CHECK(sd_embedded_bias_forces(e1, ed1, q, v, NULL, out) == SD_E_ARGUMENT);
        CHECK(strstr(sd_embedded_error(ed1), "u[") != NULL);
        CHECK(sd_embedded_inverse_dynamics(e1, ed1, q, NULL, NULL, NULL, out) == SD_E_ARGUMENT);
        v[ne - 1] = 0.0;
        CHECK(sd_embedded_bias_forces(e1, ed1, q, v, NULL, out) == SD_OK); /* and it works again */
        free(q);
        free(v);
        free(out);
        sd_embedded_data_free(ed1);
        sd_embedded_data_free(ed2);
    }
    sd_embedding_free(e1);
    sd_embedding_free(e2);
    sd_model_free(m1);
    sd_model_free(m2);
}

int main(int argc, char **argv)
{
    uint64_t rng = 0x5eed2b0bu;
    test_mechanisms(argc > 1 ? argv[1] : NULL, &rng);
    test_random(&rng);
    test_bad_calls();
    return test_summary("test_embed_mass_matrix");
}
