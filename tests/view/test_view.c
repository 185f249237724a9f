/*
 * tests/view/test_view.c — the viewer's data (issue #13, soadyn/view.h), each part against an
 * independent computation:
 *   - sd_trajectory_read_csv: a CSV written by sd_csv_write on random trees (every hinge type, free
 *     roots) reads back bit for bit (t, q, u, energies); a missing, unknown or repeated column and a
 *     bad number are errors naming the column and file:line;
 *   - the page's world placements (x, y, z, quaternion) against placements composed here body by body
 *     from the joint placements and the hinge transforms (X_world(k) = X_world(parent) placement(k)
 *     XJ(q_k)), and its inter-body forces against the Newton-Euler forces of sd_inverse_dynamics at
 *     the accelerations of the forward dynamics (tau = 0), on random trees; the page prints 7
 *     significant digits, so the tolerance is 1e-6 of the largest value;
 *   - visuals: a URDF visual on a link merged by a fixed joint lands on its host body at the fixed
 *     joint's placement; an MJCF geom on a body whose hinge has an anchor (pos) and a ref is where
 *     MuJoCo puts it at any q (X_parent X_body T(a) R(axis, q - ref) T(-a) X_geom), as is a fromto
 *     capsule; STL (ASCII and binary) and OBJ meshes read with their triangle counts;
 *   - the page written for models/double_pendulum.urdf with a simulated motion (forces on) and for a
 *     humanoid (the shared MJCF when present) with a short free fall: the browser tests
 *     (tests/view/tests.cmake, label "browser") open these pages.
 * argv[1]: the folder of the bundled models; argv[2]: the shared humanoid MJCF; argv[3]: where to
 * write the pages.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* chdir: a model opened by its bare name */

#include <soadyn/config.h>
#include <soadyn/soadyn.h>

#include "flex/flex_body.h"
#include "internal.h"
#include "random_tree.h"
#include "sim/sim_trajectory.h"
#include "test_util.h"
#include "view/view_internal.h"

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        perror(path);
        exit(1);
    }
    fputs(text, fp);
    fclose(fp);
}

static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    const long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, fp) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(fp);
    return s;
}

/* The numbers of the page's JSON array "key":[...]; returns how many were read. */
static size_t page_array(const char *html, const char *key, double *out, size_t max)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":[", key);
    const char *p = strstr(html, pat);
    if (!p) return 0;
    p += strlen(pat);
    size_t n = 0;
    while (n < max && *p != ']') {
        char *end;
        out[n++] = strtod(p, &end);
        if (end == p) return 0;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* ---------------------------------------------------------------- CSV round trip */

static void test_csv_round_trip(const char *dir)
{
    uint64_t rng = 0x5eed1234ULL;
    char path[4096];
    snprintf(path, sizeof(path), "%s/view_round_trip.csv", dir);
    for (int trial = 0; trial < 12; ++trial) {
        const int n = 1 + trial;
        sd_model *m = random_tree(&rng, n, trial % 3 == 0 ? RT_FREE_ROOT : 0);
        const int nq = sd_model_nq(m), nv = sd_model_nv(m);
        double q[3][512], u[3][512], w[512];
        sd_csv_writer *wr;
        sd_error err = {0};
        CHECK(sd_csv_open(m, path, &wr, &err) == SD_OK);
        sd_sim_sample s[3];
        for (int i = 0; i < 3; ++i) {
            random_state(m, &rng, q[i], u[i], w);
            memset(&s[i], 0, sizeof(s[i]));
            s[i].t = 0.1 * i + 1e-17 * trial;
            s[i].q = q[i];
            s[i].u = u[i];
            s[i].kinetic = w[0];
            s[i].potential = -w[0] / 3;
            CHECK(sd_csv_write(wr, &s[i], &err) == SD_OK);
        }
        CHECK(sd_csv_close(wr, trial == 5 ? "interrupted for the test" : NULL, &err) == SD_OK);
        sd_trajectory *tr = NULL;
        const sd_status st = sd_trajectory_read_csv(m, path, &tr, &err);
        CHECK(st == SD_OK);
        if (st != SD_OK) {
            fprintf(stderr, "%s\n", err.message);
            sd_model_free(m);
            continue;
        }
        CHECK(sd_trajectory_length(tr) == 3);
        int same = 1;
        for (int i = 0; i < 3; ++i) {
            const double *r = tr->rows + (size_t)i * tr->stride;
            same &= r[0] == s[i].t && r[1 + nq] == s[i].kinetic && r[2 + nq] == s[i].potential;
            same &= memcmp(r + 1, q[i], sizeof(double) * (size_t)nq) == 0;
            same &= memcmp(r + 3 + nq, u[i], sizeof(double) * (size_t)nv) == 0;
        }
        CHECK(same);
        sd_trajectory_free(tr);
        /* another model's file: a column of no coordinate of this one */
        sd_model *other = random_tree(&rng, n + 1, 0);
        CHECK(sd_trajectory_read_csv(other, path, &tr, &err) == SD_E_PARSE && tr == NULL);
        CHECK(strstr(err.message, ":1:") != NULL);
        sd_model_free(other);
        sd_model_free(m);
    }
}

static void test_csv_errors(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/view_errors.csv", dir);
    sd_model *m;
    sd_error err = {0};
    sd_builder *b = sd_builder_new();
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = "link";
    d.joint_name = "hinge";
    d.hinge = SD_HINGE_REVOLUTE;
    d.mass = 1;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1;
    d.com[0] = 0.5;
    sd_builder_add_body(b, &d, &err);
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    sd_trajectory *tr = NULL;
    struct { const char *text, *expect; sd_status status; } cases[] = {
        {"time,hinge,u.hinge,kinetic\n0,0.1,0.2,0\n", NULL, SD_OK},
        {"time,hinge,kinetic\n0,0.1,0\n", ":1: no column 'u.hinge'", SD_E_PARSE},
        {"time,hinge,u.hinge,bogus\n0,0.1,0.2,0\n", ":1: column 4 'bogus'", SD_E_PARSE},
        {"time,hinge,u.hinge,hinge\n0,0.1,0.2,0\n", "'hinge' is a second column", SD_E_PARSE},
        {"hinge,u.hinge\n0.1,0.2\n", ":1: no 'time' column", SD_E_PARSE},
        {"time,hinge,u.hinge\n0,0.1,0.2\n# note\n1,x,0\n", ":4: column 2: not a number", SD_E_PARSE},
        {"time,hinge,u.hinge\n0,0.1\n", ":2: 2 columns, the header has 3", SD_E_PARSE},
        {"time,hinge,u.hinge\n", ":2: no samples", SD_E_PARSE},
        /* a page of nulls, or a motion played backwards, came out of these */
        {"time,hinge,u.hinge\nnan,0.1,0.2\n1,0.1,0.2\n", ":2: column 1: 'nan' is not finite", SD_E_PARSE},
        {"time,hinge,u.hinge\n0,0.1,0.2\n1,inf,0.2\n", ":3: column 2: 'inf' is not finite", SD_E_PARSE},
        {"time,hinge,u.hinge\n0,0.1,0.2\n1,0.1,0.2\n0.5,0.1,0.2\n", ":4: time 0.5 does not increase", SD_E_PARSE},
        {"time,hinge,u.hinge\n0,0.1,0.2\n# truncated\n0,0.1,0.2\n", ":4: time 0 does not increase", SD_E_PARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        write_text(path, cases[i].text);
        err.message[0] = '\0';
        const sd_status st = sd_trajectory_read_csv(m, path, &tr, &err);
        CHECK(st == cases[i].status);
        if (cases[i].expect && !strstr(err.message, cases[i].expect)) {
            fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err.message, cases[i].expect);
            CHECK(0);
        }
        sd_trajectory_free(tr);
        tr = NULL;
    }
    /* a NUL byte ended the line for strtod, and what followed it was ignored */
    static const char with_nul[] = "time,hinge,u.hinge\n0,0.1,0.2\n1,0.1,0.2\0,7,7\n";
    FILE *fp = fopen(path, "wb");
    CHECK(fp && fwrite(with_nul, 1, sizeof with_nul - 1, fp) == sizeof with_nul - 1);
    if (fp) fclose(fp);
    CHECK(sd_trajectory_read_csv(m, path, &tr, &err) == SD_E_PARSE && tr == NULL);
    CHECK(strstr(err.message, ":3: holds a NUL byte") != NULL);
    CHECK(sd_trajectory_read_csv(m, "/nonexistent/x.csv", &tr, &err) == SD_E_IO);
    sd_model_free(m);
}

/* ---------------------------------------------------------------- the page's placements and forces */

static void compose_world(const sd_model *m, const double *q, sd_transform *X)
{
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        sd_transform XJ, t;
        double S[36];
        sd_hinge_transform(m, k, q + sd_model_q_index(m, k), &XJ, S);
        sd_transform_compose(sd_model_placement(m, k), &XJ, &t);
        const int p = sd_model_parent(m, k);
        if (p < 0) X[k] = t;
        else sd_transform_compose(&X[p], &t, &X[k]);
    }
}

static void test_page_data(const char *dir)
{
    if (!SOADYN_HAS_VIEWER) return;
    uint64_t rng = 0xfeedULL;
    char path[4096];
    snprintf(path, sizeof(path), "%s/view_random.html", dir);
    double worst_pose = 0, worst_force = 0;
    for (int trial = 0; trial < 10; ++trial) {
        sd_model *m = random_tree(&rng, 2 + 2 * trial, trial % 2 ? RT_FREE_ROOT : RT_MASSLESS);
        const int nb = sd_model_nbodies(m), nq = sd_model_nq(m), nv = sd_model_nv(m);
        sd_trajectory *tr = sd_trajectory_new(m);
        enum { NS = 3 };
        double q[NS][512], u[NS][512], w[512];
        for (int i = 0; i < NS; ++i) {
            random_state(m, &rng, q[i], u[i], w);
            sd_sim_sample s = {0};
            s.t = i;
            s.q = q[i];
            s.u = u[i];
            sd_trajectory_append(tr, &s);
        }
        sd_view_options o;
        sd_view_options_init(&o);
        o.show_forces = 1;
        sd_error err = {0};
        const sd_status wst = sd_view_write_html(m, tr, &o, path, &err);
        CHECK(wst == SD_OK);
        char *html = wst == SD_OK ? read_text(path) : NULL;
        CHECK(html != NULL);
        if (!html) {
            fprintf(stderr, "%s\n", err.message);
            sd_trajectory_free(tr);
            sd_model_free(m);
            continue;
        }
        double *poses = malloc(sizeof(double) * NS * (size_t)nb * 7), *forces = malloc(sizeof(double) * NS * (size_t)nb * 6);
        CHECK(page_array(html, "poses", poses, NS * (size_t)nb * 7) == NS * (size_t)nb * 7);
        CHECK(page_array(html, "forces", forces, NS * (size_t)nb * 6) == NS * (size_t)nb * 6);
        sd_data *data = sd_data_new(m);
        sd_transform *X = malloc(sizeof(sd_transform) * (size_t)nb);
        double *qdd = calloc((size_t)nv + 1, sizeof(double)), *tau = calloc((size_t)nv + 1, sizeof(double));
        for (int i = 0; i < NS; ++i) {
            compose_world(m, q[i], X);
            /* Newton-Euler inter-body forces at the forward dynamics' accelerations */
            sd_forward_dynamics(m, data, q[i], u[i], tau, NULL, qdd);
            sd_inverse_dynamics(m, data, q[i], u[i], qdd, NULL, w);
            double fbig = 1;
            double (*f)[6] = malloc(sizeof(double[6]) * (size_t)nb);
            for (int k = 0; k < nb; ++k) {
                sd_interbody_force(m, data, k, SD_FRAME_WORLD, f[k]);
                for (int a = 3; a < 6; ++a) fbig = fbig > fabs(f[k][a]) ? fbig : fabs(f[k][a]);
            }
            for (int k = 0; k < nb; ++k) {
                const double *pk = poses + ((size_t)i * (size_t)nb + (size_t)k) * 7;
                double R[9];
                sd_quat_to_m3(pk + 3, R);
                for (int a = 0; a < 3; ++a) worst_pose = fmax(worst_pose, fabs(pk[a] - X[k].p[a]) / fmax(1, fabs(X[k].p[a])));
                for (int a = 0; a < 9; ++a) worst_pose = fmax(worst_pose, fabs(R[a] - X[k].R[a]));
                const double *fk = forces + ((size_t)i * (size_t)nb + (size_t)k) * 6;
                for (int a = 0; a < 6; ++a) worst_force = fmax(worst_force, fabs(fk[a] - f[k][a]) / fbig);
            }
            free(f);
        }
        (void)nq;
        free(X);
        free(qdd);
        free(tau);
        free(poses);
        free(forces);
        free(html);
        sd_data_free(data);
        sd_trajectory_free(tr);
        sd_model_free(m);
    }
    printf("page vs independent: placements %.2e, inter-body forces %.2e (of the largest; 7 digits printed)\n",
           worst_pose, worst_force);
    CHECK(worst_pose < 1e-6);
    CHECK(worst_force < 1e-6);
}

/* ---------------------------------------------------------------- visuals and meshes */

static const view_visual *visual_of(const view_visuals *vs, int body, int nth)
{
    for (int i = 0; i < vs->n; ++i)
        if (vs->items[i].body == body && nth-- == 0) return &vs->items[i];
    return NULL;
}

static void check_transform(const sd_transform *a, const sd_transform *b, double tol)
{
    CHECK_ARRAY_CLOSE(a->R, b->R, 9, tol, "rotation");
    CHECK_ARRAY_CLOSE(a->p, b->p, 3, tol, "position");
}

static void test_urdf_visuals(const char *dir)
{
    if (!SOADYN_HAS_IO || !SOADYN_HAS_VIEWER) return;
    char urdf[4096], stl[4096], obj[4096], bin[4096];
    snprintf(urdf, sizeof(urdf), "%s/view_visuals.urdf", dir);
    snprintf(stl, sizeof(stl), "%s/view_tri.stl", dir);
    snprintf(obj, sizeof(obj), "%s/view_quad.obj", dir);
    snprintf(bin, sizeof(bin), "%s/view_bin.stl", dir);
    write_text(stl, "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\n"
                    "endfacet\nendsolid t\n");
    write_text(obj, "# a quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\n");
    { /* binary STL: two triangles */
        unsigned char b[84 + 100] = {0};
        b[80] = 2;
        const float one = 1.0f;
        for (int t = 0; t < 2; ++t) memcpy(b + 84 + 50 * t + 12 + 12, &one, 4); /* vertex 1 x = 1 */
        FILE *fp = fopen(bin, "wb");
        fwrite(b, 1, sizeof(b), fp);
        fclose(fp);
    }
    write_text(urdf,
               "<robot name='v'>\n"
               " <material name='red'><color rgba='1 0 0 1'/></material>\n"
               " <link name='base'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
               "  <visual><origin xyz='0 0 0.5' rpy='0.3 -0.2 0.1'/><geometry><box size='0.2 0.4 0.6'/></geometry><material name='red'/></visual></link>\n"
               " <link name='arm'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
               "  <visual><geometry><mesh filename='view_tri.stl' scale='2 2 2'/></geometry></visual>\n"
               "  <visual><geometry><mesh filename='view_quad.obj'/></geometry></visual>\n"
               "  <visual><geometry><mesh filename='package://pkg/view_bin.stl'/></geometry></visual>\n"
               "  <visual><geometry><mesh filename='missing.dae'/></geometry></visual></link>\n"
               " <link name='tool'><visual><origin xyz='0.1 0 0'/><geometry><cylinder radius='0.05' length='0.3'/></geometry>\n"
               "  <material name='c'><color rgba='0 0 1 0.5'/></material></visual></link>\n"
               " <joint name='j' type='revolute'><parent link='base'/><child link='arm'/><origin xyz='0 0 1'/><axis xyz='0 1 0'/>"
               "<limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
               " <joint name='weld' type='fixed'><parent link='arm'/><child link='tool'/><origin xyz='0.5 0 0' rpy='0 0 1.2'/></joint>\n"
               "</robot>\n");
    sd_model *m;
    sd_error err = {0};
    CHECK(sd_urdf_load_file(urdf, NULL, &m, &err) == SD_OK);
    view_visuals vs;
    CHECK(sd_view_read_visuals(m, urdf, NULL, &vs, &err) == SD_OK);
    const int base = sd_model_body_index(m, "base"), arm = sd_model_body_index(m, "arm");
    CHECK(base >= 0 && arm >= 0 && sd_model_body_index(m, "tool") < 0);
    const view_visual *box = visual_of(&vs, base, 0);
    CHECK(box && box->shape == VIEW_BOX && box->has_rgba && box->rgba[0] == 1);
    if (box) {
        const double rpy[3] = {0.3, -0.2, 0.1};
        double Rx[9], Ry[9], Rz[9], t[9];
        const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
        sd_m3_axis_angle(ex, rpy[0], Rx);
        sd_m3_axis_angle(ey, rpy[1], Ry);
        sd_m3_axis_angle(ez, rpy[2], Rz);
        sd_transform want = {{0}, {0, 0, 0.5}};
        sd_m3_mul(Rz, Ry, t);
        sd_m3_mul(t, Rx, want.R);
        check_transform(&box->X, &want, 1e-14);
        CHECK(box->size[0] == 0.1 && box->size[1] == 0.2 && box->size[2] == 0.3);
    }
    const view_visual *tri = visual_of(&vs, arm, 0), *quad = visual_of(&vs, arm, 1), *bintri = visual_of(&vs, arm, 2);
    const view_visual *cyl = visual_of(&vs, arm, 3);
    CHECK(tri && tri->shape == VIEW_MESH && tri->ntriangles == 1 && tri->size[0] == 2);
    CHECK(quad && quad->shape == VIEW_MESH && quad->ntriangles == 2 && quad->nvertices == 4);
    CHECK(bintri && bintri->shape == VIEW_MESH && bintri->ntriangles == 2 && bintri->vertices[3] == 1.0f);
    CHECK(vs.meshes_missing == 1 && strcmp(vs.first_missing, "missing.dae") == 0);
    /* the tool's cylinder on the arm: the fixed joint's placement, then the visual's origin */
    CHECK(cyl && cyl->shape == VIEW_CYLINDER && cyl->size[1] == 0.15 && cyl->has_rgba && cyl->rgba[3] == 0.5);
    if (cyl) {
        const double ez[3] = {0, 0, 1};
        sd_transform want = {{0}, {0.5 + 0.1 * cos(1.2), 0.1 * sin(1.2), 0}};
        sd_m3_axis_angle(ez, 1.2, want.R);
        check_transform(&cyl->X, &want, 1e-14);
    }
    sd_view_visuals_free(&vs);
    sd_model_free(m);
}

static void test_mjcf_visuals(const char *dir)
{
    if (!SOADYN_HAS_IO || !SOADYN_HAS_VIEWER) return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/view_visuals.xml", dir);
    write_text(path,
               "<mujoco model='m'>\n"
               " <compiler angle='radian'/>\n"
               " <default><geom rgba='0 1 0 1'/><default class='grey'><geom rgba='.5 .5 .5 1' type='box'/></default></default>\n"
               " <worldbody>\n"
               "  <geom type='plane' size='5 5 .1'/>\n"
               "  <body name='a' pos='0.1 0.2 0.3' euler='0.2 0 0'>\n"
               "   <joint name='ja' type='hinge' axis='0 1 1' pos='0.05 -0.1 0.2' ref='0.3'/>\n"
               "   <inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>\n"
               "   <geom class='grey' size='0.1 0.2 0.3' pos='0.3 0 0' quat='0.9 0.1 0.2 0.3'/>\n"
               "   <geom type='capsule' size='0.05' fromto='0 0 0 0.2 0.3 -0.4'/>\n"
               "   <geom type='box' size='0.1 0.1 0.1' group='3'/>\n"
               "  </body>\n"
               " </worldbody>\n"
               "</mujoco>\n");
    sd_model *m;
    sd_error err = {0};
    const sd_status st = sd_mjcf_load_file(path, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    view_visuals vs;
    CHECK(sd_view_read_visuals(m, path, NULL, &vs, &err) == SD_OK);
    const int a = sd_model_body_index(m, "a");
    CHECK(a >= 0 && vs.n == 2); /* the plane is scenery, the group-3 box hidden */
    /* MuJoCo's world placement of body a at hinge angle q (ref 0.3): X_body T(p) R(n, q - ref) T(-p) */
    double axis[3] = {0, 1, 1};
    const double len = sqrt(2.0);
    axis[1] /= len, axis[2] /= len;
    const double ex[3] = {1, 0, 0}, anchor[3] = {0.05, -0.1, 0.2};
    sd_data *data = sd_data_new(m);
    double worst = 0;
    for (int t = 0; t < 5; ++t) {
        double q[8] = {0};
        q[sd_model_q_index(m, a)] = -1.0 + 0.6 * t;
        sd_kinematics(m, data, q, NULL, NULL);
        sd_transform Xa, body = {{0}, {0.1, 0.2, 0.3}}, Tp = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0}}, R = {{0}, {0}},
                         Tm = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0}}, t1, t2, mj;
        sd_body_placement_world(m, data, a, &Xa);
        sd_m3_axis_angle(ex, 0.2, body.R);
        memcpy(Tp.p, anchor, sizeof(anchor));
        for (int i = 0; i < 3; ++i) Tm.p[i] = -anchor[i];
        sd_m3_axis_angle(axis, q[sd_model_q_index(m, a)] - 0.3, R.R);
        sd_transform_compose(&body, &Tp, &t1);
        sd_transform_compose(&t1, &R, &t2);
        sd_transform_compose(&t2, &Tm, &mj);
        /* the box geom: pos, quat normalised */
        double qg[4] = {0.9, 0.1, 0.2, 0.3};
        const double n = sqrt(0.81 + 0.01 + 0.04 + 0.09);
        for (int i = 0; i < 4; ++i) qg[i] /= n;
        sd_transform G = {{0}, {0.3, 0, 0}}, want, got;
        sd_quat_to_m3(qg, G.R);
        sd_transform_compose(&mj, &G, &want);
        const view_visual *box = visual_of(&vs, a, 0);
        CHECK(box && box->shape == VIEW_BOX && box->rgba[0] == 0.5);
        if (!box) break;
        sd_transform_compose(&Xa, &box->X, &got);
        for (int i = 0; i < 9; ++i) worst = fmax(worst, fabs(got.R[i] - want.R[i]));
        for (int i = 0; i < 3; ++i) worst = fmax(worst, fabs(got.p[i] - want.p[i]));
        /* the fromto capsule: centre at the midpoint, z along the segment, half-length 0.5 |b - a| */
        const view_visual *cap = visual_of(&vs, a, 1);
        CHECK(cap && cap->shape == VIEW_CAPSULE && cap->rgba[1] == 1);
        if (!cap) break;
        CHECK_CLOSE(cap->size[1], 0.5 * sqrt(0.04 + 0.09 + 0.16), 1e-15);
        sd_transform_compose(&Xa, &cap->X, &got);
        const double mid[3] = {0.1, 0.15, -0.2}, dir_[3] = {0.2, 0.3, -0.4};
        double mid_w[3], dir_w[3];
        sd_transform_point(&mj, mid, mid_w);
        for (int i = 0; i < 3; ++i) dir_w[i] = mj.R[3 * i] * dir_[0] + mj.R[3 * i + 1] * dir_[1] + mj.R[3 * i + 2] * dir_[2];
        const double dl = sqrt(0.29);
        for (int i = 0; i < 3; ++i) {
            worst = fmax(worst, fabs(got.p[i] - mid_w[i]));
            worst = fmax(worst, fabs(got.R[3 * i + 2] - dir_w[i] / dl)); /* the capsule's z column */
        }
    }
    printf("MJCF visuals vs MuJoCo's placement at 5 angles: %.2e\n", worst);
    CHECK(worst < 1e-14);
    sd_data_free(data);
    sd_view_visuals_free(&vs);
    sd_model_free(m);
}

/* ---------------------------------------------------------------- finding meshes */

typedef struct warnings { int n; char last[1024]; } warnings;

static void count_warning(void *user, const char *message)
{
    warnings *w = user;
    ++w->n;
    snprintf(w->last, sizeof(w->last), "%s", message);
}

/* The visuals of `urdf` read with mesh_path; how many meshes were drawn (mesh or mesh file). */
static int meshes_drawn(const char *urdf, const char *mesh_path, warnings *w)
{
    sd_model *m;
    sd_error err = {0};
    if (sd_model_load_file(urdf, NULL, &m, NULL, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return -1;
    }
    sd_view_options o;
    sd_view_options_init(&o);
    o.mesh_path = mesh_path;
    o.mesh_warning = count_warning;
    o.mesh_warning_user = w;
    view_visuals vs;
    memset(w, 0, sizeof(*w));
    int drawn = -1;
    if (sd_view_read_visuals(m, urdf, &o, &vs, &err) == SD_OK) {
        drawn = 0;
        for (int i = 0; i < vs.n; ++i) drawn += vs.items[i].shape == VIEW_MESH || vs.items[i].shape == VIEW_MESH_FILE;
        CHECK(vs.meshes_missing == w->n);
        sd_view_visuals_free(&vs);
    }
    sd_model_free(m);
    return drawn;
}

/* Where meshes are found: a package:// name from the model's own folder given as a bare file name
 * (the working folder: it used to find nothing), a package found only on the mesh path (as
 * DIR/PKG/rest and as DIR/rest with DIR named PKG), a plain name on the mesh path; and each mesh
 * not drawn told to the caller with its name and why (not found; a file that is not what its name
 * says). */
static void test_mesh_resolution(const char *dir)
{
    if (!SOADYN_HAS_IO || !SOADYN_HAS_VIEWER) return;
    /* root/robot/r.urdf and root/elsewhere/shapes_pkg: the package is not in a folder above the model */
    char root[4096], elsewhere[4200], pkg[4300], robot[4200], path[4400];
    snprintf(root, sizeof(root), "%s/view_mesh_resolution", dir);
    snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", root);
    snprintf(pkg, sizeof(pkg), "%s/shapes_pkg", elsewhere);
    snprintf(robot, sizeof(robot), "%s/robot", root);
    snprintf(path, sizeof(path), "rm -rf '%s'", root); /* a fresh tree: nothing left by an earlier run */
    CHECK(system(path) == 0);
    const char *const folders[] = {pkg, robot};
    for (int i = 0; i < 2; ++i) {
        snprintf(path, sizeof(path), "mkdir -p '%s'", folders[i]);
        CHECK(system(path) == 0);
    }
    static const char stl[] = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
                              "endloop\nendfacet\nendsolid t\n";
    snprintf(path, sizeof(path), "%s/tri.stl", pkg);
    write_text(path, stl);
    snprintf(path, sizeof(path), "%s/bad.glb", pkg);
    write_text(path, "not a glb file at all, just text");
    snprintf(path, sizeof(path), "%s/beside.stl", robot);
    write_text(path, stl);
    static const char urdf[] =
        "<robot name='r'><link name='a'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
        " <visual><geometry><mesh filename='package://robot/beside.stl'/></geometry></visual>\n"
        " <visual><geometry><mesh filename='package://shapes_pkg/tri.stl'/></geometry></visual>\n"
        " <visual><geometry><mesh filename='tri.stl'/></geometry></visual>\n"
        " <visual><geometry><mesh filename='package://shapes_pkg/bad.glb'/></geometry></visual>\n"
        "</link></robot>\n";
    snprintf(path, sizeof(path), "%s/r.urdf", robot);
    write_text(path, urdf);
    warnings w;
    /* from elsewhere, no mesh path: only the mesh beside the model */
    CHECK(meshes_drawn(path, NULL, &w) == 1 && w.n == 3);
    CHECK(strstr(w.last, "mesh package://shapes_pkg/bad.glb not drawn: not found") != NULL);
    /* the mesh path: a folder holding shapes_pkg/, then the package folder itself */
    char mesh_path[8800];
    snprintf(mesh_path, sizeof(mesh_path), "/nonexistent:%s", elsewhere);
    CHECK(meshes_drawn(path, mesh_path, &w) == 2 && w.n == 2); /* the plain tri.stl: not in elsewhere/ */
    CHECK(strstr(w.last, "bad.glb not drawn") && strstr(w.last, "not a GLB file"));
    snprintf(mesh_path, sizeof(mesh_path), "%s/:%s", pkg, elsewhere);
    CHECK(meshes_drawn(path, mesh_path, &w) == 3 && w.n == 1);
    /* from the model's own folder, by its bare name */
    char here[4096];
    CHECK(getcwd(here, sizeof(here)) != NULL);
    CHECK(chdir(robot) == 0);
    CHECK(meshes_drawn("r.urdf", NULL, &w) == 1 && w.n == 3);
    CHECK(chdir(here) == 0);
}

/* ---------------------------------------------------------------- pages for the browser tests */

static int keep_sample(void *user, const sd_sim_sample *s)
{
    return sd_trajectory_append(user, s) != SD_OK;
}

/* A file beside the page, PAGE.html + suffix, for the browser test. */
static FILE *open_beside(const char *html, const char *suffix)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s%s", html, suffix);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        exit(1);
    }
    return fp;
}

/* The model's body count beside its page (PAGE.html.nbodies), which the browser test checks. */
static void write_nbodies(const char *html, const sd_model *m)
{
    FILE *fp = open_beside(html, ".nbodies");
    fprintf(fp, "%d\n", sd_model_nbodies(m));
    fclose(fp);
}

/* Simulate the model from its reference q plus dq (ndq values) with u[0..nu) = u0 (RK4, 1 ms, every
 * 10th step kept), write its page with inter-body forces (not on a model with loops: the page
 * refuses them), and the body count beside it for the browser test. Returns the model and the
 * trajectory (the caller frees both), NULL on failure. */
static sd_model *write_simulated_page(const char *model_path, const char *html, double duration, const double *dq,
                                      int ndq, const double *u0, int nu, sd_trajectory **trajectory)
{
    sd_model *m;
    sd_error err = {0};
    *trajectory = NULL;
    if (sd_model_load_file(model_path, NULL, &m, NULL, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return NULL;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
    sd_configuration_reference(m, q); /* the humanoid stands where the file puts it */
    for (int i = 0; i < ndq && i < nq; ++i) q[i] += dq[i];
    for (int i = 0; i < nu && i < nv; ++i) u[i] = u0[i];
    sd_trajectory *tr = sd_trajectory_new(m);
    sd_sim_options so;
    sd_sim_options_init(&so);
    so.duration = duration;
    so.dt = 1e-3;
    so.every = 10;
    so.observer = keep_sample;
    so.observer_user = tr;
    sd_sim_stats st;
    CHECK(sd_simulate(m, &so, q, u, &st, &err) == SD_OK);
    sd_view_options o;
    sd_view_options_init(&o);
    o.model_path = model_path;
    o.show_forces = sd_model_nconstraints(m) == 0;
    const sd_status s = sd_view_write_html(m, tr, &o, html, &err);
    CHECK(s == SD_OK);
    if (s != SD_OK) fprintf(stderr, "%s\n", err.message);
    write_nbodies(html, m);
    printf("wrote %s: %d bodies, %zu samples\n", html, sd_model_nbodies(m), sd_trajectory_length(tr));
    free(q);
    free(u);
    *trajectory = tr;
    return m;
}

/* The path of bundled model `name` (models/NAME.urdf) and of its page (OUT/view_NAME.html). */
static void bundled_paths(const char *models, const char *out, const char *name, char model[4096], char html[4096])
{
    snprintf(model, 4096, "%s/%s.urdf", models, name);
    snprintf(html, 4096, "%s/view_%s.html", out, name);
}

/* What the browser test checks on a page beyond its defaults: PAGE.html.expect (JSON). */
static FILE *open_expect(const char *html) { return open_beside(html, ".expect"); }

static void json_point(FILE *fp, const double x[3]) { fprintf(fp, "[%.17g,%.17g,%.17g]", x[0], x[1], x[2]); }

/* ,"key":[[x,y,z],...] of n points */
static void json_points(FILE *fp, const char *key, const double (*x)[3], int n)
{
    fprintf(fp, ",\"%s\":[", key);
    for (int i = 0; i < n; ++i) {
        if (i) fputc(',', fp);
        json_point(fp, x[i]);
    }
    fputc(']', fp);
}

/* ,"frames":[...] */
static void json_frames(FILE *fp, const size_t *frames, int n)
{
    fputs(",\"frames\":[", fp);
    for (int i = 0; i < n; ++i) fprintf(fp, i ? ",%zu" : "%zu", frames[i]);
    fputc(']', fp);
}

/* The flexible arm bent by an initial modal deflection, swinging: the page's drawn tip node (node 10
 * of link1) must be where the node engine's kinematics puts link2's joint, which rides on that node
 * (an independent path: sd_kinematics, not the page's node deflections), and away from where the
 * undeformed tip would be by the simulated deflection. */
static void write_flexible_arm_page(const char *models, const char *out)
{
    char model[4096], html[4096];
    bundled_paths(models, out, "flexible_arm", model, html);
    const double dq[3] = {0.0, 0.25, -0.05}, u0[1] = {2.0};
    sd_trajectory *tr;
    sd_model *m = write_simulated_page(model, html, 1.0, dq, 3, u0, 1, &tr);
    if (!m) return;
    const int link1 = sd_model_body_index(m, "link1"), link2 = sd_model_body_index(m, "link2");
    CHECK(link1 >= 0 && link2 >= 0 && sd_model_body_nnodes(m, link1) == 11 && sd_model_parent_node(m, link2) == 10);
    const size_t n = sd_trajectory_length(tr);
    CHECK(n <= 1500); /* page frames are the trajectory's rows */
    sd_data *data = sd_data_new(m);
    const size_t frames[4] = {0, n / 3, (2 * n) / 3, n - 1};
    double largest = 0, tip[4][3], rigid[4][3];
    for (int i = 0; i < 4; ++i) {
        sd_kinematics(m, data, tr->rows + frames[i] * tr->stride + 1, NULL, NULL);
        sd_transform X1, X2;
        sd_body_placement_world(m, data, link1, &X1);
        sd_body_placement_world(m, data, link2, &X2);
        memcpy(tip[i], X2.p, sizeof(X2.p));
        sd_transform_point(&X1, sd_flex_body_node_position(m->flex[link1], 10), rigid[i]);
        const double d[3] = {tip[i][0] - rigid[i][0], tip[i][1] - rigid[i][1], tip[i][2] - rigid[i][2]};
        largest = fmax(largest, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
    FILE *fp = open_expect(html);
    fprintf(fp, "{\"flex\":{\"body\":%d,\"node\":10", link1);
    json_frames(fp, frames, 4);
    json_points(fp, "tip", (const double(*)[3])tip, 4);
    json_points(fp, "rigid", (const double(*)[3])rigid, 4);
    fputs("}}\n", fp);
    fclose(fp);
    printf("flexible arm: largest tip deflection at the checked frames %.4f m\n", largest);
    CHECK(largest > 0.05); /* a deflection the test can see */
    sd_data_free(data);
    sd_trajectory_free(tr);
    sd_model_free(m);
}

/* The spacecraft with its right array bent (mode 2, out of the panel's plane): the vertices of the
 * drawn panel at its tip (x = 5 m, the station of node 10) move as the rigid section of the beam at
 * that node, t + theta x (r - x_node), with t and theta the node's deflection (sd_model_node_deflection)
 * at the frame; a deformed mesh, not only a line of nodes. */
static void write_spacecraft_page(const char *models, const char *out)
{
    char model[4096], html[4096];
    bundled_paths(models, out, "spacecraft", model, html);
    double dq[10] = {0};
    dq[9] = 1.5; /* array_right.eta2 (checked below) */
    sd_trajectory *tr;
    sd_model *m = write_simulated_page(model, html, 0.2, dq, 10, NULL, 0, &tr);
    if (!m) return;
    const int right = sd_model_body_index(m, "array_right");
    CHECK(right >= 0 && sd_model_mode_q_index(m, right) == 8 && sd_model_body_nnodes(m, right) == 11);
    const size_t n = sd_trajectory_length(tr), frames[3] = {0, n / 2, n - 1};
    double largest = 0, theta[3][3], t[3][3];
    for (int i = 0; i < 3; ++i) {
        double d[6];
        sd_error err = {0};
        CHECK(sd_model_node_deflection(m, right, 10, tr->rows + frames[i] * tr->stride + 1, d, &err) == SD_OK);
        memcpy(theta[i], d, sizeof(theta[i]));
        memcpy(t[i], d + 3, sizeof(t[i]));
        largest = fmax(largest, sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5]));
    }
    FILE *fp = open_expect(html);
    fprintf(fp, "{\"flex_visual\":{\"body\":%d,\"node_rest\":", right);
    json_point(fp, sd_flex_body_node_position(m->flex[right], 10));
    json_frames(fp, frames, 3);
    json_points(fp, "theta", (const double(*)[3])theta, 3);
    json_points(fp, "t", (const double(*)[3])t, 3);
    fputs("}}\n", fp);
    fclose(fp);
    printf("spacecraft: right array's tip deflection up to %.4f m at the checked frames\n", largest);
    CHECK(largest > 0.3);
    sd_trajectory_free(tr);
    sd_model_free(m);
}

/* The four-bar turning: each closure's two drawn points meet at every frame (at O4 = (0.4, 0, 0)). */
static void write_four_bar_page(const char *models, const char *out)
{
    char model[4096], html[4096];
    bundled_paths(models, out, "four_bar", model, html);
    const double u0[3] = {6.0, 0, 0};
    sd_trajectory *tr;
    sd_model *m = write_simulated_page(model, html, 1.0, NULL, 0, u0, 1, &tr);
    if (!m) return;
    FILE *fp = open_expect(html);
    fputs("{\"closures\":{\"count\":1,\"at\":[0.4,0,0]}}\n", fp);
    fclose(fp);
    CHECK(sd_model_nconstraints(m) == 1);
    sd_trajectory_free(tr);
    sd_model_free(m);
}

/* A robot whose links carry a COLLADA mesh (Z_UP, a square pyramid: 5 vertices, 6 triangles, apex
 * up) and a glTF binary mesh (y up by glTF's rule: a tetrahedron, 4 vertices, 4 triangles, height
 * 0.5 along the file's y); the page must draw both with those counts and turn them up right. */
static void write_mesh_page(const char *out)
{
    char dae[4096], glb[4096], urdf[4096], html[4096];
    snprintf(dae, sizeof(dae), "%s/view_pyramid.dae", out);
    snprintf(glb, sizeof(glb), "%s/view_tetra.glb", out);
    snprintf(urdf, sizeof(urdf), "%s/view_meshes.urdf", out);
    snprintf(html, sizeof(html), "%s/view_meshes.html", out);
    write_text(dae,
               "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
               "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
               " <asset><unit name=\"meter\" meter=\"1\"/><up_axis>Z_UP</up_axis></asset>\n"
               " <library_geometries><geometry id=\"pyramid\"><mesh>\n"
               "  <source id=\"pos\"><float_array id=\"pos-array\" count=\"15\">-0.2 -0.2 0 0.2 -0.2 0 0.2 0.2 0 -0.2 0.2 0 0 0 0.3</float_array>\n"
               "   <technique_common><accessor source=\"#pos-array\" count=\"5\" stride=\"3\"><param name=\"X\" type=\"float\"/>"
               "<param name=\"Y\" type=\"float\"/><param name=\"Z\" type=\"float\"/></accessor></technique_common></source>\n"
               "  <vertices id=\"verts\"><input semantic=\"POSITION\" source=\"#pos\"/></vertices>\n"
               "  <triangles count=\"6\"><input semantic=\"VERTEX\" source=\"#verts\" offset=\"0\"/>"
               "<p>0 2 1 0 3 2 0 1 4 1 2 4 2 3 4 3 0 4</p></triangles>\n"
               " </mesh></geometry></library_geometries>\n"
               " <library_visual_scenes><visual_scene id=\"scene\"><node id=\"n\"><instance_geometry url=\"#pyramid\"/></node>"
               "</visual_scene></library_visual_scenes>\n"
               " <scene><instance_visual_scene url=\"#scene\"/></scene>\n"
               "</COLLADA>\n");
    { /* GLB: 12-byte header, a JSON chunk, a BIN chunk (4 float positions, 12 uint16 indices) */
        static const char json[] =
            "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],"
            "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}],"
            "\"buffers\":[{\"byteLength\":72}],\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":48},"
            "{\"buffer\":0,\"byteOffset\":48,\"byteLength\":24}],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,"
            "\"count\":4,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[0.4,0.5,0.3]},{\"bufferView\":1,\"componentType\":5123,"
            "\"count\":12,\"type\":\"SCALAR\"}]}";
        const float pos[12] = {0, 0, 0, 0.4f, 0, 0, 0, 0, 0.3f, 0, 0.5f, 0};
        const uint16_t idx[12] = {0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3};
        const uint32_t jlen = (uint32_t)((sizeof(json) - 1 + 3) / 4 * 4), blen = 72, total = 12 + 8 + jlen + 8 + blen;
        unsigned char buf[1024] = {0};
        size_t n = 0;
        const uint32_t head[3] = {0x46546C67u, 2, total}, jhead[2] = {jlen, 0x4E4F534Au}, bhead[2] = {blen, 0x004E4942u};
        memcpy(buf, head, 12), n = 12; /* little-endian host assumed, as the rest of the suite does */
        memcpy(buf + n, jhead, 8), n += 8;
        memset(buf + n, ' ', jlen);
        memcpy(buf + n, json, sizeof(json) - 1), n += jlen;
        memcpy(buf + n, bhead, 8), n += 8;
        memcpy(buf + n, pos, 48), n += 48;
        memcpy(buf + n, idx, 24), n += 24;
        CHECK(n == total && n < sizeof(buf));
        FILE *fp = fopen(glb, "wb");
        fwrite(buf, 1, n, fp);
        fclose(fp);
    }
    write_text(urdf,
               "<robot name='meshes'>\n"
               " <link name='world'/>\n"
               " <joint name='j1' type='revolute'><parent link='world'/><child link='a'/><origin xyz='0 0 0.5'/>"
               "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
               " <link name='a'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>\n"
               "  <visual><geometry><mesh filename='view_pyramid.dae'/></geometry></visual></link>\n"
               " <joint name='j2' type='revolute'><parent link='a'/><child link='b'/><origin xyz='1 0 0'/>"
               "<axis xyz='0 1 0'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
               " <link name='b'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>\n"
               "  <visual><geometry><mesh filename='package://meshes_pkg/view_tetra.glb'/></geometry></visual></link>\n"
               "</robot>\n");
    sd_model *m;
    sd_error err = {0};
    CHECK(sd_model_load_file(urdf, NULL, &m, NULL, &err) == SD_OK);
    sd_view_options o;
    sd_view_options_init(&o);
    o.model_path = urdf;
    const sd_status st = sd_view_write_html(m, NULL, &o, html, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "%s\n", err.message);
    write_nbodies(html, m);
    /* world extents: the pyramid 0.4 x 0.4 x 0.3 with its apex up (z); the tetrahedron's file y (0.5)
     * turned to world z, its file z (0.3) to world -y */
    FILE *fp = open_expect(html);
    fputs("{\"mesh_files\":[{\"format\":\"dae\",\"distinct\":5,\"triangles\":6,\"extent\":[0.4,0.4,0.3]},"
          "{\"format\":\"glb\",\"distinct\":4,\"triangles\":4,\"extent\":[0.4,0.3,0.5]}]}\n", fp);
    fclose(fp);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    const char *models = argc > 1 ? argv[1] : "models";
    const char *humanoid = argc > 2 ? argv[2] : "";
    const char *out = argc > 3 ? argv[3] : ".";
    test_csv_round_trip(out);
    test_csv_errors(out);
    test_page_data(out);
    test_urdf_visuals(out);
    test_mjcf_visuals(out);
    test_mesh_resolution(out);
    if (SOADYN_HAS_VIEWER && SOADYN_HAS_IO) {
        char model[4096], html[4096];
        snprintf(model, sizeof(model), "%s/double_pendulum.urdf", models);
        snprintf(html, sizeof(html), "%s/view_double_pendulum.html", out);
        const double dq[1] = {1.2};
        sd_trajectory *tr;
        sd_model *m = write_simulated_page(model, html, 3.0, dq, 1, NULL, 0, &tr);
        sd_trajectory_free(tr);
        sd_model_free(m);
        write_flexible_arm_page(models, out);
        write_four_bar_page(models, out);
        write_spacecraft_page(models, out);
        write_mesh_page(out);
        FILE *fp = fopen(humanoid, "r");
        if (fp) {
            fclose(fp);
            snprintf(html, sizeof(html), "%s/view_humanoid.html", out);
            /* a 2 s fall, tumbling: the free root's angular and linear speed (body axes) */
            const double spin[6] = {1.5, -1.0, 0.5, 0.0, 0.0, 3.0};
            m = write_simulated_page(humanoid, html, 2.0, NULL, 0, spin, 6, &tr);
            sd_trajectory_free(tr);
            sd_model_free(m);
            /* the model keeps at least a fifth of the view's height at the start and at the end */
            fp = open_expect(html);
            fputs("{\"min_height\":0.2}\n", fp);
            fclose(fp);
        } else {
            printf("no humanoid at '%s': its page is not written (the browser test skips it)\n", humanoid);
        }
    } else {
        sd_error err = {0};
        CHECK(sd_view_write_html(NULL, NULL, NULL, "x.html", &err) != SD_OK);
    }
    return test_summary("test_view");
}
