/*
 * io/mjcf_internal.h — what the parts of the MJCF loader share.
 *
 *   mjcf_read.c   the document: <include> expanded (each element remembers its file), <compiler>,
 *                 <default> classes, attribute lookup through the classes, numbers checked
 *   mjcf_geom.c   orientations (quat, axisangle, euler, xyaxes, zaxis), the inertia of primitive
 *                 geoms and of a body from its geoms, boundmass/boundinertia
 *   mjcf_build.c  bodies and joints into the builder (a body with several joints becomes a chain
 *                 of massless bodies), <equality> as closure constraints, the warning of what is
 *                 not modelled, the public entry points
 *
 * Private to the library; not installed.
 */
#ifndef SOADYN_IO_MJCF_INTERNAL_H
#define SOADYN_IO_MJCF_INTERNAL_H

#include <libxml/tree.h>

#include <soadyn/loops.h>
#include <soadyn/mjcf.h>
#include <soadyn/model.h>

#include "io/io_common.h"

/* Includes nested deeper than this are refused: a file that includes itself would never end. */
#define MJCF_MAX_INCLUDE_DEPTH 16

/* Element kinds whose attributes <default> classes give. */
enum { MJCF_KIND_JOINT = 0, MJCF_KIND_GEOM, MJCF_KIND_EQUALITY, MJCF_KIND_SITE, MJCF_KIND_COUNT };

/* A <default> class: its element nodes (NULL: nothing set at this level) and its parent class. */
typedef struct mjcf_class {
    char *name;
    int parent; /* -1 for "main" */
    const xmlNode *kind[MJCF_KIND_COUNT];
} mjcf_class;

/* <compiler> settings soadyn uses. */
typedef struct mjcf_compiler {
    int degree;          /* angles in degrees (MJCF's default) */
    char eulerseq[4];    /* "xyz" by default; lower case: rotating axes, upper case: fixed axes */
    int inertiafromgeom; /* 0 false, 1 true, 2 auto (default: geoms only for bodies without <inertial>) */
    int group_lo, group_hi; /* inertiagrouprange, default 0 5 */
    double boundmass, boundinertia, settotalmass; /* settotalmass <= 0: not set */
    int autolimits;
} mjcf_compiler;

/* <option><flag> settings soadyn follows: gravity="disable" (no gravity), passive="disable" (no joint
 * springs and dampers; the armature stays, as in MuJoCo). */
typedef struct mjcf_flags {
    int gravity_off, passive_off;
} mjcf_flags;

/* One parse. */
typedef struct mjcf_ctx {
    const char *source;    /* the main file's name in messages */
    sd_error *err;
    xmlDoc *doc;           /* the main document, <include>s expanded into it */
    char **files;          /* names of every file read (element->_private points at one) */
    int nfiles, files_cap;
    /* <include> expansion so far (the bounds of soadyn/mjcf.h): elements expanded, bytes of text read
     * (the main text included), and the files being expanded, main file first (for messages) */
    int nincludes;
    size_t expanded_bytes;
    const char *chain[MJCF_MAX_INCLUDE_DEPTH + 1];
    mjcf_compiler compiler;
    mjcf_flags flags;
    mjcf_class *classes;   /* [0] is "main" */
    int nclasses, classes_cap;
} mjcf_ctx;

/* ---------------------------------------------------------------- mjcf_read.c */

/* Parse the main text, expand <include file> (relative to the main file's directory, also in an
 * included file, as MuJoCo 2.2.2; a missing file is an error at the include's file:line; nesting
 * depth bounded),
 * then read <compiler>, <option><flag> and <default>. */
sd_status mjcf_open(mjcf_ctx *ctx, const char *xml, size_t length, const char *source, sd_error *err);
void mjcf_close(mjcf_ctx *ctx);

/* File and line of an element, for messages. */
const char *mjcf_file(const mjcf_ctx *ctx, const xmlNode *node);
int mjcf_line(const xmlNode *node);
/* sd_io_fail at the element's file:line. */
sd_status mjcf_fail(const mjcf_ctx *ctx, const xmlNode *node, sd_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* 1 if node is an element called name. */
int mjcf_is(const xmlNode *node, const char *name);

/* The class of an element: its class="..." attribute, else `inherited` (the childclass in force,
 * 0 = "main"). An unknown class name is an error naming it. */
sd_status mjcf_element_class(const mjcf_ctx *ctx, const xmlNode *node, const char *owner, int inherited, int *cls);
/* Index of a class by name, -1 if none. */
int mjcf_class_index(const mjcf_ctx *ctx, const char *name);

/* An attribute of an element, else of its class and the class's ancestors (kind: MJCF_KIND_*;
 * cls < 0: the element alone). A malloc'ed copy, or NULL when nowhere set. */
char *mjcf_attr(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *name);

/* Up to `max` numbers of an attribute (through the classes as above) into out; *count receives
 * how many (0 when absent: out untouched). Fewer than `min` (when present), non-numbers and
 * non-finite numbers are errors naming the element and attribute. */
sd_status mjcf_numbers(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                       const char *name, int min, int max, double *out, int *count);
/* Exactly one number, or the default when absent. */
sd_status mjcf_number(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                      const char *name, double dflt, double *out);
/* One of `words` (NULL-terminated), its index in *out; `dflt` when absent. */
sd_status mjcf_keyword(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                       const char *name, const char *const *words, int dflt, int *out);

/* ---------------------------------------------------------------- mjcf_geom.c */

/* The orientation of an element from whichever one of quat, axisangle, euler, xyaxes, zaxis it
 * has (through the classes as above); identity when none; two of them are an error. */
sd_status mjcf_orientation(const mjcf_ctx *ctx, const xmlNode *node, int kind, int cls, const char *owner,
                           double R[9]);

/* Mass, centre of mass and inertia about it (body axes) of the body's geoms that count for
 * inertia (inertiagrouprange); *used = 0 when none does. Meshes, planes and height fields that
 * would contribute are errors naming the geom. */
sd_status mjcf_body_inertia_from_geoms(const mjcf_ctx *ctx, const xmlNode *body, int childclass, const char *owner,
                                       double *mass, double com[3], double I[9]);
/* The body's <inertial>: mass, centre of mass, inertia about it in body axes. */
sd_status mjcf_inertial(const mjcf_ctx *ctx, const xmlNode *inertial, const char *owner, double *mass,
                        double com[3], double I[9]);
/* Principal moments raised to at least `bound` (boundinertia): I = R max(D, bound) R^T. */
void mjcf_bound_inertia(double I[9], double bound);

#endif /* SOADYN_IO_MJCF_INTERNAL_H */
