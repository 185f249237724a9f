/*
 * tests/flex/test_urdf_flex.c — flexible links in URDF files (src/io/urdf_flex.c): a robot written
 * here into a temporary folder with
 *   - a link whose model is a JSON data file named relative to the URDF's folder (the panel rides
 *     on its node 2), with mass_model="linearised" on the element;
 *   - a link welded to its parent (a fixed joint: still a body) whose model is a <beam>, a tip link
 *     welded onto its last node (fixed, riding on a node: still a body);
 * loaded and checked: the counts (flexible bodies, modes, nodes, nq and nv with the modes), each
 * body's parent node, the mass models, and the modal frequencies of the model
 * (sd_model_flex_frequencies, src/flex/frequencies.c): lowered by the bodies riding on the nodes,
 * and without them (the same file, panel and tip removed) equal to independent values: the data
 * file's omegas (its shapes are not mass-normalised, so K_m and M_m^ff both differ from the
 * identity) and the beam's own eigenvalues from sd_beam_modes. The same robot with xmlns:soadyn declared and
 * loaded from a string whose source name carries the folder gives the same model. Broken files are
 * in tests/io/broken (test_urdf_errors).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/flex.h>
#include <soadyn/soadyn.h>

#include "test_util.h"

static char dir[] = "/tmp/soadyn_urdf_flex_XXXXXX";

static void write_file(const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) return;
    fputs(text, f);
    fclose(f);
}

/* Three nodes; two modes, y and z bending, deliberately not mass-normalised. */
static const char *json =
    "{\"format\": \"soadyn-flex\", \"version\": 1,\n"
    " \"nodes\": [{\"position\": [0, 0, 0], \"mass\": 0.25},\n"
    "           {\"position\": [0.5, 0, 0], \"mass\": 0.5},\n"
    "           {\"position\": [1, 0, 0], \"mass\": 0.25}],\n"
    " \"modes\": [{\"omega\": 12.5, \"damping_ratio\": 0.01,\n"
    "            \"shape\": [[0,0,0,0,0,0], [0,0,0.8,0,0.3,0], [0,0,1.2,0,1,0]]},\n"
    "           {\"frequency_hz\": 5,\n"
    "            \"shape\": [[0,0,0,0,0,0], [0,-0.7,0,0,0,0.25], [0,-1.1,0,0,0,0.9]]}]}\n";

#define INERTIAL "<inertial><mass value=\"1\"/><inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.1\" iyz=\"0\" izz=\"0.1\"/></inertial>"

static void robot_text(char *out, size_t size, int declare)
{
    snprintf(out, size,
             "<robot name=\"flexy\"%s>\n"
             "  <link name=\"base\">" INERTIAL "</link>\n"
             "  <link name=\"array\">" INERTIAL "\n"
             "    <soadyn:flexible file=\"array.json\" mass_model=\"linearised\"/>\n"
             "  </link>\n"
             "  <joint name=\"shoulder\" type=\"revolute\"><parent link=\"base\"/><child link=\"array\"/>\n"
             "    <axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>\n"
             "  <link name=\"panel\">" INERTIAL "</link>\n"
             "  <joint name=\"hinge\" type=\"revolute\"><parent link=\"array\"/><child link=\"panel\"/>\n"
             "    <origin xyz=\"1 0 0\"/><axis xyz=\"1 0 0\"/><soadyn:node index=\"2\"/></joint>\n"
             "  <link name=\"boom\">\n"
             "    <soadyn:flexible>\n"
             "      <beam length=\"2\" EI=\"150\" mass_per_length=\"0.8\" elements=\"8\" modes=\"3\" planes=\"xy\"\n"
             "            damping_ratio=\"0.02\"/>\n"
             "    </soadyn:flexible>\n"
             "  </link>\n"
             "  <joint name=\"weld\" type=\"fixed\"><parent link=\"base\"/><child link=\"boom\"/></joint>\n"
             "  <link name=\"tip\">" INERTIAL "</link>\n"
             "  <joint name=\"tip_weld\" type=\"fixed\"><parent link=\"boom\"/><child link=\"tip\"/>\n"
             "    <origin xyz=\"2 0 0\"/><soadyn:node index=\"8\"/></joint>\n"
             "</robot>\n",
             declare ? " xmlns:soadyn=\"https://soadyn.example/urdf\"" : "");
}

/* The boom's beam as the file describes it, from the generator (its eigenvalues are the reference). */
static sd_flex_data *boom_beam(void)
{
    sd_beam_spec spec;
    sd_beam_spec_init(&spec);
    spec.length = 2.0;
    spec.EI = 150.0;
    spec.mass_per_length = 0.8;
    spec.elements = 8;
    spec.modes = 3;
    spec.planes = 1;
    sd_flex_data *beam = NULL;
    sd_error err;
    CHECK(sd_beam_modes(&spec, &beam, &err) == SD_OK);
    return beam;
}

static void check_model(const sd_model *m)
{
    CHECK(sd_model_nflexible(m) == 2);
    const int base = sd_model_body_index(m, "base"), array = sd_model_body_index(m, "array");
    const int panel = sd_model_body_index(m, "panel"), boom = sd_model_body_index(m, "boom");
    const int tip = sd_model_body_index(m, "tip");
    CHECK(base >= 0 && array >= 0 && panel >= 0 && boom >= 0 && tip >= 0); /* fixed joints kept these bodies */
    if (base < 0 || array < 0 || panel < 0 || boom < 0 || tip < 0) return;
    CHECK(sd_model_body_nmodes(m, array) == 2 && sd_model_body_nnodes(m, array) == 3);
    CHECK(sd_model_body_nmodes(m, boom) == 3 && sd_model_body_nnodes(m, boom) == 9);
    CHECK(sd_model_body_nmodes(m, base) == 0 && sd_model_body_nnodes(m, panel) == 0);
    CHECK(sd_model_parent_node(m, panel) == 2 && sd_model_parent_node(m, tip) == 8);
    CHECK(sd_model_parent_node(m, array) == -1 && sd_model_parent_node(m, boom) == -1);
    CHECK(sd_model_flex_mass_model(m, array) == SD_FLEX_LINEARISED);
    CHECK(sd_model_flex_mass_model(m, boom) == SD_FLEX_FULL);
    CHECK(sd_model_nq(m) == 2 + 2 + 3 && sd_model_nv(m) == 2 + 2 + 3); /* shoulder, hinge, modes */
    CHECK(sd_model_mode_q_index(m, array) >= 0 && sd_model_mode_v_index(m, boom) >= 0);
    for (size_t w = 0; w < sd_model_nwarnings(m); ++w) {
        const int massless = strstr(sd_model_warning(m, w), "zero-mass") != NULL;
        if (massless) fprintf(stderr, "unexpected warning: %s\n", sd_model_warning(m, w));
        CHECK(!massless); /* the boom's mass is in its nodes */
    }

    /* frequencies of the model vs the file's (mode 0 at 12.5 rad/s, mode 1 at 5 Hz, the body
     * alone): the panel riding on node 2 lowers both (tests/flex/test_system_modes.c checks the
     * values with a rider against the Euler-Bernoulli tip-mass equation) */
    double omega[3];
    sd_error err;
    sd_status st = sd_model_flex_frequencies(m, array, omega, &err);
    if (st != SD_OK) fprintf(stderr, "frequencies: %s\n", err.message);
    CHECK(st == SD_OK);
    CHECK(omega[0] > 0.0 && omega[0] < 12.5 && omega[1] > omega[0] && omega[1] < 10.0 * 3.14159265358979323846);
    /* frequencies of the boom vs the beam generator's eigenvalues (the beam alone): the tip riding
     * on node 8 lowers each */
    sd_flex_data *beam = boom_beam();
    st = sd_model_flex_frequencies(m, boom, omega, &err);
    CHECK(st == SD_OK);
    for (int r = 0; r < 3 && beam != NULL; ++r)
        CHECK(omega[r] > 0.0 && omega[r] < sqrt(sd_flex_data_desc(beam)->stiffness[3 * r + r]));
    sd_flex_data_free(beam);
    CHECK(sd_model_flex_frequencies(m, base, omega, &err) == SD_OK); /* rigid: nothing to write */
    CHECK(sd_model_flex_frequencies(m, 99, omega, &err) == SD_E_ARGUMENT);
}

/* Remove from text the first span from `begin` through the next `end` (inclusive). */
static void remove_span(char *text, const char *begin, const char *end)
{
    char *b = strstr(text, begin), *e = b ? strstr(b, end) : NULL;
    if (e) memmove(b, e + strlen(end), strlen(e + strlen(end)) + 1);
}

/* The same robot without the panel and the tip (nothing rides on a node): each body's frequencies
 * are its own, the data file's omegas (its shapes are not mass-normalised, so K_m and M_m^ff both
 * differ from the identity) and the beam's eigenvalues from sd_beam_modes. */
static void check_alone(const char *with_riders)
{
    char text[4096], path[4200];
    snprintf(text, sizeof text, "%s", with_riders);
    remove_span(text, "  <link name=\"panel\">", "</link>\n");
    remove_span(text, "  <joint name=\"hinge\"", "</joint>\n");
    remove_span(text, "  <link name=\"tip\">", "</link>\n");
    remove_span(text, "  <joint name=\"tip_weld\"", "</joint>\n");
    write_file("alone.urdf", text);
    snprintf(path, sizeof path, "%s/alone.urdf", dir);
    sd_model *m = NULL;
    sd_error err;
    CHECK(sd_urdf_load_file(path, NULL, &m, &err) == SD_OK && m != NULL && sd_model_nbodies(m) == 3);
    if (!m) return;
    double omega[3];
    CHECK(sd_model_flex_frequencies(m, sd_model_body_index(m, "array"), omega, &err) == SD_OK);
    CHECK_CLOSE(omega[0], 12.5, 1e-12); /* ascending: 12.5 rad/s, then 5 Hz = 31.4 rad/s */
    CHECK_CLOSE(omega[1], 10.0 * 3.14159265358979323846, 1e-12);
    sd_flex_data *beam = boom_beam();
    CHECK(sd_model_flex_frequencies(m, sd_model_body_index(m, "boom"), omega, &err) == SD_OK);
    for (int r = 0; r < 3 && beam != NULL; ++r)
        CHECK_CLOSE(omega[r], sqrt(sd_flex_data_desc(beam)->stiffness[3 * r + r]), 1e-12);
    sd_flex_data_free(beam);
    sd_model_free(m);
}

int main(void)
{
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    write_file("array.json", json);
    char text[4096], path[4200];
    for (int declare = 0; declare < 2; ++declare) {
        robot_text(text, sizeof text, declare);
        write_file("robot.urdf", text);
        snprintf(path, sizeof path, "%s/robot.urdf", dir);
        sd_model *m = NULL;
        sd_error err;
        sd_status st = sd_urdf_load_file(path, NULL, &m, &err);
        if (st != SD_OK) fprintf(stderr, "load (declare %d): %s\n", declare, err.message);
        CHECK(st == SD_OK && m != NULL);
        if (m != NULL) check_model(m);
        sd_model_free(m);
        /* from a string: the file is found from the source name's folder */
        m = NULL;
        st = sd_urdf_load_string(text, strlen(text), path, NULL, &m, &err);
        if (st != SD_OK) fprintf(stderr, "load string (declare %d): %s\n", declare, err.message);
        CHECK(st == SD_OK && m != NULL);
        if (m != NULL) check_model(m);
        sd_model_free(m);
    }
    check_alone(text);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("test_urdf_flex");
}
