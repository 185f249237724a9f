/*
 * fuzz/fuzz_files.c — the model readers with real files on disk, for what a text alone cannot
 * reach: MJCF <include file> (nested, repeated, missing, in a subfolder, including itself, the
 * expansion bounds) and URDF <soadyn:flexible file> data files. The input is several files: its
 * first byte picks the format (even: MJCF, odd: URDF), the rest is split at each "\n----\n" into the
 * main file and up to three more, written as a.xml, b.xml, sub/c.xml (MJCF) or a.json, b.json,
 * sub/c.json (URDF) in a folder of this process (in memory: fuzz_folder.h); the main file is then
 * loaded from there (sd_mjcf_load_file / sd_urdf_load_file) and judged by fuzz_check_load
 * (model_check.c), and libxml2 must print nothing (libxml2_trap.c).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <soadyn/mjcf.h>
#include <soadyn/urdf.h>

#include "fuzz_folder.h"
#include "libxml2_trap.h"
#include "model_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

static char dir[64]; /* /dev/shm/soadyn-fuzz-files-XXXXXX (fuzz_folder.h) */
static const char *const mjcf_names[4] = {"main.xml", "a.xml", "b.xml", "sub/c.xml"};
static const char *const urdf_names[4] = {"main.urdf", "a.json", "b.json", "sub/c.json"};

static void path_of(const char *name, char *path, size_t size) { snprintf(path, size, "%s/%s", dir, name); }

static void remove_all(void)
{
    char path[128];
    for (int i = 0; i < 4; ++i) {
        path_of(mjcf_names[i], path, sizeof path);
        remove(path);
        path_of(urdf_names[i], path, sizeof path);
        remove(path);
    }
    path_of("sub", path, sizeof path);
    rmdir(path);
    rmdir(dir);
}

/* The folder, made on the first input (libxml2_trap.c has libFuzzer's start-up hook). */
static void make_folder(void)
{
    char sub[128];
    fuzz_make_folder(dir, sizeof dir, "soadyn-fuzz-files");
    path_of("sub", sub, sizeof sub);
    if (mkdir(sub, 0700) != 0) {
        perror("fuzz_files: mkdir");
        abort();
    }
    atexit(remove_all);
}

static void write_part(const char *name, const uint8_t *bytes, size_t size)
{
    char path[128];
    path_of(name, path, sizeof path);
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(bytes, 1, size, fp) != size) {
        perror("fuzz_files: write");
        abort();
    }
    fclose(fp);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    static int ready;
    if (!ready) {
        make_folder();
        ready = 1;
    }
    if (size == 0) return 0;
    const int urdf = bytes[0] & 1;
    const char *const *names = urdf ? urdf_names : mjcf_names;
    static const char cut[] = "\n----\n";
    const size_t cut_len = sizeof cut - 1;
    const uint8_t *p = bytes + 1, *end = bytes + size;
    int part = 0;
    for (; part < 4; ++part) {
        const uint8_t *next = p;
        while (next + cut_len <= end && memcmp(next, cut, cut_len) != 0) ++next;
        const size_t len = next + cut_len <= end ? (size_t)(next - p) : (size_t)(end - p);
        write_part(names[part], p, len);
        p += len;
        if (p >= end) {
            ++part;
            break;
        }
        p += cut_len;
    }
    for (int i = part; i < 4; ++i) { /* a file of an earlier input must not be found */
        char path[128];
        path_of(names[i], path, sizeof path);
        remove(path);
    }
    char main_path[128];
    path_of(names[0], main_path, sizeof main_path);
    sd_model *model = NULL;
    sd_error err;
    const sd_status st = urdf ? sd_urdf_load_file(main_path, NULL, &model, &err) : sd_mjcf_load_file(main_path, &model, &err);
    fuzz_check_load(urdf ? "urdf files (flexible data files)" : "mjcf files (includes)", st, model, &err,
                    fuzz_input_seed(bytes, size));
    sd_model_free(model);
    return 0;
}
