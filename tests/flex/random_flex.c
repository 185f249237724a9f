/*
 * tests/flex/random_flex.c — random rigid/flexible trees and states (see random_flex.h).
 */
#include "random_flex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double uni(uint64_t *rng, double lo, double hi) { return lo + (hi - lo) * sd_random_uniform(rng); }

static void rvec(uint64_t *rng, double *x, int n, double scale)
{
    for (int i = 0; i < n; ++i) x[i] = scale * (2.0 * sd_random_uniform(rng) - 1.0);
}

static void rrot(uint64_t *rng, double R[9])
{
    double w[3], quat[4];
    rvec(rng, w, 3, 3.0);
    sd_quat_exp(w, quat);
    sd_quat_to_m3(quat, R);
}

/* A physically valid rotational inertia R diag(J) R^T (J from a random mass distribution). */
static void rinertia(uint64_t *rng, double mass, double size, double I[9])
{
    double s[3], R[9], D[9] = {0}, T[9];
    for (int i = 0; i < 3; ++i) s[i] = size * uni(rng, 0.1, 1.0);
    D[0] = mass * (s[1] * s[1] + s[2] * s[2]);
    D[4] = mass * (s[0] * s[0] + s[2] * s[2]);
    D[8] = mass * (s[0] * s[0] + s[1] * s[1]);
    rrot(rng, R);
    sd_m3_mul(R, D, T);
    sd_m3_mul_t(T, R, I);
    I[1] = I[3] = 0.5 * (I[1] + I[3]);
    I[2] = I[6] = 0.5 * (I[2] + I[6]);
    I[5] = I[7] = 0.5 * (I[5] + I[7]);
}

/* S = A A^T + shift I (n x n row-major) with A uniform in [-scale, scale]. */
static void rspd(uint64_t *rng, int n, double scale, double shift, double *S)
{
    double *A = malloc((size_t)(n * n) * sizeof(double));
    rvec(rng, A, n * n, scale);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) {
            double s = i == j ? shift : 0.0;
            for (int l = 0; l < n; ++l) s += A[i * n + l] * A[j * n + l];
            S[i * n + j] = S[j * n + i] = s;
        }
    free(A);
}

typedef struct flex_gen {
    int nn, nm;
    double *pos, *mass, *inertia, *modes, *K, *D;
} flex_gen;

static void flex_gen_make(uint64_t *rng, const random_flex_spec *spec, flex_gen *g)
{
    const int flags = spec->flags, max_modes = spec->max_modes > 0 ? spec->max_modes : 4;
    const double ms = spec->mode_scale > 0 ? spec->mode_scale : 0.2;
    g->nm = 1 + (int)(sd_random_uniform(rng) * max_modes);
    if (g->nm > max_modes) g->nm = max_modes;
    g->nn = (g->nm + 2) / 3 + 1 + (int)(sd_random_uniform(rng) * 3); /* point masses span the modes */
    const int nn = g->nn, nm = g->nm;
    g->pos = malloc(3 * (size_t)nn * sizeof(double));
    g->mass = malloc((size_t)nn * sizeof(double));
    g->inertia = (flags & RF_POINT_MASSES) ? NULL : malloc(9 * (size_t)nn * sizeof(double));
    g->modes = malloc(6 * (size_t)nn * (size_t)nm * sizeof(double));
    g->K = malloc((size_t)(nm * nm) * sizeof(double));
    g->D = (flags & RF_NO_DAMPING) || sd_random_uniform(rng) < 0.5 ? NULL : malloc((size_t)(nm * nm) * sizeof(double));
    for (int j = 0; j < nn; ++j) {
        rvec(rng, g->pos + 3 * j, 3, 0.5);
        g->mass[j] = uni(rng, 0.1, 1.0);
        if (g->inertia) rinertia(rng, g->mass[j], 0.1, g->inertia + 9 * j);
    }
    for (int r = 0; r < nm; ++r)
        for (int j = 0; j < nn; ++j) {
            rvec(rng, g->modes + (size_t)r * 6 * nn + 6 * j, 3, 1.5 * ms); /* small rotations */
            rvec(rng, g->modes + (size_t)r * 6 * nn + 6 * j + 3, 3, ms);  /* translations */
        }
    rspd(rng, nm, 2.0, 0.5, g->K);
    if (g->D) rspd(rng, nm, 0.3, 0.01, g->D);
}

static void flex_gen_free(flex_gen *g)
{
    free(g->pos);
    free(g->mass);
    free(g->inertia);
    free(g->modes);
    free(g->K);
    free(g->D);
}

sd_builder *random_flex_builder(uint64_t *rng, const random_flex_spec *spec)
{
    const int n = spec->n_bodies, flags = spec->flags;
    int *parent = malloc((size_t)n * sizeof(int)), *order = malloc((size_t)n * sizeof(int));
    unsigned char *flexible = calloc((size_t)n, 1);
    flex_gen *gen = calloc((size_t)n, sizeof *gen);
    char (*names)[32] = malloc((size_t)n * sizeof *names);
    for (int k = 0; k < n; ++k) {
        parent[k] = k == 0 ? -1 : ((flags & RF_CHAIN) ? k - 1 : (int)(sd_random_uniform(rng) * k));
        snprintf(names[k], sizeof names[k], "b%d", k);
        order[k] = k;
        flexible[k] = !(flags & RF_ALL_RIGID) && ((flags & RF_ALL_FLEXIBLE) || sd_random_uniform(rng) < 0.5);
        if (flexible[k]) flex_gen_make(rng, spec, &gen[k]);
    }
    for (int k = n - 1; k > 0; --k) {
        int j = (int)(sd_random_uniform(rng) * (k + 1));
        int t = order[k]; order[k] = order[j]; order[j] = t;
    }
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.3, -0.2, -9.81};
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int i = 0; i < n; ++i) {
        const int k = order[i];
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = parent[k] >= 0 ? names[parent[k]] : NULL;
        d.hinge = k == 0 && (flags & RF_FREE_ROOT) ? SD_HINGE_FREE
                                                    : (sd_hinge_type)(sd_random_uniform(rng) * SD_HINGE_TYPE_COUNT);
        rrot(rng, d.placement.R);
        rvec(rng, d.placement.p, 3, 0.5);
        rvec(rng, d.axis, 3, 1.0);
        rvec(rng, d.axis2, 3, 1.0);
        if (!(flexible[k] && (flags & RF_NO_RIGID_PART))) {
            d.mass = uni(rng, 0.2, 3.0);
            rvec(rng, d.com, 3, 0.3);
            rinertia(rng, d.mass, 0.5, d.inertia);
        }
        if (flags & RF_JOINT_DYNAMICS) {
            d.armature = sd_random_uniform(rng) < 0.5 ? uni(rng, 0.0, 0.5) : 0.0;
            d.damping = sd_random_uniform(rng) < 0.5 ? uni(rng, 0.0, 0.5) : 0.0;
            if (d.hinge == SD_HINGE_REVOLUTE || d.hinge == SD_HINGE_PRISMATIC || d.hinge == SD_HINGE_SPHERICAL) {
                d.stiffness = sd_random_uniform(rng) < 0.5 ? uni(rng, 0.0, 3.0) : 0.0;
                d.spring_ref = d.hinge == SD_HINGE_SPHERICAL ? 0.0 : uni(rng, -1.0, 1.0);
            }
        }
        const int p = parent[k];
        if (p >= 0 && flexible[p] && ((flags & RF_ON_NODES) || sd_random_uniform(rng) < 2.0 / 3.0))
            d.parent_node = (int)(sd_random_uniform(rng) * gen[p].nn);
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "random_flex_tree: %s\n", err.message);
            abort();
        }
        if (!flexible[k]) continue;
        sd_flex_desc fd;
        sd_flex_desc_init(&fd);
        fd.n_nodes = gen[k].nn;
        fd.node_position = gen[k].pos;
        fd.node_mass = gen[k].mass;
        fd.node_inertia = gen[k].inertia;
        fd.n_modes = gen[k].nm;
        fd.modes = gen[k].modes;
        fd.stiffness = gen[k].K;
        fd.damping = gen[k].D;
        fd.mass_model = (flags & RF_LINEARISED) || ((flags & RF_MIXED_MASS) && sd_random_uniform(rng) < 0.5)
                            ? SD_FLEX_LINEARISED
                            : SD_FLEX_FULL;
        if (sd_builder_set_flexible(b, names[k], &fd, &err) != SD_OK) {
            fprintf(stderr, "random_flex_tree: %s\n", err.message);
            abort();
        }
    }
    for (int k = 0; k < n; ++k)
        if (flexible[k]) flex_gen_free(&gen[k]);
    free(gen);
    free(flexible);
    free(parent);
    free(order);
    free(names);
    return b;
}

sd_model *random_flex_tree(uint64_t *rng, const random_flex_spec *spec)
{
    sd_builder *b = random_flex_builder(rng, spec);
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "random_flex_tree: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    return m;
}

void random_flex_state(const sd_model *m, uint64_t *rng, double eta_scale, double *q, double *u, double *w)
{
    sd_configuration_random(m, rng, q);
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const int nm = sd_model_body_nmodes(m, k), qi = sd_model_mode_q_index(m, k);
        for (int r = 0; r < nm; ++r) q[qi + r] = eta_scale * (2.0 * sd_random_uniform(rng) - 1.0);
    }
    if (u) rvec(rng, u, sd_model_nv(m), 1.0);
    if (w) rvec(rng, w, sd_model_nv(m), 1.0);
}
