/*
 * src/sim/output_file.c — see output_file.h: write beside, rename when complete.
 */
#define _POSIX_C_SOURCE 200809L /* stat, S_ISREG */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/output_file.h"

static char *copy_string(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    char *c = malloc(n + m + 1);
    if (!c) return NULL;
    memcpy(c, s, n);
    memcpy(c + n, suffix, m + 1);
    return c;
}

/* Renaming is safe only onto a regular file or onto nothing. */
static int written_in_place(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

static void release(sim_output_file *file)
{
    free(file->path);
    free(file->partial);
    file->path = file->partial = NULL;
}

sd_status sim_output_begin(sim_output_file *file, const char *path, sd_error *err)
{
    file->partial = NULL;
    file->path = copy_string(path, "");
    if (file->path && !written_in_place(path)) {
        file->partial = copy_string(path, ".partial");
        if (!file->partial) release(file);
    }
    if (!file->path) return sd_error_set(err, SD_E_MEMORY, "%s: out of memory", path);
    return SD_OK;
}

const char *sim_output_write_path(const sim_output_file *file)
{
    return file->partial ? file->partial : file->path;
}

sd_status sim_output_commit(sim_output_file *file, sd_error *err)
{
    sd_status st = SD_OK;
    if (file->partial && rename(file->partial, file->path) != 0) {
        st = sd_error_set(err, SD_E_IO, "%s: cannot rename %s onto it: %s", file->path, file->partial,
                          strerror(errno));
        remove(file->partial);
    }
    release(file);
    return st;
}

void sim_output_abandon(sim_output_file *file)
{
    if (file->partial) remove(file->partial);
    release(file);
}

sd_status sd_output_probe(const char *path, sd_error *err)
{
    if (!path) return sd_error_set(err, SD_E_ARGUMENT, "sd_output_probe: NULL path");
    sim_output_file file;
    sd_status st = sim_output_begin(&file, path, err);
    if (st != SD_OK) return st;
    /* in place (a device, a pipe): appending writes nothing and truncates nothing */
    FILE *fp = fopen(sim_output_write_path(&file), file.partial ? "wb" : "ab");
    if (!fp) st = sd_error_set(err, SD_E_IO, "%s: cannot create: %s", path, strerror(errno));
    else fclose(fp);
    sim_output_abandon(&file);
    return st;
}
