/*
 * tests/io/test_mjcf_semantics.c — the MJCF reader's rules checked without MuJoCo, each against a
 * value worked out by hand: the five orientation forms of one rotation give one placement (degrees
 * and radians, eulerseq with rotating and fixed axes); default classes (inheritance, class= over
 * childclass, the element over both); a body with two joints is a chain whose massless first link
 * is "<body>/<joint>"; a joint's ref folded into the placement (q = MuJoCo's qpos); the reference
 * configuration = MuJoCo's qpos0 (free pose, refs, ball identity), every body at its written pose
 * there and a connect loop closed (open at q = 0), URDF's = neutral; sphere and box
 * masses and inertias from density; settotalmass; a joint equality's coupling ratio and offset
 * from polycoef and the refs; <include> nested in a subfolder resolves against the main file's folder (MuJoCo 2.2.2);
 * the one warning's counts; format detection by content; NULL arguments; <option timestep> kept
 * as the model's time step; the second warning, of attributes read past (torquescale 0 read as a
 * ball joint).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

#define PI 3.14159265358979323846

static sd_model *load(const char *xml)
{
    sd_model *m = NULL;
    sd_error err;
    if (sd_mjcf_load_string(xml, strlen(xml), "inline.xml", &m, &err) != SD_OK) {
        fprintf(stderr, "load failed: %s\n", err.message);
        CHECK(0);
    }
    return m;
}

static void check_orientations(void)
{
    /* a rotation of 90 degrees about z, then of 30 about the new x: R = Rz(90) Rx(30) */
    double Rz[9], Rx[9], R[9];
    const double z[3] = {0, 0, 1}, x[3] = {1, 0, 0};
    sd_m3_axis_angle(z, PI / 2, Rz);
    sd_m3_axis_angle(x, PI / 6, Rx);
    sd_m3_mul(Rz, Rx, R);
    const double c = cos(PI / 12), s = sin(PI / 12), h = sqrt(0.5);
    char quat[200];
    snprintf(quat, sizeof quat, "quat='%.17g %.17g %.17g %.17g'", h * c, h * s, h * s, h * c); /* qz * qx */
    char xy[200];
    snprintf(xy, sizeof xy, "xyaxes='%.17g %.17g %.17g %.17g %.17g %.17g'", R[0], R[3], R[6], R[1], R[4], R[7]);
    const char *forms[] = {quat, xy, "euler='90 30 0' ", "euler='30 0 90'", NULL};
    const char *compilers[] = {"", "", "<compiler eulerseq='zxy'/>", "<compiler eulerseq='XYZ'/>"};
    for (int i = 0; forms[i]; ++i) {
        char xml[1200];
        snprintf(xml, sizeof xml,
                 "<mujoco>%s<worldbody><body name='b' pos='1 2 3' %s><joint name='j'/>"
                 "<geom size='0.1'/></body></worldbody></mujoco>", compilers[i], forms[i]);
        sd_model *m = load(xml);
        if (!m) continue;
        const sd_transform *X = sd_model_placement(m, 0);
        if (!CHECK_ARRAY_CLOSE(X->R, R, 9, 1e-14, "placement rotation")) printf("  form %d: %s\n", i, forms[i]);
        const double p[3] = {1, 2, 3};
        CHECK_ARRAY_CLOSE(X->p, p, 3, 1e-15, "placement position");
        sd_model_free(m);
    }
    /* axisangle in radians; zaxis: the smallest rotation taking z to the given axis */
    sd_model *m = load("<mujoco><compiler angle='radian'/><worldbody>"
                       "<body name='a' axisangle='0 0 2 1.5707963267948966'><joint/><geom size='0.1'/></body>"
                       "<body name='b' zaxis='1 0 0'><joint/><geom size='0.1'/></body></worldbody></mujoco>");
    if (m) {
        CHECK_ARRAY_CLOSE(sd_model_placement(m, sd_model_body_index(m, "a"))->R, Rz, 9, 1e-15, "axisangle");
        double Ry[9];
        const double y[3] = {0, 1, 0};
        sd_m3_axis_angle(y, PI / 2, Ry);
        CHECK_ARRAY_CLOSE(sd_model_placement(m, sd_model_body_index(m, "b"))->R, Ry, 9, 1e-15, "zaxis");
        sd_model_free(m);
    }
}

static void check_classes_and_chain(void)
{
    sd_model *m = load(
        "<mujoco><default><joint damping='1' armature='0.5'/>"
        "  <default class='A'><joint damping='2' stiffness='3'/>"
        "    <default class='B'><joint armature='7'/></default></default></default>"
        "<worldbody><body name='b' childclass='A' pos='0 0 1'>"
        "  <joint name='j1' axis='1 0 0' pos='0 0 0.5' ref='90'/>"
        "  <joint name='j2' class='B' axis='0 1 0' damping='9'/>"
        "  <geom type='sphere' size='0.1'/>"
        "  <body name='c'><joint name='j3' class='main'/><geom type='box' size='0.1 0.2 0.3'/></body>"
        "</body></worldbody></mujoco>");
    if (!m) return;
    const int b1 = sd_model_joint_index(m, "j1"), b2 = sd_model_joint_index(m, "j2"), b3 = sd_model_joint_index(m, "j3");
    CHECK(b1 >= 0 && b2 >= 0 && b3 >= 0);
    CHECK(strcmp(sd_model_body_name(m, b1), "b/j1") == 0);
    CHECK(strcmp(sd_model_body_name(m, b2), "b") == 0);
    CHECK(sd_model_body_mass(m, b1) == 0.0);
    const sd_body_desc *d1 = sd_model_body_desc(m, b1), *d2 = sd_model_body_desc(m, b2),
                       *d3 = sd_model_body_desc(m, b3);
    CHECK(d1->damping == 2 && d1->stiffness == 3 && d1->armature == 0.5); /* class A over main */
    CHECK(d2->damping == 9 && d2->stiffness == 3 && d2->armature == 7);   /* element over B over A */
    CHECK(d3->damping == 1 && d3->stiffness == 0 && d3->armature == 0.5); /* class= over childclass */
    /* j1: anchor 0.5 up, ref folded in: the placement turns by -90 degrees about x */
    const sd_transform *X = sd_model_placement(m, b1);
    const double p1[3] = {0, 0, 1.5};
    CHECK_ARRAY_CLOSE(X->p, p1, 3, 1e-15, "first joint's frame at the anchor");
    CHECK_CLOSE(X->R[5], 1.0, 1e-15); /* Rx(-90): R[1][2] = sin(90) */
    /* j2 sits at the same anchor (pos 0): its frame is j1's moved back by -anchor */
    const double p2[3] = {0, 0, -0.5};
    CHECK_ARRAY_CLOSE(sd_model_placement(m, b2)->p, p2, 3, 1e-15, "second joint's frame");
    /* sphere of radius 0.1 and density 1000; box 0.2 x 0.4 x 0.6 */
    const double ms = 1000 * 4.0 / 3.0 * PI * 1e-3, mb = 1000 * 0.2 * 0.4 * 0.6;
    CHECK_CLOSE(sd_model_body_mass(m, b2), ms, 1e-13);
    CHECK_CLOSE(sd_model_body_inertia(m, b2)[0], 0.4 * ms * 0.01, 1e-13);
    CHECK_CLOSE(sd_model_body_mass(m, b3), mb, 1e-13);
    const double *Ib = sd_model_body_inertia(m, b3);
    CHECK_CLOSE(Ib[0], mb * (0.16 + 0.36) / 12, 1e-13);
    CHECK_CLOSE(Ib[4], mb * (0.04 + 0.36) / 12, 1e-13);
    CHECK_CLOSE(Ib[8], mb * (0.04 + 0.16) / 12, 1e-13);
    /* the last joint j2 turns about the body's origin (pos 0), so the carrier's frame is MuJoCo's
     * body frame and the sphere's centre is at its origin; j3's frame is c's own */
    const double c2[3] = {0, 0, 0};
    CHECK_ARRAY_CLOSE(sd_model_body_com(m, b2), c2, 3, 1e-15, "com in the carrier frame");
    sd_model_free(m);
}

static void check_equality_and_totals(void)
{
    sd_model *m = load(
        "<mujoco><compiler settotalmass='10'/><worldbody>"
        "<body name='a'><joint name='x' ref='20'/><geom size='0.1'/>"
        "<body name='b' pos='1 0 0'><joint name='y' ref='10'/><geom size='0.2'/></body></body>"
        "</worldbody><equality><joint name='e' joint1='x' joint2='y' polycoef='0.1 2 0 0 0'/></equality>"
        "<actuator><motor joint='x'/><motor joint='y'/></actuator><tendon><fixed><joint joint='x' coef='1'/></fixed>"
        "</tendon></mujoco>");
    if (!m) return;
    CHECK_CLOSE(sd_model_total_mass(m), 10.0, 1e-13);
    CHECK(sd_model_nconstraints(m) == 1);
    /* q1 - ref1 = 0.1 + 2 (q2 - ref2): at q2 = ref2 the coupling's residual is q1 - ref1 - 0.1 */
    sd_data *d = sd_data_new(m);
    const double k = PI / 180;
    double q[2] = {20 * k + 0.1, 10 * k}, r = 1;
    CHECK(sd_constraint_residuals(m, d, q, NULL, &r, NULL) == SD_OK);
    CHECK(fabs(r) < 1e-15);
    q[1] += 0.3;
    q[0] += 0.6;
    CHECK(sd_constraint_residuals(m, d, q, NULL, &r, NULL) == SD_OK);
    CHECK(fabs(r) < 1e-15);
    sd_data_free(d);
    CHECK(sd_model_nwarnings(m) == 1);
    if (sd_model_nwarnings(m) == 1) {
        const char *w = sd_model_warning(m, 0);
        CHECK(strstr(w, "2 contact geoms") && strstr(w, "1 tendons") && strstr(w, "2 actuators"));
    }
    sd_model_free(m);
}

/* The reference configuration is MuJoCo's qpos0: a free body's written world pose, each hinge's
 * and slide's ref (in radians), identity ball quaternions; at it every body sits at its written
 * pose (checked by hand below), so a connect loop drawn closed in the file is closed there and
 * open at q = 0. A URDF model's reference configuration is its neutral one. */
static void check_reference_configuration(void)
{
    sd_model *m = load(
        "<mujoco><compiler angle='degree'/><worldbody>"
        "<body name='base' pos='0.1 0.2 1' euler='0 0 90'><freejoint name='root'/><geom size='0.1'/>"
        "  <body name='arm' pos='0 0 -0.1'><joint name='sh' axis='0 1 0' ref='30'/>"
        "    <geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.02'/>"
        "    <body name='slider' pos='0.5 0 0'><joint name='sl' type='slide' axis='1 0 0' ref='0.2'/>"
        "      <geom size='0.03'/>"
        "      <body name='wrist' pos='0 0 -0.3'><joint name='wr' type='ball'/><geom size='0.03'/></body>"
        "    </body>"
        "  </body>"
        "  <body name='link2' pos='0.5 0 -0.4'><joint name='el' axis='0 1 0' ref='-60'/>"
        "    <geom type='capsule' fromto='0 0 0 0 0 0.1' size='0.02'/></body>"
        "</body></worldbody>"
        "<equality><connect body1='wrist' body2='link2' anchor='0 0 0'/></equality></mujoco>");
    if (!m) return;
    const int nq = sd_model_nq(m);
    CHECK(nq == 7 + 1 + 1 + 4 + 1);
    double q[16], z[16];
    for (int i = 0; i < 16; ++i) q[i] = z[i] = 123.0;
    sd_configuration_reference(m, q);
    sd_configuration_neutral(m, z);
    const double k = PI / 180, s45 = sqrt(0.5);
    const double root[7] = {0.1, 0.2, 1, s45, 0, 0, s45};
    CHECK_ARRAY_CLOSE(q + sd_model_q_index(m, sd_model_joint_index(m, "root")), root, 7, 1e-15, "free joint qpos0");
    CHECK_CLOSE(q[sd_model_q_index(m, sd_model_joint_index(m, "sh"))], 30 * k, 1e-15);
    CHECK_CLOSE(q[sd_model_q_index(m, sd_model_joint_index(m, "sl"))], 0.2, 1e-15);
    CHECK_CLOSE(q[sd_model_q_index(m, sd_model_joint_index(m, "el"))], -60 * k, 1e-15);
    const double ball[4] = {1, 0, 0, 0};
    CHECK_ARRAY_CLOSE(q + sd_model_q_index(m, sd_model_joint_index(m, "wr")), ball, 4, 0, "ball qpos0");
    /* at it the wrist is at its written place: base (0.1, 0.2, 1) turned 90 degrees about z, then
     * (0.5, 0, -0.4) in the base frame -> world (0.1, 0.7, 0.6); so is link2's origin, where the
     * loop closes */
    sd_data *d = sd_data_new(m);
    sd_transform X;
    CHECK(sd_kinematics(m, d, q, NULL, NULL) == SD_OK);
    const double wrist[3] = {0.1, 0.7, 0.6};
    CHECK(sd_body_placement_world(m, d, sd_model_body_index(m, "wrist"), &X) == SD_OK);
    CHECK_ARRAY_CLOSE(X.p, wrist, 3, 1e-15, "wrist at its written place");
    const double Rz90[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
    CHECK_ARRAY_CLOSE(X.R, Rz90, 9, 1e-15, "wrist's written orientation");
    CHECK(sd_body_placement_world(m, d, sd_model_body_index(m, "link2"), &X) == SD_OK);
    CHECK_ARRAY_CLOSE(X.p, wrist, 3, 1e-15, "link2 at its written place");
    double r[3], rz[3];
    CHECK(sd_constraint_residuals(m, d, q, NULL, r, NULL) == SD_OK);
    CHECK(sd_constraint_residuals(m, d, z, NULL, rz, NULL) == SD_OK);
    const double closed = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double open = sqrt(rz[0] * rz[0] + rz[1] * rz[1] + rz[2] * rz[2]);
    printf("connect loop: residual %.2e at the reference configuration, %.3f m at q = 0\n", closed, open);
    CHECK(closed <= 1e-15);
    CHECK(open > 0.1);
    sd_data_free(d);
    sd_model_free(m);
    /* URDF: the reference configuration is the neutral one */
    static const char urdf[] =
        "<robot name='r'><link name='a'/><link name='b'><inertial><mass value='1'/>"
        "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
        "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
        "<limit lower='0.5' upper='1' effort='1' velocity='1'/></joint></robot>";
    sd_error err;
    CHECK(sd_urdf_load_string(urdf, strlen(urdf), "inline.urdf", NULL, &m, &err) == SD_OK);
    if (m) {
        q[0] = 123.0;
        sd_configuration_reference(m, q);
        CHECK(sd_model_nq(m) == 1 && q[0] == 0.0);
        sd_model_free(m);
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void check_include_and_detection(void)
{
    char dir[] = "/tmp/soadyn_mjcf_inc_XXXXXX", p[300], sub[300], a[300], b[300];
    if (!mkdtemp(dir)) return;
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    snprintf(p, sizeof p, "%s/main.xml", dir);
    snprintf(a, sizeof a, "%s/sub/a.xml", dir);
    snprintf(b, sizeof b, "%s/sub/b.xml", dir);
    write_text(p, "<?xml version='1.0'?>\n<!-- a comment -->\n<mujoco><worldbody><include file='sub/a.xml'/></worldbody></mujoco>\n");
    write_text(a, "<mujoco><body name='a'><joint/><geom size='0.1'/><include file='sub/b.xml'/></body></mujoco>\n");
    write_text(b, "<mujoco>\n<body name='b'>\n<joint type='screw'/></body></mujoco>\n");
    sd_model *m = NULL;
    sd_error err;
    sd_model_format f = SD_FORMAT_UNKNOWN;
    CHECK(sd_model_load_file(p, NULL, &m, &f, &err) == SD_E_PARSE);
    CHECK(f == SD_FORMAT_MJCF);
    /* sub/a.xml's include is resolved against main.xml's folder, as MuJoCo 2.2.2 does */
    CHECK(strstr(err.message, "sub/b.xml:3:") != NULL); /* the included file's own line */
    write_text(b, "<mujoco><body name='b'><joint/><geom size='0.1'/></body></mujoco>\n");
    CHECK(sd_model_load_file(p, NULL, &m, &f, &err) == SD_OK);
    CHECK(m && sd_model_nv(m) == 2 && sd_model_body_index(m, "b") >= 0);
    sd_model_free(m);
    remove(a);
    remove(b);
    remove(p);
    rmdir(sub);
    rmdir(dir);
    const char *urdf = "\xEF\xBB\xBF<?xml version='1.0'?><!DOCTYPE robot><!-- <mujoco> --><robot name='r'/>";
    CHECK(sd_model_detect_format(urdf, strlen(urdf)) == SD_FORMAT_URDF);
    CHECK(sd_model_detect_format("<sdf version='1.7'>", 19) == SD_FORMAT_SDF);
    CHECK(sd_model_detect_format("<mujoco/>", 9) == SD_FORMAT_MJCF);
    CHECK(sd_model_detect_format("<robots/>", 9) == SD_FORMAT_UNKNOWN);
    CHECK(sd_model_detect_format("<!-- unterminated", 17) == SD_FORMAT_UNKNOWN);
    CHECK(sd_model_detect_format(NULL, 3) == SD_FORMAT_UNKNOWN);
    CHECK(strcmp(sd_model_format_name(SD_FORMAT_MJCF), "mjcf") == 0);
    CHECK(sd_mjcf_load_string(NULL, 0, NULL, &m, &err) == SD_E_ARGUMENT);
    CHECK(sd_mjcf_load_file(NULL, &m, &err) == SD_E_ARGUMENT);
    CHECK(sd_model_load_file("/nonexistent/x.xml", NULL, &m, NULL, &err) == SD_E_IO);
}

/* <option timestep> is kept as the model's time step (simulate's default dt); none: 0; a bad one is
 * refused at its line. */
static void check_timestep(void)
{
    sd_model *m = load("<mujoco><option timestep='0.0025'/><worldbody><body name='b'><joint/><geom size='0.1'/>"
                       "</body></worldbody></mujoco>");
    CHECK(m && sd_model_time_step(m) == 0.0025);
    sd_model_free(m);
    m = load("<mujoco><worldbody><body name='b'><joint/><geom size='0.1'/></body></worldbody></mujoco>");
    CHECK(m && sd_model_time_step(m) == 0.0);
    sd_model_free(m);
    static const char bad[] = "<mujoco>\n<option timestep='-0.001'/><worldbody/></mujoco>";
    sd_error err;
    m = NULL;
    CHECK(sd_mjcf_load_string(bad, sizeof bad - 1, "bad.xml", &m, &err) == SD_E_PARSE && m == NULL);
    CHECK(strstr(err.message, "bad.xml:2: <option timestep=\"-0.001\">") != NULL);
}

/* Attributes soadyn reads past are named in the model's second warning, with their counts (default
 * classes included); a weld's torquescale 0 is read (a ball joint), so not listed. */
static void check_ignored_attributes(void)
{
    sd_model *m = load("<mujoco><compiler balanceinertia='true'/>"
                       "<option viscosity='2e-5' density='0'><flag equality='disable'/></option>"
                       "<default><joint springdamper='0.1 1'/><equality solref='0.01 1'/></default><worldbody>"
                       "<body name='a'><joint name='ja'/><geom size='0.1' fluidshape='ellipsoid'/></body>"
                       "<body name='b' pos='1 0 0'><freejoint/><geom size='0.1'/></body>"
                       "<body name='c' pos='2 0 0'><freejoint/><geom size='0.1'/></body></worldbody>"
                       "<equality><weld body1='a' body2='b' torquescale='0' solimp='0.9 0.95 0.001'/>"
                       "<weld body1='a' body2='c' torquescale='2'/></equality></mujoco>");
    const char *w = NULL;
    for (size_t i = 0; m && i < sd_model_nwarnings(m); ++i)
        if (strstr(sd_model_warning(m, i), "MJCF attributes")) w = sd_model_warning(m, i);
    CHECK(w != NULL);
    static const char *const named[] = {"1 <option viscosity> (fluid forces)", "1 <flag equality>",
                                        "1 <compiler balanceinertia>", "1 <joint springdamper>",
                                        "1 <geom fluidshape>", "1 <equality solref>", "1 <equality solimp>",
                                        "1 <weld torquescale>"};
    for (size_t i = 0; w && i < sizeof named / sizeof named[0]; ++i) {
        const int ok = strstr(w, named[i]) != NULL;
        if (!ok) fprintf(stderr, "warning lacks '%s': %s\n", named[i], w);
        CHECK(ok);
    }
    CHECK(w && strstr(w, "density") == NULL); /* at its default: nothing to say */
    CHECK(m && sd_model_constraint_type(m, 0) == SD_CONSTRAINT_BALL && sd_model_constraint_type(m, 1) == SD_CONSTRAINT_WELD);
    if (w) printf("%s\n", w);
    sd_model_free(m);
}

int main(void)
{
    check_orientations();
    check_classes_and_chain();
    check_equality_and_totals();
    check_reference_configuration();
    check_include_and_detection();
    check_timestep();
    check_ignored_attributes();
    return test_summary("test_mjcf_semantics");
}
