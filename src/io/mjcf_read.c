/*
 * io/mjcf_read.c — the MJCF document before any body is built: the XML read (io/xml_read.c: quiet,
 * no network, no external entities), every <include file> expanded in place with each element
 * remembering the file it came from (xmlNode._private, for file:line messages), the <compiler>
 * settings, the <default> classes, and attribute lookup through the classes with checked numbers.
 */
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mjcf_internal.h"
#include "io/xml_read.h"

/* ---------------------------------------------------------------- elements, files and lines */

int mjcf_is(const xmlNode *node, const char *name)
{
    return node != NULL && node->type == XML_ELEMENT_NODE && strcmp((const char *)node->name, name) == 0;
}

int mjcf_line(const xmlNode *node)
{
    const long line = xmlGetLineNo(node);
    return line > 0 && line < INT_MAX ? (int)line : 0;
}

const char *mjcf_file(const mjcf_ctx *ctx, const xmlNode *node)
{
    return node != NULL && node->_private != NULL ? (const char *)node->_private : ctx->source;
}

sd_status mjcf_fail(const mjcf_ctx *ctx, const xmlNode *node, sd_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const sd_status st = sd_io_vfail(ctx->err, status, mjcf_file(ctx, node), node ? mjcf_line(node) : 0, fmt, ap);
    va_end(ap);
    return st;
}

static sd_status out_of_memory(const mjcf_ctx *ctx)
{
    return sd_io_fail(ctx->err, SD_E_MEMORY, ctx->source, 0, "out of memory");
}

/* Remember a file name; the returned pointer lives as long as the context. */
static const char *add_file(mjcf_ctx *ctx, const char *name)
{
    if (ctx->nfiles == ctx->files_cap) {
        const int cap = ctx->files_cap ? 2 * ctx->files_cap : 4;
        char **p = realloc(ctx->files, (size_t)cap * sizeof *p);
        if (p == NULL) return NULL;
        ctx->files = p;
        ctx->files_cap = cap;
    }
    char *copy = sd_io_strdup(name);
    if (copy == NULL) return NULL;
    ctx->files[ctx->nfiles++] = copy;
    return copy;
}

/* Every element below and including node remembers `file`. */
static void mark_file(xmlNode *node, const char *file)
{
    for (xmlNode *n = node; n != NULL; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        n->_private = (void *)file;
        mark_file(n->children, file);
    }
}

/* A copy keeps what the original remembered (xmlDocCopyNode does not copy _private). */
static void copy_marks(const xmlNode *from, xmlNode *to)
{
    for (; from != NULL && to != NULL; from = from->next, to = to->next) {
        to->_private = from->_private;
        copy_marks(from->children, to->children);
    }
}

/* The directory part of a path ("" when it has none), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    char *d = malloc(n + 1);
    if (d == NULL) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

static sd_status expand_includes(mjcf_ctx *ctx, xmlDoc *doc, xmlNode *node, int depth);

/* The <include> `inc` (of file name `name`, at nesting `depth`) would pass a bound of soadyn/mjcf.h:
 * fail naming it and the files that led to it ("main.xml > a.xml > b.xml"). */
static sd_status expansion_too_large(const mjcf_ctx *ctx, const xmlNode *inc, const char *name, int depth,
                                     const char *what)
{
    char chain[320];
    size_t n = 0;
    chain[0] = '\0';
    for (int i = 0; i <= depth && i <= MJCF_MAX_INCLUDE_DEPTH && n + 1 < sizeof chain; ++i) {
        /* an included file by its name relative to the file that includes it, when it lies beside it */
        const char *shown = ctx->chain[i];
        if (i > 0) {
            const char *slash = strrchr(ctx->chain[i - 1], '/');
            const size_t dir = slash ? (size_t)(slash - ctx->chain[i - 1]) + 1 : 0;
            if (strncmp(shown, ctx->chain[i - 1], dir) == 0) shown += dir;
        }
        const int w = snprintf(chain + n, sizeof chain - n, "%s%s", i ? " > " : "", shown);
        if (w < 0) break;
        n += (size_t)w < sizeof chain - n ? (size_t)w : sizeof chain - n - 1;
    }
    return mjcf_fail(ctx, inc, SD_E_PARSE, "<include file=\"%.100s\">: %s (include chain: %s)", name, what, chain);
}

/* Read one included file and put its root's children in place of the <include> element. */
static sd_status expand_one(mjcf_ctx *ctx, xmlDoc *doc, xmlNode *inc, int depth)
{
    xmlChar *name = xmlGetNoNsProp(inc, (const xmlChar *)"file");
    if (name == NULL || name[0] == '\0') {
        xmlFree(name);
        return mjcf_fail(ctx, inc, SD_E_PARSE, "<include> has no file attribute");
    }
    if (depth >= MJCF_MAX_INCLUDE_DEPTH) {
        const sd_status st = mjcf_fail(ctx, inc, SD_E_PARSE,
                                       "<include file=\"%s\">: includes nested deeper than %d (does a file include "
                                       "itself?)", (const char *)name, MJCF_MAX_INCLUDE_DEPTH);
        xmlFree(name);
        return st;
    }
    if (++ctx->nincludes > SD_MJCF_MAX_INCLUDES) {
        char what[120];
        snprintf(what, sizeof what, "more than %d <include>s expanded (a file included n times counts n times)",
                 SD_MJCF_MAX_INCLUDES);
        const sd_status st = expansion_too_large(ctx, inc, (const char *)name, depth, what);
        xmlFree(name);
        return st;
    }
    /* relative to the main file's directory at every depth, as MuJoCo 2.2.2 resolves them (not to
     * the directory of the file that holds this <include>) */
    char *dir = dir_of(ctx->source);
    char *path = dir ? malloc(strlen(dir) + strlen((const char *)name) + 1) : NULL;
    if (path == NULL) {
        free(dir);
        xmlFree(name);
        return out_of_memory(ctx);
    }
    if (name[0] == '/') path[0] = '\0';
    else strcpy(path, dir);
    strcat(path, (const char *)name);
    free(dir);
    /* the byte budget is checked before reading (a stat), and counts what was read after */
    const long long size = sd_io_file_size(path);
    if (size > 0 && ctx->expanded_bytes + (size_t)size > SD_MJCF_MAX_EXPANDED_BYTES) {
        char what[120];
        snprintf(what, sizeof what, "the main file and its includes expand to more than %zu MiB",
                 SD_MJCF_MAX_EXPANDED_BYTES >> 20);
        const sd_status st = expansion_too_large(ctx, inc, (const char *)name, depth, what);
        xmlFree(name);
        free(path);
        return st;
    }
    char *text = NULL;
    size_t length = 0;
    sd_error sub;
    sd_status st = sd_io_read_model_file(path, &text, &length, &sub);
    if (st != SD_OK) {
        st = mjcf_fail(ctx, inc, st, "<include file=\"%s\">: %s", (const char *)name, sub.message);
        xmlFree(name);
        free(path);
        return st;
    }
    ctx->expanded_bytes += length;
    xmlFree(name);
    const char *inc_file = add_file(ctx, path);
    free(path);
    if (inc_file == NULL) {
        free(text);
        return out_of_memory(ctx);
    }
    xmlDoc *idoc = NULL;
    st = sd_xml_read(text, length, inc_file, &idoc, ctx->err);
    free(text);
    if (st != SD_OK) return st;
    xmlNode *root = xmlDocGetRootElement(idoc);
    if (!mjcf_is(root, "mujoco")) {
        st = sd_io_fail(ctx->err, SD_E_PARSE, inc_file, root ? mjcf_line(root) : 0,
                        "an included MJCF file has <mujoco> as its root element, not <%.40s>",
                        root ? (const char *)root->name : "nothing");
        xmlFreeDoc(idoc);
        return st;
    }
    mark_file(root, inc_file);
    ctx->chain[depth + 1] = inc_file;
    st = expand_includes(ctx, idoc, root, depth + 1);
    for (xmlNode *c = root->children; c != NULL && st == SD_OK; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        xmlNode *copy = xmlDocCopyNode(c, doc, 1);
        if (copy == NULL) {
            st = out_of_memory(ctx);
            break;
        }
        copy_marks(c, copy);
        copy->_private = c->_private;
        if (xmlAddPrevSibling(inc, copy) == NULL) {
            xmlFreeNode(copy);
            st = out_of_memory(ctx);
        }
    }
    xmlFreeDoc(idoc);
    return st;
}

static sd_status expand_includes(mjcf_ctx *ctx, xmlDoc *doc, xmlNode *node, int depth)
{
    for (xmlNode *c = node->children, *next; c != NULL; c = next) {
        next = c->next;
        if (c->type != XML_ELEMENT_NODE) continue;
        sd_status st;
        if (mjcf_is(c, "include")) {
            st = expand_one(ctx, doc, c, depth);
            if (st == SD_OK) {
                xmlUnlinkNode(c);
                xmlFreeNode(c);
            }
        } else {
            st = expand_includes(ctx, doc, c, depth);
        }
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- classes and attributes */

int mjcf_class_index(const mjcf_ctx *ctx, const char *name)
{
    for (int i = 0; i < ctx->nclasses; ++i)
        if (strcmp(ctx->classes[i].name, name) == 0) return i;
    return -1;
}

sd_status mjcf_element_class(const mjcf_ctx *ctx, const xmlNode *node, const char *owner, int inherited, int *cls)
{
    *cls = inherited;
    xmlChar *name = xmlGetNoNsProp(node, (const xmlChar *)"class");
    if (name == NULL) return SD_OK;
    const int i = mjcf_class_index(ctx, (const char *)name);
    sd_status st = SD_OK;
    if (i < 0)
        st = mjcf_fail(ctx, node, SD_E_PARSE, "%s: default class '%s' does not exist", owner, (const char *)name);
    else
        *cls = i;
    xmlFree(name);
    return st;
}

char *mjcf_attr(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *name)
{
    xmlChar *v = xmlGetNoNsProp(node, (const xmlChar *)name);
    /* a class's element holds what it sets; the rest comes from its parent class (MJCF's inheritance) */
    for (int c = cls; v == NULL && c >= 0 && c < ctx->nclasses; c = ctx->classes[c].parent) {
        const xmlNode *k = ctx->classes[c].kind[kind];
        if (k != NULL) v = xmlGetNoNsProp(k, (const xmlChar *)name);
    }
    if (v == NULL) return NULL;
    char *copy = sd_io_strdup((const char *)v);
    xmlFree(v);
    return copy;
}

sd_status mjcf_numbers(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                       const char *name, int min, int max, double *out, int *count)
{
    *count = 0;
    char *text = mjcf_attr(ctx, node, kind, cls, name);
    if (text == NULL) return SD_OK;
    double values[16];
    int n = 0;
    const char *why = NULL;
    for (const char *s = text;;) {
        while (sd_io_is_space(*s)) ++s;
        if (*s == '\0') break;
        const char *token = s;
        while (*s != '\0' && !sd_io_is_space(*s)) ++s;
        if (n == max || n == (int)(sizeof values / sizeof values[0])) {
            why = "has too many numbers";
            break;
        }
        why = sd_io_parse_number(token, (size_t)(s - token), &values[n]);
        if (why != NULL) break;
        ++n;
    }
    if (why == NULL && n < min) why = min == 1 ? "expects a number" : "expects more numbers";
    sd_status st = SD_OK;
    if (why != NULL) {
        char expected[48];
        if (min == max) snprintf(expected, sizeof expected, " (%d expected)", max);
        else snprintf(expected, sizeof expected, " (%d to %d expected)", min, max);
        st = mjcf_fail(ctx, node, SD_E_PARSE, "%s: %s=\"%.60s\" %s%s", owner, name, text, why,
                       max > 1 ? expected : "");
    } else {
        memcpy(out, values, (size_t)n * sizeof(double));
        *count = n;
    }
    free(text);
    return st;
}

sd_status mjcf_number(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                      const char *name, double dflt, double *out)
{
    int n;
    *out = dflt;
    return mjcf_numbers(ctx, node, kind, cls, owner, name, 1, 1, out, &n);
}

sd_status mjcf_keyword(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                       const char *name, const char *const *words, int dflt, int *out)
{
    *out = dflt;
    char *text = mjcf_attr(ctx, node, kind, cls, name);
    if (text == NULL) return SD_OK;
    for (int i = 0; words[i] != NULL; ++i)
        if (strcmp(text, words[i]) == 0) {
            *out = i;
            free(text);
            return SD_OK;
        }
    char list[160] = "";
    for (int i = 0; words[i] != NULL; ++i) {
        if (i > 0) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, words[i], sizeof list - strlen(list) - 1);
    }
    const sd_status st = mjcf_fail(ctx, node, SD_E_PARSE, "%s: %s=\"%.60s\" is not one of %s", owner, name, text,
                                   list);
    free(text);
    return st;
}

/* ---------------------------------------------------------------- <compiler> */

static const char *const BOOLS[] = {"false", "true", NULL};

static sd_status read_compiler(mjcf_ctx *ctx, const xmlNode *node)
{
    mjcf_compiler *c = &ctx->compiler;
    static const char *const ANGLES[] = {"radian", "degree", NULL};
    static const char *const COORDS[] = {"local", "global", NULL};
    static const char *const IFG[] = {"false", "true", "auto", NULL};
    const char *owner = "<compiler>";
    int v = 0, n = 0;
    sd_status st = mjcf_keyword(ctx, node, 0, -1, owner, "angle", ANGLES, c->degree, &c->degree);
    if (st == SD_OK) st = mjcf_keyword(ctx, node, 0, -1, owner, "coordinate", COORDS, 0, &v);
    if (st == SD_OK && v == 1)
        return mjcf_fail(ctx, node, SD_E_NOT_SUPPORTED,
                         "<compiler coordinate=\"global\">: global coordinates are not offered (MuJoCo 2.2.2 "
                         "deprecates them); write the model in local coordinates");
    if (st == SD_OK) st = mjcf_keyword(ctx, node, 0, -1, owner, "inertiafromgeom", IFG, c->inertiafromgeom,
                                       &c->inertiafromgeom);
    if (st == SD_OK) st = mjcf_keyword(ctx, node, 0, -1, owner, "autolimits", BOOLS, c->autolimits, &c->autolimits);
    if (st == SD_OK) st = mjcf_number(ctx, node, 0, -1, owner, "boundmass", c->boundmass, &c->boundmass);
    if (st == SD_OK) st = mjcf_number(ctx, node, 0, -1, owner, "boundinertia", c->boundinertia, &c->boundinertia);
    if (st == SD_OK) st = mjcf_number(ctx, node, 0, -1, owner, "settotalmass", c->settotalmass, &c->settotalmass);
    if (st != SD_OK) return st;
    if (c->boundmass < 0 || c->boundinertia < 0 || c->boundmass > 1e12 || c->boundinertia > 1e12)
        return mjcf_fail(ctx, node, SD_E_PARSE, "<compiler>: boundmass and boundinertia are in [0, 1e12]");
    if (c->settotalmass > 1e12)
        return mjcf_fail(ctx, node, SD_E_PARSE, "<compiler settotalmass>: beyond 1e12 kg, the bound of physical "
                         "models");
    double range[2];
    st = mjcf_numbers(ctx, node, 0, -1, owner, "inertiagrouprange", 2, 2, range, &n);
    if (st != SD_OK) return st;
    if (n == 2) {
        if (range[0] != floor(range[0]) || range[1] != floor(range[1]) || fabs(range[0]) > 1e6 ||
            fabs(range[1]) > 1e6)
            return mjcf_fail(ctx, node, SD_E_PARSE, "<compiler inertiagrouprange>: two integers expected");
        c->group_lo = (int)range[0];
        c->group_hi = (int)range[1];
    }
    char *seq = mjcf_attr(ctx, node, 0, -1, "eulerseq");
    if (seq != NULL) {
        int ok = strlen(seq) == 3;
        for (int i = 0; ok && i < 3; ++i) ok = strchr("xyzXYZ", seq[i]) != NULL;
        if (!ok) {
            st = mjcf_fail(ctx, node, SD_E_PARSE,
                           "<compiler eulerseq=\"%.20s\">: three of x, y, z (rotating axes) or X, Y, Z (fixed axes) "
                           "expected", seq);
        } else {
            memcpy(c->eulerseq, seq, 4);
        }
        free(seq);
    }
    return st;
}

/* ---------------------------------------------------------------- <option><flag> */

static sd_status read_flags(mjcf_ctx *ctx, const xmlNode *flag)
{
    static const char *const SWITCH[] = {"disable", "enable", NULL};
    int gravity = 1, passive = 1;
    sd_status st = mjcf_keyword(ctx, flag, 0, -1, "<flag>", "gravity", SWITCH, 1, &gravity);
    if (st == SD_OK) st = mjcf_keyword(ctx, flag, 0, -1, "<flag>", "passive", SWITCH, 1, &passive);
    ctx->flags.gravity_off |= gravity == 0;
    ctx->flags.passive_off |= passive == 0;
    return st;
}

/* ---------------------------------------------------------------- <default> */

static sd_status read_default(mjcf_ctx *ctx, const xmlNode *node, int parent)
{
    xmlChar *name = xmlGetNoNsProp(node, (const xmlChar *)"class");
    if (name == NULL && parent >= 0)
        return mjcf_fail(ctx, node, SD_E_PARSE, "a nested <default> has no class attribute");
    const char *cname = name ? (const char *)name : "main";
    sd_status st = SD_OK;
    if (mjcf_class_index(ctx, cname) >= 0) {
        st = mjcf_fail(ctx, node, SD_E_PARSE, "default class '%s' is defined twice", cname);
        xmlFree(name);
        return st;
    }
    if (ctx->nclasses == ctx->classes_cap) {
        const int cap = ctx->classes_cap ? 2 * ctx->classes_cap : 8;
        mjcf_class *p = realloc(ctx->classes, (size_t)cap * sizeof *p);
        if (p == NULL) {
            xmlFree(name);
            return out_of_memory(ctx);
        }
        ctx->classes = p;
        ctx->classes_cap = cap;
    }
    mjcf_class *c = &ctx->classes[ctx->nclasses];
    memset(c, 0, sizeof *c);
    c->name = sd_io_strdup(cname);
    xmlFree(name);
    if (c->name == NULL) return out_of_memory(ctx);
    c->parent = parent;
    const int self = ctx->nclasses++;
    for (const xmlNode *k = node->children; k != NULL && st == SD_OK; k = k->next) {
        mjcf_class *me = &ctx->classes[self];
        if (mjcf_is(k, "joint") && me->kind[MJCF_KIND_JOINT] == NULL) me->kind[MJCF_KIND_JOINT] = k;
        else if (mjcf_is(k, "geom") && me->kind[MJCF_KIND_GEOM] == NULL) me->kind[MJCF_KIND_GEOM] = k;
        else if (mjcf_is(k, "equality") && me->kind[MJCF_KIND_EQUALITY] == NULL) me->kind[MJCF_KIND_EQUALITY] = k;
        else if (mjcf_is(k, "site") && me->kind[MJCF_KIND_SITE] == NULL) me->kind[MJCF_KIND_SITE] = k;
        else if (mjcf_is(k, "default")) st = read_default(ctx, k, self);
    }
    return st;
}

/* ---------------------------------------------------------------- open / close */

sd_status mjcf_open(mjcf_ctx *ctx, const char *xml, size_t length, const char *source, sd_error *err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->source = source;
    ctx->err = err;
    ctx->compiler.degree = 1;
    memcpy(ctx->compiler.eulerseq, "xyz", 4);
    ctx->compiler.inertiafromgeom = 2;
    ctx->compiler.group_lo = 0;
    ctx->compiler.group_hi = 5;
    ctx->compiler.settotalmass = -1.0;
    const char *main_file = add_file(ctx, source);
    if (main_file == NULL) return out_of_memory(ctx);
    sd_status st = sd_xml_read(xml, length, source, &ctx->doc, ctx->err);
    if (st != SD_OK) return st;
    xmlNode *root = xmlDocGetRootElement(ctx->doc);
    if (!mjcf_is(root, "mujoco"))
        return sd_io_fail(ctx->err, SD_E_PARSE, source, root ? mjcf_line(root) : 0,
                          "no <mujoco> element (the root element is <%.40s>)",
                          root ? (const char *)root->name : "nothing");
    mark_file(root, main_file);
    ctx->chain[0] = main_file;
    ctx->expanded_bytes = length;
    st = expand_includes(ctx, ctx->doc, root, 0);
    for (const xmlNode *c = root->children; c != NULL && st == SD_OK; c = c->next)
        if (mjcf_is(c, "compiler")) st = read_compiler(ctx, c);
    for (const xmlNode *c = root->children; c != NULL && st == SD_OK; c = c->next)
        for (const xmlNode *f = mjcf_is(c, "option") ? c->children : NULL; f != NULL && st == SD_OK; f = f->next)
            if (mjcf_is(f, "flag")) st = read_flags(ctx, f);
    for (const xmlNode *c = root->children; c != NULL && st == SD_OK; c = c->next)
        if (mjcf_is(c, "default")) st = read_default(ctx, c, -1);
    if (st == SD_OK && mjcf_class_index(ctx, "main") < 0) {
        /* no top-level <default>: an empty "main" so that class 0 always exists */
        mjcf_class *p = realloc(ctx->classes, (size_t)(ctx->nclasses + 1) * sizeof *p);
        if (p == NULL) return out_of_memory(ctx);
        ctx->classes = p;
        ctx->classes_cap = ctx->nclasses + 1;
        memmove(p + 1, p, (size_t)ctx->nclasses * sizeof *p);
        memset(p, 0, sizeof *p);
        p[0].name = sd_io_strdup("main");
        p[0].parent = -1;
        if (p[0].name == NULL) return out_of_memory(ctx);
        ++ctx->nclasses;
        for (int i = 1; i < ctx->nclasses; ++i) p[i].parent = p[i].parent >= 0 ? p[i].parent + 1 : 0;
    }
    if (st == SD_OK && mjcf_class_index(ctx, "main") != 0)
        st = sd_io_fail(ctx->err, SD_E_PARSE, source, 0, "default class 'main' is not the top-level <default>");
    return st;
}

void mjcf_close(mjcf_ctx *ctx)
{
    if (ctx->doc) xmlFreeDoc(ctx->doc);
    for (int i = 0; i < ctx->nclasses; ++i) free(ctx->classes[i].name);
    free(ctx->classes);
    for (int i = 0; i < ctx->nfiles; ++i) free(ctx->files[i]);
    free(ctx->files);
    memset(ctx, 0, sizeof *ctx);
}
