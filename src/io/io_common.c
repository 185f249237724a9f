/*
 * io/io_common.c — the helpers every model reader shares (io_common.h). A model file is read with
 * the checks that keep a wrong path from hanging or exhausting memory: it is opened without
 * blocking (a blocking open of a FIFO with no writer waits forever), asked what it is, and read
 * only when it is a regular file of at most SD_MODEL_FILE_MAX_BYTES. A regular file that grows
 * while it is read is refused at the limit just the same, and files that report size 0 (/proc) are
 * read to their end.
 */
#define _POSIX_C_SOURCE 200809L /* open, fstat, read, O_NONBLOCK, O_CLOEXEC */

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <soadyn/urdf.h>

#include "io/io_common.h"

sd_status sd_io_vfail(sd_error *err, sd_status status, const char *source, int line, const char *fmt, va_list ap)
{
    if (err == NULL) return status;
    const size_t size = sizeof err->message;
    const int n = line > 0 ? snprintf(err->message, size, "%s:%d: ", source, line)
                           : snprintf(err->message, size, "%s: ", source);
    if (n >= 0 && (size_t)n < size) {
        vsnprintf(err->message + n, size - (size_t)n, fmt, ap);
        /* a message passed on from a layer that already said where (the builder names the
         * description's file:line) keeps one prefix, not two */
        if (strncmp(err->message + n, err->message, (size_t)n) == 0)
            memmove(err->message, err->message + n, strlen(err->message + n) + 1);
    }
    err->status = status;
    return status;
}

sd_status sd_io_fail(sd_error *err, sd_status status, const char *source, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const sd_status st = sd_io_vfail(err, status, source, line, fmt, ap);
    va_end(ap);
    return st;
}

char *sd_io_strdup(const char *s)
{
    if (s == NULL) return NULL;
    const size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy != NULL) memcpy(copy, s, n);
    return copy;
}

char *sd_io_describe(const char *kind, const char *name)
{
    const size_t n = strlen(kind) + strlen(name) + 4; /* space, two quotes, NUL */
    char *text = malloc(n);
    if (text != NULL) snprintf(text, n, "%s '%s'", kind, name);
    return text;
}

/* ---------------------------------------------------------------- model files */

/* What a file that is not a regular one is, for the message. */
static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

static sd_status too_large(sd_error *err, const char *path)
{
    return sd_io_fail(err, SD_E_IO, path, 0, "file too large: model files are read up to %zu MiB",
                      (size_t)SD_MODEL_FILE_MAX_BYTES >> 20);
}

/* Read fd to its end into a buffer that grows from the size fstat gave, refusing more than the
 * limit. */
static sd_status read_all(int fd, const char *path, size_t expected, char **text, size_t *length, sd_error *err)
{
    const size_t limit = SD_MODEL_FILE_MAX_BYTES;
    size_t cap = expected + 1 > 4096 ? expected + 1 : 4096, n = 0; /* + 1: the end is seen in one read */
    char *buf = malloc(cap + 1);
    if (buf == NULL) return sd_io_fail(err, SD_E_MEMORY, path, 0, "out of memory");
    for (;;) {
        if (n == cap) {
            if (cap > limit) break; /* more than the limit is there: refused below */
            const size_t bigger = 2 * cap < limit + 1 ? 2 * cap : limit + 1;
            char *grown = realloc(buf, bigger + 1);
            if (grown == NULL) {
                free(buf);
                return sd_io_fail(err, SD_E_MEMORY, path, 0, "out of memory");
            }
            buf = grown;
            cap = bigger;
        }
        const ssize_t got = read(fd, buf + n, cap - n);
        if (got == 0) break;
        if (got < 0) {
            if (errno == EINTR) continue;
            const int code = errno;
            free(buf);
            return sd_io_fail(err, SD_E_IO, path, 0, "read error: %s", strerror(code));
        }
        n += (size_t)got;
    }
    if (n > limit) {
        free(buf);
        return too_large(err, path);
    }
    buf[n] = '\0';
    *text = buf;
    *length = n;
    return SD_OK;
}

sd_status sd_io_read_model_file(const char *path, char **text, size_t *length, sd_error *err)
{
    *text = NULL;
    *length = 0;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return sd_io_fail(err, SD_E_IO, path, 0, "cannot open: %s", strerror(errno));
    struct stat info;
    sd_status st;
    if (fstat(fd, &info) != 0)
        st = sd_io_fail(err, SD_E_IO, path, 0, "cannot read: %s", strerror(errno));
    else if (!S_ISREG(info.st_mode))
        st = sd_io_fail(err, SD_E_IO, path, 0, "is %s, not a model file (only regular files are read)",
                        kind_of(info.st_mode));
    else if (info.st_size < 0 || (unsigned long long)info.st_size > (unsigned long long)SD_MODEL_FILE_MAX_BYTES)
        st = too_large(err, path);
    else
        st = read_all(fd, path, (size_t)info.st_size, text, length, err);
    close(fd);
    return st;
}

int sd_io_normalize(double *v, int n)
{
    double s = 0.0, n2 = 0.0;
    for (int i = 0; i < n; ++i) s = fabs(v[i]) > s ? fabs(v[i]) : s;
    if (!(s > 0.0)) return 0;
    for (int i = 0; i < n; ++i) n2 += (v[i] / s) * (v[i] / s);
    const double scaled = sqrt(n2); /* in [1, sqrt n] */
    if (!(s * scaled >= 1e-12)) return 0;
    for (int i = 0; i < n; ++i) v[i] = v[i] / s / scaled;
    return 1;
}

long long sd_io_file_size(const char *path)
{
    struct stat info;
    if (stat(path, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 0) return -1;
    return (long long)info.st_size;
}

int sd_io_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

const char *sd_io_parse_number(const char *token, size_t len, double *out)
{
    char small[64];
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (buf == NULL) return "could not be read (out of memory)";
    memcpy(buf, token, len);
    buf[len] = '\0';
    const char *why = NULL;
    const char point = localeconv()->decimal_point[0];
    if (point != '.') {
        if (strchr(buf, point) != NULL) why = "is not a number";
        for (char *p = buf; *p != '\0'; ++p)
            if (*p == '.') *p = point;
    }
    char *end = buf;
    if (why == NULL) *out = strtod(buf, &end);
    if (why == NULL && (end == buf || *end != '\0')) why = "is not a number";
    if (why == NULL && !isfinite(*out)) why = "is not finite";
    if (buf != small) free(buf);
    return why;
}
