/*
 * src/view/view_mesh.c — the meshes a model's visuals name, read for embedding in the page: STL
 * (binary, or ASCII "solid ... facet ... vertex") and Wavefront OBJ (v and f lines; polygons fanned
 * into triangles; negative indices relative; texture and normal indices ignored) into triangles
 * here; COLLADA (.dae) and glTF (.glb, or .gltf whose buffers are inline data: URIs) embedded as
 * they are, for three.js's loaders in the page (viewer/src/meshes.js), after a check that they are
 * what their names say. Other formats are not read: the caller falls back to the body's skeleton.
 * Vertices are kept as float: the page draws them in single precision anyway.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "view/view_internal.h"

enum { MESH_MAX_TRIANGLES = 4000000 };

typedef struct grow_f { float *a; size_t n, cap; } grow_f;
typedef struct grow_u { unsigned *a; size_t n, cap; } grow_u;

static int push_f(grow_f *g, float x)
{
    if (g->n == g->cap) {
        const size_t cap = g->cap ? 2 * g->cap : 1024;
        float *a = realloc(g->a, sizeof(float) * cap);
        if (!a) return 1;
        g->a = a;
        g->cap = cap;
    }
    g->a[g->n++] = x;
    return 0;
}

static int push_u(grow_u *g, unsigned x)
{
    if (g->n == g->cap) {
        const size_t cap = g->cap ? 2 * g->cap : 1024;
        unsigned *a = realloc(g->a, sizeof(unsigned) * cap);
        if (!a) return 1;
        g->a = a;
        g->cap = cap;
    }
    g->a[g->n++] = x;
    return 0;
}

static char *read_all(const char *path, size_t *size, sd_error *err, sd_status *st)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        *st = sd_error_set(err, SD_E_IO, "mesh %s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, fp);
        if (n < cap) break;
        char *b = realloc(buf, 2 * cap + 1);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    const int bad = ferror(fp);
    fclose(fp);
    if (!buf || bad) {
        free(buf);
        *st = sd_error_set(err, buf ? SD_E_IO : SD_E_MEMORY, "mesh %s: %s", path, buf ? "read error" : "out of memory");
        return NULL;
    }
    buf[n] = '\0';
    *size = n;
    return buf;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float lef(const unsigned char *p)
{
    const uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Binary STL: 80-byte header, triangle count, 50 bytes per triangle (normal, 3 vertices, attribute). */
static sd_status stl_binary(const char *path, const unsigned char *b, size_t size, grow_f *v, grow_u *ix, sd_error *err)
{
    const uint32_t nt = le32(b + 80);
    if (nt > MESH_MAX_TRIANGLES || size < 84 + 50 * (size_t)nt)
        return sd_error_set(err, SD_E_PARSE, "mesh %s: binary STL of %u triangles needs %zu bytes, has %zu", path,
                            (unsigned)nt, 84 + 50 * (size_t)nt, size);
    for (uint32_t t = 0; t < nt; ++t)
        for (int k = 0; k < 3; ++k) {
            const unsigned char *p = b + 84 + 50 * (size_t)t + 12 + 12 * k;
            if (push_f(v, lef(p)) || push_f(v, lef(p + 4)) || push_f(v, lef(p + 8)) ||
                push_u(ix, (unsigned)(v->n / 3 - 1)))
                return sd_error_set(err, SD_E_MEMORY, "mesh %s: out of memory", path);
        }
    return SD_OK;
}

static sd_status stl_ascii(const char *path, const char *s, grow_f *v, grow_u *ix, sd_error *err)
{
    for (const char *p = strstr(s, "vertex"); p; p = strstr(p, "vertex")) {
        p += 6;
        char *end;
        for (int k = 0; k < 3; ++k) {
            const double x = strtod(p, &end);
            if (end == p) return sd_error_set(err, SD_E_PARSE, "mesh %s: a 'vertex' without three numbers", path);
            if (push_f(v, (float)x)) return sd_error_set(err, SD_E_MEMORY, "mesh %s: out of memory", path);
            p = end;
        }
        if (push_u(ix, (unsigned)(v->n / 3 - 1))) return sd_error_set(err, SD_E_MEMORY, "mesh %s: out of memory", path);
        if (ix->n > 3 * (size_t)MESH_MAX_TRIANGLES) return sd_error_set(err, SD_E_PARSE, "mesh %s: too many triangles", path);
    }
    if (ix->n % 3 != 0) return sd_error_set(err, SD_E_PARSE, "mesh %s: vertices not in threes", path);
    return SD_OK;
}

static sd_status obj(const char *path, char *s, grow_f *v, grow_u *ix, sd_error *err)
{
    int lineno = 0;
    for (char *line = s; line && *line; ) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        ++lineno;
        if (line[0] == 'v' && isspace((unsigned char)line[1])) {
            char *p = line + 2, *end;
            for (int k = 0; k < 3; ++k) {
                const double x = strtod(p, &end);
                if (end == p) return sd_error_set(err, SD_E_PARSE, "mesh %s:%d: 'v' without three numbers", path, lineno);
                if (push_f(v, (float)x)) return sd_error_set(err, SD_E_MEMORY, "mesh %s: out of memory", path);
                p = end;
            }
        } else if (line[0] == 'f' && isspace((unsigned char)line[1])) {
            long first = -1, prev = -1;
            char *p = line + 2, *end;
            const long nv = (long)(v->n / 3);
            for (int corner = 0;; ++corner) {
                long i = strtol(p, &end, 10);
                if (end == p) break;
                while (*end && !isspace((unsigned char)*end)) ++end; /* /vt/vn */
                p = end;
                i = i < 0 ? nv + i : i - 1;
                if (i < 0 || i >= nv)
                    return sd_error_set(err, SD_E_PARSE, "mesh %s:%d: face index out of range", path, lineno);
                if (corner == 0) first = i;
                else if (corner >= 2 && (push_u(ix, (unsigned)first) || push_u(ix, (unsigned)prev) || push_u(ix, (unsigned)i)))
                    return sd_error_set(err, SD_E_MEMORY, "mesh %s: out of memory", path);
                prev = i;
            }
            if (ix->n > 3 * (size_t)MESH_MAX_TRIANGLES) return sd_error_set(err, SD_E_PARSE, "mesh %s: too many triangles", path);
        }
        line = next;
    }
    return SD_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    if (n < m) return 0;
    for (size_t i = 0; i < m; ++i)
        if (tolower((unsigned char)s[n - m + i]) != suffix[i]) return 0;
    return 1;
}

/* A COLLADA or glTF file kept whole for the page, once it looks like one: COLLADA's root element,
 * the GLB header (magic "glTF", version 2, the length it gives), or a .gltf's buffers and images all
 * inline (the page fetches nothing). */
static sd_status mesh_file(const char *path, const char *format, char *buf, size_t size, view_visual *vis,
                           sd_error *err)
{
    if (strcmp(format, "dae") == 0 && !strstr(buf, "<COLLADA"))
        return sd_error_set(err, SD_E_PARSE, "mesh %s: no <COLLADA> element: not a COLLADA file", path);
    if (strcmp(format, "glb") == 0) {
        const unsigned char *b = (const unsigned char *)buf;
        if (size < 20 || memcmp(b, "glTF", 4) != 0 || le32(b + 4) != 2 || le32(b + 8) != size)
            return sd_error_set(err, SD_E_PARSE, "mesh %s: not a GLB file of glTF 2 (header: magic, version, length)",
                                path);
    }
    if (strcmp(format, "gltf") == 0)
        for (const char *u = strstr(buf, "\"uri\""); u; u = strstr(u + 5, "\"uri\"")) {
            const char *q = strchr(u + 5, '"');
            if (!q || strncmp(q + 1, "data:", 5) != 0)
                return sd_error_set(err, SD_E_NOT_SUPPORTED,
                                    "mesh %s: a .gltf naming other files (buffers, images) is not drawn: write it as .glb",
                                    path);
        }
    vis->shape = VIEW_MESH_FILE;
    vis->file_data = (unsigned char *)buf;
    vis->file_size = size;
    vis->file_format = format;
    return SD_OK;
}

sd_status sd_view_mesh_load(const char *path, view_visual *vis, sd_error *err)
{
    const int is_stl = ends_with(path, ".stl"), is_obj = ends_with(path, ".obj");
    const char *file_format = ends_with(path, ".dae")    ? "dae"
                              : ends_with(path, ".glb")  ? "glb"
                              : ends_with(path, ".gltf") ? "gltf"
                                                         : NULL;
    if (!is_stl && !is_obj && !file_format)
        return sd_error_set(err, SD_E_NOT_SUPPORTED, "mesh %s: not a format drawn (STL, OBJ, COLLADA .dae, glTF .glb/.gltf)",
                            path);
    size_t size = 0;
    sd_status st = SD_OK;
    char *buf = read_all(path, &size, err, &st);
    if (!buf) return st;
    if (file_format) {
        st = mesh_file(path, file_format, buf, size, vis, err);
        if (st != SD_OK) free(buf);
        return st;
    }
    grow_f v = {0};
    grow_u ix = {0};
    if (is_obj) st = obj(path, buf, &v, &ix, err);
    else if (size >= 84 && 84 + 50 * (size_t)le32((unsigned char *)buf + 80) == size)
        st = stl_binary(path, (unsigned char *)buf, size, &v, &ix, err); /* binary even when it starts "solid" */
    else if (size >= 5 && strncmp(buf, "solid", 5) == 0) st = stl_ascii(path, buf, &v, &ix, err);
    else st = sd_error_set(err, SD_E_PARSE, "mesh %s: neither binary nor ASCII STL", path);
    free(buf);
    if (st == SD_OK && ix.n == 0) st = sd_error_set(err, SD_E_PARSE, "mesh %s: no triangles", path);
    if (st != SD_OK) {
        free(v.a);
        free(ix.a);
        return st;
    }
    vis->vertices = v.a;
    vis->nvertices = v.n / 3;
    vis->indices = ix.a;
    vis->ntriangles = ix.n / 3;
    return SD_OK;
}
