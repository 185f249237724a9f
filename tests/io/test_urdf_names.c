/*
 * tests/io/test_urdf_names.c — names in URDF files and in the model:
 *   links and joints are separate namespaces: a joint called like a link (the root link, whose
 *   hinge is not in the file, included) loads, the root hinge taking "<link>_root" (or the next
 *   free "<link>_rootN") when a joint of the file has the link's name;
 *   names are kept whole: links, joints and merged frames of 300 characters that differ only in
 *   the last one stay distinct in the model and in error messages; the builder does the same.
 */
#include <stdlib.h>
#include <string.h>

#include <soadyn/model.h>
#include <soadyn/urdf.h>

#include "test_util.h"

#define INERTIAL "<inertial><mass value='1'/><inertia ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'/></inertial>"

static sd_model *load(const char *xml, int floating, sd_error *err)
{
    sd_urdf_options opt = {.floating_base = floating};
    sd_model *m = NULL;
    const sd_status st = sd_urdf_load_string(xml, strlen(xml), "names.urdf", &opt, &m, err);
    if (st != SD_OK) fprintf(stderr, "  load failed: %s\n", err->message);
    CHECK(st == SD_OK && m != NULL);
    return m;
}

/* Joint 'a' connects link 'a' (the root, fixed or floating) to link 'b'; joint 'b' connects 'b' to
 * link 'c'. Each joint names the body it moves; body 'a' keeps its hinge under "a_root". */
static void check_joint_named_like_link(void)
{
    static const char xml[] =
        "<robot name='r'>\n"
        "<link name='a'>" INERTIAL "</link>\n"
        "<joint name='a' type='revolute'><parent link='a'/><child link='b'/></joint>\n"
        "<link name='b'>" INERTIAL "</link>\n"
        "<joint name='b' type='revolute'><parent link='b'/><child link='c'/></joint>\n"
        "<link name='c'>" INERTIAL "</link>\n"
        "</robot>\n";
    for (int floating = 0; floating <= 1; ++floating) {
        sd_error err;
        sd_model *m = load(xml, floating, &err);
        if (m == NULL) continue;
        const int a = sd_model_body_index(m, "a"), b = sd_model_body_index(m, "b"), c = sd_model_body_index(m, "c");
        CHECK(a >= 0 && b >= 0 && c >= 0);
        CHECK(sd_model_joint_index(m, "a") == b);
        CHECK(sd_model_joint_index(m, "b") == c);
        CHECK(sd_model_joint_index(m, "a_root") == a);
        CHECK(a >= 0 && strcmp(sd_model_joint_name(m, a), "a_root") == 0);
        CHECK(a >= 0 && sd_model_hinge(m, a) == (floating ? SD_HINGE_FREE : SD_HINGE_FIXED));
        CHECK(sd_model_nv(m) == (floating ? 8 : 2));
        sd_model_free(m);
    }
    /* "a_root" taken as well: the next free name */
    static const char taken[] =
        "<robot name='r'>\n"
        "<link name='a'>" INERTIAL "</link>\n"
        "<joint name='a' type='revolute'><parent link='a'/><child link='b'/></joint>\n"
        "<link name='b'>" INERTIAL "</link>\n"
        "<joint name='a_root' type='revolute'><parent link='b'/><child link='c'/></joint>\n"
        "<link name='c'>" INERTIAL "</link>\n"
        "</robot>\n";
    sd_error err;
    sd_model *m = load(taken, 1, &err);
    if (m != NULL) {
        const int a = sd_model_body_index(m, "a");
        CHECK(a >= 0 && strcmp(sd_model_joint_name(m, a), "a_root2") == 0);
        CHECK(sd_model_joint_index(m, "a_root") == sd_model_body_index(m, "c"));
        sd_model_free(m);
    }
    /* a root link with no joint of its name keeps its own name for its hinge, as before */
    static const char plain[] =
        "<robot name='r'><link name='base'>" INERTIAL "</link>\n"
        "<joint name='j' type='revolute'><parent link='base'/><child link='arm'/></joint>\n"
        "<link name='arm'>" INERTIAL "</link></robot>\n";
    m = load(plain, 1, &err);
    if (m != NULL) {
        CHECK(sd_model_joint_index(m, "base") == sd_model_body_index(m, "base"));
        sd_model_free(m);
    }
}

/* A name of n characters: `fill` repeated, then `last`. */
static char *long_name(size_t n, char fill, char last)
{
    char *s = malloc(n + 1);
    if (s == NULL) return NULL;
    memset(s, fill, n - 1);
    s[n - 1] = last;
    s[n] = '\0';
    return s;
}

/* Links, joints and a merged frame of 300 characters that differ only at the end. */
static void check_long_names_in_files(void)
{
    char *l1 = long_name(300, 'L', '1'), *l2 = long_name(300, 'L', '2'), *j1 = long_name(300, 'J', '1'),
         *j2 = long_name(300, 'J', '2'), *f1 = long_name(300, 'F', '1'), *f2 = long_name(300, 'F', '2');
    const size_t size = 8192;
    char *xml = malloc(size);
    CHECK(l1 && l2 && j1 && j2 && f1 && f2 && xml);
    if (!(l1 && l2 && j1 && j2 && f1 && f2 && xml)) goto done;
    snprintf(xml, size,
             "<robot name='r'><link name='base'>" INERTIAL "</link>\n"
             "<joint name='%s' type='revolute'><parent link='base'/><child link='%s'/></joint>\n"
             "<link name='%s'>" INERTIAL "</link>\n"
             "<joint name='%s' type='revolute'><parent link='base'/><child link='%s'/></joint>\n"
             "<link name='%s'>" INERTIAL "</link>\n"
             "<joint name='w1' type='fixed'><parent link='%s'/><child link='%s'/><origin xyz='1 0 0'/></joint>\n"
             "<link name='%s'/>\n"
             "<joint name='w2' type='fixed'><parent link='%s'/><child link='%s'/><origin xyz='2 0 0'/></joint>\n"
             "<link name='%s'/>\n"
             "</robot>\n",
             j1, l1, l1, j2, l2, l2, l1, f1, f1, l2, f2, f2);
    sd_error err;
    sd_model *m = load(xml, 0, &err);
    if (m != NULL) {
        const int b1 = sd_model_body_index(m, l1), b2 = sd_model_body_index(m, l2);
        CHECK(b1 >= 0 && b2 >= 0 && b1 != b2);
        CHECK(sd_model_joint_index(m, j1) == b1 && sd_model_joint_index(m, j2) == b2);
        CHECK(b1 >= 0 && strcmp(sd_model_body_name(m, b1), l1) == 0 && strcmp(sd_model_joint_name(m, b1), j1) == 0);
        CHECK(b2 >= 0 && strcmp(sd_model_body_name(m, b2), l2) == 0 && strcmp(sd_model_joint_name(m, b2), j2) == 0);
        const int fr1 = sd_model_frame_index(m, f1), fr2 = sd_model_frame_index(m, f2);
        CHECK(fr1 >= 0 && fr2 >= 0 && fr1 != fr2);
        CHECK(fr1 >= 0 && sd_model_frame_body(m, fr1) == b1 && strcmp(sd_model_frame_name(m, fr1), f1) == 0);
        CHECK(fr2 >= 0 && sd_model_frame_body(m, fr2) == b2 && strcmp(sd_model_frame_name(m, fr2), f2) == 0);
        sd_model_free(m);
    }
    /* an error about the element names it whole (the message has room for a 300-character name) */
    snprintf(xml, size,
             "<robot name='r'><link name='base'/>\n"
             "<joint name='%s' type='hinge'><parent link='base'/><child link='x'/></joint>\n"
             "<link name='x'/></robot>\n",
             j2);
    sd_model *bad = NULL;
    CHECK(sd_urdf_load_string(xml, strlen(xml), "n.urdf", NULL, &bad, &err) == SD_E_PARSE && bad == NULL);
    char expected[320];
    snprintf(expected, sizeof expected, "joint '%s'", j2);
    CHECK(strstr(err.message, expected) != NULL);
    snprintf(xml, size,
             "<robot name='r'><link name='%s'><inertial><mass value='-1'/>"
             "<inertia ixx='0' ixy='0' ixz='0' iyy='0' iyz='0' izz='0'/></inertial></link></robot>\n",
             l2);
    CHECK(sd_urdf_load_string(xml, strlen(xml), "n.urdf", NULL, &bad, &err) == SD_E_PARSE && bad == NULL);
    snprintf(expected, sizeof expected, "link '%s'", l2);
    CHECK(strstr(err.message, expected) != NULL);
done:
    free(l1), free(l2), free(j1), free(j2), free(f1), free(f2), free(xml);
}

/* The builder keeps long names whole and tells them apart. */
static void check_long_names_in_builder(void)
{
    char *n1 = long_name(300, 'b', '1'), *n2 = long_name(300, 'b', '2');
    CHECK(n1 && n2);
    if (!(n1 && n2)) goto done;
    sd_builder *b = sd_builder_new();
    sd_error err;
    for (int i = 0; i < 2; ++i) {
        sd_body_desc d;
        sd_body_desc_init(&d);
        d.name = i ? n2 : n1;
        d.parent = i ? n1 : NULL;
        d.hinge = SD_HINGE_REVOLUTE;
        d.mass = 1;
        d.inertia[0] = d.inertia[4] = d.inertia[8] = 0.1;
        CHECK(sd_builder_add_body(b, &d, &err) == SD_OK);
    }
    sd_model *m = NULL;
    CHECK(sd_builder_build(b, &m, &err) == SD_OK);
    sd_builder_free(b);
    if (m != NULL) {
        CHECK(sd_model_body_index(m, n1) == 0 && sd_model_body_index(m, n2) == 1);
        CHECK(sd_model_joint_index(m, n1) == 0 && sd_model_joint_index(m, n2) == 1);
        CHECK(strcmp(sd_model_body_name(m, 1), n2) == 0 && strcmp(sd_model_joint_name(m, 1), n2) == 0);
        sd_model_free(m);
    }
done:
    free(n1);
    free(n2);
}

int main(void)
{
    check_joint_named_like_link();
    check_long_names_in_files();
    check_long_names_in_builder();
    return test_summary("test_urdf_names");
}
