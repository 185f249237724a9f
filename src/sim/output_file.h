/*
 * src/sim/output_file.h — output files (CSV trajectories, plots) that appear under their name only
 * when complete (output_file.c).
 *
 * A file is written under a temporary name beside it, "<path>.partial", and renamed onto <path> once
 * every byte has been written, flushed and closed without error. On failure the temporary file is
 * removed and whatever <path> held before is left untouched; a run killed outright leaves only the
 * ".partial" file, whose name says what it is. A path that exists and is not a regular file (a
 * pipe, a terminal, /dev/null, /dev/stdout) is written in place: renaming onto it would replace the
 * device or link rather than write into it.
 */
#ifndef SOADYN_SIM_OUTPUT_FILE_H
#define SOADYN_SIM_OUTPUT_FILE_H

#include "internal.h"

typedef struct sim_output_file {
    char *path;    /* the name asked for */
    char *partial; /* "<path>.partial", or NULL when writing in place */
} sim_output_file;

/* Decide where `path` is written (sim_output_write_path). SD_E_MEMORY only. */
sd_status sim_output_begin(sim_output_file *file, const char *path, sd_error *err);
/* The name to create and write: the temporary name, or path itself when written in place. */
const char *sim_output_write_path(const sim_output_file *file);
/* The file is complete and closed: rename it onto its name. Frees the names either way. */
sd_status sim_output_commit(sim_output_file *file, sd_error *err);
/* The file is incomplete (already closed): remove the temporary file. Frees the names. Safe to call
 * after sim_output_commit() or on a zeroed struct. */
void sim_output_abandon(sim_output_file *file);

#endif /* SOADYN_SIM_OUTPUT_FILE_H */
