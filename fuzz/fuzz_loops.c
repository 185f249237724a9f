/*
 * fuzz/fuzz_loops.c — the closed-loop layer on loop models built from the fuzz input (builder API,
 * no file): a tree of 2..6 bodies (every hinge type, random placements, axes, masses), then 1..3
 * closure constraints of every kind between random bodies and the world (frames, axes, distances,
 * couplings, each tree-augmented or embedded). On a model the builder accepts:
 *   assembly     sd_assemble_configuration from the reference configuration;
 *   projection   sd_project_velocities of random speeds;
 *   dynamics     tree-augmented sd_closed_loop_forward_dynamics, sd_constrained_inverse_dynamics;
 *   embedding    sd_embedding_new (the model's choice, then "all"), sd_embedded_close,
 *                sd_embedded_forward_dynamics, sd_embedded_mass_matrix.
 * The contract: every call returns a status of soadyn.h; SD_OK comes with finite outputs, an
 * assembly that says SD_OK leaves residuals within its tolerance. Singular and unassemblable loops
 * are expected answers, not findings. A broken contract prints one line and traps.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "fuzz_bytes.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

#define MAX_BODIES 6
#define MAX_CONSTRAINTS 3

static void broken(const char *what, sd_status st)
{
    fprintf(stderr, "fuzz: contract broken: loops: %s (status %s)\n", what, sd_status_name(st));
    __builtin_trap();
}

static void check_status(const char *what, sd_status st)
{
    if ((int)st < (int)SD_OK || (int)st > (int)SD_E_NOT_FINITE) broken(what, st);
}

static void check_finite(const char *what, sd_status st, const double *x, int n)
{
    check_status(what, st);
    if (st != SD_OK) return;
    for (int i = 0; i < n; ++i)
        if (!isfinite(x[i])) broken(what, st);
}

/* A rotation from a quaternion of the input (identity when it has no length). */
static void rotation(fuzz_bytes *b, double R[9])
{
    double q[4];
    for (int i = 0; i < 4; ++i) q[i] = fuzz_number(b, 1.0);
    double n = 0.0;
    for (int i = 0; i < 4; ++i) n += q[i] * q[i];
    if (!(n > 1e-12) || !isfinite(n)) q[0] = 1.0, q[1] = q[2] = q[3] = 0.0, n = 1.0;
    for (int i = 0; i < 4; ++i) q[i] /= sqrt(n);
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                         2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

static void frame(fuzz_bytes *b, sd_transform *X)
{
    rotation(b, X->R);
    for (int i = 0; i < 3; ++i) X->p[i] = fuzz_number(b, 1.0);
}

static const char *const body_names[MAX_BODIES] = {"b0", "b1", "b2", "b3", "b4", "b5"};
static const char *const joint_names[MAX_BODIES] = {"j0", "j1", "j2", "j3", "j4", "j5"};
static const char *const constraint_names[MAX_CONSTRAINTS] = {"c0", "c1", "c2"};

static sd_model *build(fuzz_bytes *b)
{
    sd_builder *builder = sd_builder_new();
    if (builder == NULL) return NULL;
    sd_error err;
    sd_status st = SD_OK;
    const int nb = fuzz_int(b, 2, MAX_BODIES);
    for (int k = 0; k < nb && st == SD_OK; ++k) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = body_names[k];
        d.joint_name = joint_names[k];
        const int parent = fuzz_int(b, -1, k - 1);
        d.parent = parent >= 0 ? body_names[parent] : NULL;
        d.hinge = (sd_hinge_type)fuzz_int(b, 0, SD_HINGE_TYPE_COUNT - 1);
        if (d.hinge == SD_HINGE_FREE && parent >= 0) d.hinge = SD_HINGE_SPHERICAL;
        frame(b, &d.placement);
        for (int i = 0; i < 3; ++i) d.axis[i] = fuzz_number(b, 1.0), d.axis2[i] = fuzz_number(b, 1.0);
        d.mass = fabs(fuzz_number(b, 3.0));
        for (int i = 0; i < 3; ++i) d.com[i] = fuzz_number(b, 0.5), d.inertia[4 * i] = fabs(fuzz_number(b, 0.2));
        d.damping = fuzz_u8(b) % 4 == 0 ? fabs(fuzz_number(b, 1.0)) : 0.0;
        st = sd_builder_add_body(builder, &d, &err);
    }
    const int nc = fuzz_int(b, 1, MAX_CONSTRAINTS);
    for (int c = 0; c < nc && st == SD_OK; ++c) {
        sd_constraint_desc d;
        sd_constraint_desc_init(&d);
        d.name = constraint_names[c];
        d.type = (sd_constraint_type)fuzz_int(b, 0, SD_CONSTRAINT_TYPE_COUNT - 1);
        const int a = fuzz_int(b, -1, nb - 1), bb = fuzz_int(b, -1, nb - 1);
        d.body_a = a >= 0 ? body_names[a] : NULL;
        d.body_b = bb >= 0 ? body_names[bb] : NULL;
        frame(b, &d.frame_a);
        frame(b, &d.frame_b);
        for (int i = 0; i < 3; ++i) d.axis[i] = fuzz_number(b, 1.0);
        d.distance = fuzz_number(b, 2.0);
        d.joint_a = joint_names[fuzz_int(b, 0, nb - 1)];
        d.joint_b = joint_names[fuzz_int(b, 0, nb - 1)];
        d.ratio = fuzz_number(b, 2.0);
        d.offset = fuzz_number(b, 1.0);
        d.embed = fuzz_u8(b) & 1;
        st = sd_builder_add_constraint(builder, &d, &err);
    }
    sd_model *model = NULL;
    if (st == SD_OK) st = sd_builder_build(builder, &model, &err);
    check_status("building", st);
    sd_builder_free(builder);
    return st == SD_OK ? model : NULL;
}

static void embedded(const sd_model *m, const char *loops, const double *q, fuzz_bytes *b)
{
    sd_embed_options o;
    sd_embed_options_init(&o);
    o.loops = loops;
    o.q = q;
    sd_error err;
    sd_embedding *e = sd_embedding_new(m, &o, &err);
    if (e == NULL) return;
    sd_embedded_data *ed = sd_embedded_data_new(e);
    const int nq = sd_model_nq(m), ne = sd_embedding_nv(e);
    double *qc = calloc((size_t)nq + 1, sizeof(double)), *u = calloc((size_t)ne + 1, sizeof(double));
    double *tau = calloc((size_t)ne + 1, sizeof(double)), *qdd = calloc((size_t)ne + 1, sizeof(double));
    double *M = calloc((size_t)ne * (size_t)ne + 1, sizeof(double));
    if (ed && qc && u && tau && qdd && M) {
        double residual = 0.0;
        sd_status st = sd_embedded_close(e, ed, q, qc, &residual);
        check_finite("sd_embedded_close", st, qc, nq);
        if (st == SD_OK) {
            for (int i = 0; i < ne; ++i) u[i] = fuzz_number(b, 2.0), tau[i] = fuzz_number(b, 5.0);
            st = sd_embedded_forward_dynamics(e, ed, qc, u, tau, NULL, qdd, NULL, NULL);
            check_finite("sd_embedded_forward_dynamics", st, qdd, ne);
            st = sd_embedded_mass_matrix(e, ed, qc, M);
            check_finite("sd_embedded_mass_matrix", st, M, ne * ne);
        }
    }
    free(qc);
    free(u);
    free(tau);
    free(qdd);
    free(M);
    sd_embedded_data_free(ed);
    sd_embedding_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    fuzz_bytes b = {bytes, size};
    sd_model *m = build(&b);
    if (m == NULL) return 0;
    const int nq = sd_model_nq(m), nv = sd_model_nv(m), nc = sd_model_nconstraint_rows(m);
    sd_data *d = sd_data_new(m);
    double *q = calloc((size_t)nq + 1, sizeof(double)), *u = calloc((size_t)nv + 1, sizeof(double));
    double *tau = calloc((size_t)nv + 1, sizeof(double)), *qdd = calloc((size_t)nv + 1, sizeof(double));
    double *lambda = calloc((size_t)nc + 1, sizeof(double));
    unsigned char *actuated = calloc((size_t)nv + 1, 1);
    if (d && q && u && tau && qdd && lambda && actuated) {
        sd_configuration_reference(m, q);
        const double tol = 1e-10;
        double residual = -1.0;
        sd_status st = sd_assemble_configuration(m, d, q, NULL, tol, 30, q, &residual);
        check_finite("sd_assemble_configuration", st, q, nq);
        if (st == SD_OK && !(residual <= tol)) broken("sd_assemble_configuration: SD_OK with a residual past tol", st);
        if (st == SD_OK) {
            for (int i = 0; i < nv; ++i) u[i] = fuzz_number(&b, 2.0), tau[i] = fuzz_number(&b, 5.0);
            st = sd_project_velocities(m, d, q, u, u);
            check_finite("sd_project_velocities", st, u, nv);
            if (st == SD_OK) {
                st = sd_closed_loop_forward_dynamics(m, d, q, u, tau, NULL, qdd, lambda, NULL);
                check_finite("sd_closed_loop_forward_dynamics", st, qdd, nv);
                if (st == SD_OK) check_finite("sd_closed_loop_forward_dynamics (lambda)", st, lambda, nc);
                for (int i = 0; i < nv; ++i) actuated[i] = (unsigned char)(fuzz_u8(&b) & 1);
                if (st == SD_OK) {
                    st = sd_constrained_inverse_dynamics(m, d, q, u, qdd, NULL, actuated, tau, lambda);
                    check_finite("sd_constrained_inverse_dynamics", st, tau, nv);
                }
            }
        }
        embedded(m, NULL, q, &b);
        embedded(m, "all", q, &b);
    }
    free(q);
    free(u);
    free(tau);
    free(qdd);
    free(lambda);
    free(actuated);
    sd_data_free(d);
    sd_model_free(m);
    return 0;
}
