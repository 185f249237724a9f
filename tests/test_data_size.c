/*
 * tests/test_data_size.c — the workspace is O(N): sd_data_new's size for 100 000 bodies is about 100
 * times its size for 1 000 bodies, for a serial chain and for a binary tree (the tree's many
 * branches once cost a copy of 6 nv numbers each, 10^4 times more). A dense nv x nv buffer appears
 * only when a dense result needs it: after the first Cholesky forward dynamics, not after M^-1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

/* n revolute bodies; body k hangs from (k - 1) / 2 (a binary tree) or from k - 1 (a chain). */
static sd_model *build(int n, int binary)
{
    sd_builder *b = sd_builder_new();
    sd_error err;
    char name[32], parent[32];
    for (int k = 0; k < n; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        snprintf(name, sizeof name, "b%d", k);
        snprintf(parent, sizeof parent, "b%d", binary ? (k - 1) / 2 : k - 1);
        d.name = name;
        d.parent = k ? parent : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.axis[0] = k % 2, d.axis[1] = 1 - k % 2, d.axis[2] = 0;
        d.placement.p[2] = -0.1;
        d.mass = 1.0;
        d.com[2] = -0.05;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 1e-3;
        if (sd_builder_add_body(b, &d, &err) != SD_OK) fprintf(stderr, "builder: %s\n", err.message);
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) fprintf(stderr, "builder: %s\n", err.message);
    sd_builder_free(b);
    return m;
}

static size_t workspace_bytes(int n, int binary)
{
    sd_model *m = build(n, binary);
    CHECK(m != NULL);
    if (!m) return 0;
    sd_data *d = sd_data_new(m);
    CHECK(d != NULL);
    const size_t bytes = sd_data_size(d);
    sd_data_free(d);
    sd_model_free(m);
    return bytes;
}

static void linear_growth(void)
{
    for (int binary = 0; binary < 2; ++binary) {
        const size_t small = workspace_bytes(1000, binary), large = workspace_bytes(100000, binary);
        const double ratio = small ? (double)large / (double)small : 0.0;
        printf("%s: sd_data_new holds %zu bytes for 1000 bodies, %zu for 100000 (ratio %.1f)\n",
               binary ? "binary tree" : "chain", small, large, ratio);
        CHECK(ratio > 90 && ratio < 110);
    }
}

static void dense_only_on_demand(void)
{
    sd_model *m = build(1000, 1);
    sd_data *d = sd_data_new(m);
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double)),
           *tau = calloc((size_t)nv, sizeof(double)), *qdd = calloc((size_t)nv, sizeof(double)),
           *Minv = malloc((size_t)nv * nv * sizeof(double));
    const size_t before = sd_data_size(d);
    CHECK(sd_mass_matrix_inverse(m, d, q, Minv) == SD_OK);
    CHECK(sd_data_size(d) == before); /* M^-1's scratch is O(N) */
    CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, NULL, qdd) == SD_OK);
    CHECK(sd_data_size(d) == before + (size_t)nv * nv * sizeof(double));
    CHECK(sd_forward_dynamics_cholesky(m, d, q, u, tau, NULL, qdd) == SD_OK);
    CHECK(sd_data_size(d) == before + (size_t)nv * nv * sizeof(double)); /* kept, not allocated again */
    CHECK(sd_data_size(NULL) == 0);
    free(q); free(u); free(tau); free(qdd); free(Minv);
    sd_data_free(d);
    sd_model_free(m);
}

int main(void)
{
    linear_growth();
    dense_only_on_demand();
    return test_summary("test_data_size");
}
