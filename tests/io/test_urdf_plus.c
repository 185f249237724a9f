/*
 * tests/io/test_urdf_plus.c — URDF+ <loop> and <coupling> elements (urdf.h) and the names of
 * mimic couplings, on small files written here:
 *   - each loop type maps to its constraint kind and rows (revolute and continuous: REVOLUTE 5,
 *     prismatic: PRISMATIC 5, fixed: WELD 6, spherical and ball: BALL 3);
 *   - the loop joint's frames: <predecessor>/<successor> and <parent>/<child> give the same model,
 *     and so does an <origin> in <loop> instead of one in <predecessor>; a link merged by a fixed
 *     joint (a frame of its host body) is the same as its host with the merged origin composed, and
 *     the same again with fixed joints kept as bodies; "world" is the inertial frame; the axis
 *     (default x, normalised) is the z axis of F_A as the builder turns it;
 *   - a coupling q(successor) = ratio q(predecessor) + offset, each side by joint= or link=, the
 *     ratio as an attribute or as <ratio value>, checked on the position residual;
 *   - a mimic coupling is named after its joint, or "<joint>_mimic" ("<joint>_mimic2", ...) when a
 *     URDF+ element or a joint already has the name; mimic_independent keeps the URDF+ constraints;
 *   - a file in the form of the URDF+ authors' parser test (a loop between two links of a tree
 *     with massless links, a coupling between two links with <ratio value>) loads.
 * The broken URDF+ files are in tests/io/broken (test_urdf_errors).
 */
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

static sd_model *load_opt(const char *xml, const sd_urdf_options *opt)
{
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_urdf_load_string(xml, strlen(xml), "plus.urdf", opt, &m, &err);
    if (st != SD_OK) fprintf(stderr, "  load failed: %s\n", err.message);
    CHECK(st == SD_OK && m != NULL);
    return m;
}

static sd_model *load(const char *xml) { return load_opt(xml, NULL); }

#define INERTIAL "<inertial><mass value='1'/><inertia ixx='0.1' ixy='0' ixz='0' iyy='0.2' iyz='0' izz='0.3'/></inertial>"

/* A two-link arm on the world and a post beside it, for loops of every kind between the arm's tip
 * and the post: TYPE and the loop's body are spliced in. */
static char *two_arm_file(const char *type, const char *loop_body)
{
    static const char head[] =
        "<robot name='plus'>\n<link name='world'/>\n"
        "<joint name='j1' type='revolute'><parent link='world'/><child link='a'/><axis xyz='0 0 1'/></joint>\n"
        "<link name='a'>" INERTIAL "</link>\n"
        "<joint name='j2' type='revolute'><parent link='a'/><child link='b'/><origin xyz='1 0 0'/><axis xyz='0 0 1'/></joint>\n"
        "<link name='b'>" INERTIAL "</link>\n"
        "<joint name='tip' type='fixed'><parent link='b'/><child link='b_tip'/><origin xyz='0.5 0 0' rpy='0 0 0.3'/></joint>\n"
        "<link name='b_tip'>" INERTIAL "</link>\n"
        "<joint name='j3' type='prismatic'><parent link='world'/><child link='post'/><origin xyz='2 0 0'/>"
        "<axis xyz='0 1 0'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
        "<link name='post'>" INERTIAL "</link>\n";
    const size_t size = sizeof head + strlen(type) + strlen(loop_body) + 64;
    char *xml = malloc(size);
    if (xml != NULL) snprintf(xml, size, "%s<loop name='L' type='%s'>%s</loop>\n</robot>\n", head, type, loop_body);
    return xml;
}

static void check_types(void)
{
    static const struct { const char *name; sd_constraint_type type; int rows; } types[] = {
        {"revolute", SD_CONSTRAINT_REVOLUTE, 5}, {"continuous", SD_CONSTRAINT_REVOLUTE, 5},
        {"prismatic", SD_CONSTRAINT_PRISMATIC, 5}, {"fixed", SD_CONSTRAINT_WELD, 6},
        {"spherical", SD_CONSTRAINT_BALL, 3}, {"ball", SD_CONSTRAINT_BALL, 3},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
        char *xml = two_arm_file(types[i].name, "<predecessor link='post'/><successor link='b'/>");
        sd_model *m = load(xml);
        if (m != NULL) {
            CHECK(sd_model_nconstraints(m) == 1 && sd_model_constraint_index(m, "L") == 0);
            CHECK(sd_model_constraint_type(m, 0) == types[i].type && sd_model_nconstraint_rows(m) == types[i].rows);
            int a = -2, b = -2;
            CHECK(sd_model_constraint_bodies(m, 0, &a, &b) == SD_OK);
            CHECK(a == sd_model_body_index(m, "post") && b == sd_model_body_index(m, "b"));
        }
        sd_model_free(m);
        free(xml);
    }
}

/* World placements of both constraint frames of constraint 0 at q. */
static void frames_at(const sd_model *m, const double *q, sd_transform X[2])
{
    sd_data *d = sd_data_new(m);
    double pos[6];
    CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK);
    for (int s = 0; s < 2; ++s) CHECK(sd_constraint_frame_world(m, d, 0, s, &X[s]) == SD_OK);
    sd_data_free(d);
}

static void check_same_frames(const sd_model *m, const sd_model *ref, const char *what)
{
    if (m == NULL || ref == NULL) return;
    CHECK(sd_model_nq(m) == sd_model_nq(ref) && sd_model_nq(m) == 3);
    const double q[3] = {0.4, -0.7, 0.2};
    sd_transform X[2], Y[2];
    frames_at(m, q, X);
    frames_at(ref, q, Y);
    for (int s = 0; s < 2; ++s) {
        CHECK_ARRAY_CLOSE(X[s].R, Y[s].R, 9, 1e-14, what);
        CHECK_ARRAY_CLOSE(X[s].p, Y[s].p, 3, 1e-14, what);
    }
}

static void check_frames(void)
{
    /* the reference: the loop frame 0.2 up the post, rotated; on b at the tip's origin composed by hand */
    const double c = cos(0.3), s = sin(0.3);
    char body_b[512];
    snprintf(body_b, sizeof body_b,
             "<predecessor link='post'><origin xyz='0 0.2 0' rpy='0.1 0 0'/></predecessor>"
             "<successor link='b'><origin xyz='%.17g %.17g 0' rpy='0 0 0.3'/></successor><axis xyz='0 0 2'/>",
             0.5 + 0.1 * c, 0.1 * s);
    char *ref_xml = two_arm_file("revolute", body_b);
    char *merged_xml = two_arm_file("revolute",
                                    "<predecessor link='post'><origin xyz='0 0.2 0' rpy='0.1 0 0'/></predecessor>"
                                    "<successor link='b_tip'><origin xyz='0.1 0 0'/></successor><axis xyz='0 0 2'/>");
    char *synonyms_xml = two_arm_file("revolute",
                                      "<parent link='post'><origin xyz='0 0.2 0' rpy='0.1 0 0'/></parent>"
                                      "<child link='b_tip'><origin xyz='0.1 0 0'/></child><axis xyz='0 0 2'/>");
    char *outer_xml = two_arm_file("revolute",
                                   "<origin xyz='0 0.2 0' rpy='0.1 0 0'/><predecessor link='post'/>"
                                   "<successor link='b_tip'><origin xyz='0.1 0 0'/></successor><axis xyz='0 0 2'/>");
    sd_model *ref = load(ref_xml), *merged = load(merged_xml), *synonyms = load(synonyms_xml), *outer = load(outer_xml);
    const sd_urdf_options keep = {.keep_fixed_joints = 1};
    sd_model *kept = load_opt(merged_xml, &keep);
    check_same_frames(merged, ref, "loop frame on a merged link = on its host, origin composed");
    check_same_frames(synonyms, ref, "<parent>/<child> = <predecessor>/<successor>");
    check_same_frames(outer, ref, "<origin> in <loop> = in <predecessor>");
    if (kept != NULL) {
        CHECK(sd_model_nbodies(kept) == sd_model_nbodies(ref) + 1);
        const double q[3] = {0.4, -0.7, 0.2};
        sd_transform X[2], Y[2];
        frames_at(kept, q, X);
        frames_at(ref, q, Y);
        for (int k = 0; k < 2; ++k) {
            CHECK_ARRAY_CLOSE(X[k].R, Y[k].R, 9, 1e-14, "keep_fixed_joints: the same frames");
            CHECK_ARRAY_CLOSE(X[k].p, Y[k].p, 3, 1e-14, "keep_fixed_joints: the same frames");
        }
    }
    if (ref != NULL) { /* the axis (0 0 2 in F_A: the post's axes turned by roll 0.1) is F_A's z */
        const double q[3] = {0, 0, 0};
        sd_transform X[2];
        frames_at(ref, q, X);
        const double z[3] = {0.0, -sin(0.1), cos(0.1)}, z0[3] = {X[0].R[2], X[0].R[5], X[0].R[8]};
        CHECK_ARRAY_CLOSE(z0, z, 3, 1e-15, "the loop axis, normalised, is the z of F_A as turned");
        CHECK_CLOSE(X[0].p[0], 2.0, 1e-15);
        CHECK_CLOSE(X[0].p[1], 0.2, 1e-15);
    }
    sd_model_free(ref), sd_model_free(merged), sd_model_free(synonyms), sd_model_free(outer), sd_model_free(kept);
    free(ref_xml), free(merged_xml), free(synonyms_xml), free(outer_xml);

    /* the world as predecessor, the default axis x */
    char *world_xml = two_arm_file("prismatic", "<predecessor link='world'/><successor link='a'/>");
    sd_model *w = load(world_xml);
    if (w != NULL) {
        int a = -2, b = -2;
        sd_model_constraint_bodies(w, 0, &a, &b);
        CHECK(a == -1 && b == sd_model_body_index(w, "a"));
        const double q[3] = {0, 0, 0}, x[3] = {1, 0, 0};
        sd_transform X[2];
        frames_at(w, q, X);
        const double z0[3] = {X[0].R[2], X[0].R[5], X[0].R[8]};
        CHECK_ARRAY_CLOSE(z0, x, 3, 1e-15, "default loop axis: x");
    }
    sd_model_free(w);
    free(world_xml);
}

/* q(successor) = ratio q(predecessor) + offset in each spelling. */
static void check_couplings(void)
{
    static const char *const forms[] = {
        "<coupling name='C' ratio='-3' offset='0.25'><predecessor joint='j1'/><successor joint='j2'/></coupling>",
        "<coupling name='C' offset='0.25'><predecessor link='a'/><successor link='b'/><ratio value='-3'/></coupling>",
        "<coupling name='C'><parent joint='j1'/><child link='b'/><ratio value='-3'/><offset value='0.25'/></coupling>",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i) {
        char xml[2048];
        snprintf(xml, sizeof xml,
                 "<robot name='c'><link name='world'/>\n"
                 "<joint name='j1' type='continuous'><parent link='world'/><child link='a'/></joint>\n"
                 "<link name='a'>" INERTIAL "</link>\n"
                 "<joint name='j2' type='revolute'><parent link='world'/><child link='b'/></joint>\n"
                 "<link name='b'>" INERTIAL "</link>\n%s\n</robot>\n", forms[i]);
        sd_model *m = load(xml);
        if (m == NULL) continue;
        CHECK(sd_model_nconstraints(m) == 1 && sd_model_constraint_type(m, 0) == SD_CONSTRAINT_COUPLING);
        int a = -2, b = -2;
        sd_model_constraint_bodies(m, 0, &a, &b);
        const int j1 = sd_model_joint_index(m, "j1"), j2 = sd_model_joint_index(m, "j2");
        CHECK(a == j2 && b == j1); /* loops.h's joint_a is the successor */
        sd_data *d = sd_data_new(m);
        double q[2], pos[1];
        q[sd_model_q_index(m, j1)] = 0.5;
        q[sd_model_q_index(m, j2)] = -3 * 0.5 + 0.25;
        CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK && fabs(pos[0]) < 1e-15);
        q[sd_model_q_index(m, j2)] += 0.125;
        CHECK(sd_constraint_residuals(m, d, q, NULL, pos, NULL) == SD_OK && fabs(pos[0] - 0.125) < 1e-15);
        sd_data_free(d);
        sd_model_free(m);
    }
}

/* Mimic coupling names, with and without URDF+ elements of the same name. */
static void check_mimic_names(void)
{
    static const char xml[] =
        "<robot name='n'><link name='world'/>\n"
        "<joint name='lead' type='revolute'><parent link='world'/><child link='a'/></joint>\n"
        "<link name='a'>" INERTIAL "</link>\n"
        "<joint name='f' type='revolute'><parent link='world'/><child link='b'/><mimic joint='lead'/></joint>\n"
        "<link name='b'>" INERTIAL "</link>\n"
        "<joint name='g' type='prismatic'><parent link='world'/><child link='c'/>"
        "<mimic joint='lead' multiplier='0.5' offset='0.1'/></joint>\n"
        "<link name='c'>" INERTIAL "</link>\n"
        "<joint name='g_mimic' type='revolute'><parent link='world'/><child link='e'/></joint>\n"
        "<link name='e'>" INERTIAL "</link>\n"
        "<joint name='h' type='revolute'><parent link='world'/><child link='k'/></joint>\n"
        "<link name='k'>" INERTIAL "</link>\n"
        "<coupling name='f'><predecessor joint='lead'/><successor joint='h'/></coupling>\n"
        "<coupling name='g'><predecessor joint='h'/><successor joint='g_mimic'/><ratio value='2'/></coupling>\n"
        "<loop name='spare' type='ball'><predecessor link='k'/><successor link='e'/></loop>\n"
        "</robot>\n";
    sd_model *m = load(xml);
    if (m != NULL) {
        /* loops first, then couplings, then mimics, each in document order */
        static const char *const names[5] = {"spare", "f", "g", "f_mimic", "g_mimic2"};
        CHECK(sd_model_nconstraints(m) == 5 && sd_model_nconstraint_rows(m) == 3 + 4);
        for (int c = 0; c < 5 && c < sd_model_nconstraints(m); ++c)
            CHECK(strcmp(sd_model_constraint_name(m, c), names[c]) == 0);
        int a = -2, b = -2;
        sd_model_constraint_bodies(m, 4, &a, &b);
        CHECK(a == sd_model_joint_index(m, "g") && b == sd_model_joint_index(m, "lead"));
    }
    sd_model_free(m);
    const sd_urdf_options independent = {.mimic_independent = 1};
    m = load_opt(xml, &independent);
    if (m != NULL) {
        CHECK(sd_model_nconstraints(m) == 3 && sd_model_constraint_index(m, "f_mimic") < 0);
        CHECK(sd_model_nwarnings(m) == 1 && strstr(sd_model_warning(m, 0), "2 mimic joints") != NULL);
    }
    sd_model_free(m);
}

/* A file shaped like the URDF+ authors' own parser test: massless links, a loop without origins
 * or axis between two branches, a gear coupling between two links given by <ratio value>. */
static void check_authors_form(void)
{
    static const char xml[] =
        "<robot name='authors'>\n"
        "<joint name='j1' type='continuous'><parent link='base_link'/><child link='l1'/></joint>\n"
        "<joint name='j2' type='continuous'><parent link='base_link'/><child link='l2'/></joint>\n"
        "<joint name='j3' type='continuous'><parent link='l1'/><child link='l3'/></joint>\n"
        "<joint name='j4' type='continuous'><parent link='l3'/><child link='l4'/></joint>\n"
        "<joint name='j5' type='continuous'><parent link='l1'/><child link='l5'/></joint>\n"
        "<loop name='l1' type='revolute'><predecessor link='l4'/><successor link='l5'/></loop>\n"
        "<coupling name='c1'><predecessor link='l1'/><successor link='l2'/><ratio value='6'/></coupling>\n"
        "<link name='base_link'/><link name='l1'/><link name='l2'/><link name='l3'/><link name='l4'/><link name='l5'/>\n"
        "</robot>\n";
    sd_model *m = load(xml);
    if (m == NULL) return;
    CHECK(sd_model_nv(m) == 5 && sd_model_nconstraints(m) == 2);
    CHECK(sd_model_constraint_type(m, 0) == SD_CONSTRAINT_REVOLUTE && sd_model_constraint_type(m, 1) == SD_CONSTRAINT_COUPLING);
    int a = -2, b = -2;
    sd_model_constraint_bodies(m, 1, &a, &b);
    CHECK(a == sd_model_joint_index(m, "j2") && b == sd_model_joint_index(m, "j1"));
    sd_model_free(m);
}

int main(void)
{
    check_types();
    check_frames();
    check_couplings();
    check_mimic_names();
    check_authors_form();
    return test_summary("test_urdf_plus");
}
