/*
 * tests/loops/random_loops.c — random closure constraints on random trees (see random_loops.h).
 */
#include "loops/random_loops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loops/loops_oracle.h"
#include "random_tree.h"

static void random_placement(uint64_t *rng, sd_transform *X)
{
    double w[3], quat[4];
    random_vector(rng, w, 3, 3.0);
    sd_quat_exp(w, quat);
    sd_quat_to_m3(quat, X->R);
    random_vector(rng, X->p, 3, 0.3);
}

static int one_dof(const sd_model *m, int k)
{
    const sd_hinge_type h = sd_model_hinge(m, k);
    return h == SD_HINGE_REVOLUTE || h == SD_HINGE_PRISMATIC;
}

sd_model *close_randomly(const sd_model *tree, uint64_t *rng, const double *q0, int *kinds_seen)
{
    const int n = sd_model_nbodies(tree);
    sd_builder *b = sd_builder_new();
    double g[3];
    sd_model_gravity(tree, g);
    sd_builder_set_gravity(b, g);
    sd_error err;
    for (int k = 0; k < n; ++k)
        if (sd_builder_add_body(b, sd_model_body_desc(tree, k), &err) != SD_OK) abort();
    const int added = add_random_constraints(b, tree, rng, q0, kinds_seen);
    sd_model *m = NULL;
    if (added > 0) {
        if (sd_builder_build(b, &m, &err) != SD_OK) {
            fprintf(stderr, "close_randomly: %s\n", err.message);
            abort();
        }
    }
    sd_builder_free(b);
    return m;
}

int add_random_constraints(sd_builder *b, const sd_model *tree, uint64_t *rng, const double *q0, int *kinds_seen)
{
    const int n = sd_model_nbodies(tree), nv = sd_model_nv(tree);
    sd_data *d0 = sd_data_new(tree);
    sd_kinematics(tree, d0, q0, NULL, NULL);
    sd_error err;
    int rows = 0, added = 0;
    const int first = (int)(sd_random_uniform(rng) * SD_CONSTRAINT_TYPE_COUNT);
    for (int attempt = 0; attempt < 12 && added < 4; ++attempt) {
        sd_constraint_desc c;
        sd_constraint_desc_init(&c);
        char name[32];
        snprintf(name, sizeof name, "c%d", added);
        c.name = name;
        c.type = (sd_constraint_type)((first + attempt) % SD_CONSTRAINT_TYPE_COUNT);
        const int r = sd_constraint_type_nrows(c.type);
        if (rows + r > nv - 1 && !(added == 0 && rows + r <= nv)) continue;
        if (c.type == SD_CONSTRAINT_COUPLING) {
            int ja = -1, jb = -1;
            for (int tries = 0; tries < 20 && (ja < 0 || jb < 0 || ja == jb); ++tries) {
                ja = (int)(sd_random_uniform(rng) * n);
                jb = (int)(sd_random_uniform(rng) * n);
                if (!one_dof(tree, ja) || !one_dof(tree, jb)) ja = -1;
            }
            if (ja < 0 || jb < 0 || ja == jb) continue;
            c.joint_a = sd_model_joint_name(tree, ja);
            c.joint_b = sd_model_joint_name(tree, jb);
            c.ratio = (sd_random_uniform(rng) < 0.5 ? -1.0 : 1.0) * (0.5 + sd_random_uniform(rng));
            c.offset = q0[sd_model_q_index(tree, ja)] - c.ratio * q0[sd_model_q_index(tree, jb)];
        } else {
            const int a = (int)(sd_random_uniform(rng) * (n + 1)) - 1; /* -1: the world */
            const int bb = (int)(sd_random_uniform(rng) * n);
            if (a == bb) continue;
            c.body_a = a < 0 ? NULL : sd_model_body_name(tree, a);
            c.body_b = sd_model_body_name(tree, bb);
            sd_transform XA, XB, FA, XBinv;
            if (a < 0) sd_transform_identity(&XA);
            else sd_body_placement_world(tree, d0, a, &XA);
            sd_body_placement_world(tree, d0, bb, &XB);
            random_placement(rng, &c.frame_a);
            sd_transform_compose(&XA, &c.frame_a, &FA);
            sd_transform_inverse(&XB, &XBinv);
            if (c.type == SD_CONSTRAINT_DISTANCE) {
                sd_transform FB;
                random_placement(rng, &c.frame_b);
                sd_transform_compose(&XB, &c.frame_b, &FB);
                double dv[3] = {FB.p[0] - FA.p[0], FB.p[1] - FA.p[1], FB.p[2] - FA.p[2]};
                c.distance = sd_v3_norm(dv);
                if (c.distance < 0.05) continue;
            } else {
                sd_transform_compose(&XBinv, &FA, &c.frame_b); /* F_B = F_A at q0 */
                random_vector(rng, c.axis, 3, 1.0);
                if (sd_v3_norm(c.axis) < 0.1) c.axis[2] = 1.0;
            }
        }
        if (sd_builder_add_constraint(b, &c, &err) != SD_OK) {
            fprintf(stderr, "close_randomly: %s\n", err.message);
            abort();
        }
        if (kinds_seen) kinds_seen[c.type]++;
        rows += r;
        ++added;
    }
    sd_data_free(d0);
    return added;
}

void project_on_nullspace(const double *G, int nc, int nv, double *u)
{
    double *GGt = malloc((size_t)(nc * nc) * sizeof(double)), *Gu = malloc((size_t)nc * sizeof(double)),
           *y = malloc((size_t)nc * sizeof(double));
    for (int pass = 0; pass < 2; ++pass) { /* twice, for round-off */
        for (int a = 0; a < nc; ++a) {
            double s = 0.0;
            for (int j = 0; j < nv; ++j) s += G[a * nv + j] * u[j];
            Gu[a] = s;
            for (int b = 0; b < nc; ++b) {
                double t = 0.0;
                for (int j = 0; j < nv; ++j) t += G[a * nv + j] * G[b * nv + j];
                GGt[a * nc + b] = t;
            }
        }
        oracle_pinv_solve(GGt, nc, Gu, y, 1e-12, 1.0);
        for (int j = 0; j < nv; ++j)
            for (int a = 0; a < nc; ++a) u[j] -= G[a * nv + j] * y[a];
    }
    free(GGt);
    free(Gu);
    free(y);
}

void random_loop_subset(const sd_model *m, uint64_t *rng, char *out, size_t size)
{
    const int nc = sd_model_nconstraints(m);
    unsigned mask = 0;
    while (mask == 0 || mask == (1u << nc) - 1) mask = (unsigned)(sd_random_uniform(rng) * (1u << nc));
    size_t used = 0;
    out[0] = '\0';
    for (int c = 0; c < nc; ++c)
        if (mask & (1u << c))
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "," : "", sd_model_constraint_name(m, c));
}

sd_embedding *embed_randomly(uint64_t *rng, int n, int flags, sd_model **m, double *q0_out)
{
    sd_model *tree = random_tree(rng, n, flags);
    double *q0 = malloc(sizeof(double) * (size_t)sd_model_nq(tree));
    sd_configuration_random(tree, rng, q0);
    *m = close_randomly(tree, rng, q0, NULL);
    sd_embedding *e = NULL;
    if (*m) {
        sd_embed_options o;
        sd_embed_options_init(&o);
        o.loops = "all";
        o.q = q0;
        sd_error err;
        e = sd_embedding_new(*m, &o, &err);
        if (e && sd_embedding_naggregates(e) == 0) sd_embedding_free(e), e = NULL;
        if (!e) sd_model_free(*m), *m = NULL;
        else if (q0_out) memcpy(q0_out, q0, sizeof(double) * (size_t)sd_model_nq(*m));
    }
    sd_model_free(tree);
    free(q0);
    return e;
}
