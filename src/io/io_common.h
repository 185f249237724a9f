/*
 * io/io_common.h — what every model reader of the io layer shares: messages that start with
 * "source:line: ", string copies, and reading a model file whole. Only regular files are read (a
 * FIFO, a device such as /dev/zero, a directory or a socket is refused without reading it), and at
 * most SD_MODEL_FILE_MAX_BYTES (urdf.h), so that a wrong path fails at once with a message instead
 * of hanging or filling memory.
 *
 * Private to the library; not installed.
 */
#ifndef SOADYN_IO_COMMON_H
#define SOADYN_IO_COMMON_H

#include <stdarg.h>
#include <stddef.h>

#include <soadyn/model.h>

/* Fill err (if not NULL) with "source:line: message" and return status; line 0 leaves it out.
 * Only the message's own size limits what is written. */
sd_status sd_io_fail(sd_error *err, sd_status status, const char *source, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* The same with a va_list. */
sd_status sd_io_vfail(sd_error *err, sd_status status, const char *source, int line, const char *fmt,
                      va_list ap);

/* A malloc'ed copy of s, NULL if s is NULL or memory runs out. */
char *sd_io_strdup(const char *s);

/* A malloc'ed "<kind> '<name>'" (e.g. "joint 'elbow'") for messages, the name whole; NULL when
 * memory runs out. */
char *sd_io_describe(const char *kind, const char *name);

/* Read a model file whole. On success *text is a malloc'ed buffer of *length bytes, plus a
 * terminating NUL the length does not count, that the caller frees. Errors (SD_E_IO, SD_E_MEMORY)
 * name the path. */
sd_status sd_io_read_model_file(const char *path, char **text, size_t *length, sd_error *err);

/* The size in bytes of the regular file at path, or -1 when it cannot be told (no such file, not a
 * regular file: reading it then says why). For budgets checked before a file is read. */
long long sd_io_file_size(const char *path);

/* Normalise the n-vector v in place, a direction of any size: it is scaled by its largest
 * component before its norm is formed, so that 1e300 does not overflow the squares (nor 1e-300
 * underflow them). Returns 1, or 0 when its length is below 1e-12 (noise: v is left as it was).
 * Every component must be finite (the readers check their numbers). */
int sd_io_normalize(double *v, int n);

/* Whether c is XML whitespace (space, tab, newline, carriage return). */
int sd_io_is_space(char c);

/* One number of XML text (token, len bytes, not NUL-terminated), of any length, into *out. XML
 * always writes '.' for the decimal point, while strtod follows the C locale the program may have
 * set, so the point is translated for strtod. Returns NULL on success, else the reason ("is not a
 * number", "is not finite", ...) for a message. */
const char *sd_io_parse_number(const char *token, size_t len, double *out);

#endif /* SOADYN_IO_COMMON_H */
