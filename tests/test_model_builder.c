/*
 * tests/test_model_builder.c — the builder's validation and the model it builds:
 *   every invalid description fails with SD_E_MODEL and a message naming the body (or joint,
 *   or frame), prefixed by "file:line: " when the description says where it came from;
 *   an inertia that breaks the triangle inequality is accepted with a warning naming the body;
 *   bodies added in any order come out parent-first in depth-first preorder (parent[k] < k,
 *   names and data preserved, subtrees contiguous, sd_model_is_ancestor = walking the parents);
 *   a 100 000 body chain builds quickly with the right nq / nv;
 *   frames are kept and found, a frame on an unknown body is an error;
 *   a massless leaf on a revolute hinge builds, but forward dynamics reports SD_E_SINGULAR
 *   naming the body.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <soadyn/soadyn.h>

#include "random_tree.h"
#include "test_util.h"
#include "workspace_read.h"

/* A valid massive body on a revolute hinge about z. */
static void good_body(sd_body_desc *d, const char *name, const char *parent)
{
    sd_body_desc_init(d);
    d->name = name;
    d->parent = parent;
    d->hinge = SD_HINGE_REVOLUTE;
    d->placement.p[0] = 0.3;
    d->mass = 1.5;
    d->com[1] = 0.2;
    d->inertia[0] = 0.02;
    d->inertia[4] = 0.03;
    d->inertia[8] = 0.04;
}

/* Add the bodies and build; the first failing status (from add or build), the model on success. */
static sd_status try_build(const sd_body_desc *descs, int n, sd_error *err, sd_model **out)
{
    sd_builder *b = sd_builder_new();
    sd_model *m = NULL;
    sd_status st = SD_OK;
    memset(err, 0, sizeof *err);
    for (int i = 0; i < n && st == SD_OK; ++i) st = sd_builder_add_body(b, &descs[i], err);
    if (st == SD_OK) st = sd_builder_build(b, &m, err);
    sd_builder_free(b);
    if (out) *out = m;
    else sd_model_free(m);
    if (st != SD_OK) CHECK(m == NULL);
    return st;
}

/* Expect SD_E_MODEL with a message containing `needle` (and `needle2` when not NULL). */
static void expect_model_error(const char *what, const sd_body_desc *descs, int n, const char *needle,
                               const char *needle2)
{
    sd_error err;
    const sd_status st = try_build(descs, n, &err, NULL);
    const int ok = st == SD_E_MODEL && err.status == SD_E_MODEL && strstr(err.message, needle) &&
                   (!needle2 || strstr(err.message, needle2));
    if (ok) {
        ++test_passed_count;
    } else {
        ++test_failed_count;
        fprintf(stderr, "%s: expected SD_E_MODEL naming %s%s%s, got status %d (%s) message \"%s\"\n", what,
                needle, needle2 ? " and " : "", needle2 ? needle2 : "", (int)st, sd_status_name(st), err.message);
    }
}

static void test_errors(void)
{
    sd_body_desc d[4];

    /* sanity: the base descriptions build */
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    {
        sd_error err;
        CHECK(try_build(d, 2, &err, NULL) == SD_OK);
    }

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    good_body(&d[2], "arm", "base");
    expect_model_error("duplicate body name", d, 3, "'arm'", "duplicate");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    good_body(&d[2], "hand", "arm");
    d[1].joint_name = "shoulder";
    d[2].joint_name = "shoulder";
    expect_model_error("duplicate joint name", d, 3, "'shoulder'", "duplicate");

    /* a joint named like another body's default joint name (its body name) also collides */
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].joint_name = "base";
    expect_model_error("joint name equal to another default joint name", d, 2, "'base'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "nosuch");
    expect_model_error("unknown parent", d, 2, "'arm'", "'nosuch'");

    /* a -> b -> a, with c hanging off the cycle: the message names a body on the cycle */
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "c", "a");
    good_body(&d[2], "a", "b");
    good_body(&d[3], "b", "a");
    {
        sd_error err;
        CHECK(try_build(d, 4, &err, NULL) == SD_E_MODEL);
        CHECK(strstr(err.message, "cycle") != NULL);
        CHECK(strstr(err.message, "'a'") != NULL || strstr(err.message, "'b'") != NULL);
        CHECK(strstr(err.message, "'c'") == NULL);
    }
    /* a cycle with no root at all */
    good_body(&d[0], "a", "b");
    good_body(&d[1], "b", "a");
    {
        sd_error err;
        CHECK(try_build(d, 2, &err, NULL) == SD_E_MODEL);
        CHECK(strstr(err.message, "'a'") != NULL || strstr(err.message, "'b'") != NULL);
    }

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "arm");
    expect_model_error("self parent", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].mass = -1.0;
    expect_model_error("negative mass", d, 2, "'arm'", "mass");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].inertia[1] = 0.001; /* I_xy != I_yx */
    expect_model_error("non-symmetric inertia", d, 2, "'arm'", "symmetric");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].inertia[8] = -0.01; /* negative diagonal */
    expect_model_error("indefinite inertia (diagonal)", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    /* positive diagonal, symmetric, but eigenvalues 0.05, -0.01, 0.04 */
    d[1].inertia[0] = 0.02; d[1].inertia[4] = 0.02; d[1].inertia[8] = 0.04;
    d[1].inertia[1] = d[1].inertia[3] = 0.03;
    expect_model_error("indefinite inertia (off-diagonal)", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].placement.p[1] = NAN;
    expect_model_error("NaN in placement p", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].placement.R[4] = NAN;
    expect_model_error("NaN in placement R", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].com[2] = NAN;
    expect_model_error("NaN in com", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].inertia[4] = INFINITY;
    expect_model_error("infinite inertia", d, 2, "'arm'", NULL);

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    for (int i = 0; i < 9; i += 4) d[1].placement.R[i] = 2.0; /* scaling, not a rotation */
    expect_model_error("scaled placement R", d, 2, "'arm'", "rotation");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].placement.R[8] = -1.0; /* a reflection: orthogonal with det -1 */
    expect_model_error("reflection placement R", d, 2, "'arm'", "rotation");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].placement.R[1] = 1e-6; /* slightly non-orthogonal */
    expect_model_error("non-orthogonal placement R", d, 2, "'arm'", NULL);

    const sd_hinge_type axis_types[] = {SD_HINGE_REVOLUTE, SD_HINGE_PRISMATIC, SD_HINGE_UNIVERSAL, SD_HINGE_PLANAR};
    for (int t = 0; t < 4; ++t) {
        good_body(&d[0], "base", NULL);
        good_body(&d[1], "arm", "base");
        d[1].hinge = axis_types[t];
        d[1].axis[0] = d[1].axis[1] = d[1].axis[2] = 0.0;
        expect_model_error("zero hinge axis", d, 2, "'arm'", "axis");
    }
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].hinge = SD_HINGE_UNIVERSAL;
    d[1].axis2[0] = d[1].axis2[1] = d[1].axis2[2] = 0.0;
    expect_model_error("zero second universal axis", d, 2, "'arm'", "axis");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].hinge = SD_HINGE_UNIVERSAL;
    sd_v3_set(d[1].axis, 0, 0, 2);
    sd_v3_set(d[1].axis2, 0, 0, 1);
    expect_model_error("parallel universal axes", d, 2, "'arm'", "parallel");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].hinge = SD_HINGE_UNIVERSAL;
    sd_v3_set(d[1].axis, 1, 1, 0);
    sd_v3_set(d[1].axis2, -3, -3, 0);
    expect_model_error("anti-parallel universal axes", d, 2, "'arm'", "parallel");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].mass = 0.0;
    expect_model_error("zero mass with inertia", d, 2, "'arm'", "mass");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].damping = -0.5;
    expect_model_error("negative damping", d, 2, "'arm'", "damping");

    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].name = "";
    {
        sd_error err;
        CHECK(try_build(d, 2, &err, NULL) == SD_E_MODEL);
    }

    /* with a source location every message starts with "file:line: " */
    {
        sd_body_desc e[3];
        const char *prefix = "robots/arm.urdf:42: ";
        for (int c = 0; c < 6; ++c) {
            good_body(&e[0], "base", NULL);
            good_body(&e[1], "arm", "base");
            e[1].source_file = "robots/arm.urdf";
            e[1].source_line = 42;
            int n = 2;
            switch (c) {
            case 0: e[1].mass = -2; break;
            case 1: e[1].parent = "ghost"; break;
            case 2: e[1].placement.p[0] = NAN; break;
            case 3: sd_v3_set(e[1].axis, 0, 0, 0); break;
            case 4: e[1].damping = -1; break;
            case 5: good_body(&e[2], "arm", "base"); e[2].source_file = "robots/arm.urdf"; e[2].source_line = 42; n = 3; break;
            }
            sd_error err;
            const sd_status st = try_build(e, n, &err, NULL);
            CHECK(st == SD_E_MODEL);
            if (strncmp(err.message, prefix, strlen(prefix)) != 0 || !strstr(err.message, "'arm'")) {
                ++test_failed_count;
                fprintf(stderr, "case %d: message \"%s\" does not start with \"%s\" and name 'arm'\n", c, err.message,
                        prefix);
            } else {
                ++test_passed_count;
            }
        }
    }
}

static void test_triangle_warning(void)
{
    sd_body_desc d[2];
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "paddle", "base");
    sd_error err;
    sd_model *m = NULL;
    CHECK(try_build(d, 2, &err, &m) == SD_OK);
    CHECK(m && sd_model_nwarnings(m) == 0); /* a valid inertia gives no warning */
    sd_model_free(m);

    /* principal moments 0.01, 0.01, 0.05: 0.01 + 0.01 < 0.05, rotated so that it is not diagonal */
    double D[9] = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.05}, R[9], T[9];
    sd_m3_rpy(0.3, -0.7, 1.1, R);
    sd_m3_mul(R, D, T);
    sd_m3_mul_t(T, R, d[1].inertia);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < i; ++j) d[1].inertia[3 * i + j] = d[1].inertia[3 * j + i];
    CHECK(try_build(d, 2, &err, &m) == SD_OK);
    CHECK(m != NULL);
    if (m) {
        CHECK(sd_model_nwarnings(m) == 1);
        const char *w = sd_model_nwarnings(m) > 0 ? sd_model_warning(m, 0) : NULL;
        CHECK(w && strstr(w, "'paddle'") && strstr(w, "triangle"));
        /* accepted as given */
        const double *I = sd_model_body_inertia(m, sd_model_body_index(m, "paddle"));
        CHECK_ARRAY_CLOSE(I, d[1].inertia, 9, 0.0, "inertia kept as given");
        sd_model_free(m);
    }
}

/* Bodies given children-first (and shuffled) come out parent-first in preorder. */
static void test_reordering(uint64_t *rng)
{
    for (int trial = 0; trial < 20; ++trial) {
        const int n = 1 + (int)(sd_random_uniform(rng) * 60);
        int *parent = malloc((size_t)n * sizeof(int)), *order = malloc((size_t)n * sizeof(int));
        char (*names)[24] = malloc((size_t)n * sizeof *names), (*jnames)[24] = malloc((size_t)n * sizeof *jnames);
        for (int k = 0; k < n; ++k) {
            /* several roots now and then */
            parent[k] = k == 0 || sd_random_uniform(rng) < 0.05 ? -1 : (int)(sd_random_uniform(rng) * k);
            snprintf(names[k], sizeof names[k], "body%d", k);
            snprintf(jnames[k], sizeof jnames[k], "joint%d", k);
            order[k] = n - 1 - k; /* children first */
        }
        if (trial % 2) /* or shuffled */
            for (int k = n - 1; k > 0; --k) {
                int j = (int)(sd_random_uniform(rng) * (k + 1)), t = order[k];
                order[k] = order[j];
                order[j] = t;
            }
        sd_builder *b = sd_builder_new();
        sd_error err;
        for (int i = 0; i < n; ++i) {
            const int k = order[i];
            sd_body_desc d;
            good_body(&d, names[k], parent[k] >= 0 ? names[parent[k]] : NULL);
            d.joint_name = jnames[k];
            d.hinge = (sd_hinge_type)(k % SD_HINGE_TYPE_COUNT);
            sd_v3_set(d.axis, 0.3, 0.4, 1.0);
            sd_v3_set(d.axis2, 1.0, 0.0, 0.2);
            d.mass = 1.0 + k; /* identifies the body */
            CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
        }
        sd_model *m = NULL;
        CHECK(sd_builder_build(b, &m, &err) == SD_OK);
        sd_builder_free(b);
        if (!m) continue;
        CHECK(sd_model_nbodies(m) == n);
        int ok_parent = 1, ok_names = 1, ok_index = 1, nq = 0, nv = 0;
        for (int k = 0; k < n; ++k) {
            const int p = sd_model_parent(m, k);
            if (!(p < k && p >= -1)) ok_parent = 0;
            int orig = -1;
            if (sscanf(sd_model_body_name(m, k), "body%d", &orig) != 1 || orig < 0 || orig >= n) {
                ok_names = 0;
                continue;
            }
            /* the same body: its joint, mass, hinge and parent (by name) */
            if (strcmp(sd_model_joint_name(m, k), jnames[orig]) != 0) ok_names = 0;
            if (sd_model_body_mass(m, k) != 1.0 + orig) ok_names = 0;
            if (sd_model_hinge(m, k) != (sd_hinge_type)(orig % SD_HINGE_TYPE_COUNT)) ok_names = 0;
            if ((p < 0) != (parent[orig] < 0)) ok_names = 0;
            if (p >= 0 && parent[orig] >= 0 && strcmp(sd_model_body_name(m, p), names[parent[orig]]) != 0) ok_names = 0;
            if (sd_model_body_index(m, names[orig]) != k || sd_model_joint_index(m, jnames[orig]) != k) ok_index = 0;
            /* coordinates are laid out in body order */
            if (sd_model_q_index(m, k) != nq || sd_model_v_index(m, k) != nv) ok_index = 0;
            if (sd_model_hinge_nq(m, k) != sd_hinge_type_nq(sd_model_hinge(m, k))) ok_index = 0;
            nq += sd_model_hinge_nq(m, k);
            nv += sd_model_hinge_nv(m, k);
            if (strcmp(sd_model_body_desc(m, k)->name, names[orig]) != 0) ok_names = 0;
        }
        CHECK(ok_parent);
        CHECK(ok_names);
        CHECK(ok_index);
        CHECK(sd_model_nq(m) == nq && sd_model_nv(m) == nv);
        CHECK(sd_model_body_index(m, "nosuch") == -1 && sd_model_joint_index(m, "nosuch") == -1);
        /* sd_model_v_body maps every speed to the body whose hinge owns it */
        int ok_vbody = 1;
        for (int v = 0; v < nv; ++v) {
            const int k = sd_model_v_body(m, v);
            if (k < 0 || v < sd_model_v_index(m, k) || v >= sd_model_v_index(m, k) + sd_model_hinge_nv(m, k)) ok_vbody = 0;
        }
        CHECK(ok_vbody && sd_model_v_body(m, nv) == -1 && sd_model_v_body(m, -1) == -1);
        /* ancestry: is_ancestor(a, b) iff a is reached walking up from b; subtrees contiguous */
        int ok_anc = 1, ok_contig = 1;
        for (int a = 0; a < n; ++a) {
            int last = a - 1, gap = 0;
            for (int c = 0; c < n; ++c) {
                int walk = 0;
                for (int j = c; j >= 0; j = sd_model_parent(m, j))
                    if (j == a) walk = 1;
                if (walk != sd_model_is_ancestor(m, a, c)) ok_anc = 0;
                if (walk) {
                    if (gap || c != last + 1) ok_contig = 0;
                    last = c;
                } else if (last >= a) {
                    gap = 1;
                }
            }
        }
        CHECK(ok_anc);
        CHECK(ok_contig);
        CHECK(sd_model_is_ancestor(m, -1, 0) == 0 && sd_model_is_ancestor(m, 0, n) == 0);
        sd_model_free(m);
        free(parent);
        free(order);
        free(names);
        free(jnames);
    }
}

static void test_big_chain(void)
{
    const int n = 100000;
    char (*names)[24] = malloc((size_t)n * sizeof *names);
    for (int k = 0; k < n; ++k) snprintf(names[k], sizeof names[k], "L%d", k);
    const clock_t t0 = clock();
    sd_builder *b = sd_builder_new();
    sd_error err;
    int add_ok = 1, nq = 0, nv = 0;
    for (int i = 0; i < n; ++i) {
        const int k = n - 1 - i; /* tip first: the sort has to reverse the whole chain */
        sd_body_desc d;
        good_body(&d, names[k], k ? names[k - 1] : NULL);
        if (k % 10 == 3) d.hinge = SD_HINGE_SPHERICAL;
        if (k % 100 == 7) d.hinge = SD_HINGE_FIXED;
        nq += sd_hinge_type_nq(d.hinge);
        nv += sd_hinge_type_nv(d.hinge);
        if (sd_builder_add_body(b, &d, &err) != SD_OK) add_ok = 0;
    }
    CHECK(add_ok);
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    const double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (secs > 5.0) fprintf(stderr, "building a %d body chain took %.2f s\n", n, secs);
    CHECK(secs < 5.0); /* linear: about 0.1 s; a quadratic name lookup would take minutes */
    if (m) {
        CHECK(sd_model_nbodies(m) == n);
        CHECK(sd_model_nq(m) == nq && sd_model_nv(m) == nv);
        int ok = 1;
        for (int k = 0; k < n; ++k)
            if (sd_model_parent(m, k) != k - 1 || strcmp(sd_model_body_name(m, k), names[k]) != 0) ok = 0;
        CHECK(ok);
        CHECK(sd_model_body_index(m, "L99999") == n - 1 && sd_model_body_index(m, "L0") == 0);
        CHECK(sd_model_is_ancestor(m, 0, n - 1) && !sd_model_is_ancestor(m, n - 1, 0));
        /* and it is usable by the O(N) algorithms: a workspace can be made (its size must be
         * O(N), not O(nv^2)), and kinematics at the neutral configuration stacks the placements */
        sd_data *data = sd_data_new(m);
        if (!data) fprintf(stderr, "sd_data_new failed for the %d body chain (nv = %d)\n", n, nv);
        CHECK(data != NULL);
        if (data) {
            double *q = malloc((size_t)sd_model_nq(m) * sizeof(double));
            sd_configuration_neutral(m, q);
            CHECK(sd_kinematics(m, data, q, NULL, NULL) == SD_OK);
            CHECK_CLOSE(world_placement(m, data, n - 1).p[0], 0.3 * n, 1e-10); /* n roundings of 0.3 */
            free(q);
            sd_data_free(data);
        }
        sd_model_free(m);
    }
    free(names);
}

static void test_frames(void)
{
    sd_body_desc d[3];
    /* added children-first so that body indices change in the build */
    good_body(&d[0], "hand", "arm");
    good_body(&d[1], "arm", "base");
    good_body(&d[2], "base", NULL);
    sd_builder *b = sd_builder_new();
    sd_error err;
    for (int i = 0; i < 3; ++i) CHECK(sd_builder_add_body(b, &d[i], &err) == SD_OK);
    sd_transform tool, cam;
    sd_m3_rpy(0.1, 0.2, 0.3, tool.R);
    sd_v3_set(tool.p, 0.05, 0.0, 0.12);
    sd_m3_rpy(-1.0, 0.5, 2.0, cam.R);
    sd_v3_set(cam.p, 0.0, 0.3, -0.1);
    CHECK(sd_builder_add_frame(b, "tool", "hand", &tool, &err) == SD_OK);
    CHECK(sd_builder_add_frame(b, "camera", "base", &cam, &err) == SD_OK);
    /* a frame placement that is not a rotation is refused at once */
    sd_transform bad = cam;
    bad.R[0] = 3.0;
    CHECK(sd_builder_add_frame(b, "bad", "base", &bad, &err) == SD_E_MODEL && strstr(err.message, "'bad'"));
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (m) {
        CHECK(sd_model_nframes(m) == 2);
        const int ft = sd_model_frame_index(m, "tool"), fc = sd_model_frame_index(m, "camera");
        CHECK(ft >= 0 && fc >= 0 && ft != fc);
        CHECK(sd_model_frame_index(m, "nosuch") == -1);
        CHECK(sd_model_frame_index(m, "hand") == -1); /* bodies are not frames */
        if (ft >= 0 && fc >= 0) {
            CHECK(strcmp(sd_model_frame_name(m, ft), "tool") == 0);
            CHECK(sd_model_frame_body(m, ft) == sd_model_body_index(m, "hand"));
            CHECK(sd_model_frame_body(m, fc) == sd_model_body_index(m, "base"));
            CHECK_ARRAY_CLOSE(sd_model_frame_placement(m, ft)->R, tool.R, 9, 0.0, "tool R");
            CHECK_ARRAY_CLOSE(sd_model_frame_placement(m, ft)->p, tool.p, 3, 0.0, "tool p");
            CHECK_ARRAY_CLOSE(sd_model_frame_placement(m, fc)->p, cam.p, 3, 0.0, "camera p");
            /* world placement of a frame = body placement * frame placement */
            sd_data *data = sd_data_new(m);
            const double q[3] = {0.4, -1.2, 2.0};
            CHECK(sd_kinematics(m, data, q, NULL, NULL) == SD_OK);
            sd_transform Xf, Xe;
            CHECK(sd_frame_placement_world(m, data, ft, &Xf) == SD_OK);
            const sd_transform Xh = world_placement(m, data, sd_model_body_index(m, "hand"));
            sd_transform_compose(&Xh, &tool, &Xe);
            CHECK_ARRAY_CLOSE(Xf.R, Xe.R, 9, 1e-15, "frame world R");
            CHECK_ARRAY_CLOSE(Xf.p, Xe.p, 3, 1e-15, "frame world p");
            sd_data_free(data);
        }
        sd_model_free(m);
    }
    /* a frame on an unknown body */
    b = sd_builder_new();
    for (int i = 0; i < 3; ++i) CHECK(sd_builder_add_body(b, &d[i], &err) == SD_OK);
    CHECK(sd_builder_add_frame(b, "tool", "gripper", &tool, &err) == SD_OK);
    m = NULL;
    memset(&err, 0, sizeof err);
    CHECK(sd_builder_build(b, &m, &err) == SD_E_MODEL);
    CHECK(m == NULL);
    CHECK(strstr(err.message, "'tool'") && strstr(err.message, "'gripper'"));
    sd_builder_free(b);
}

static void test_massless_leaf(void)
{
    sd_body_desc d[3];
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    good_body(&d[2], "feather", "arm");
    d[2].mass = 0.0;
    memset(d[2].com, 0, sizeof d[2].com);
    memset(d[2].inertia, 0, sizeof d[2].inertia);
    sd_model *m = NULL;
    sd_error err;
    CHECK(try_build(d, 3, &err, &m) == SD_OK);
    if (!m) return;
    sd_data *data = sd_data_new(m);
    const double q[3] = {0.1, 0.2, 0.3}, u[3] = {0.5, -0.5, 1.0}, tau[3] = {0, 0, 0};
    double qdd[3];
    CHECK(sd_forward_dynamics(m, data, q, u, tau, NULL, qdd) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(data), "'feather'") != NULL);
    /* the reference solver agrees that M is singular */
    CHECK(sd_forward_dynamics_cholesky(m, data, q, u, tau, NULL, qdd) == SD_E_SINGULAR);
    CHECK(strstr(sd_data_error(data), "feather") != NULL);
    sd_data_free(data);
    sd_model_free(m);
}

/* Finite numbers no physical model has are refused when the body is added, naming the body or the
 * joint, the field and the bound (model_bounds.h); values at the bounds build and evaluate to finite
 * numbers. */
static void test_physical_bounds(void)
{
    sd_body_desc d[2];
    for (int c = 0; c < 19; ++c) {
        good_body(&d[0], "base", NULL);
        good_body(&d[1], "arm", "base");
        d[1].joint_name = "elbow";
        const char *kind = "'elbow'", *field = NULL;
        switch (c) {
        case 0: d[1].mass = 1e308; kind = "body 'arm'"; field = "mass"; break;
        case 1: d[1].mass = 2e12; kind = "body 'arm'"; field = "beyond 1e+12 kg"; break;
        case 2: d[1].placement.p[1] = 1e308; field = "placement offset"; break;
        case 3: d[1].placement.p[2] = -1.5e6; field = "beyond 1e+06 m"; break;
        case 4: d[1].com[0] = 1e300; kind = "body 'arm'"; field = "centre of mass"; break;
        case 5: for (int i = 0; i < 9; i += 4) d[1].inertia[i] = 1e300; kind = "body 'arm'"; field = "inertia"; break;
        case 6: /* entries within m (1e6 m)^2 = 1.5e12, largest principal moment 3 x 0.9e12 beyond it */
            for (int i = 0; i < 9; ++i) d[1].inertia[i] = 0.9e12;
            for (int i = 0; i < 9; i += 4) d[1].inertia[i] = 1.2e12;
            kind = "body 'arm'"; field = "principal moment"; break;
        case 7: d[1].damping = 1e300; field = "damping"; break;
        case 8: d[1].friction = -1; field = "friction"; break;
        case 9: d[1].friction = 1e300; field = "friction"; break;
        case 10: d[1].effort_limit = -2; field = "effort limit"; break;
        case 11: d[1].velocity_limit = 1e300; field = "velocity limit"; break;
        case 12: d[1].has_limits = 1; d[1].lower = -1e308; d[1].upper = 1e308; field = "lower limit"; break;
        case 13: d[1].has_limits = 1; d[1].lower = 1; d[1].upper = -1; field = "lower limit 1 > upper limit -1"; break;
        case 14: d[1].has_limits = 1; d[1].lower = NAN; field = "not finite"; break;
        case 15: d[1].mimic_joint = "base"; d[1].mimic_multiplier = 1e300; field = "mimic multiplier"; break;
        case 16: d[1].mimic_joint = "base"; d[1].mimic_offset = INFINITY; field = "mimic offset"; break;
        case 17: d[1].mimic_joint = "nosuch"; field = "not a joint of the model"; break;
        case 18: d[1].mimic_joint = "elbow"; field = "the joint itself"; break;
        }
        char what[32];
        snprintf(what, sizeof what, "bounds case %d", c);
        expect_model_error(what, d, 2, kind, field);
    }
    /* limits are bounded only when they are limits; the mimic numbers only for a mimic joint */
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    d[1].lower = -1e308;
    d[1].upper = 1e308;
    d[1].mimic_multiplier = 1e308;
    {
        sd_error err;
        CHECK(try_build(d, 2, &err, NULL) == SD_OK);
    }
    /* the axis is a direction: huge components are normalised without overflow (1e300 squared is
     * infinite, which made the axis zero); below 1e-12 it is noise */
    good_body(&d[0], "base", NULL);
    good_body(&d[1], "arm", "base");
    sd_v3_set(d[1].axis, 0, 1e-300, 0);
    expect_model_error("tiny axis", d, 2, "'arm'", "zero length");
    sd_v3_set(d[1].axis, 1e300, 0, 1e300);
    d[0].hinge = SD_HINGE_UNIVERSAL;
    sd_v3_set(d[0].axis, 0, 1e-6, 0);
    sd_v3_set(d[0].axis2, 1e308, 0, 0);
    {
        sd_error err;
        sd_model *m = NULL;
        CHECK(try_build(d, 2, &err, &m) == SD_OK);
        if (m) {
            const double r = sqrt(0.5), *a = sd_model_axis(m, sd_model_body_index(m, "arm"));
            const double *b = sd_model_axis(m, sd_model_body_index(m, "base"));
            CHECK_CLOSE(a[0], r, 1e-15);
            CHECK_CLOSE(a[1], 0.0, 1e-15);
            CHECK_CLOSE(a[2], r, 1e-15);
            CHECK_CLOSE(b[1], 1.0, 1e-15);
            CHECK_CLOSE(b[3], 1.0, 1e-15);
            sd_model_free(m);
        }
    }
    /* gravity: finite and at most 1e7 m/s^2 */
    sd_builder *bld = sd_builder_new();
    const double g_ok[3] = {0, 0, -1e7}, g_far[3] = {0, 0, -1.1e7}, g_huge[3] = {1e300, 1e300, 0},
                 g_diag[3] = {6e6, 6e6, 6e6};
    CHECK(sd_builder_set_gravity(bld, g_ok) == SD_OK);
    CHECK(sd_builder_set_gravity(bld, g_far) == SD_E_ARGUMENT);
    CHECK(sd_builder_set_gravity(bld, g_huge) == SD_E_ARGUMENT);
    CHECK(sd_builder_set_gravity(bld, g_diag) == SD_E_ARGUMENT); /* each below, the magnitude beyond */
    /* a frame far away, and a frame name given twice */
    sd_transform far;
    sd_transform_identity(&far);
    far.p[0] = 2e6;
    sd_error err;
    good_body(&d[0], "base", NULL);
    CHECK(sd_builder_add_body(bld, &d[0], &err) == SD_OK);
    CHECK(sd_builder_add_frame(bld, "antenna", "base", &far, &err) == SD_E_MODEL && strstr(err.message, "'antenna'") &&
          strstr(err.message, "beyond"));
    far.p[0] = 1e6;
    CHECK(sd_builder_add_frame(bld, "tip", "base", &far, &err) == SD_OK);
    CHECK(sd_builder_add_frame(bld, "tip", "base", &far, &err) == SD_OK);
    sd_model *m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_E_MODEL && m == NULL && strstr(err.message, "'tip'") &&
          strstr(err.message, "twice"));
    sd_builder_free(bld);

    /* at the bounds: the heaviest, largest bodies with the stiffest dampers, the strongest gravity */
    sd_body_desc e[12];
    const char *names[12] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11"};
    bld = sd_builder_new();
    CHECK(sd_builder_set_gravity(bld, g_ok) == SD_OK);
    for (int k = 0; k < 12; ++k) {
        sd_body_desc_init(&e[k]);
        e[k].name = names[k];
        e[k].parent = k ? names[k - 1] : NULL;
        e[k].hinge = k == 0 ? SD_HINGE_FREE : (k % 3 == 0 ? SD_HINGE_PRISMATIC : SD_HINGE_REVOLUTE);
        sd_v3_set(e[k].axis, k % 2, 1 - k % 2, 1e-3);
        sd_v3_set(e[k].placement.p, 1e6, -1e6, 1e6);
        e[k].mass = 1e12;
        sd_v3_set(e[k].com, -1e6, 1e6, 1e6);
        for (int i = 0; i < 9; i += 4) e[k].inertia[i] = 0.5e24;
        e[k].damping = 1e30;
        e[k].has_limits = 1;
        e[k].lower = -1e6;
        e[k].upper = 1e6;
        CHECK(sd_builder_add_body(bld, &e[k], &err) == SD_OK);
    }
    m = NULL;
    CHECK(sd_builder_build(bld, &m, &err) == SD_OK);
    sd_builder_free(bld);
    if (m) {
        const int nq = sd_model_nq(m), nv = sd_model_nv(m);
        double q[32], u[32], tau[32], qdd[32], M[32 * 32];
        CHECK(nq <= 32 && nv <= 32);
        uint64_t rng = 42;
        sd_data *data = sd_data_new(m);
        for (int t = 0; t < 5; ++t) {
            sd_configuration_random(m, &rng, q);
            for (int i = 0; i < nv; ++i) u[i] = 2 * sd_random_uniform(&rng) - 1, tau[i] = 0;
            CHECK(sd_forward_dynamics(m, data, q, u, tau, NULL, qdd) == SD_OK);
            CHECK(sd_mass_matrix(m, data, q, M) == SD_OK);
            int finite = 1;
            for (int i = 0; i < nv; ++i) finite &= isfinite(qdd[i]);
            for (int i = 0; i < nv * nv; ++i) finite &= isfinite(M[i]);
            CHECK(finite);
            CHECK(sd_inverse_dynamics(m, data, q, u, qdd, NULL, tau) == SD_OK);
            for (int i = 0; i < nv; ++i) finite &= isfinite(tau[i]);
            CHECK(finite);
        }
        sd_data_free(data);
        sd_model_free(m);
    }
}

int main(void)
{
    uint64_t rng = 777;
    test_errors();
    test_triangle_warning();
    test_reordering(&rng);
    test_big_chain();
    test_frames();
    test_massless_leaf();
    test_physical_bounds();
    return test_summary("test_model_builder");
}
