/*
 * tests/random_tree.c — random models and states for the tests (see random_tree.h).
 */
#include "random_tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void random_vector(uint64_t *rng, double *x, int n, double scale)
{
    for (int i = 0; i < n; ++i) x[i] = scale * (2.0 * sd_random_uniform(rng) - 1.0);
}

static void random_rotation(uint64_t *rng, double R[9])
{
    double w[3];
    random_vector(rng, w, 3, 3.0);
    double quat[4];
    sd_quat_exp(w, quat);
    sd_quat_to_m3(quat, R);
}

/* A random physically valid inertia about the COM: R diag(J) R^T with J satisfying the triangle
 * inequality (J = sums of second moments of a random mass distribution). */
static void random_inertia(uint64_t *rng, double mass, double I[9])
{
    double s[3], R[9], D[9] = {0}, T[9];
    for (int i = 0; i < 3; ++i) s[i] = 0.05 + 0.5 * sd_random_uniform(rng);
    D[0] = mass * (s[1] * s[1] + s[2] * s[2]);
    D[4] = mass * (s[0] * s[0] + s[2] * s[2]);
    D[8] = mass * (s[0] * s[0] + s[1] * s[1]);
    random_rotation(rng, R);
    sd_m3_mul(R, D, T);
    sd_m3_mul_t(T, R, I);
    I[1] = I[3] = 0.5 * (I[1] + I[3]); /* exact symmetry */
    I[2] = I[6] = 0.5 * (I[2] + I[6]);
    I[5] = I[7] = 0.5 * (I[5] + I[7]);
}

sd_model *random_tree(uint64_t *rng, int n, int flags)
{
    int *parent = malloc((size_t)n * sizeof(int)), *children = calloc((size_t)n, sizeof(int)),
        *order = malloc((size_t)n * sizeof(int));
    char (*names)[32] = malloc((size_t)n * sizeof *names);
    for (int k = 0; k < n; ++k) {
        parent[k] = k == 0 ? -1 : ((flags & RT_CHAIN) ? k - 1 : (int)(sd_random_uniform(rng) * k));
        if (parent[k] >= 0) children[parent[k]]++;
        snprintf(names[k], sizeof names[k], "b%d", k);
        order[k] = k;
    }
    /* hinge types first: whether a body may be massless depends on its children's hinges */
    sd_hinge_type *hinge = malloc((size_t)n * sizeof *hinge);
    unsigned char *massless = calloc((size_t)n, 1);
    for (int k = 0; k < n; ++k) {
        if (k == 0 && (flags & RT_FREE_ROOT)) hinge[k] = SD_HINGE_FREE;
        else if (flags & RT_ONLY_1DOF) hinge[k] = sd_random_uniform(rng) < 0.7 ? SD_HINGE_REVOLUTE : SD_HINGE_PRISMATIC;
        else hinge[k] = (sd_hinge_type)(sd_random_uniform(rng) * SD_HINGE_TYPE_COUNT);
    }
    /* a massless body keeps D(k) regular when it has few speeds and its children are massive
     * with at most one speed each (their articulated inertias then keep rank 5 or 6) */
    for (int k = n - 1; k >= 0 && (flags & RT_MASSLESS); --k) {
        const int nvk = sd_hinge_type_nv(hinge[k]);
        int ok = children[k] > 0 && nvk >= 1 && nvk <= 2;
        for (int j = k + 1; j < n && ok; ++j)
            if (parent[j] == k && (massless[j] || sd_hinge_type_nv(hinge[j]) > 1)) ok = 0;
        massless[k] = ok && sd_random_uniform(rng) < 0.4;
    }
    for (int k = n - 1; k > 0; --k) { /* shuffle the order of addition */
        int j = (int)(sd_random_uniform(rng) * (k + 1));
        int t = order[k]; order[k] = order[j]; order[j] = t;
    }
    sd_builder *b = sd_builder_new();
    const double g[3] = {0.3, -0.2, -9.81};
    sd_builder_set_gravity(b, g);
    for (int i = 0; i < n; ++i) {
        const int k = order[i];
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = names[k];
        d.parent = parent[k] >= 0 ? names[parent[k]] : NULL;
        d.hinge = hinge[k];
        random_rotation(rng, d.placement.R);
        if (flags & RT_UNROTATED)
            for (int e = 0; e < 9; ++e) d.placement.R[e] = e % 4 == 0 ? 1.0 : 0.0;
        random_vector(rng, d.placement.p, 3, 0.5);
        random_vector(rng, d.axis, 3, 1.0);
        random_vector(rng, d.axis2, 3, 1.0);
        if ((flags & RT_AXIS_ALIGNED) && (d.hinge == SD_HINGE_REVOLUTE || d.hinge == SD_HINGE_PRISMATIC)) {
            int big = 0; /* the largest component's axis and sign */
            for (int j = 1; j < 3; ++j)
                if (fabs(d.axis[j]) > fabs(d.axis[big])) big = j;
            const double sgn = d.axis[big] < 0 ? -1.0 : 1.0;
            d.axis[0] = d.axis[1] = d.axis[2] = 0.0;
            d.axis[big] = sgn;
            if (flags & RT_AXIS_NUDGED) d.axis[(big + 1) % 3] = 1e-300;
        }
        if (!massless[k]) {
            d.mass = 0.2 + 3.0 * sd_random_uniform(rng);
            random_vector(rng, d.com, 3, 0.3);
            random_inertia(rng, d.mass, d.inertia);
        }
        d.damping = 0.0;
        sd_error err;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) {
            fprintf(stderr, "random_tree: %s\n", err.message);
            abort();
        }
    }
    sd_model *m = NULL;
    sd_error err;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "random_tree: %s\n", err.message);
        abort();
    }
    sd_builder_free(b);
    free(parent);
    free(children);
    free(hinge);
    free(massless);
    free(order);
    free(names);
    return m;
}

void random_state(const sd_model *m, uint64_t *rng, double *q, double *u, double *w)
{
    sd_configuration_random(m, rng, q);
    if (u) random_vector(rng, u, sd_model_nv(m), 1.0);
    if (w) random_vector(rng, w, sd_model_nv(m), 1.0);
}
