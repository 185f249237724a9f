/*
 * cli/json_writer.c — see json_writer.h. Objects and arrays are indented two spaces per level;
 * arrays of numbers stay on one line so that matrices read as rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"

void jw_init(json_writer *w)
{
    memset(w, 0, sizeof(*w));
    w->first[0] = 1;
}

void jw_free(json_writer *w)
{
    free(w->buf);
    w->buf = NULL;
}

static void put(json_writer *w, const char *s, size_t n)
{
    if (w->failed == 1) return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n + 1) cap *= 2;
        char *b = realloc(w->buf, cap);
        if (!b) { w->failed = 1; return; }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(json_writer *w, const char *s) { put(w, s, strlen(s)); }

/* A string literal with the escapes JSON requires (quote, backslash, control characters). */
static void put_string(json_writer *w, const char *s)
{
    puts_(w, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
        char esc[8];
        switch (*c) {
        case '"': puts_(w, "\\\""); break;
        case '\\': puts_(w, "\\\\"); break;
        case '\n': puts_(w, "\\n"); break;
        case '\r': puts_(w, "\\r"); break;
        case '\t': puts_(w, "\\t"); break;
        default:
            if (*c < 0x20) {
                snprintf(esc, sizeof(esc), "\\u%04x", *c);
                puts_(w, esc);
            } else {
                put(w, (const char *)c, 1); /* UTF-8 bytes pass through */
            }
        }
    }
    puts_(w, "\"");
}

/* Separator, newline and indentation before a value, then the key if any. */
static void begin_value(json_writer *w, const char *key, int inline_item)
{
    if (!w->first[w->depth]) puts_(w, inline_item ? ", " : ",");
    w->first[w->depth] = 0;
    if (!inline_item && w->depth > 0) {
        puts_(w, "\n");
        for (int i = 0; i < w->depth; ++i) puts_(w, "  ");
    }
    if (key) {
        put_string(w, key);
        puts_(w, ": ");
    }
}

static void open_container(json_writer *w, const char *key, const char *bracket)
{
    begin_value(w, key, 0);
    puts_(w, bracket);
    if (w->depth + 1 < (int)(sizeof(w->first) / sizeof(w->first[0]))) ++w->depth;
    w->first[w->depth] = 1;
}

static void close_container(json_writer *w, const char *bracket)
{
    const int empty = w->first[w->depth];
    if (w->depth > 0) --w->depth;
    if (!empty) {
        puts_(w, "\n");
        for (int i = 0; i < w->depth; ++i) puts_(w, "  ");
    }
    puts_(w, bracket);
}

void jw_begin_object(json_writer *w, const char *key) { open_container(w, key, "{"); }
void jw_end_object(json_writer *w) { close_container(w, "}"); }
void jw_begin_array(json_writer *w, const char *key) { open_container(w, key, "["); }
void jw_end_array(json_writer *w) { close_container(w, "]"); }

void jw_string(json_writer *w, const char *key, const char *value)
{
    begin_value(w, key, 0);
    put_string(w, value ? value : "");
}

static void put_number(json_writer *w, const char *key, double value)
{
    if (!isfinite(value)) {
        if (!w->failed) {
            w->failed = 2;
            snprintf(w->bad_key, sizeof(w->bad_key), "%s", key ? key : "(array entry)");
        }
        puts_(w, "null");
        return;
    }
    char num[40];
    snprintf(num, sizeof(num), "%.17g", value);
    puts_(w, num);
}

void jw_number(json_writer *w, const char *key, double value)
{
    begin_value(w, key, 0);
    put_number(w, key, value);
}

void jw_int(json_writer *w, const char *key, long value)
{
    char num[32];
    begin_value(w, key, 0);
    snprintf(num, sizeof(num), "%ld", value);
    puts_(w, num);
}

void jw_null(json_writer *w, const char *key)
{
    begin_value(w, key, 0);
    puts_(w, "null");
}

void jw_numbers(json_writer *w, const char *key, const double *values, int n)
{
    begin_value(w, key, 0);
    puts_(w, "[");
    for (int i = 0; i < n; ++i) {
        if (i) puts_(w, ", ");
        put_number(w, key, values[i]);
    }
    puts_(w, "]");
}

int jw_print(json_writer *w, FILE *fp)
{
    if (w->failed || !w->buf) return 1;
    fputs(w->buf, fp);
    fputc('\n', fp);
    return ferror(fp) ? 1 : 0;
}
