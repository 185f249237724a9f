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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/config.h>
#include <soadyn/soadyn.h>

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
    CHECK(sd_view_read_visuals(m, urdf, &vs, &err) == SD_OK);
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
    CHECK(sd_view_read_visuals(m, path, &vs, &err) == SD_OK);
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

/* ---------------------------------------------------------------- pages for the browser tests */

static int keep_sample(void *user, const sd_sim_sample *s)
{
    return sd_trajectory_append(user, s) != SD_OK;
}

/* Simulate the model from neutral q with q[0] = q0 and u[0..nu) = u0 (RK4, 1 ms, every 10th step
 * kept), write its page with inter-body forces, and the body count beside it for the browser test. */
static void write_simulated_page(const char *model_path, const char *html, double duration, double q0,
                                 const double *u0, int nu)
{
    sd_model *m;
    sd_error err = {0};
    if (sd_model_load_file(model_path, NULL, &m, NULL, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        CHECK(0);
        return;
    }
    const int nq = sd_model_nq(m), nv = sd_model_nv(m);
    double *q = calloc((size_t)nq, sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
    sd_configuration_reference(m, q); /* the humanoid stands where the file puts it */
    q[0] += q0;
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
    o.show_forces = 1;
    const sd_status s = sd_view_write_html(m, tr, &o, html, &err);
    CHECK(s == SD_OK);
    if (s != SD_OK) fprintf(stderr, "%s\n", err.message);
    char count[4096];
    snprintf(count, sizeof(count), "%s.nbodies", html);
    FILE *fp = fopen(count, "w");
    fprintf(fp, "%d\n", sd_model_nbodies(m));
    fclose(fp);
    printf("wrote %s: %d bodies, %zu samples\n", html, sd_model_nbodies(m), sd_trajectory_length(tr));
    sd_trajectory_free(tr);
    free(q);
    free(u);
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
    if (SOADYN_HAS_VIEWER && SOADYN_HAS_IO) {
        char model[4096], html[4096];
        snprintf(model, sizeof(model), "%s/double_pendulum.urdf", models);
        snprintf(html, sizeof(html), "%s/view_double_pendulum.html", out);
        write_simulated_page(model, html, 3.0, 1.2, NULL, 0);
        FILE *fp = fopen(humanoid, "r");
        if (fp) {
            fclose(fp);
            snprintf(html, sizeof(html), "%s/view_humanoid.html", out);
            /* tumbling in free fall: the free root's angular and linear speed (body axes) */
            const double spin[6] = {1.5, -1.0, 0.5, 0.0, 0.0, 3.0};
            write_simulated_page(humanoid, html, 1.0, 0.0, spin, 6);
        } else {
            printf("no humanoid at '%s': its page is not written (the browser test skips it)\n", humanoid);
        }
    } else {
        sd_error err = {0};
        CHECK(sd_view_write_html(NULL, NULL, NULL, "x.html", &err) != SD_OK);
    }
    return test_summary("test_view");
}
