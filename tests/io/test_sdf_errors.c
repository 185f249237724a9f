/*
 * tests/io/test_sdf_errors.c — broken SDF files (tests/io/broken_sdf) are refused with the right
 * status and a message naming the file, the line (where there is one to name) and the element;
 * nothing reaches stderr (libsdformat's console and urdfdom's console_bridge are captured), also
 * from four threads at once (the loads are serialised inside); the io layer's checks (no regular file, NUL bytes, NULL arguments)
 * come first; the string loader, options and arguments; a loop-closing joint's damping, friction
 * and spring are named in the model's one warning of what soadyn does not model.
 *
 * Usage: test_sdf_errors <folder of the broken corpus (tests/io/broken_sdf)>
 */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno, mkstemp, pthreads */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/loops.h>
#include <soadyn/model.h>
#include <soadyn/sdf.h>

#include "test_util.h"

/* One broken file: the status, the line (0: none named) and two pieces of text its message must carry. */
typedef struct broken_case {
    const char *file;
    sd_status status;
    int line;
    const char *element;
    const char *detail;
} broken_case;

static const broken_case corpus[] = {
    {"malformed_xml.sdf", SD_E_PARSE, 5, "malformed XML", "tag mismatch"},
    {"not_xml.sdf", SD_E_PARSE, 1, "malformed XML", "Start tag"},
    {"no_model.sdf", SD_E_PARSE, 0, "<model>", "no"},
    {"unknown_joint_type.sdf", SD_E_PARSE, 11, "libsdformat", "hinge"},
    {"missing_child_link.sdf", SD_E_PARSE, 11, "joint with name[j]", "ghost"},
    {"missing_parent_link.sdf", SD_E_PARSE, 11, "joint with name[j]", "nope"},
    {"nan_pose.sdf", SD_E_PARSE, 8, "<pose>", "finite"},
    {"inf_joint_pose.sdf", SD_E_PARSE, 12, "<pose>", "finite"},
    {"negative_mass.sdf", SD_E_PARSE, 7, "link 'b'", "negative mass"},
    {"mass_nan.sdf", SD_E_PARSE, 7, "link 'b'", "not finite"},
    {"mass_huge.sdf", SD_E_PARSE, 7, "link 'b'", "1e12 kg"},
    {"massless_with_inertia.sdf", SD_E_PARSE, 7, "link 'b'", "zero mass"},
    {"inertia_not_psd.sdf", SD_E_PARSE, 7, "link 'b'", "positive semi-definite"},
    {"missing_include.sdf", SD_E_PARSE, 8, "libsdformat", "does_not_exist/model.sdf"},
    {"loop_universal.sdf", SD_E_NOT_SUPPORTED, 23, "joint 'loop'", "closes a loop"},
    {"loop_same_body.sdf", SD_E_MODEL, 15, "constraint 'loop'", "itself"},
    {"ball_loop_open.sdf", SD_E_NOT_SUPPORTED, 23, "joint 'loop'", "gearbox"},
    {"screw_joint.sdf", SD_E_NOT_SUPPORTED, 11, "joint 'j'", "screw"},
    {"revolute2_joint.sdf", SD_E_NOT_SUPPORTED, 11, "joint 'j'", "revolute2"},
    {"axis_zero.sdf", SD_E_PARSE, 0, "libsdformat", "norm of the xyz vector"},
    {"relative_to_cycle.sdf", SD_E_PARSE, 7, "libsdformat", "cycle"},
    {"unknown_relative_to.sdf", SD_E_PARSE, 7, "link with name[b]", "nowhere"},
    {"disconnected_link.sdf", SD_E_MODEL, 11, "link 'c'", "not connected"},
    {"no_root.sdf", SD_E_MODEL, 4, "no root link", "every link"},
    {"joint_child_world.sdf", SD_E_PARSE, 16, "jw", "world"},
    {"duplicate_link.sdf", SD_E_PARSE, 11, "name[b]", "already exists"},
    {"offset_far.sdf", SD_E_PARSE, 7, "link 'b'", "bound of physical models"},
    {"limit_reversed.sdf", SD_E_PARSE, 11, "joint 'j'", "lower > upper"},
    {"damping_negative.sdf", SD_E_PARSE, 11, "joint 'j'", "damping"},
    {"spring_nan.sdf", SD_E_PARSE, 11, "joint 'j'", "spring_stiffness"},
    {"rotor_inertia_text.sdf", SD_E_PARSE, 11, "joint 'j'", "<drake:rotor_inertia> 'heavy'"},
    {"gear_ratio_huge.sdf", SD_E_PARSE, 11, "joint 'j'", "gear_ratio"},
};
enum { NCASES = sizeof corpus / sizeof corpus[0] };

static const char *folder;

/* 1 if the case's load fails as described; prints what differs. */
static int check_case(const broken_case *c, int verbose)
{
    char path[1024], where[1100];
    snprintf(path, sizeof path, "%s/%s", folder, c->file);
    sd_model *m = (sd_model *)&m; /* must come back NULL */
    sd_error err;
    const sd_status st = sd_sdf_load_file(path, NULL, &m, &err);
    if (c->line > 0) snprintf(where, sizeof where, "%s:%d: ", path, c->line);
    else snprintf(where, sizeof where, "%s: ", path);
    const int ok = st == c->status && m == NULL && err.status == st && strncmp(err.message, where, strlen(where)) == 0 &&
                   strstr(err.message, c->element) != NULL && strstr(err.message, c->detail) != NULL &&
                   strstr(err.message + 1, where) == NULL; /* the file:line prefix once, not repeated */
    if (!ok)
        fprintf(stderr, "%s: status %s (expected %s), message: %s\n  (expected to start with '%s' and hold '%s', '%s')\n",
                c->file, sd_status_name(st), sd_status_name(c->status), err.message, where, c->element, c->detail);
    else if (verbose)
        printf("  %-28s %s\n", c->file, err.message + strlen(folder) + 1);
    if (st == SD_OK) sd_model_free(m);
    return ok;
}

/* The files whose loads go through every console libsdformat prints on: its own (XML and value
 * errors), urdfdom's (the URDF fallback after a failed SDF read), libxml2 (malformed XML). A load
 * takes some 60 ms of libsdformat's time (it parses its SDF description each time), hence a few. */
static const char *const noisy[] = {"nan_pose.sdf", "malformed_xml.sdf", "not_xml.sdf", "missing_include.sdf",
                                    "unknown_joint_type.sdf", "relative_to_cycle.sdf"};

static void *thread_main(void *arg)
{
    int *failures = arg;
    for (size_t k = 0; k < sizeof noisy / sizeof *noisy; ++k)
        for (int i = 0; i < NCASES; ++i)
            if (strcmp(corpus[i].file, noisy[k]) == 0 && !check_case(&corpus[i], 0)) ++*failures;
    return NULL;
}

/* A good model, for the string loader and the io layer's checks. */
static const char good[] =
    "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"pendulum\">\n"
    "    <link name=\"base\"/>\n"
    "    <link name=\"arm\"><pose>0 0 -0.5 0 0 0</pose>\n"
    "      <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.02</izz>"
    "<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial></link>\n"
    "    <joint name=\"fix\" type=\"fixed\"><parent>world</parent><child>base</child></joint>\n"
    "    <joint name=\"swing\" type=\"revolute\"><parent>base</parent><child>arm</child>\n"
    "      <axis><xyz>1 0 0</xyz><dynamics><damping>0.3</damping><spring_reference>0.2</spring_reference>"
    "<spring_stiffness>40</spring_stiffness></dynamics></axis>\n"
    "      <drake:rotor_inertia>0.001</drake:rotor_inertia><drake:gear_ratio>-10</drake:gear_ratio></joint>\n"
    "  </model>\n</sdf>\n";

static void check_io_layer(void)
{
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_sdf_load_string(good, sizeof good - 1, "<good>", NULL, &m, &err) == SD_OK);
    if (m != NULL) {
        CHECK(sd_model_nv(m) == 1 && sd_model_nbodies(m) == 2);
        const int arm = sd_model_body_index(m, "arm");
        CHECK(arm >= 0 && sd_model_body_desc(m, arm)->damping == 0.3);
        /* a spring, and Drake's reflected rotor inertia 0.001 x (-10)^2 */
        CHECK(sd_model_stiffness(m, 0) == 40.0 && sd_model_spring_ref(m, 0) == 0.2);
        CHECK_CLOSE(sd_model_armature(m, 0), 0.1, 1e-15);
        CHECK_CLOSE(sd_model_body_mass(m, arm), 2.0, 0.0);
        sd_model_free(m);
    }
    /* the string's own length counts, not a NUL: a copy cut short is malformed XML */
    CHECK(sd_sdf_load_string(good, 40, "<cut>", NULL, &m, &err) == SD_E_PARSE && m == NULL);
    CHECK(strncmp(err.message, "<cut>", 5) == 0);
    CHECK(sd_sdf_load_string(good, sizeof good, "<nul>", NULL, &m, &err) == SD_E_PARSE && strstr(err.message, "NUL"));
    CHECK(sd_sdf_load_string(NULL, 0, "<null>", NULL, &m, &err) == SD_E_ARGUMENT);
    CHECK(sd_sdf_load_file(NULL, NULL, &m, &err) == SD_E_ARGUMENT);
    CHECK(sd_sdf_load_file("x.sdf", NULL, NULL, &err) == SD_E_ARGUMENT);
    CHECK(sd_sdf_load_file("/dev/zero", NULL, &m, &err) == SD_E_IO && strstr(err.message, "/dev/zero"));
    CHECK(sd_sdf_load_file(folder, NULL, &m, &err) == SD_E_IO && m == NULL);
    CHECK(sd_sdf_load_file("no/such/file.sdf", NULL, &m, &err) == SD_E_IO && strstr(err.message, "no/such/file.sdf"));
    /* a model name that is not there */
    const sd_sdf_options other = {.model_name = "other"};
    CHECK(sd_sdf_load_string(good, sizeof good - 1, "<good>", &other, &m, &err) == SD_E_ARGUMENT &&
          strstr(err.message, "'other'") && strstr(err.message, "'pendulum'"));
    /* err may be NULL */
    CHECK(sd_sdf_load_string(good, 40, "<cut>", NULL, &m, NULL) == SD_E_PARSE);
}

/* A four-bar whose closing joint (coupler_rocker: its child already has a parent) carries damping
 * and friction, which a closure constraint cannot hold; the tree joint ground_crank's damping is
 * modelled. %s: the closing joint's <dynamics>. */
#define FOUR_BAR_INERTIAL "<inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>"
static const char four_bar_fmt[] =
    "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n  <model name=\"four_bar\">\n"
    "    <link name=\"crank\"><pose>0 0 0 0 0 1.2</pose>" FOUR_BAR_INERTIAL "</link>\n"
    "    <link name=\"coupler\"><pose relative_to=\"crank\">1 0 0 0 0 -1.2</pose>" FOUR_BAR_INERTIAL "</link>\n"
    "    <link name=\"rocker\"><pose relative_to=\"coupler\">2 0 0 0 0 0</pose>" FOUR_BAR_INERTIAL "</link>\n"
    "    <joint name=\"ground_crank\" type=\"revolute\"><parent>world</parent><child>crank</child>"
    "<axis><xyz>0 0 1</xyz><dynamics><damping>0.4</damping></dynamics></axis></joint>\n"
    "    <joint name=\"crank_coupler\" type=\"revolute\"><parent>crank</parent><child>coupler</child>"
    "<axis><xyz>0 0 1</xyz></axis></joint>\n"
    "    <joint name=\"ground_rocker\" type=\"revolute\"><pose relative_to=\"__model__\">3 0.932039 0 0 0 0</pose>"
    "<parent>world</parent><child>rocker</child><axis><xyz>0 0 1</xyz></axis></joint>\n"
    "    <joint name=\"coupler_rocker\" type=\"revolute\"><parent>coupler</parent><child>rocker</child>\n"
    "      <axis><xyz>0 0 1</xyz>%s</axis></joint>\n"
    "  </model>\n</sdf>\n";

/* The loop-closing joint's dynamics are named in the one warning of what soadyn does not model
 * (joint, line, values); without them the model has no warning. */
static void check_loop_joint_dynamics(void)
{
    char text[4096];
    sd_model *m = NULL;
    sd_error err;
    snprintf(text, sizeof text, four_bar_fmt,
             "<dynamics><damping>0.7</damping><friction>0.2</friction><spring_stiffness>3</spring_stiffness>"
             "</dynamics>");
    CHECK(sd_sdf_load_string(text, strlen(text), "<four_bar>", NULL, &m, &err) == SD_OK);
    if (m == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    CHECK(sd_model_nconstraints(m) == 1 && strcmp(sd_model_constraint_name(m, 0), "coupler_rocker") == 0);
    CHECK(sd_model_body_desc(m, sd_model_joint_index(m, "ground_crank"))->damping == 0.4); /* a tree joint's */
    CHECK(sd_model_nwarnings(m) == 1);
    const char *w = sd_model_nwarnings(m) == 1 ? sd_model_warning(m, 0) : "";
    printf("  loop joint with dynamics: %s\n", w);
    CHECK(strncmp(w, "<four_bar>: ", 12) == 0 && strstr(w, "does not model") != NULL);
    CHECK(strstr(w, "joint 'coupler_rocker' (line 10: damping 0.7, friction 0.2, spring_stiffness 3)") != NULL);
    CHECK(strstr(w, "ground_crank") == NULL);
    sd_model_free(m);
    snprintf(text, sizeof text, four_bar_fmt, "");
    CHECK(sd_sdf_load_string(text, strlen(text), "<four_bar>", NULL, &m, &err) == SD_OK);
    CHECK(m != NULL && sd_model_nwarnings(m) == 0);
    sd_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <folder of the broken SDF corpus>\n", argv[0]);
        return 2;
    }
    folder = argv[1];
    printf("  %d broken files\n", NCASES);
    for (int i = 0; i < NCASES; ++i) CHECK(check_case(&corpus[i], 1));
    check_io_layer();
    check_loop_joint_dynamics();

    /* stderr stays silent, from four threads at once */
    fflush(stderr);
    char name[] = "/tmp/test_sdf_errors_XXXXXX";
    const int fd = mkstemp(name);
    const int saved = dup(fileno(stderr));
    CHECK(fd >= 0 && saved >= 0);
    if (fd >= 0 && saved >= 0) {
        dup2(fd, fileno(stderr));
        int failures[4] = {0, 0, 0, 0};
        pthread_t threads[4];
        for (int t = 0; t < 4; ++t) pthread_create(&threads[t], NULL, thread_main, &failures[t]);
        for (int t = 0; t < 4; ++t) pthread_join(threads[t], NULL);
        fflush(stderr);
        const long printed = lseek(fd, 0, SEEK_END);
        dup2(saved, fileno(stderr));
        close(saved);
        close(fd);
        unlink(name);
        CHECK(failures[0] + failures[1] + failures[2] + failures[3] == 0);
        CHECK(printed == 0);
        printf("  4 threads x %zu files: %d failures, %ld bytes on stderr\n", sizeof noisy / sizeof *noisy,
               failures[0] + failures[1] + failures[2] + failures[3], printed);
    }
    return test_summary("test_sdf_errors");
}
