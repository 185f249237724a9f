/*
 * io/flex_file.h — the flexible-body data reader on text already in memory (io/flex_file.c; the
 * public entry point, sd_flex_data_read_file, reads the file and calls it). For the fuzz target.
 * Private to the library; not installed.
 */
#ifndef SOADYN_IO_FLEX_FILE_H
#define SOADYN_IO_FLEX_FILE_H

#include <stddef.h>

#include <soadyn/flex.h>

/* Read `length` bytes of JSON (no NUL needed) named `source` in messages; see sd_flex_data_read_file. */
sd_status sd_flex_data_read_text(const char *text, size_t length, const char *source, sd_flex_data **data,
                                 sd_error *err);

#endif /* SOADYN_IO_FLEX_FILE_H */
