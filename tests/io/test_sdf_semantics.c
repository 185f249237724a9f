/*
 * tests/io/test_sdf_semantics.c — what the SDF reader makes of SDF's frame semantics, against a
 * model the test builds itself with the builder from poses it composes by hand (rpy as
 * Rz(yaw) Ry(pitch) Rx(roll), the SDF specification's convention):
 *   - a chain welded to the world under a model <pose>, with a <frame> on the base link that the
 *     next link is placed relative_to, an axis expressed_in the model frame, a joint <pose> away
 *     from its child link's origin (so the body frame is the joint's), inertials with rotated
 *     poses and full inertia matrices, revolute, prismatic, universal and ball joints, and a
 *     fixed joint whose link is lumped;
 *   - the same chain inside a nested model placed by its own <pose>, floating (no joint to
 *     world), names scoped "arm::...";
 *   - keep_fixed_joints and fixed_base; the <frame> kept as a model frame on its link's body;
 *   - a four-bar closed in the file: breadth-first from the world, the continuous joint whose
 *     child already has a parent becomes a REVOLUTE constraint, closed at the file's configuration,
 *     rank 2 (planar), mobility 1;
 *   - a ball joint's <axis><dynamics>: damping on its three speeds in the tree, and named in the
 *     warning of what a ball loop joint drops.
 * M and C are compared at 20 random states to 1e-12 (relative), joints matched by name.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <soadyn/loops.h>
#include <soadyn/sdf.h>

#include "io/model_compare.h"
#include "test_util.h"

static sd_transform pose(double x, double y, double z, double r, double p, double yw)
{
    sd_transform X;
    sd_m3_rpy(r, p, yw, X.R);
    X.p[0] = x;
    X.p[1] = y;
    X.p[2] = z;
    return X;
}

static sd_transform mul(sd_transform a, sd_transform b)
{
    sd_transform out;
    sd_transform_compose(&a, &b, &out);
    return out;
}

static sd_transform inv(sd_transform a)
{
    sd_transform out;
    sd_transform_inverse(&a, &out);
    return out;
}

/* A body of the reference: link inertial (mass, inertia about the inertial frame's axes, the inertial
 * frame in the link frame X_L_I), the link frame in the body frame X_B_L. */
static void set_inertial(sd_body_desc *d, double m, const double I[9], sd_transform X_B_L, sd_transform X_L_I)
{
    const sd_transform X = mul(X_B_L, X_L_I);
    double T[9];
    d->mass = m;
    memcpy(d->com, X.p, sizeof d->com);
    sd_m3_mul(X.R, I, T);
    sd_m3_mul_t(T, X.R, d->inertia);
}

static const double I1[9] = {0.3, 0.01, -0.02, 0.01, 0.25, 0.03, -0.02, 0.03, 0.1};
static const double I2[9] = {0.05, 0, 0.004, 0, 0.06, 0, 0.004, 0, 0.02};
static const double I3[9] = {0.02, 0.001, 0, 0.001, 0.03, 0, 0, 0, 0.025};

#define INERTIAL(pose_text, mass, I)                                                                               \
    "<inertial><pose>" pose_text "</pose><mass>" mass "</mass><inertia><ixx>" I "</inertia></inertial>"
#define INERTIA1 "0.3</ixx><ixy>0.01</ixy><ixz>-0.02</ixz><iyy>0.25</iyy><iyz>0.03</iyz><izz>0.1</izz>"
#define INERTIA2 "0.05</ixx><ixy>0</ixy><ixz>0.004</ixz><iyy>0.06</iyy><iyz>0</iyz><izz>0.02</izz>"
#define INERTIA3 "0.02</ixx><ixy>0.001</ixy><ixz>0</ixz><iyy>0.03</iyy><iyz>0</iyz><izz>0.025</izz>"

/* The chain's links and joints; ROOT_JOINT welds base to world (or nothing: floating). */
#define CHAIN(ROOT_JOINT)                                                                                          \
    "    <link name=\"base\"><pose>0 0 0.5 0 0 0.4</pose>" INERTIAL("0.1 0 0 0 0 0", "4", INERTIA1) "</link>\n"    \
    ROOT_JOINT                                                                                                     \
    "    <frame name=\"shoulder\" attached_to=\"base\"><pose relative_to=\"base\">0.1 0 0.2 0 0.5 0</pose></frame>\n" \
    "    <link name=\"l1\"><pose relative_to=\"shoulder\">0 0 0 0 0 0</pose>"                                      \
    INERTIAL("0.1 0.02 -0.3 0.3 0 0.2", "2", INERTIA2) "</link>\n"                                                  \
    "    <joint name=\"j1\" type=\"revolute\"><parent>base</parent><child>l1</child>"                              \
    "<axis><xyz expressed_in=\"__model__\">0 1 0</xyz></axis></joint>\n"                                            \
    "    <link name=\"l2\"><pose relative_to=\"l1\">0 0 -0.6 0.2 0 0</pose>"                                      \
    INERTIAL("0 0.1 0 0 0.4 0", "1.5", INERTIA3) "</link>\n"                                                        \
    "    <joint name=\"j2\" type=\"prismatic\"><pose>0 0.05 0.1 0 0 0.3</pose><parent>l1</parent><child>l2</child>" \
    "<axis><xyz>1 0 0</xyz></axis></joint>\n"                                                                        \
    "    <link name=\"l3\"><pose relative_to=\"l2\">0.3 0 0 0 -0.3 0</pose>"                                      \
    INERTIAL("0 0 0.1 0.1 0.2 0.3", "1", INERTIA2) "</link>\n"                                                      \
    "    <joint name=\"j3\" type=\"universal\"><parent>l2</parent><child>l3</child>"                               \
    "<axis><xyz>0 0 1</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>\n"                                        \
    "    <link name=\"l4\"><pose relative_to=\"l3\">0 0 0.4 0 0 0</pose>"                                          \
    INERTIAL("0 0 0.05 0 0 0", "0.8", INERTIA3) "</link>\n"                                                         \
    "    <joint name=\"j4\" type=\"ball\"><pose>0 0 -0.02 0 0 0</pose><parent>l3</parent><child>l4</child></joint>\n" \
    "    <link name=\"tip\"><pose relative_to=\"l4\">0 0.1 0.2 0.5 0 0</pose>"                                     \
    INERTIAL("0.01 0 0 0 0 0", "0.3", INERTIA2) "</link>\n"                                                         \
    "    <joint name=\"tool\" type=\"fixed\"><parent>l4</parent><child>tip</child></joint>\n"

static const char welded[] =
    "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"chain\">\n"
    "    <pose>1 2 3 0.1 0.2 0.3</pose>\n" CHAIN(
        "    <joint name=\"weld\" type=\"fixed\"><parent>world</parent><child>base</child></joint>\n")
    "  </model>\n</sdf>\n";

static const char nested[] =
    "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"outer\">\n"
    "    <model name=\"arm\">\n    <pose>0.5 -1 0.2 0 0.3 1.0</pose>\n" CHAIN("") "    </model>\n"
    "  </model>\n</sdf>\n";

/* The reference, built by hand: X_W_M the model frame in the world; prefix scopes the names; free:
 * the base floats on a hinge named "<base>_root"; keep: the tip is a fixed body of its own. */
static sd_model *reference(sd_transform X_W_M, const char *prefix, int free_base, int keep)
{
    char names[8][64];
    static const char *const base_names[8] = {"base", "l1", "l2", "l3", "l4", "tip", "weld", "base_root"};
    for (int i = 0; i < 8; ++i) snprintf(names[i], sizeof names[i], "%s%s", prefix, base_names[i]);
    char jn[5][64];
    static const char *const joint_names[5] = {"j1", "j2", "j3", "j4", "tool"};
    for (int i = 0; i < 5; ++i) snprintf(jn[i], sizeof jn[i], "%s%s", prefix, joint_names[i]);
    /* link frames in M */
    const sd_transform L0 = pose(0, 0, 0.5, 0, 0, 0.4);
    const sd_transform L1 = mul(mul(L0, pose(0.1, 0, 0.2, 0, 0.5, 0)), pose(0, 0, 0, 0, 0, 0));
    const sd_transform L2 = mul(L1, pose(0, 0, -0.6, 0.2, 0, 0));
    const sd_transform L3 = mul(L2, pose(0.3, 0, 0, 0, -0.3, 0));
    const sd_transform L4 = mul(L3, pose(0, 0, 0.4, 0, 0, 0));
    const sd_transform L5 = mul(L4, pose(0, 0.1, 0.2, 0.5, 0, 0));
    /* joint frames in M (relative to the child link by default) = body frames */
    const sd_transform J1 = L1, J2 = mul(L2, pose(0, 0.05, 0.1, 0, 0, 0.3)), J3 = L3;
    const sd_transform J4 = mul(L4, pose(0, 0, -0.02, 0, 0, 0)), J5 = L5;
    sd_builder *b = sd_builder_new();
    sd_error err;
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = names[0];
    d.joint_name = free_base ? names[7] : names[6];
    d.hinge = free_base ? SD_HINGE_FREE : SD_HINGE_FIXED;
    d.placement = mul(X_W_M, L0);
    set_inertial(&d, 4, I1, pose(0, 0, 0, 0, 0, 0), pose(0.1, 0, 0, 0, 0, 0));
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);

    sd_body_desc_init(&d);
    d.name = names[1];
    d.parent = names[0];
    d.joint_name = jn[0];
    d.hinge = SD_HINGE_REVOLUTE;
    d.placement = mul(inv(L0), J1);
    const double y_model[3] = {0, 1, 0};
    sd_m3t_mul_v(J1.R, y_model, d.axis); /* expressed_in __model__: into J1's axes */
    set_inertial(&d, 2, I2, mul(inv(J1), L1), pose(0.1, 0.02, -0.3, 0.3, 0, 0.2));
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);

    sd_body_desc_init(&d);
    d.name = names[2];
    d.parent = names[1];
    d.joint_name = jn[1];
    d.hinge = SD_HINGE_PRISMATIC;
    d.placement = mul(inv(J1), J2);
    d.axis[0] = 1; d.axis[1] = 0; d.axis[2] = 0;
    set_inertial(&d, 1.5, I3, mul(inv(J2), L2), pose(0, 0.1, 0, 0, 0.4, 0));
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);

    sd_body_desc_init(&d);
    d.name = names[3];
    d.parent = names[2];
    d.joint_name = jn[2];
    d.hinge = SD_HINGE_UNIVERSAL;
    d.placement = mul(inv(J2), J3);
    d.axis[0] = 0; d.axis[1] = 0; d.axis[2] = 1;
    d.axis2[0] = 0; d.axis2[1] = 1; d.axis2[2] = 0;
    set_inertial(&d, 1, I2, mul(inv(J3), L3), pose(0, 0, 0.1, 0.1, 0.2, 0.3));
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);

    sd_body_desc_init(&d);
    d.name = names[4];
    d.parent = names[3];
    d.joint_name = jn[3];
    d.hinge = SD_HINGE_SPHERICAL;
    d.placement = mul(inv(J3), J4);
    set_inertial(&d, 0.8, I3, mul(inv(J4), L4), pose(0, 0, 0.05, 0, 0, 0));
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);

    /* the tip: a fixed body (the reader lumps it unless keep; the dynamics are the same) */
    sd_body_desc_init(&d);
    d.name = names[5];
    d.parent = names[4];
    d.joint_name = jn[4];
    d.hinge = SD_HINGE_FIXED;
    d.placement = mul(inv(J4), J5);
    set_inertial(&d, 0.3, I2, mul(inv(J5), L5), pose(0.01, 0, 0, 0, 0, 0));
    CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    (void)keep;
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    return m;
}

static void compare(const char *what, const char *text, size_t length, const sd_sdf_options *options, sd_model *ref,
                    int expect_bodies)
{
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_sdf_load_string(text, length, what, options, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) fprintf(stderr, "%s\n", err.message);
    if (m != NULL && ref != NULL) {
        CHECK(sd_model_nbodies(m) == expect_bodies);
        CHECK(sd_model_nv(m) == sd_model_nv(ref) && sd_model_nq(m) == sd_model_nq(ref));
        CHECK_CLOSE(sd_model_total_mass(m), sd_model_total_mass(ref), 1e-14);
        const double diff = compare_dynamics(m, ref, 20, 4242);
        printf("  %-44s bodies %d nv %2d: max relative |dM|, |dC| vs the hand-built model %.2e\n", what,
               sd_model_nbodies(m), sd_model_nv(m), diff);
        CHECK(diff >= 0.0 && diff <= 1e-12);
    }
    sd_model_free(m);
}

/* The <frame> "shoulder" stays a frame of the base's body, at its pose in the base link frame. */
static void check_frame(void)
{
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_sdf_load_string(welded, sizeof welded - 1, "<welded>", NULL, &m, &err) == SD_OK);
    if (m == NULL) return;
    const int f = sd_model_frame_index(m, "shoulder");
    CHECK(f >= 0 && sd_model_frame_body(m, f) == sd_model_body_index(m, "base"));
    if (f >= 0) {
        const sd_transform expect = pose(0.1, 0, 0.2, 0, 0.5, 0);
        const sd_transform *X = sd_model_frame_placement(m, f);
        CHECK_ARRAY_CLOSE(X->R, expect.R, 9, 1e-15, "shoulder frame rotation");
        CHECK_ARRAY_CLOSE(X->p, expect.p, 3, 1e-15, "shoulder frame origin");
    }
    /* and the lumped tip too, at its link pose in l4's body (j4's frame, 0.02 below l4's origin) */
    const int tip = sd_model_frame_index(m, "tip");
    CHECK(tip >= 0 && sd_model_frame_body(m, tip) == sd_model_body_index(m, "l4"));
    if (tip >= 0) CHECK_CLOSE(sd_model_frame_placement(m, tip)->p[2], 0.2 + 0.02, 1e-15);
    sd_model_free(m);
}

static const char four_bar[] =
    "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"four_bar\">\n"
    "    <link name=\"crank\"><pose>0 0 0 0 0 1.2</pose>" INERTIAL("0.5 0 0 0 0 0", "1", INERTIA2) "</link>\n"
    "    <link name=\"coupler\"><pose relative_to=\"crank\">1 0 0 0 0 -1.2</pose>"
    INERTIAL("1 0 0 0 0 0", "1", INERTIA2) "</link>\n"
    "    <link name=\"rocker\"><pose relative_to=\"coupler\">2 0 0 0 0 0</pose>"
    INERTIAL("0 0 0 0 0 0", "1", INERTIA2) "</link>\n"
    "    <joint name=\"ground_crank\" type=\"revolute\"><parent>world</parent><child>crank</child>"
    "<axis><xyz>0 0 1</xyz></axis></joint>\n"
    "    <joint name=\"crank_coupler\" type=\"revolute\"><parent>crank</parent><child>coupler</child>"
    "<axis><xyz>0 0 1</xyz></axis></joint>\n"
    "    <joint name=\"coupler_rocker\" type=\"continuous\"><parent>coupler</parent><child>rocker</child>"
    "<axis><xyz>0 0 1</xyz></axis></joint>\n"
    "    <joint name=\"ground_rocker\" type=\"revolute\"><pose relative_to=\"__model__\">3 0.932039 0 0 0 0</pose>"
    "<parent>world</parent><child>rocker</child><axis><xyz>0 0 1</xyz></axis></joint>\n"
    "  </model>\n</sdf>\n";

static void check_four_bar(void)
{
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_sdf_load_string(four_bar, sizeof four_bar - 1, "<four_bar>", NULL, &m, &err) == SD_OK);
    if (m == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK(sd_model_nbodies(m) == 3 && sd_model_nv(m) == 3);
    CHECK(sd_model_nconstraints(m) == 1 && sd_model_constraint_type(m, 0) == SD_CONSTRAINT_REVOLUTE);
    /* breadth-first from the world: both ground joints are tree joints, the continuous coupler-rocker
     * joint is the one whose child (the rocker) already has a parent */
    CHECK(strcmp(sd_model_constraint_name(m, 0), "coupler_rocker") == 0);
    int a = 0, b = 0;
    CHECK(sd_model_constraint_bodies(m, 0, &a, &b) == SD_OK && a == sd_model_body_index(m, "coupler") &&
          b == sd_model_body_index(m, "rocker"));
    double q[3] = {0, 0, 0}, res[5];
    sd_data *d = sd_data_new(m);
    CHECK(sd_constraint_residuals(m, d, q, NULL, res, NULL) == SD_OK);
    double open = 0.0;
    for (int i = 0; i < 5; ++i) open = fmax(open, fabs(res[i]));
    CHECK(open < 1e-12);
    int rank = 0, mobility = 0;
    CHECK(sd_constraint_rank(m, d, q, &rank, &mobility) == SD_OK);
    printf("  four-bar closed in the file: residual %.1e at its configuration, rank %d, mobility %d\n", open, rank,
           mobility);
    CHECK(rank == 2 && mobility == 1);
    sd_data_free(d);
    sd_model_free(m);
}

/* A ball joint's <axis><dynamics>: in the tree its damping is on the three speeds; closing a loop, the
 * warning names what the closure constraint drops (cassie_v2.sdf's pitch-rod joints). */
static const char ball_damping[] =
    "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"balls\">\n"
    "    <link name=\"a\">" INERTIAL("0 0 -0.5 0 0 0", "1", INERTIA2) "</link>\n"
    "    <link name=\"b\"><pose>0 0 -1 0 0 0</pose>" INERTIAL("0 0 -0.5 0 0 0", "1", INERTIA2) "</link>\n"
    "    <joint name=\"shoulder\" type=\"ball\"><parent>world</parent><child>a</child>\n"
    "      <axis><xyz>0 0 1</xyz><dynamics><damping>0.3</damping><friction>0.2</friction></dynamics></axis></joint>\n"
    "    <joint name=\"elbow\" type=\"ball\"><pose>0 0 0 0 0 0</pose><parent>a</parent><child>b</child></joint>\n"
    "    <link name=\"c\"><pose>0.5 0 -2 0 0 0</pose>" INERTIAL("0 0 0 0 0 0", "1", INERTIA2) "</link>\n"
    "    <joint name=\"post\" type=\"revolute\"><parent>world</parent><child>c</child><axis><xyz>1 0 0</xyz></axis></joint>\n"
    "    <joint name=\"rod\" type=\"ball\"><pose>-0.5 0 0 0 0 0</pose><parent>b</parent><child>c</child>\n"
    "      <axis><xyz>0 -1 0</xyz><dynamics><damping>0.01</damping></dynamics></axis></joint>\n"
    "  </model>\n</sdf>\n";

static void check_ball_dynamics(void)
{
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_sdf_load_string(ball_damping, sizeof ball_damping - 1, "balls.sdf", NULL, &m, &err) == SD_OK);
    if (m == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    const int a = sd_model_body_index(m, "a"), b = sd_model_body_index(m, "b");
    CHECK(a >= 0 && b >= 0 && sd_model_nconstraints(m) == 1);
    for (int i = 0; i < 3 && a >= 0 && b >= 0; ++i) {
        CHECK(sd_model_damping(m, sd_model_v_index(m, a) + i) == 0.3);
        CHECK(sd_model_damping(m, sd_model_v_index(m, b) + i) == 0.0);
    }
    CHECK(a >= 0 && sd_model_body_desc(m, a)->friction == 0.2);
    int warned = 0;
    for (size_t i = 0; i < sd_model_nwarnings(m); ++i) {
        const char *w = sd_model_warning(m, i);
        warned |= strstr(w, "joint 'rod' (line 11: damping 0.01)") != NULL && strstr(w, "balls.sdf") == w;
    }
    CHECK(warned);
    printf("  ball joints: damping 0.3 on the tree's three speeds; the loop's damping in the warning: %s\n",
           warned ? "yes" : "no");
    sd_model_free(m);
}

int main(void)
{
    const sd_transform X_W_M = pose(1, 2, 3, 0.1, 0.2, 0.3);
    sd_model *ref = reference(X_W_M, "", 0, 0);
    compare("welded chain under a model pose", welded, sizeof welded - 1, NULL, ref, 5);
    const sd_sdf_options keep = {.keep_fixed_joints = 1};
    compare("welded chain, fixed joints kept", welded, sizeof welded - 1, &keep, ref, 7); /* tip, shoulder */
    sd_model_free(ref);

    /* nested: the arm model's frame in M = its pose; no joint to world, so the base floats */
    ref = reference(pose(0.5, -1, 0.2, 0, 0.3, 1.0), "arm::", 1, 0);
    compare("nested model, floating", nested, sizeof nested - 1, NULL, ref, 5);
    sd_model_free(ref);
    ref = reference(pose(0.5, -1, 0.2, 0, 0.3, 1.0), "arm::", 0, 0);
    const sd_sdf_options fixed = {.fixed_base = 1};
    compare("nested model, fixed_base", nested, sizeof nested - 1, &fixed, ref, 5);
    sd_model_free(ref);

    check_frame();
    check_four_bar();
    check_ball_dynamics();
    return test_summary("test_sdf_semantics");
}
