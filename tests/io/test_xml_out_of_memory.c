/*
 * tests/io/test_xml_out_of_memory.c — libxml2 running out of memory while a valid model is read is
 * reported as out of memory (SD_E_MEMORY, "out of memory"), not as malformed XML, and nothing
 * reaches stderr. libxml2's allocator is replaced (xmlMemSetup) by one that fails from the n-th
 * allocation on; n sweeps every allocation a URDF, an MJCF and an SDF-free load make, so each
 * failure point of the parser is met once. (A 50 MB URDF under `ulimit -v` was "malformed XML:
 * error".)
 */
#define _POSIX_C_SOURCE 200809L /* dup, fileno */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xmlmemory.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

static long allocations_left = -1; /* < 0: never fail */

static void *failing_malloc(size_t n)
{
    if (allocations_left == 0) return NULL;
    if (allocations_left > 0) --allocations_left;
    return malloc(n);
}

static void *failing_realloc(void *p, size_t n)
{
    if (allocations_left == 0) return NULL;
    if (allocations_left > 0) --allocations_left;
    return realloc(p, n);
}

static char *failing_strdup(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *c = failing_malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static const char urdf[] =
    "<?xml version=\"1.0\"?>\n<robot name=\"r\">\n  <link name=\"a\"/>\n"
    "  <link name=\"b\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" "
    "izz=\"1\"/></inertial></link>\n"
    "  <joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"0 0 1\"/></joint>\n"
    "</robot>\n";

static const char mjcf[] =
    "<mujoco model=\"m\">\n  <worldbody>\n    <body name=\"b\">\n      <joint name=\"j\" axis=\"0 0 1\"/>\n"
    "      <geom type=\"sphere\" size=\"0.1\"/>\n    </body>\n  </worldbody>\n</mujoco>\n";

/* Load `text` with libxml2 failing from allocation n on, for every n until a load succeeds;
 * returns how many failure points were met. */
static int sweep(const char *name, const char *text, size_t length,
                 sd_status (*load)(const char *, size_t, const char *, sd_model **, sd_error *))
{
    int points = 0, wrong = 0;
    for (long n = 0; n < 100000; ++n) {
        sd_model *m = NULL;
        sd_error err;
        allocations_left = n;
        const sd_status st = load(text, length, name, &m, &err);
        allocations_left = -1;
        sd_model_free(m);
        if (st == SD_OK) break;
        ++points;
        if (st != SD_E_MEMORY || strstr(err.message, "out of memory") == NULL) {
            if (wrong++ < 5) printf("%s, allocation %ld fails: status %d: %s\n", name, n, (int)st, err.message);
        }
    }
    printf("%s: %d failure points of libxml2's allocator, %d reported as something else\n", name, points, wrong);
    CHECK(points > 10);
    CHECK(wrong == 0);
    return points;
}

static sd_status load_urdf(const char *t, size_t n, const char *name, sd_model **m, sd_error *err)
{
    return sd_urdf_load_string(t, n, name, NULL, m, err);
}

int main(void)
{
    CHECK(xmlMemSetup(free, failing_malloc, failing_realloc, failing_strdup) == 0);
    xmlInitParser();
    /* stderr into a file for the sweep: libxml2 must not print there */
    fflush(stderr);
    FILE *caught = tmpfile();
    const int saved = dup(fileno(stderr));
    CHECK(caught != NULL && saved >= 0);
    if (caught == NULL || saved < 0) return test_summary("test_xml_out_of_memory");
    dup2(fileno(caught), fileno(stderr));
    char messages[4096];
    /* the sweep's own complaints go to stdout while stderr is caught */
    sweep("r.urdf", urdf, sizeof urdf - 1, load_urdf);
    sweep("m.xml", mjcf, sizeof mjcf - 1, sd_mjcf_load_string);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    rewind(caught);
    const size_t got = fread(messages, 1, sizeof messages - 1, caught);
    messages[got] = '\0';
    fclose(caught);
    if (got > 0) fprintf(stderr, "printed on stderr during the sweep:\n%s\n", messages);
    CHECK(got == 0);
    return test_summary("test_xml_out_of_memory");
}
