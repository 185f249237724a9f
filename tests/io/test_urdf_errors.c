/*
 * tests/io/test_urdf_errors.c — broken URDF files are refused with the right status and a
 * message naming the file, the line and the element; doubtful but usable ones load with a
 * warning; nothing is printed by the library (libxml2's own messages included, from several
 * threads at once); numbers beyond the bounds of physical models are refused, limits beyond them
 * read as no limit; paths that are no regular file (/dev/zero, a FIFO, a directory) and files
 * beyond the size limit are refused at once.
 *
 * Usage: test_urdf_errors <folder of the broken corpus (tests/io/broken)>
 */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno, mkfifo, mkdtemp, alarm, pthreads */

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    {"gravity_nan.urdf", SD_E_PARSE, 9, "<soadyn:gravity>", "not finite"},
    {"gravity_huge.urdf", SD_E_PARSE, 3, "<soadyn:gravity>", "bound of physical models"},
    {"gravity_twice.urdf", SD_E_PARSE, 4, "<soadyn:gravity>", "given twice"},
    {"spring_unknown_attribute.urdf", SD_E_PARSE, 6, "joint 'j'", "no attribute 'refrence'"},
    {"spring_negative.urdf", SD_E_PARSE, 6, "joint 'j'", "must not be negative"},
    {"spring_on_fixed_joint.urdf", SD_E_PARSE, 6, "joint 'j'", "not revolute, continuous or prismatic"},
    {"spring_no_stiffness.urdf", SD_E_PARSE, 7, "joint 'j'", "no attribute stiffness"},
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
    /* mimic couplings and URDF+ loops and couplings (urdf.h) */
    {"mimic_of_fixed.urdf", SD_E_PARSE, 11, "joint 'm'", "\"f\">: that joint (line 8) is fixed"},
    {"mimic_of_itself.urdf", SD_E_PARSE, 11, "joint 'm'", "cannot mimic itself"},
    {"mimic_of_planar.urdf", SD_E_PARSE, 11, "joint 'm'", "is planar"},
    {"mimic_multiplier_zero.urdf", SD_E_PARSE, 11, "joint 'm'", "multiplier 0"},
    {"loop_unknown_link.urdf", SD_E_PARSE, 12, "loop 'L'", "\"ghost\">: no such link"},
    {"loop_unknown_type.urdf", SD_E_PARSE, 10, "loop 'L'", "unknown loop type 'hinge'"},
    {"loop_floating.urdf", SD_E_PARSE, 10, "loop 'L'", "floating loop joint is not offered"},
    {"loop_normal_zero.urdf", SD_E_PARSE, 13, "loop 'L'", "<axis> has zero length"},
    {"loop_axis_zero.urdf", SD_E_PARSE, 13, "loop 'L'", "<axis> has zero length"},
    {"loop_two_origins.urdf", SD_E_PARSE, 13, "loop 'L'", "given twice"},
    {"loop_link_missing.urdf", SD_E_PARSE, 11, "loop 'L'", "<predecessor> has no link"},
    {"loop_without_successor.urdf", SD_E_PARSE, 10, "loop 'L'", "no <successor"},
    {"loop_without_name.urdf", SD_E_PARSE, 10, "<loop>", "no name"},
    {"loop_same_body.urdf", SD_E_MODEL, 10, "constraint 'L'", "ties body 'b' to itself"},
    {"coupling_unknown_joint.urdf", SD_E_PARSE, 12, "coupling 'C'", "\"nobody\">: no such joint"},
    {"coupling_fixed_joint.urdf", SD_E_PARSE, 12, "coupling 'C'", "joint 'f' (line 8) is fixed"},
    {"coupling_itself.urdf", SD_E_PARSE, 10, "coupling 'C'", "joint 'j2' to itself"},
    {"coupling_ratio_zero.urdf", SD_E_PARSE, 10, "coupling 'C'", "nonzero ratio"},
    {"coupling_root_link.urdf", SD_E_PARSE, 11, "coupling 'C'", "root link"},
    {"coupling_joint_and_link.urdf", SD_E_PARSE, 11, "coupling 'C'", "only one of"},
    {"coupling_ratio_twice.urdf", SD_E_PARSE, 13, "coupling 'C'", "ratio given twice"},
    {"constraint_name_twice.urdf", SD_E_PARSE, 14, "constraint 'L'", "first at line 10"},
    /* finite numbers no physical model has: beyond the bounds of model_bounds.h */
    {"mass_huge.urdf", SD_E_PARSE, 5, "link 'a'", "beyond 1e+12 kg"},
    {"inertia_huge.urdf", SD_E_PARSE, 6, "link 'a'", "beyond mass x (1e+06 m)^2"},
    {"inertia_beyond_size.urdf", SD_E_PARSE, 7, "link 'a'", "principal moment 1.8e+12"},
    {"origin_huge.urdf", SD_E_PARSE, 8, "joint 'j1'", "beyond 1e+06 m"},
    {"com_huge.urdf", SD_E_PARSE, 5, "link 'a'", "2e+06 m is beyond"},
    {"rpy_huge.urdf", SD_E_PARSE, 8, "joint 'j1'", "beyond 1e+06 rad"},
    {"damping_huge.urdf", SD_E_PARSE, 8, "joint 'j1'", "damping"},
    {"mimic_multiplier_huge.urdf", SD_E_PARSE, 10, "joint 'j2'", "multiplier"},
    {"fixed_chain_far.urdf", SD_E_PARSE, 12, "joint 'j1'", "2.7e+06 m"},
    /* what libxml2 itself reports, in the error and never on stderr; no entity is loaded */
    {"encoding_invalid_bytes.urdf", SD_E_PARSE, 4, "malformed XML", "input conversion failed"},
    {"encoding_unsupported.urdf", SD_E_PARSE, 1, "malformed XML", "KLINGON"},
    {"encoding_utf16_label.urdf", SD_E_PARSE, 1, "malformed XML", "UTF-16"},
    {"encoding_invalid_utf8.urdf", SD_E_PARSE, 4, "malformed XML", "UTF-8"},
    {"external_entity_attribute.urdf", SD_E_PARSE, 4, "malformed XML", "external entity 'secret'"},
    {"external_entity_content.urdf", SD_E_PARSE, 7, "joint 'j1'", "unknown child link 'b'"},
    {"external_dtd.urdf", SD_E_PARSE, 5, "<link>", "no name"},
    /* flexible links (soadyn's <soadyn:flexible> and <soadyn:node>, io/urdf_flex.c) */
    {"flex_missing_file.urdf", SD_E_IO, 4, "link 'a'", "no_such_file.json: cannot open"},
    {"flex_node_out_of_range.urdf", SD_E_PARSE, 12, "joint 'j1'", "link 'beam' has 11 nodes (0 .. 10)"},
    {"flex_beam_zero_elements.urdf", SD_E_PARSE, 5, "link 'beam'", "elements 0"},
    {"flex_node_on_rigid_link.urdf", SD_E_PARSE, 9, "joint 'j1'", "link 'a', which is not flexible"},
    {"flex_file_and_beam.urdf", SD_E_PARSE, 4, "link 'a'", "both file"},
    {"flex_beam_unknown_attribute.urdf", SD_E_PARSE, 5, "link 'a'", "unknown attribute elemnts"},
    {"flex_beam_bad_number.urdf", SD_E_PARSE, 5, "link 'a'", "length=\"2m\""},
    {"flex_twice.urdf", SD_E_PARSE, 5, "link 'a'", "given twice (first at line 4)"},
    {"flex_bad_json.urdf", SD_E_PARSE, 4, "flex_bad.json", "modes[0].shape[1]: 5 numbers, expected 6"},
    {"flex_node_negative.urdf", SD_E_PARSE, 10, "joint 'j1'", "must not be negative"},
    {"flex_beam_boundary.urdf", SD_E_PARSE, 5, "link 'a'", "cantilever or free-free"},
    {"link_inside_link.urdf", SD_E_PARSE, 4, "link 'a'", "holds a <link>; links and joints are children of <robot>"},
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
    const char *at = strstr(err.message, line); /* the file:line prefix once, not repeated */
    CHECK(at == NULL || strstr(at + 1, line) == NULL);
    if (!ok)
        fprintf(stderr, "  %s: got %s \"%s\"; expected %s, line %d, \"%s\", \"%s\"\n", c->file, sd_status_name(st),
                err.message, sd_status_name(c->status), c->line, c->element, c->detail);
    else
        printf("  %-32s %s\n", c->file, err.message);
    if (st == SD_OK && m != (sd_model *)(void *)&sentinel) sd_model_free(m);
    CHECK(sd_urdf_load_file(path, NULL, &m, NULL) == c->status); /* no error struct: no crash */
}

/* Loads of the file that made libxml2 print "encoding error" (its handlers for such errors are the
 * thread's own), from several threads at once: each gets its own message. */
typedef struct load_job {
    const char *path;
    int good; /* loads that failed with the right message */
} load_job;

static void *load_repeatedly(void *arg)
{
    load_job *job = arg;
    for (int i = 0; i < 50; ++i) {
        sd_model *m = NULL;
        sd_error err;
        if (sd_urdf_load_file(job->path, NULL, &m, &err) == SD_E_PARSE && m == NULL &&
            strstr(err.message, ":4: malformed XML: input conversion failed") != NULL)
            ++job->good;
        sd_model_free(m);
    }
    return NULL;
}

static void load_from_threads(const char *folder)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/encoding_invalid_bytes.urdf", folder);
    load_job jobs[4];
    pthread_t threads[4];
    int started = 0;
    for (int t = 0; t < 4; ++t) {
        jobs[t].path = path;
        jobs[t].good = 0;
        if (pthread_create(&threads[t], NULL, load_repeatedly, &jobs[t]) == 0) ++started;
    }
    CHECK(started == 4);
    for (int t = 0; t < started; ++t) {
        pthread_join(threads[t], NULL);
        CHECK(jobs[t].good == 50);
    }
}

/* The whole corpus again with stderr redirected to a file, which must stay empty (libxml2 2.9 printed
 * encoding errors there); then the same from several threads at once. */
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
    load_from_threads(folder);
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

/* Limits beyond the physical bounds are files' way of writing "no limit" (Gazebo's 1e16, the
 * largest double): read as no limit with a warning, so that random configurations stay finite
 * (they are drawn between the limits). */
static void check_unbounded_limits(void)
{
    static const char xml[] =
        "<robot name='r'><link name='base'/>\n"
        "<joint name='j' type='revolute'><parent link='base'/><child link='arm'/>\n"
        "<limit lower='-1.79769e308' upper='1.79769e308' effort='1e16' velocity='1e16'/></joint>\n"
        "<link name='arm'>" INERTIAL("1", "1", "1", "1") "</link></robot>";
    check_warning("limit_unbounded.urdf", xml, "'j'", "no limit");
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_string(xml, strlen(xml), "limit_unbounded.urdf", NULL, &m, &err) == SD_OK);
    if (m == NULL) return;
    const sd_body_desc *d = sd_model_body_desc(m, sd_model_body_index(m, "arm"));
    CHECK(d != NULL && !d->has_limits && d->lower == 0.0 && d->upper == 0.0);
    CHECK(d != NULL && d->effort_limit == 1e16 && d->velocity_limit == 0.0); /* 1e16 N m is within 1e25 */
    uint64_t rng = 5;
    double q[1];
    for (int i = 0; i < 100; ++i) {
        sd_configuration_random(m, &rng, q);
        CHECK(isfinite(q[0]) && fabs(q[0]) <= 3.15);
    }
    sd_model_free(m);
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

/* A path that is no regular file (a device that never ends, a FIFO nobody writes, a directory) and
 * a file beyond the size limit are refused at once, naming the path; alarm() turns a hang into a
 * failure. */
static void expect_io_error(const char *path, const char *why)
{
    static char sentinel;
    sd_model *m = (sd_model *)(void *)&sentinel;
    sd_error err;
    const sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
    const int ok = st == SD_E_IO && m == NULL && strstr(err.message, path) != NULL && strstr(err.message, why) != NULL;
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s: got %s \"%s\"; expected \"%s\"\n", path, sd_status_name(st), err.message, why);
    else printf("  %s\n", err.message);
}

static void check_not_regular(const char *folder)
{
    alarm(60);
    expect_io_error("/dev/zero", "character device");
    expect_io_error(folder, "directory");
    char dir[] = "/tmp/soadyn_test_XXXXXX";
    if (mkdtemp(dir) == NULL) {
        CHECK(!"mkdtemp");
        return;
    }
    char fifo[64], big[64];
    snprintf(fifo, sizeof fifo, "%s/robot.urdf", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    expect_io_error(fifo, "FIFO");
    unlink(fifo);
    /* one byte beyond the limit, sparse: no disk used, nothing but the size matters */
    snprintf(big, sizeof big, "%s/big.urdf", dir);
    const int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)SD_MODEL_FILE_MAX_BYTES + 1) == 0);
    if (fd >= 0) close(fd);
    expect_io_error(big, "file too large");
    unlink(big);
    rmdir(dir);
    alarm(0);
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
    printf("not regular files, too large a file:\n");
    check_not_regular(argv[1]);
    check_unbounded_limits();
    check_mangled();
    return test_summary("test_urdf_errors");
}
