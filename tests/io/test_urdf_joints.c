/*
 * tests/io/test_urdf_joints.c — what the URDF loader makes of each joint type (revolute,
 * continuous, prismatic, fixed, floating, planar), of axes (normalised, default x), origins and
 * rotated inertial frames, of limits, dynamics and mimic tags (kept in the body descriptions, and a
 * coupling constraint q = r q(J) + c, or independent joints with a warning under
 * mimic_independent), of the root (a "world" link, floating_base) and of elements it must ignore.
 */
#include <math.h>
#include <string.h>

#include <soadyn/loops.h>
#include <soadyn/model.h>
#include <soadyn/urdf.h>

#include "test_util.h"

static sd_model *load_with(const char *xml, const sd_urdf_options *opt)
{
    sd_model *m = NULL;
    sd_error err;
    sd_status st = sd_urdf_load_string(xml, strlen(xml), "joints.urdf", opt, &m, &err);
    if (st != SD_OK) fprintf(stderr, "load failed: %s\n", err.message);
    CHECK(st == SD_OK && m != NULL);
    return m;
}

static sd_model *load(const char *xml, int floating, int keep_fixed)
{
    const sd_urdf_options opt = {.floating_base = floating, .keep_fixed_joints = keep_fixed};
    return load_with(xml, &opt);
}

#define INERTIAL(m) "<inertial><mass value='" m "'/><inertia ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'/></inertial>"

static const char *const joints_urdf =
    "<robot name='joints' xmlns:xacro='http://www.ros.org/wiki/xacro' xmlns:drake='http://drake.mit.edu'>\n"
    " <xacro:property name='unused' value='1'/>\n"
    " <link name='world'/>\n"
    " <joint name='float' type='floating'><parent link='world'/><child link='base'/></joint>\n"
    " <link name='base'><inertial><origin xyz='0.1 0.2 0.3' rpy='0 0 1.5707963267948966'/><mass value='3'/>"
    "  <inertia ixx='1' ixy='0' ixz='0' iyy='2' iyz='0' izz='3'/></inertial>"
    "  <visual><geometry><box size='1 1 1'/></geometry></visual></link>\n"
    " <joint name='hinge' type='continuous'><parent link='base'/><child link='arm'/>"
    "  <origin xyz='1 2 3' rpy='0.1 0.2 0.3'/><axis xyz='0 0 2'/><limit effort='7' velocity='8'/>"
    "  <dynamics damping='0.25' friction='0.5'/><safety_controller k_velocity='1'/>"
    "  <soadyn:spring stiffness='12' reference='0.4'/></joint>\n"
    " <link name='arm'>" INERTIAL("1") "</link>\n"
    " <joint name='slider' type='prismatic'><parent link='arm'/><child link='carriage'/><axis xyz='1 1 0'/>"
    "  <limit lower='-0.5' upper='0.25' effort='100' velocity='2'/><dynamics damping='3'/>"
    "  <soadyn:spring stiffness='300'/></joint>\n"
    " <link name='carriage'>" INERTIAL("1") "</link>\n"
    " <joint name='plane' type='planar'><parent link='base'/><child link='puck'/><axis xyz='0 0 3'/></joint>\n"
    " <link name='puck'>" INERTIAL("1") "</link>\n"
    " <joint name='leader' type='revolute'><parent link='base'/><child link='flap'/>"
    "  <limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
    " <link name='flap'>" INERTIAL("1") "</link>\n"
    " <joint name='follower' type='revolute'><parent link='base'/><child link='flap2'/><axis xyz='0 1 0'/>"
    "  <limit lower='-1' upper='1' effort='1' velocity='1'/><mimic joint='leader' multiplier='-2' offset='0.5'/></joint>\n"
    " <link name='flap2'>" INERTIAL("1") "</link>\n"
    " <gazebo reference='base'><mu1>0.2</mu1></gazebo>\n"
    " <transmission name='t'><joint name='hinge'><hardwareInterface>x</hardwareInterface></joint></transmission>\n"
    " <drake:joint name='ghost' type='ball'><parent link='base'/><child link='nowhere'/></drake:joint>\n"
    " <sensor name='imu'/>\n"
    "</robot>\n";

static const sd_body_desc *desc_of(const sd_model *m, const char *joint)
{
    const int k = sd_model_joint_index(m, joint);
    CHECK(k >= 0);
    return k >= 0 ? sd_model_body_desc(m, k) : NULL;
}

static void check_types_and_axes(const sd_model *m)
{
    CHECK(sd_model_nbodies(m) == 6);
    CHECK(sd_model_nq(m) == 7 + 1 + 1 + 3 + 1 + 1);
    CHECK(sd_model_nv(m) == 6 + 1 + 1 + 3 + 1 + 1);
    static const struct { const char *joint; sd_hinge_type hinge; double axis[3]; } expect[] = {
        {"float", SD_HINGE_FREE, {0, 0, 0}},
        {"hinge", SD_HINGE_REVOLUTE, {0, 0, 1}},
        {"slider", SD_HINGE_PRISMATIC, {0.70710678118654752, 0.70710678118654752, 0}},
        {"plane", SD_HINGE_PLANAR, {0, 0, 1}},
        {"leader", SD_HINGE_REVOLUTE, {1, 0, 0}}, /* URDF's default axis */
        {"follower", SD_HINGE_REVOLUTE, {0, 1, 0}},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; ++i) {
        const int k = sd_model_joint_index(m, expect[i].joint);
        CHECK(k >= 0);
        if (k < 0) continue;
        CHECK(sd_model_hinge(m, k) == expect[i].hinge);
        if (expect[i].hinge != SD_HINGE_FREE) CHECK_ARRAY_CLOSE(sd_model_axis(m, k), expect[i].axis, 3, 1e-15, expect[i].joint);
    }
    CHECK(sd_model_hinge_nq(m, sd_model_joint_index(m, "plane")) == 3);
    CHECK(sd_model_hinge_nq(m, sd_model_joint_index(m, "float")) == 7);
}

static void check_limits_dynamics_mimic(const sd_model *m)
{
    const sd_body_desc *h = desc_of(m, "hinge"), *s = desc_of(m, "slider"), *f = desc_of(m, "follower");
    if (h == NULL || s == NULL || f == NULL) return;
    CHECK(h->has_limits == 0); /* continuous */
    CHECK(h->effort_limit == 7 && h->velocity_limit == 8);
    CHECK(h->damping == 0.25 && h->friction == 0.5);
    CHECK(s->has_limits == 1 && s->lower == -0.5 && s->upper == 0.25);
    CHECK(s->effort_limit == 100 && s->velocity_limit == 2 && s->damping == 3);
    /* soadyn's <soadyn:spring>: the hinge's from its rest angle, the slider's from 0 (the default) */
    CHECK(h->stiffness == 12 && h->spring_ref == 0.4);
    CHECK(s->stiffness == 300 && s->spring_ref == 0);
    CHECK(f->stiffness == 0 && f->spring_ref == 0);
    CHECK(f->mimic_joint != NULL && strcmp(f->mimic_joint, "leader") == 0);
    CHECK(f->mimic_multiplier == -2 && f->mimic_offset == 0.5);
    CHECK(h->mimic_joint == NULL);
    CHECK(h->source_file != NULL && strcmp(h->source_file, "joints.urdf") == 0 && h->source_line > 0);
    /* the mimic is a coupling q(follower) = -2 q(leader) + 0.5 named after the joint; no warning */
    CHECK(sd_model_nwarnings(m) == 0);
    CHECK(sd_model_nconstraints(m) == 1 && sd_model_nconstraint_rows(m) == 1);
    const int c = sd_model_constraint_index(m, "follower");
    CHECK(c == 0 && sd_model_constraint_type(m, c) == SD_CONSTRAINT_COUPLING);
    int a = -2, b = -2;
    CHECK(sd_model_constraint_bodies(m, c, &a, &b) == SD_OK);
    CHECK(a == sd_model_joint_index(m, "follower") && b == sd_model_joint_index(m, "leader"));
    double q[64] = {0}, pos[1];
    sd_data *d = sd_data_new(m);
    CHECK(d != NULL && sd_model_nq(m) <= 64);
    if (d == NULL || sd_model_nq(m) > 64) return;
    sd_configuration_neutral(m, q);
    q[sd_model_q_index(m, b)] = 0.3;
    q[sd_model_q_index(m, a)] = -2 * 0.3 + 0.5;
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK && fabs(pos[0]) < 1e-15);
    q[sd_model_q_index(m, a)] += 0.25;
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK && fabs(pos[0] - 0.25) < 1e-15);
    /* the springs act: 1/2 12 (1 - 0.4)^2 + 1/2 300 0.1^2 = 3.66 J */
    double springs = 0.0;
    q[sd_model_q_index(m, sd_model_joint_index(m, "hinge"))] = 1.0;
    q[sd_model_q_index(m, sd_model_joint_index(m, "slider"))] = 0.1;
    CHECK(sd_spring_energy(m, d, q, &springs) == SD_OK && fabs(springs - 3.66) < 1e-14);
    sd_data_free(d);
}

/* mimic_independent: the mimic joint is an independent joint, one warning names it, no constraint. */
static void check_mimic_independent(void)
{
    const sd_urdf_options opt = {.mimic_independent = 1};
    sd_model *m = load_with(joints_urdf, &opt);
    if (m == NULL) return;
    CHECK(sd_model_nconstraints(m) == 0 && sd_model_nv(m) == 6 + 1 + 1 + 3 + 1 + 1);
    CHECK(sd_model_nwarnings(m) == 1);
    if (sd_model_nwarnings(m) >= 1) {
        const char *w = sd_model_warning(m, 0);
        CHECK(strstr(w, "mimic") != NULL && strstr(w, "'follower'") != NULL && strstr(w, "joints.urdf") != NULL);
    }
    sd_model_free(m);
}

static void check_origins_and_inertials(const sd_model *m)
{
    const int arm = sd_model_body_index(m, "arm"), base = sd_model_body_index(m, "base");
    CHECK(arm >= 0 && base >= 0);
    if (arm < 0 || base < 0) return;
    double R[9];
    sd_m3_rpy(0.1, 0.2, 0.3, R);
    const double p[3] = {1, 2, 3};
    CHECK_ARRAY_CLOSE(sd_model_placement(m, arm)->R, R, 9, 1e-15, "hinge origin rpy");
    CHECK_ARRAY_CLOSE(sd_model_placement(m, arm)->p, p, 3, 1e-15, "hinge origin xyz");
    CHECK(sd_model_parent(m, base) == -1); /* "world" is the inertial frame, not a body */
    /* inertial rotated by yaw pi/2: I_link = R diag(1, 2, 3) R^T = diag(2, 1, 3) */
    const double I[9] = {2, 0, 0, 0, 1, 0, 0, 0, 3}, c[3] = {0.1, 0.2, 0.3};
    CHECK_ARRAY_CLOSE(sd_model_body_inertia(m, base), I, 9, 1e-15, "rotated inertia");
    CHECK_ARRAY_CLOSE(sd_model_body_com(m, base), c, 3, 1e-15, "com");
    CHECK(sd_model_body_mass(m, base) == 3);
    CHECK(sd_model_name(m) != NULL && strcmp(sd_model_name(m), "joints") == 0);
}

/* The root: "world" welded to a body, or a plain root link; fixed or floating. */
static void check_roots(void)
{
    const char *world_root =
        "<robot name='r'><link name='world'/>"
        "<joint name='weld' type='fixed'><parent link='world'/><child link='base'/><origin xyz='0 0 1'/></joint>"
        "<link name='base'>" INERTIAL("2") "</link>"
        "<joint name='j' type='revolute'><parent link='base'/><child link='l1'/><axis xyz='0 1 0'/></joint>"
        "<link name='l1'>" INERTIAL("1") "</link></robot>";
    const char *plain_root =
        "<robot name='r'><link name='base'/>"
        "<joint name='j' type='continuous'><parent link='base'/><child link='l1'/></joint>"
        "<link name='l1'>" INERTIAL("1") "</link></robot>";
    for (int keep = 0; keep <= 1; ++keep) {
        sd_model *fixed = load(world_root, 0, keep), *floating = load(world_root, 1, keep);
        if (fixed != NULL && floating != NULL) {
            const int b = sd_model_body_index(fixed, "base");
            CHECK(sd_model_nbodies(fixed) == 2 && sd_model_nv(fixed) == 1);
            CHECK(b >= 0 && sd_model_hinge(fixed, b) == SD_HINGE_FIXED && sd_model_parent(fixed, b) == -1);
            CHECK(b >= 0 && sd_model_placement(fixed, b)->p[2] == 1.0);
            const int fb = sd_model_body_index(floating, "base");
            CHECK(fb >= 0 && sd_model_hinge(floating, fb) == SD_HINGE_FREE);
            CHECK(sd_model_nv(floating) == 7 && sd_model_nq(floating) == 8);
        }
        sd_model_free(fixed);
        sd_model_free(floating);
    }
    sd_model *fixed = load(plain_root, 0, 0), *floating = load(plain_root, 1, 0);
    if (fixed != NULL && floating != NULL) {
        CHECK(sd_model_nbodies(fixed) == 2 && sd_model_nv(fixed) == 1);
        CHECK(sd_model_hinge(fixed, sd_model_body_index(fixed, "base")) == SD_HINGE_FIXED);
        CHECK(sd_model_hinge(floating, sd_model_body_index(floating, "base")) == SD_HINGE_FREE);
        CHECK(sd_model_nv(floating) == 7);
        CHECK(sd_model_body_mass(fixed, sd_model_body_index(fixed, "base")) == 0.0); /* no <inertial> */
        CHECK(sd_model_nwarnings(fixed) == 0);
    }
    sd_model_free(fixed);
    sd_model_free(floating);
}

int main(void)
{
    sd_model *m = load(joints_urdf, 0, 0);
    if (m != NULL) {
        check_types_and_axes(m);
        check_limits_dynamics_mimic(m);
        check_origins_and_inertials(m);
    }
    sd_model_free(m);
    check_mimic_independent();
    check_roots();
    return test_summary("test_urdf_joints");
}
