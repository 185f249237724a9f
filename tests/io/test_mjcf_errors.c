/*
 * tests/io/test_mjcf_errors.c — every file of the broken MJCF corpus (tests/io/broken_mjcf) is
 * refused with the file:line and the words its EXPECTED line gives (unknown joint type, a missing
 * body or joint in an equality, a default class that does not exist, NaN, a loop that cannot
 * close, an include that does not exist or includes itself, a mesh needed for inertia, a bad
 * quaternion, a zero axis, a spring on a free joint (the builder's message, its file:line once),
 * ...), through sd_mjcf_load_file and through sd_model_load_file; none leaves a model behind. Run under the sanitizers by the -san build.
 *
 * Usage: test_mjcf_errors <broken_mjcf folder>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/soadyn.h>

#include "test_util.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <broken_mjcf folder>\n", argv[0]);
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/EXPECTED", argv[1]);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f == NULL) return test_summary("test_mjcf_errors");
    char line[1024];
    int files = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = '\0';
        char *name = strtok(line, "\t"), *lineno = strtok(NULL, "\t"), *words = strtok(NULL, "\t");
        if (!name || !lineno || !words) continue;
        ++files;
        char file[1100], where[1200];
        snprintf(file, sizeof file, "%s/%s", argv[1], name);
        snprintf(where, sizeof where, "%s:%s:", name, lineno);
        for (int via = 0; via < 2; ++via) {
            sd_model *m = (sd_model *)&files; /* must come back NULL */
            sd_error err;
            sd_status st = via == 0 ? sd_mjcf_load_file(file, &m, &err) : sd_model_load_file(file, NULL, &m, NULL, &err);
            if (strcmp(name, "not_mujoco.xml") == 0 && via == 1) { /* a URDF by content: it loads */
                CHECK(st == SD_OK);
                sd_model_free(m);
                continue;
            }
            CHECK(st != SD_OK);
            CHECK(m == NULL);
            const char *at = strstr(err.message, where);
            const int ok = at != NULL && strstr(at + 1, where) == NULL /* the prefix once, not repeated */ &&
                           strstr(err.message, words) != NULL;
            if (!ok) fprintf(stderr, "%s: expected '%s' and '%s' in: %s\n", name, where, words, err.message);
            CHECK(ok);
            if (via == 0) printf("%-28s %s\n", name, err.message);
        }
    }
    fclose(f);
    CHECK(files >= 20);
    return test_summary("test_mjcf_errors");
}
