/*
 * cli/json_writer.c — see json_writer.h. Objects and arrays are indented two spaces per level;
 * arrays of numbers stay on one line so that matrices read as rows.
 */
#include <math.h>
#include <stdio.h>
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
    free(w->bad_key);
    w->buf = w->bad_key = NULL;
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

/* Length of the well-formed UTF-8 sequence at s (1 to 4), or 0 if the bytes there are not one
 * (a stray continuation byte, a truncated or overlong sequence, a surrogate, past U+10FFFF). */
static int utf8_length(const unsigned char *s)
{
    int n;
    unsigned min;
    unsigned cp;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xE0) == 0xC0) { n = 2; min = 0x80; cp = s[0] & 0x1Fu; }
    else if ((s[0] & 0xF0) == 0xE0) { n = 3; min = 0x800; cp = s[0] & 0x0Fu; }
    else if ((s[0] & 0xF8) == 0xF0) { n = 4; min = 0x10000; cp = s[0] & 0x07u; }
    else return 0;
    for (int i = 1; i < n; ++i) { /* stops at the terminating NUL, which is no continuation byte */
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* A string literal with the escapes JSON requires (quote, backslash, control characters); text
 * that is not UTF-8 (a name from the C API can hold any bytes) becomes U+FFFD byte by byte. */
static void put_string(json_writer *w, const char *s)
{
    puts_(w, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
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
                const int n = utf8_length(c);
                if (n == 0) {
                    puts_(w, "\\ufffd");
                } else {
                    put(w, (const char *)c, (size_t)n);
                    c += n;
                    continue;
                }
            }
        }
        ++c;
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
    if (w->depth + 1 >= JW_MAX_DEPTH) { /* the text would no longer match its structure */
        if (!w->failed) w->failed = 3;
        return;
    }
    begin_value(w, key, 0);
    puts_(w, bracket);
    ++w->depth;
    w->first[w->depth] = 1;
}

static void close_container(json_writer *w, const char *bracket)
{
    if (w->failed == 3) return;
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
            const char *name = key ? key : "(array entry)";
            w->failed = 2;
            w->bad_key = malloc(strlen(name) + 1);
            if (w->bad_key) strcpy(w->bad_key, name);
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

void jw_bool(json_writer *w, const char *key, int value)
{
    begin_value(w, key, 0);
    puts_(w, value ? "true" : "false");
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

const char *jw_text(const json_writer *w, size_t *length)
{
    if (w->failed || !w->buf) return NULL;
    *length = w->len;
    return w->buf;
}
