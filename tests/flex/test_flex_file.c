/*
 * tests/flex/test_flex_file.c — flexible-body data files (sd_flex_data_read_file, src/io/flex_file.c):
 *   - a good file, written here into a temporary folder, gives the sd_flex_desc built by hand
 *     (positions, masses, inertias, the shapes column-major, K_m = diag(omega^2 m_r) and D_m =
 *     diag(2 zeta omega m_r) with the modal masses m_r summed here), with frequencies in rad/s or Hz;
 *   - the same model with explicit "stiffness" and "damping" matrices and the linearised mass model;
 *   - broken files, each refused with SD_E_PARSE (or SD_E_IO) and a message naming the file and the
 *     member (or the line of a syntax error); under the sanitizers none leaks or reads out of bounds.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <soadyn/flex.h>

#include "test_util.h"

static char dir[] = "/tmp/soadyn_flex_file_XXXXXX";
static char path[4096];

static const char *write_file(const char *name, const char *text)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) return path;
    fputs(text, f);
    fclose(f);
    return path;
}

/* Three nodes along x, the middle one with a rotary inertia; two modes bending in y and z. */
static const double pos[3][3] = {{0, 0, 0}, {0.5, 0, 0}, {1.0, 0.1, 0}};
static const double mass[3] = {0.25, 0.5, 0.25};
static const double J1[9] = {0.01, 0.001, 0, 0.001, 0.02, 0, 0, 0, 0.03};
static const double shape[2][3][6] = {{{0, 0, 0, 0, 0, 0}, {0, 0, 0.8, 0, 0.3, 0}, {0, 0, 1.2, 0, 1.0, 0}},
                                      {{0, 0, 0, 0, 0, 0}, {0, -0.7, 0, 0, 0, 0.25}, {0, -1.1, 0, 0, 0, 0.9}}};
static const double omega[2] = {12.5, 31.0};
static const double zeta[2] = {0.01, 0.02};

static const char *good_text(int hz, int matrices)
{
    static char text[8192];
    int n = snprintf(text, sizeof text, "{\n  \"format\": \"soadyn-flex\",\n  \"version\": 1,\n  \"name\": \"test\",\n%s"
                                        "  \"nodes\": [\n",
                     matrices ? "  \"mass_model\": \"linearised\",\n" : "");
    for (int j = 0; j < 3; ++j) {
        n += snprintf(text + n, sizeof text - (size_t)n, "    {\"position\": [%.17g, %.17g, %.17g], \"mass\": %.17g",
                      pos[j][0], pos[j][1], pos[j][2], mass[j]);
        if (j == 1) {
            n += snprintf(text + n, sizeof text - (size_t)n, ", \"inertia\": [");
            for (int i = 0; i < 9; ++i) n += snprintf(text + n, sizeof text - (size_t)n, "%s%.17g", i ? ", " : "", J1[i]);
            n += snprintf(text + n, sizeof text - (size_t)n, "]");
        }
        n += snprintf(text + n, sizeof text - (size_t)n, "}%s\n", j < 2 ? "," : "");
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "  ],\n  \"modes\": [\n");
    for (int r = 0; r < 2; ++r) {
        n += snprintf(text + n, sizeof text - (size_t)n, "    {");
        if (!matrices)
            n += snprintf(text + n, sizeof text - (size_t)n, hz ? "\"frequency_hz\": %.17g, " : "\"omega\": %.17g, ",
                          hz ? omega[r] / (2.0 * 3.14159265358979323846) : omega[r]);
        if (!matrices) n += snprintf(text + n, sizeof text - (size_t)n, "\"damping_ratio\": %.17g, ", zeta[r]);
        n += snprintf(text + n, sizeof text - (size_t)n, "\"shape\": [");
        for (int j = 0; j < 3; ++j) {
            n += snprintf(text + n, sizeof text - (size_t)n, "%s[", j ? ", " : "");
            for (int c = 0; c < 6; ++c) n += snprintf(text + n, sizeof text - (size_t)n, "%s%.17g", c ? ", " : "", shape[r][j][c]);
            n += snprintf(text + n, sizeof text - (size_t)n, "]");
        }
        n += snprintf(text + n, sizeof text - (size_t)n, "]}%s\n", r < 1 ? "," : "");
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "  ]");
    if (matrices)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      ",\n  \"stiffness\": [[100, 2], [2, 900]],\n  \"damping\": [[0.5, 0.1], [0.1, 0.7]]");
    snprintf(text + n, sizeof text - (size_t)n, "\n}\n");
    return text;
}

/* m_r = sum m_j |t_j|^2 + r_j^T J_j r_j, summed here independently of the reader. */
static double modal_mass(int r)
{
    double m = 0.0;
    for (int j = 0; j < 3; ++j) {
        const double *s = shape[r][j];
        m += mass[j] * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]);
        if (j == 1)
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) m += s[a] * J1[3 * a + b] * s[b];
    }
    return m;
}

static void check_desc(const sd_flex_desc *D, int matrices, const char *file)
{
    CHECK(D->n_nodes == 3 && D->n_modes == 2);
    CHECK(D->mass_model == (matrices ? SD_FLEX_LINEARISED : SD_FLEX_FULL));
    CHECK(D->source_file != NULL && strcmp(D->source_file, file) == 0);
    for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i) CHECK(D->node_position[3 * j + i] == pos[j][i]);
        CHECK(D->node_mass[j] == mass[j]);
        for (int i = 0; i < 9; ++i) CHECK(D->node_inertia != NULL && D->node_inertia[9 * j + i] == (j == 1 ? J1[i] : 0.0));
    }
    for (int r = 0; r < 2; ++r)
        for (int j = 0; j < 3; ++j)
            for (int c = 0; c < 6; ++c) CHECK(D->modes[6 * 3 * r + 6 * j + c] == shape[r][j][c]); /* column-major */
    CHECK(D->damping != NULL);
    if (matrices) {
        const double K[4] = {100, 2, 2, 900}, Dm[4] = {0.5, 0.1, 0.1, 0.7};
        for (int i = 0; i < 4; ++i) CHECK(D->stiffness[i] == K[i] && D->damping[i] == Dm[i]);
        return;
    }
    /* the shapes are mass-orthogonal by construction: mode 0 moves y (and r_z), mode 1 z (and r_y);
     * the inertia J1 couples r_y and r_z only through J[1][2] = 0 */
    for (int r = 0; r < 2; ++r)
        for (int s = 0; s < 2; ++s) {
            const double mr = modal_mass(r);
            CHECK_CLOSE(D->stiffness[2 * r + s], r == s ? omega[r] * omega[r] * mr : 0.0, 1e-14);
            CHECK_CLOSE(D->damping[2 * r + s], r == s ? 2.0 * zeta[r] * omega[r] * mr : 0.0, 1e-14);
        }
}

static void test_good_files(void)
{
    for (int variant = 0; variant < 3; ++variant) {
        const int hz = variant == 1, matrices = variant == 2;
        const char *file = write_file("good.json", good_text(hz, matrices));
        sd_flex_data *d = NULL;
        sd_error err;
        const sd_status st = sd_flex_data_read_file(file, &d, &err);
        if (st != SD_OK) fprintf(stderr, "good file (variant %d): %s\n", variant, err.message);
        CHECK(st == SD_OK && d != NULL);
        if (d != NULL) check_desc(sd_flex_data_desc(d), matrices, file);
        sd_flex_data_free(d);
    }
}

/* A broken file: refused with `status`, the message naming the file and containing `expect`. */
static void broken(const char *name, const char *text, sd_status status, const char *expect)
{
    const char *file = write_file(name, text);
    sd_flex_data *d = (sd_flex_data *)&d;
    sd_error err;
    const sd_status st = sd_flex_data_read_file(file, &d, &err);
    CHECK(st == status && d == NULL);
    const int named = strstr(err.message, file) == err.message && strstr(err.message, expect) != NULL;
    if (st != status || !named) fprintf(stderr, "%s: status %d, message: %s (expected '%s')\n", name, (int)st, err.message, expect);
    CHECK(named);
    printf("  %s\n", err.message);
}

#define HEAD "{\"format\": \"soadyn-flex\", \"version\": 1,\n"
#define NODES2 "\"nodes\": [{\"position\": [0, 0, 0], \"mass\": 1}, {\"position\": [1, 0, 0], \"mass\": 1}],\n"
#define SHAPE2 "\"shape\": [[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 1, 0]]"

static void test_broken_files(void)
{
    broken("shape_length.json", HEAD NODES2 "\"modes\": [{\"omega\": 3, \"shape\": [[0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0]]}]}",
           SD_E_PARSE, "modes[0].shape[1]: 5 numbers, expected 6");
    broken("shape_nodes.json", HEAD NODES2 "\"modes\": [{\"omega\": 3, \"shape\": [[0, 0, 1, 0, 1, 0]]}]}", SD_E_PARSE,
           "modes[0].shape: 1 entries, expected 2");
    broken("missing_mass.json",
           HEAD "\"nodes\": [{\"position\": [0, 0, 0], \"mass\": 1}, {\"position\": [1, 0, 0]}],\n"
                "\"modes\": [{\"omega\": 3, " SHAPE2 "}]}",
           SD_E_PARSE, "nodes[1]: no \"mass\"");
    broken("wrong_type.json",
           HEAD "\"nodes\": [{\"position\": [0, 0, 0], \"mass\": \"1\"}, {\"position\": [1, 0, 0], \"mass\": 1}],\n"
                "\"modes\": [{\"omega\": 3, " SHAPE2 "}]}",
           SD_E_PARSE, "nodes[0].mass: a string, expected a number");
    broken("nan.json",
           HEAD "\"nodes\": [{\"position\": [0, 0, 0], \"mass\": 1},\n{\"position\": [1, 0, 0], \"mass\": NaN}],\n"
                "\"modes\": [{\"omega\": 3, " SHAPE2 "}]}",
           SD_E_PARSE, ":3: JSON: ");
    broken("overflow.json", HEAD NODES2 "\"modes\": [{\"omega\": 1e999,\n" SHAPE2 "}]}", SD_E_PARSE, ":3: JSON: ");
    broken("syntax.json", HEAD NODES2 "\"modes\": [{\"omega\": 3\n" SHAPE2 "}]}", SD_E_PARSE, ":4: JSON: ");
    broken("duplicate.json", HEAD NODES2 "\"modes\": [{\"omega\": 3, \"omega\": 4, " SHAPE2 "}]}", SD_E_PARSE,
           ":3: JSON: duplicate");
    broken("negative_mass.json",
           HEAD "\"nodes\": [{\"position\": [0, 0, 0], \"mass\": 1}, {\"position\": [1, 0, 0], \"mass\": -2}],\n"
                "\"modes\": [{\"omega\": 3, " SHAPE2 "}]}",
           SD_E_PARSE, "nodes[1].mass: -2: must not be negative");
    broken("nonsymmetric.json", HEAD NODES2 "\"modes\": [{" SHAPE2 "}, {\"shape\": [[0,0,0,0,0,0],[0,-1,0,0,0,1]]}],\n"
                                            "\"stiffness\": [[1, 0.5], [0.4, 2]]}",
           SD_E_PARSE, "stiffness: not symmetric: [1][0] = 0.4");
    broken("mass_model.json", HEAD "\"mass_model\": \"lumped\", " NODES2 "\"modes\": [{\"omega\": 3, " SHAPE2 "}]}",
           SD_E_PARSE, "mass_model: unknown \"lumped\"");
    broken("empty_modes.json", HEAD NODES2 "\"modes\": []}", SD_E_PARSE, "modes: empty");
    broken("empty_nodes.json", HEAD "\"nodes\": [], \"modes\": [{\"omega\": 3, \"shape\": []}]}", SD_E_PARSE,
           "nodes: empty");
    broken("format.json", "{\"format\": \"urdf\", \"version\": 1}", SD_E_PARSE, "format: \"urdf\", expected");
    broken("version.json", "{\"format\": \"soadyn-flex\", \"version\": 2}", SD_E_PARSE, "version: 2");
    broken("unknown_member.json",
           HEAD "\"nodes\": [{\"position\": [0, 0, 0], \"mas\": 1}], \"modes\": [{\"omega\": 3, \"shape\": [[0,0,0,0,1,0]]}]}",
           SD_E_PARSE, "nodes[0]: unknown member \"mas\"");
    broken("both_frequencies.json", HEAD NODES2 "\"modes\": [{\"omega\": 3, \"frequency_hz\": 1, " SHAPE2 "}]}",
           SD_E_PARSE, "modes[0]: both \"omega\" and \"frequency_hz\"");
    broken("no_stiffness.json", HEAD NODES2 "\"modes\": [{" SHAPE2 "}]}", SD_E_PARSE,
           "modes[0]: no \"omega\" or \"frequency_hz\", and no \"stiffness\"");
    broken("stiffness_and_omega.json", HEAD NODES2 "\"modes\": [{\"omega\": 3, " SHAPE2 "}], \"stiffness\": [[9]]}",
           SD_E_PARSE, "modes[0]: a frequency and a \"stiffness\" matrix");
    broken("stiffness_rows.json", HEAD NODES2 "\"modes\": [{" SHAPE2 "}], \"stiffness\": [[9], [1]]}", SD_E_PARSE,
           "stiffness: 2 rows, expected 1");
    broken("negative_omega.json", HEAD NODES2 "\"modes\": [{\"omega\": -3, " SHAPE2 "}]}", SD_E_PARSE,
           "modes[0].omega: -3: must not be negative");
    broken("not_orthogonal.json",
           HEAD NODES2 "\"modes\": [{\"omega\": 3, " SHAPE2 "}, {\"omega\": 5, \"shape\": [[0,0,0,0,0,0],[0,0,0,0,1,1]]}]}",
           SD_E_PARSE, "modes[0] and modes[1]: the shapes are not mass-orthogonal");
    broken("massless_mode.json", HEAD NODES2 "\"modes\": [{\"omega\": 3, \"shape\": [[0,0,0,0,0,0],[0,0,0,0,0,0]]}]}",
           SD_E_PARSE, "modes[0].shape: moves no mass");
    broken("position.json",
           HEAD "\"nodes\": [{\"position\": [0, 0], \"mass\": 1}], \"modes\": [{\"omega\": 3, \"shape\": [[0,0,0,0,1,0]]}]}",
           SD_E_PARSE, "nodes[0].position: 2 numbers, expected 3");
    broken("far_node.json",
           HEAD "\"nodes\": [{\"position\": [0, 1e9, 0], \"mass\": 1}], \"modes\": [{\"omega\": 3, \"shape\": [[0,0,0,0,1,0]]}]}",
           SD_E_PARSE, "nodes[0].position[1]: 1e+09 is beyond");
    broken("top_array.json", "[1, 2, 3]", SD_E_PARSE, "the file holds an array, expected an object");
    broken("empty.json", "", SD_E_PARSE, "JSON: ");
    broken("damping_both.json",
           HEAD NODES2 "\"modes\": [{\"damping_ratio\": 0.1, " SHAPE2 "}], \"stiffness\": [[9]], \"damping\": [[1]]}",
           SD_E_PARSE, "modes[0]: a damping_ratio and a \"damping\" matrix");
    /* huge counts: 1001 modes of a one-node body */
    {
        const size_t cap = 1001 * 64 + 256;
        char *text = malloc(cap);
        size_t n = (size_t)snprintf(text, cap, HEAD "\"nodes\": [{\"position\": [0, 0, 0], \"mass\": 1}], \"modes\": [");
        for (int k = 0; k < 1001; ++k)
            n += (size_t)snprintf(text + n, cap - n, "%s{\"omega\": 1, \"shape\": [[0,0,0,0,1,0]]}", k ? "," : "");
        snprintf(text + n, cap - n, "]}");
        broken("many_modes.json", text, SD_E_PARSE, "modes: 1001 entries, at most 1000");
        free(text);
    }
    /* more values than a data file may hold: refused before jansson builds a tree */
    {
        const size_t count = (size_t)9 << 20, cap = 2 * count + 16;
        char *text = malloc(cap);
        text[0] = '[';
        for (size_t i = 0; i < count; ++i) {
            text[1 + 2 * i] = '0';
            text[2 + 2 * i] = ',';
        }
        text[2 * count] = ']';
        text[2 * count + 1] = '\0';
        broken("many_values.json", text, SD_E_PARSE, "JSON values, more than");
        free(text);
    }
    /* not there, a directory */
    snprintf(path, sizeof path, "%s/absent.json", dir);
    sd_flex_data *d = NULL;
    sd_error err;
    CHECK(sd_flex_data_read_file(path, &d, &err) == SD_E_IO && d == NULL && strstr(err.message, "absent.json") != NULL);
    CHECK(sd_flex_data_read_file(dir, &d, &err) == SD_E_IO && strstr(err.message, "directory") != NULL);
    CHECK(sd_flex_data_read_file(NULL, &d, &err) == SD_E_ARGUMENT);
    CHECK(sd_flex_data_read_file(path, NULL, &err) == SD_E_ARGUMENT);
}

int main(void)
{
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_good_files();
    test_broken_files();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("test_flex_file");
}
