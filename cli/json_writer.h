/*
 * cli/json_writer.h — a small JSON writer into a memory buffer: strings of any length escaped
 * (quote, backslash, control characters; bytes that are not UTF-8 become U+FFFD, so the text is
 * always valid JSON), numbers with 17 significant digits (they read back exactly), and no NaN or
 * infinity (JSON has none): writing one marks the writer failed and names the key, and the caller
 * prints an error instead of the text.
 */
#ifndef SOADYN_CLI_JSON_WRITER_H
#define SOADYN_CLI_JSON_WRITER_H

#include <stddef.h>

enum { JW_MAX_DEPTH = 32 };

typedef struct json_writer {
    char *buf;
    size_t len, cap;
    int depth;
    int first[JW_MAX_DEPTH]; /* per open container: nothing written in it yet */
    int failed;              /* 1: out of memory, 2: a number was not finite, 3: nested too deep */
    char *bad_key;           /* the key of the first non-finite number (a copy, whole) */
} json_writer;

void jw_init(json_writer *w);
void jw_free(json_writer *w);
/* key is NULL inside arrays and for the top-level value. */
void jw_begin_object(json_writer *w, const char *key);
void jw_end_object(json_writer *w);
void jw_begin_array(json_writer *w, const char *key);
void jw_end_array(json_writer *w);
void jw_string(json_writer *w, const char *key, const char *value);
void jw_number(json_writer *w, const char *key, double value);
void jw_int(json_writer *w, const char *key, long value);
void jw_null(json_writer *w, const char *key);
void jw_bool(json_writer *w, const char *key, int value);
/* An array of n numbers on one line. */
void jw_numbers(json_writer *w, const char *key, const double *values, int n);
/* The text written so far and its length, or NULL if the writer failed (see `failed`). */
const char *jw_text(const json_writer *w, size_t *length);

#endif /* SOADYN_CLI_JSON_WRITER_H */
