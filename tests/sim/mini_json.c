/*
 * tests/sim/mini_json.c — see mini_json.h. Recursive descent over RFC 8259's grammar; \u escapes
 * are kept only for ASCII (enough for the names soadyn writes).
 */
#include "mini_json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *s;
    size_t i;
    int bad;
} parser;

static void fail(parser *p, const char *what)
{
    if (!p->bad) fprintf(stderr, "mini_json: %s at offset %zu\n", what, p->i);
    p->bad = 1;
}

static void skip_ws(parser *p)
{
    while (p->s[p->i] == ' ' || p->s[p->i] == '\n' || p->s[p->i] == '\r' || p->s[p->i] == '\t') ++p->i;
}

static void parse_value(parser *p, mj_value *v);

static char *parse_string(parser *p)
{
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    ++p->i; /* opening quote */
    for (;;) {
        unsigned char c = (unsigned char)p->s[p->i++];
        if (c == '\0' || c < 0x20) { fail(p, "bad character in string"); break; }
        if (c == '"') break;
        if (c == '\\') {
            const char e = p->s[p->i++];
            const char *map = strchr("\"\\/bfnrt", e);
            if (e == 'u') {
                unsigned code = 0;
                for (int k = 0; k < 4; ++k) {
                    const char h = p->s[p->i++];
                    if (!isxdigit((unsigned char)h)) { fail(p, "bad \\u escape"); break; }
                    code = code * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
                }
                c = code < 0x80 ? (unsigned char)code : '?';
            } else if (map && e) {
                c = (unsigned char)"\"\\/\b\f\n\r\t"[map - "\"\\/bfnrt"];
            } else {
                fail(p, "bad escape");
                break;
            }
        }
        if (n + 2 > cap) out = realloc(out, cap *= 2);
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return out;
}

static void parse_number(parser *p, mj_value *v)
{
    const char *start = p->s + p->i;
    size_t j = p->i;
    if (p->s[j] == '-') ++j;
    if (!isdigit((unsigned char)p->s[j])) { fail(p, "bad number"); return; }
    if (p->s[j] == '0') ++j;
    else while (isdigit((unsigned char)p->s[j])) ++j;
    if (p->s[j] == '.') {
        ++j;
        if (!isdigit((unsigned char)p->s[j])) { fail(p, "bad fraction"); return; }
        while (isdigit((unsigned char)p->s[j])) ++j;
    }
    if (p->s[j] == 'e' || p->s[j] == 'E') {
        ++j;
        if (p->s[j] == '+' || p->s[j] == '-') ++j;
        if (!isdigit((unsigned char)p->s[j])) { fail(p, "bad exponent"); return; }
        while (isdigit((unsigned char)p->s[j])) ++j;
    }
    v->type = MJ_NUMBER;
    v->number = strtod(start, NULL);
    p->i = j;
}

static void parse_container(parser *p, mj_value *v, int object)
{
    v->type = object ? MJ_OBJECT : MJ_ARRAY;
    ++p->i;
    skip_ws(p);
    if (p->s[p->i] == (object ? '}' : ']')) { ++p->i; return; }
    for (;;) {
        v->items = realloc(v->items, sizeof(mj_value) * (size_t)(v->n + 1));
        memset(&v->items[v->n], 0, sizeof(mj_value));
        if (object) {
            v->keys = realloc(v->keys, sizeof(char *) * (size_t)(v->n + 1));
            skip_ws(p);
            if (p->s[p->i] != '"') { v->keys[v->n] = NULL; fail(p, "expected a key"); ++v->n; return; }
            v->keys[v->n] = parse_string(p);
            skip_ws(p);
            if (p->s[p->i++] != ':') { ++v->n; fail(p, "expected ':'"); return; }
        }
        parse_value(p, &v->items[v->n++]);
        if (p->bad) return;
        skip_ws(p);
        const char c = p->s[p->i++];
        if (c == (object ? '}' : ']')) return;
        if (c != ',') { fail(p, "expected ',' or a closing bracket"); return; }
    }
}

static void parse_value(parser *p, mj_value *v)
{
    skip_ws(p);
    const char c = p->s[p->i];
    if (c == '{' || c == '[') parse_container(p, v, c == '{');
    else if (c == '"') { v->type = MJ_STRING; v->string = parse_string(p); }
    else if (strncmp(p->s + p->i, "null", 4) == 0) { v->type = MJ_NULL; p->i += 4; }
    else if (strncmp(p->s + p->i, "true", 4) == 0) { v->type = MJ_BOOL; v->number = 1; p->i += 4; }
    else if (strncmp(p->s + p->i, "false", 5) == 0) { v->type = MJ_BOOL; p->i += 5; }
    else parse_number(p, v);
}

static void free_inner(mj_value *v)
{
    for (int i = 0; i < v->n; ++i) {
        free_inner(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

mj_value *mj_parse(const char *text)
{
    parser p = {text, 0, 0};
    mj_value *v = calloc(1, sizeof(*v));
    parse_value(&p, v);
    skip_ws(&p);
    if (!p.bad && p.s[p.i] != '\0') fail(&p, "trailing characters");
    if (p.bad) {
        mj_free(v);
        return NULL;
    }
    return v;
}

void mj_free(mj_value *v)
{
    if (!v) return;
    free_inner(v);
    free(v);
}

const mj_value *mj_get(const mj_value *o, const char *key)
{
    if (!o || o->type != MJ_OBJECT) return NULL;
    for (int i = 0; i < o->n; ++i)
        if (o->keys[i] && strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
}
