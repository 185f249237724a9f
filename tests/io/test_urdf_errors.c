/*
 * tests/io/test_urdf_errors.c — broken URDF files are refused with the right status and a
 * message naming the file, the line and the element; doubtful but usable ones load with a
 * warning; nothing is printed by the library (libxml2's own messages included).
 *
 * Usage: test_urdf_errors <folder of the broken corpus (tests/io/broken)>
 */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno: to watch stderr */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/model.h>
#include <soadyn/urdf.h>

#include "test_util.h"

/* One broken file: the status, the line and two pieces of text its message must carry. */
typedef struct broken_case {
    const char *file;
    sd_status status;
    int line;
    const char *element;
    const char *detail;
} broken_case;

static const broken_case corpus[] = {
    {"malformed_xml.urdf", SD_E_PARSE, 5, "malformed XML", "link"},
    {"not_xml.urdf", SD_E_PARSE, 1, "malformed XML", "XML"},
    {"no_robot.urdf", SD_E_PARSE, 2, "<robot>", "<model>"},
    {"empty_robot.urdf", SD_E_PARSE, 2, "<robot>", "no <link>"},
    {"link_without_name.urdf", SD_E_PARSE, 4, "<link>", "no name"},
    {"missing_mass.urdf", SD_E_PARSE, 4, "link 'a'", "<mass>"},
    {"negative_mass.urdf", SD_E_PARSE, 5, "link 'a'", "negative mass"},
    {"inertia_not_psd.urdf", SD_E_PARSE, 8, "link 'arm'", "positive semi-definite"},
    {"inertia_missing_attribute.urdf", SD_E_PARSE, 6, "link 'a'", "ixy"},
    {"mass_not_a_number.urdf", SD_E_PARSE, 5, "link 'a'", "1.0kg"},
    {"mass_nan.urdf", SD_E_PARSE, 5, "link 'a'", "not finite"},
    {"origin_inf.urdf", SD_E_PARSE, 8, "joint 'j1'", "rpy"},
    {"origin_not_a_number.urdf", SD_E_PARSE, 8, "joint 'j1'", "1.0 abc 0"},
    {"axis_two_components.urdf", SD_E_PARSE, 8, "joint 'j1'", "<axis xyz=\"1 0\">"},
    {"axis_four_components.urdf", SD_E_PARSE, 8, "joint 'j1'", "too many"},
    {"axis_zero.urdf", SD_E_PARSE, 8, "joint 'j1'", "zero length"},
    {"unknown_joint_type.urdf", SD_E_PARSE, 5, "joint 'j1'", "'hinge'"},
    {"joint_without_type.urdf", SD_E_PARSE, 5, "joint 'j1'", "type"},
    {"joint_without_name.urdf", SD_E_PARSE, 5, "<joint>", "no name"},
    {"joint_without_child.urdf", SD_E_PARSE, 5, "joint 'j1'", "<child"},
    {"unknown_parent.urdf", SD_E_PARSE, 5, "joint 'j1'", "'nope'"},
    {"unknown_child.urdf", SD_E_PARSE, 6, "joint 'j1'", "'ghost'"},
    {"duplicate_link.urdf", SD_E_PARSE, 6, "link 'b'", "twice"},
    {"duplicate_joint.urdf", SD_E_PARSE, 7, "joint 'j1'", "twice"},
    {"two_parents.urdf", SD_E_PARSE, 8, "joint 'j3'", "link 'c'"},
    {"several_roots.urdf", SD_E_PARSE, 6, "link 'island'", "root"},
    {"cycle.urdf", SD_E_PARSE, 7, "joint 'j2'", "cycle"},
    {"cycle_no_root.urdf", SD_E_PARSE, 6, "joint 'j2'", "cycle"},
    {"self_parent.urdf", SD_E_PARSE, 4, "joint 'j1'", "own parent"},
    {"limit_reversed.urdf", SD_E_PARSE, 8, "joint 'j1'", "lower"},
    {"negative_damping.urdf", SD_E_PARSE, 8, "joint 'j1'", "damping"},
    {"mimic_unknown_joint.urdf", SD_E_PARSE, 8, "joint 'j1'", "\"nobody\""},
    {"massless_with_inertia.urdf", SD_E_PARSE, 6, "link 'b'", "nonzero <inertia>"},
};

static void check_broken(const char *folder, const broken_case *c)
{
    char path[1024], line[32];
    snprintf(path, sizeof path, "%s/%s", folder, c->file);
    snprintf(line, sizeof line, ":%d: ", c->line);
    static char sentinel;
    sd_model *m = (sd_model *)(void *)&sentinel; /* the loader must reset it to NULL */
    sd_error err;
    const sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
    const int ok = st == c->status && err.status == c->status && m == NULL && strstr(err.message, c->file) != NULL &&
                   strstr(err.message, line) != NULL && strstr(err.message, c->element) != NULL &&
                   strstr(err.message, c->detail) != NULL;
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  %s: got %s \"%s\"; expected %s, line %d, \"%s\", \"%s\"\n", c->file, sd_status_name(st),
                err.message, sd_status_name(c->status), c->line, c->element, c->detail);
    else
        printf("  %-32s %s\n", c->file, err.message);
    if (st == SD_OK && m != (sd_model *)(void *)&sentinel) sd_model_free(m);
    CHECK(sd_urdf_load_file(path, NULL, &m, NULL) == c->status); /* no error struct: no crash */
}

/* The whole corpus again with stderr redirected to a file, which must stay empty. */
static void check_silence(const char *folder)
{
    FILE *sink = tmpfile();
    CHECK(sink != NULL);
    if (sink == NULL) return;
    fflush(stderr);
    const int saved = dup(2);
    dup2(fileno(sink), 2);
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; ++i) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", folder, corpus[i].file);
        sd_model *m = NULL;
        sd_urdf_load_file(path, NULL, &m, NULL);
        sd_model_free(m);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(sink, 0, SEEK_END);
    const long printed = ftell(sink);
    fclose(sink);
    CHECK(printed == 0);
}

/* A model that loads, with a warning containing `a` and `b`. */
static void check_warning(const char *name, const char *xml, const char *a, const char *b)
{
    sd_model *m = NULL;
    sd_error err;
    const sd_status st = sd_urdf_load_string(xml, strlen(xml), name, NULL, &m, &err);
    CHECK(st == SD_OK);
    if (st != SD_OK) { fprintf(stderr, "  %s: %s\n", name, err.message); return; }
    int found = 0;
    for (size_t i = 0; i < sd_model_nwarnings(m); ++i) {
        const char *w = sd_model_warning(m, i);
        if (strstr(w, a) != NULL && strstr(w, b) != NULL && strstr(w, name) != NULL) found = 1;
    }
    CHECK(found);
    printf("  %-32s %zu warning(s)%s%s\n", name, sd_model_nwarnings(m), sd_model_nwarnings(m) ? ": " : "",
           sd_model_nwarnings(m) ? sd_model_warning(m, 0) : "");
    sd_model_free(m);
}

#define INERTIAL(m, ixx, iyy, izz)                                                                        \
    "<inertial><mass value='" m "'/><inertia ixx='" ixx "' ixy='0' ixz='0' iyy='" iyy "' iyz='0' izz='" izz \
    "'/></inertial>"

static void check_warnings(void)
{
    check_warning("zero_mass_leaf.urdf",
                  "<robot name='r'><link name='base'>" INERTIAL("1", "1", "1", "1") "</link>\n"
                  "<joint name='j' type='revolute'><parent link='base'/><child link='antenna'/></joint>\n"
                  "<link name='antenna'/></robot>",
                  "'antenna'", "zero-mass");
    check_warning("triangle_body.urdf",
                  "<robot name='r'><link name='base'/>\n"
                  "<joint name='j' type='revolute'><parent link='base'/><child link='odd'/></joint>\n"
                  "<link name='odd'>" INERTIAL("1", "0.1", "0.1", "1") "</link></robot>",
                  "'odd'", "triangle");
    check_warning("triangle_merged.urdf",
                  "<robot name='r'><link name='base'/>\n"
                  "<joint name='j' type='revolute'><parent link='base'/><child link='arm'/></joint>\n"
                  "<link name='arm'>" INERTIAL("1", "1", "1", "1") "</link>\n"
                  "<joint name='f' type='fixed'><parent link='arm'/><child link='odd'/></joint>\n"
                  "<link name='odd'>" INERTIAL("1", "0.1", "0.1", "1") "</link></robot>",
                  "'odd'", "triangle");
    check_warning("massive_world.urdf",
                  "<robot name='r'><link name='world'>" INERTIAL("1", "1", "1", "1") "</link>\n"
                  "<joint name='j' type='revolute'><parent link='world'/><child link='arm'/></joint>\n"
                  "<link name='arm'>" INERTIAL("1", "1", "1", "1") "</link></robot>",
                  "'world'", "ignored");
    check_warning("mimic_on_fixed.urdf",
                  "<robot name='r'><link name='base'>" INERTIAL("1", "1", "1", "1") "</link>\n"
                  "<joint name='f' type='fixed'><parent link='base'/><child link='b'/><mimic joint='x'/></joint>\n"
                  "<link name='b'/></robot>",
                  "'f'", "mimic");
}

/* Every prefix of a valid file, and random byte changes to it, load or fail cleanly (the sanitizer
 * build watches for the rest): a failure always has a message naming the source. */
static void check_mangled(void)
{
    static const char valid[] =
        "<?xml version='1.0'?>\n<robot name='m'>\n<link name='world'/>\n"
        "<joint name='j1' type='revolute'><parent link='world'/><child link='a'/>"
        "<origin xyz='0 0 1' rpy='0.1 0.2 0.3'/><axis xyz='0 1 0'/>"
        "<limit lower='-1' upper='1' effort='2' velocity='3'/><dynamics damping='0.1'/></joint>\n"
        "<link name='a'><inertial><origin xyz='0 0 -0.5' rpy='0 0.3 0'/><mass value='1.5'/>"
        "<inertia ixx='0.1' ixy='0.01' ixz='0' iyy='0.2' iyz='0' izz='0.15'/></inertial></link>\n"
        "<joint name='f' type='fixed'><parent link='a'/><child link='b'/><origin xyz='0 0 -1'/></joint>\n"
        "<link name='b'><inertial><mass value='0.5'/>"
        "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial></link>\n"
        "<joint name='j2' type='continuous'><parent link='b'/><child link='c'/><mimic joint='j1'/></joint>\n"
        "<link name='c'><inertial><mass value='0.2'/>"
        "<inertia ixx='0.001' ixy='0' ixz='0' iyy='0.001' iyz='0' izz='0.001'/></inertial></link>\n"
        "</robot>\n";
    const size_t n = sizeof valid - 1;
    char buf[sizeof valid];
    int clean = 1, loaded = 0;
    for (size_t len = 0; len <= n; ++len) {
        sd_model *m = NULL;
        sd_error err;
        const sd_status st = sd_urdf_load_string(valid, len, "prefix.urdf", NULL, &m, &err);
        if (st == SD_OK) ++loaded;
        else if (m != NULL || strstr(err.message, "prefix.urdf") == NULL) clean = 0;
        sd_model_free(m);
    }
    CHECK(loaded >= 1); /* the whole file at least */
    uint64_t rng = 0x9E3779B97F4A7C15u;
    static const char alphabet[] = "<>/='\" -.0123456789eaxyzn\n\t";
    for (int trial = 0; trial < 3000; ++trial) {
        memcpy(buf, valid, sizeof valid);
        for (int k = 0; k < 1 + trial % 4; ++k) {
            rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
            const uint64_t r = rng * 0x2545F4914F6CDD1Du;
            buf[(r >> 8) % n] = alphabet[(r >> 40) % (sizeof alphabet - 1)];
        }
        sd_model *m = NULL;
        sd_error err;
        const sd_status st = sd_urdf_load_string(buf, n, "mutant.urdf", NULL, &m, &err);
        if (st != SD_OK && (m != NULL || strstr(err.message, "mutant.urdf") == NULL)) clean = 0;
        sd_model_free(m);
    }
    CHECK(clean);
}

static void check_arguments(const char *folder)
{
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_string(NULL, 0, "x", NULL, &m, &err) == SD_E_ARGUMENT);
    CHECK(sd_urdf_load_string("<robot/>", 8, "x", NULL, NULL, &err) == SD_E_ARGUMENT);
    CHECK(sd_urdf_load_file(NULL, NULL, &m, &err) == SD_E_ARGUMENT);
    char path[1024];
    snprintf(path, sizeof path, "%s/no_such_file.urdf", folder);
    CHECK(sd_urdf_load_file(path, NULL, &m, &err) == SD_E_IO && m == NULL);
    CHECK(strstr(err.message, "no_such_file.urdf") != NULL);
    CHECK(sd_urdf_load_string("", 0, "empty", NULL, &m, &err) == SD_E_PARSE && m == NULL);
    CHECK(strstr(err.message, "empty") != NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <folder of broken URDF files>\n", argv[0]);
        return 2;
    }
    printf("broken files (%zu):\n", sizeof corpus / sizeof corpus[0]);
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; ++i) check_broken(argv[1], &corpus[i]);
    check_silence(argv[1]);
    printf("accepted with warnings:\n");
    check_warnings();
    check_arguments(argv[1]);
    check_mangled();
    return test_summary("test_urdf_errors");
}
