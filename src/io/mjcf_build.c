/*
 * io/mjcf_build.c — an MJCF document (mjcf_read.c) into a model: each <body> and its joints into
 * the builder, the masses from <inertial> or the geoms (mjcf_geom.c) with MuJoCo's compiler rules,
 * each <equality> into a closure constraint, one warning counting what soadyn does not model.
 *
 * Frames. MuJoCo moves a body by its joints in the order written, each about its anchor `pos`:
 * B = P X_body T(a1) J1(q1 - ref1) T(-a1) T(a2) J2(q2 - ref2) T(-a2) ... A soadyn hinge turns
 * about its joint frame's origin and the body frame is that joint frame, so joint k becomes a body
 * whose placement is off_{k-1} [X_body for the first] T(a_k) J_k(-ref_k) (the ref folded in, so
 * that q is MuJoCo's qpos), and the MuJoCo frame of the body sits at off = T(-a_k) in the last
 * soadyn body, which carries the mass. Every frame the file gives in a body's coordinates (child
 * bodies, inertia, equality anchors) goes through that body's `off`.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <soadyn/dynamics.h>
#include <soadyn/loops.h>
#include <soadyn/urdf.h> /* SD_MODEL_FILE_MAX_BYTES */

#include "io/mjcf_internal.h"
#include "io/xml_read.h"
#include "model/model_bounds.h"

#define MJCF_PI 3.14159265358979323846

/* One MuJoCo body (index 0: the world). */
typedef struct mj_body {
    char *name;
    const xmlNode *node;
    char *carrier;         /* soadyn body carrying its mass and frame; NULL for the world */
    sd_transform off;      /* its frame in the carrier's */
    sd_transform world0;   /* its frame in the world at the reference configuration */
    double mass, com[3], I[9]; /* MuJoCo frame */
    int last;              /* index of the carrier in the pending bodies; -1 for the world */
} mj_body;

/* A named <site> of a MuJoCo body: a model frame (sd_builder_add_frame) on the body's carrier. */
typedef struct mj_site {
    char *name;
    const xmlNode *node;
    int body;       /* index in bodies */
    sd_transform X; /* in the MuJoCo body's frame */
} mj_site;

/* One soadyn body to add. */
typedef struct pending {
    sd_body_desc d;
    char *name, *parent, *joint; /* d.reference: MuJoCo's qpos0 of its hinge */
} pending;

/* One MuJoCo joint. */
typedef struct mj_joint {
    char *name;            /* NULL when unnamed */
    const xmlNode *node;
    int type;              /* J_* */
    double ref;
    int body;              /* pending index */
} mj_joint;

enum { J_FREE, J_BALL, J_SLIDE, J_HINGE };
static const char *const JOINT_TYPES[] = {"free", "ball", "slide", "hinge", NULL};

/* What soadyn does not model, counted for the one warning. */
enum { U_CONTACT, U_TENDON, U_ACTUATOR, U_LIMIT, U_FRICTIONLOSS, U_SITE, U_SENSOR, U_CONTACT_PAIR, U_INACTIVE,
       U_EQUALITY_OTHER, U_COUNT };
static const char *const UNMODELLED[U_COUNT] = {
    "contact geoms", "tendons", "actuators", "joint limits", "joints with frictionloss",
    "sites without a name, on the world or with fromto (named sites are frames)", "sensors",
    "contact pairs/excludes", "inactive equalities", "tendon/distance equalities"};

/* Attributes soadyn reads past but does not model, for the second warning: MuJoCo 2.2.2's attributes
 * of the elements soadyn reads that change the motion, except those whose elements the first
 * warning counts already (contacts, limits, frictionloss). `inert`: the value that changes nothing
 * (MuJoCo's default), NULL when any value counts. "equality" stands for <connect>, <weld>, an
 * equality <joint> and <default><equality>. */
static const struct {
    const char *element, *attribute, *inert, *why;
} IGNORED_ATTRIBUTES[] = {
    {"option", "density", "0", "fluid forces"},
    {"option", "viscosity", "0", "fluid forces"},
    {"option", "wind", "0 0 0", "fluid forces"},
    {"flag", "equality", "enable", "soadyn closes the loops all the same"},
    {"flag", "constraint", "enable", "soadyn closes the loops all the same"},
    {"compiler", "balanceinertia", "false", NULL},
    {"compiler", "discardvisual", "false", NULL},
    {"joint", "springdamper", "0 0", NULL},
    {"geom", "fluidshape", "none", "fluid forces"},
    {"equality", "solref", NULL, "soft constraints; soadyn's hold exactly"},
    {"equality", "solimp", NULL, "soft constraints; soadyn's hold exactly"},
    {"weld", "torquescale", "1", "weighs soft rows; soadyn's weld holds exactly"}, /* 0: a BALL, read */
};
enum { N_IGNORED_ATTRIBUTES = sizeof IGNORED_ATTRIBUTES / sizeof IGNORED_ATTRIBUTES[0] };

typedef struct builder_ctx {
    mjcf_ctx *m;
    mj_body *bodies;
    int nbodies, bodies_cap;
    pending *pend;
    int npend, pend_cap;
    mj_joint *joints;
    int njoints, joints_cap;
    char **named;          /* the names the file gives its joints, sorted (unnamed_joint_name) */
    int nnamed, named_cap;
    mj_site *sites;
    int nsites, sites_cap;
    int unmodelled[U_COUNT];
    int ignored[N_IGNORED_ATTRIBUTES];
    char **file_names; /* the names the file gives its bodies, sorted: generated names avoid them */
    int nfile_names, file_names_cap;
} builder_ctx;

static void *grow(void *items, int *cap, int count, size_t size)
{
    if (count < *cap) return items;
    const int new_cap = *cap > 0 ? 2 * *cap : 16;
    void *p = realloc(items, (size_t)new_cap * size);
    if (p != NULL) *cap = new_cap;
    return p;
}

static sd_status oom(builder_ctx *b) { return sd_io_fail(b->m->err, SD_E_MEMORY, b->m->source, 0, "out of memory"); }

static char *format_name(const char *fmt, int i)
{
    const size_t n = strlen(fmt) + 24;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, fmt, i);
    return s;
}

/* "a/b": a massless link's name from its body's and its joint's */
static char *join_names(const char *a, const char *b2)
{
    const size_t n = strlen(a) + strlen(b2) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", a, b2);
    return s;
}

/* ---------------------------------------------------------------- body names */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The name attributes of the elements below `node` (through nested bodies) whose tag is `tag` or
 * `tag2` (may be NULL), appended to *names; the file's body names and its joint names, which the
 * names made for unnamed elements must avoid (sorted by the caller). */
static sd_status collect_names(builder_ctx *b, const xmlNode *node, const char *tag, const char *tag2, char ***names,
                               int *count, int *cap)
{
    for (const xmlNode *c = node->children; c != NULL; c = c->next) {
        if (mjcf_is(c, tag) || (tag2 && mjcf_is(c, tag2))) {
            xmlChar *name = xmlGetNoNsProp(c, (const xmlChar *)"name");
            if (name != NULL) {
                char **grown = grow(*names, cap, *count, sizeof *grown);
                char *copy = grown ? sd_io_strdup((const char *)name) : NULL;
                if (grown) *names = grown;
                xmlFree(name);
                if (copy == NULL) return oom(b);
                (*names)[(*count)++] = copy;
            }
        }
        if (mjcf_is(c, "body")) {
            const sd_status st = collect_names(b, c, tag, tag2, names, count, cap);
            if (st != SD_OK) return st;
        }
    }
    return SD_OK;
}

/* The name of unnamed body `self`: "body<self>", or "body<self>_<j>" with the first j that the file
 * does not use (a file may well name a body "body2"). Generated names never meet one another: only
 * they have the form body<number>[_<number>] with this number. */
static char *generated_body_name(const builder_ctx *b, int self)
{
    char name[48];
    snprintf(name, sizeof name, "body%d", self);
    for (int j = 1;; ++j) {
        const char *key = name;
        if (b->nfile_names == 0 ||
            !bsearch(&key, b->file_names, (size_t)b->nfile_names, sizeof *b->file_names, compare_names))
            return sd_io_strdup(name);
        snprintf(name, sizeof name, "body%d_%d", self, j);
    }
}

static void translation(const double p[3], sd_transform *X)
{
    sd_transform_identity(X);
    memcpy(X->p, p, 3 * sizeof(double));
}

/* ---------------------------------------------------------------- joints */

/* Whether a <joint> of the file has this name (b->named, sorted). Generated names need no check
 * among themselves: each ends in its own joint number. */
static int joint_name_taken(const builder_ctx *b, const char *name)
{
    return b->nnamed > 0 && bsearch(&name, b->named, (size_t)b->nnamed, sizeof *b->named, compare_names) != NULL;
}

/* The name of an unnamed joint: "<body>/joint<i>", i its number in the model (MuJoCo's joint id),
 * with "_2", "_3", ... appended while a joint of the file has that name; malloc'ed. */
static char *unnamed_joint_name(const builder_ctx *b, const char *body_name)
{
    char *name = NULL;
    for (int suffix = 1; suffix < 1000000; ++suffix) {
        const size_t n = strlen(body_name) + 48;
        free(name);
        name = malloc(n);
        if (name == NULL) return NULL;
        if (suffix == 1) snprintf(name, n, "%s/joint%d", body_name, b->njoints - 1);
        else snprintf(name, n, "%s/joint%d_%d", body_name, b->njoints - 1, suffix);
        if (!joint_name_taken(b, name)) return name;
    }
    free(name);
    return NULL;
}

static sd_status add_pending(builder_ctx *b, pending **out)
{
    pending *p = grow(b->pend, &b->pend_cap, b->npend, sizeof *p);
    if (p == NULL) return oom(b);
    b->pend = p;
    *out = &p[b->npend++];
    memset(*out, 0, sizeof **out);
    sd_body_desc_init(&(*out)->d);
    return SD_OK;
}

/* Read one <joint> (or <freejoint>) into the pending body *p; *anchor gets its pos. */
static sd_status read_joint(builder_ctx *b, const xmlNode *j, int childclass, const char *body_name, pending *p,
                            mj_joint *mj, double anchor[3])
{
    mjcf_ctx *m = b->m;
    xmlChar *jn = xmlGetNoNsProp(j, (const xmlChar *)"name");
    mj->name = jn ? sd_io_strdup((const char *)jn) : NULL;
    xmlFree(jn);
    if (jn != NULL && mj->name == NULL) return oom(b);
    mj->node = j;
    char *owner = sd_io_describe("joint", mj->name ? mj->name : "(unnamed)");
    if (owner == NULL) return oom(b);
    anchor[0] = anchor[1] = anchor[2] = 0.0;
    sd_status st = SD_OK;
    const int free_elem = mjcf_is(j, "freejoint");
    int cls = -1;
    if (free_elem) {
        mj->type = J_FREE;
    } else {
        st = mjcf_element_class(m, j, owner, childclass, &cls);
        char *type = st == SD_OK ? mjcf_attr(m, j, MJCF_KIND_JOINT, cls, "type") : NULL;
        mj->type = J_HINGE;
        if (type != NULL) {
            int k = -1;
            for (int i = 0; JOINT_TYPES[i] != NULL; ++i)
                if (strcmp(type, JOINT_TYPES[i]) == 0) k = i;
            if (k < 0) st = mjcf_fail(m, j, SD_E_PARSE, "%s: unknown type '%s' (free, ball, slide or hinge)", owner, type);
            else mj->type = k;
            free(type);
        }
    }
    double axis[3] = {0.0, 0.0, 1.0}, range[2] = {0.0, 0.0};
    double ref = 0.0, springref = 0.0, stiffness = 0.0, damping = 0.0, armature = 0.0, frictionloss = 0.0;
    int nrange = 0, n = 0, limited = 2;
    static const char *const LIMITED[] = {"false", "true", "auto", NULL};
    if (!free_elem) {
        if (st == SD_OK) st = mjcf_numbers(m, j, MJCF_KIND_JOINT, cls, owner, "pos", 3, 3, anchor, &n);
        if (st == SD_OK) st = mjcf_numbers(m, j, MJCF_KIND_JOINT, cls, owner, "axis", 3, 3, axis, &n);
        if (st == SD_OK) st = mjcf_number(m, j, MJCF_KIND_JOINT, cls, owner, "ref", 0.0, &ref);
        if (st == SD_OK) st = mjcf_number(m, j, MJCF_KIND_JOINT, cls, owner, "springref", 0.0, &springref);
        if (st == SD_OK) st = mjcf_number(m, j, MJCF_KIND_JOINT, cls, owner, "stiffness", 0.0, &stiffness);
        if (st == SD_OK) st = mjcf_number(m, j, MJCF_KIND_JOINT, cls, owner, "damping", 0.0, &damping);
        if (st == SD_OK) st = mjcf_number(m, j, MJCF_KIND_JOINT, cls, owner, "armature", 0.0, &armature);
        if (st == SD_OK) st = mjcf_number(m, j, MJCF_KIND_JOINT, cls, owner, "frictionloss", 0.0, &frictionloss);
        if (st == SD_OK) st = mjcf_numbers(m, j, MJCF_KIND_JOINT, cls, owner, "range", 2, 2, range, &nrange);
        if (st == SD_OK) st = mjcf_keyword(m, j, MJCF_KIND_JOINT, cls, owner, "limited", LIMITED, 2, &limited);
    }
    if (st == SD_OK) {
        /* a direction of any size: 1e308 must not overflow into "zero length" (sd_io_normalize) */
        if (!sd_io_normalize(axis, 3) && (mj->type == J_HINGE || mj->type == J_SLIDE))
            st = mjcf_fail(m, j, SD_E_PARSE, "%s: axis of zero length", owner);
        for (int i = 0; i < 3 && st == SD_OK; ++i)
            if (fabs(anchor[i]) > SD_MAX_LENGTH)
                st = mjcf_fail(m, j, SD_E_PARSE, "%s: pos beyond %g m, the bound of physical models", owner,
                               SD_MAX_LENGTH);
        const double bound = mj->type == J_SLIDE ? SD_MAX_LENGTH : SD_MAX_ANGLE;
        if (st == SD_OK && (fabs(ref) > bound || fabs(springref) > bound || fabs(range[0]) > bound ||
                            fabs(range[1]) > bound))
            st = mjcf_fail(m, j, SD_E_PARSE, "%s: ref, springref or range beyond %g, the bound of physical models",
                           owner, bound);
        if (st == SD_OK && frictionloss < 0)
            st = mjcf_fail(m, j, SD_E_PARSE, "%s: frictionloss must not be negative", owner);
    }
    if (st == SD_OK && mj->type == J_HINGE && m->compiler.degree) {
        const double k = MJCF_PI / 180.0;
        ref *= k;
        springref *= k;
        range[0] *= k;
        range[1] *= k;
    }
    if (st == SD_OK) {
        const int is_limited = limited == 1 || (limited == 2 && m->compiler.autolimits && nrange == 2);
        if (is_limited && mj->type != J_FREE) ++b->unmodelled[U_LIMIT];
        if (frictionloss > 0) ++b->unmodelled[U_FRICTIONLOSS];
        p->d.hinge = mj->type == J_FREE    ? SD_HINGE_FREE
                     : mj->type == J_BALL  ? SD_HINGE_SPHERICAL
                     : mj->type == J_SLIDE ? SD_HINGE_PRISMATIC
                                           : SD_HINGE_REVOLUTE;
        memcpy(p->d.axis, axis, sizeof axis);
        p->d.armature = armature;
        p->d.damping = m->flags.passive_off ? 0.0 : damping; /* <flag passive="disable"> */
        p->d.stiffness = m->flags.passive_off ? 0.0 : stiffness;
        p->d.spring_ref = (mj->type == J_HINGE || mj->type == J_SLIDE) ? springref : 0.0;
        p->d.friction = frictionloss;
        if (is_limited && (mj->type == J_HINGE || mj->type == J_SLIDE) && range[0] <= range[1]) {
            p->d.has_limits = 1;
            p->d.lower = range[0];
            p->d.upper = range[1];
        }
        mj->ref = (mj->type == J_HINGE || mj->type == J_SLIDE) ? ref : 0.0;
        p->d.has_reference = 1; /* MuJoCo's qpos0: ref, the identity quaternion, or (free) set by the caller */
        p->d.reference[0] = mj->type == J_BALL ? 1.0 : mj->ref;
        p->joint = mj->name ? sd_io_strdup(mj->name) : unnamed_joint_name(b, body_name);
        if (p->joint == NULL) st = oom(b);
    }
    free(owner);
    return st;
}

/* ---------------------------------------------------------------- bodies */

static int count_children(const xmlNode *node, const char *name)
{
    int n = 0;
    for (const xmlNode *c = node->children; c != NULL; c = c->next) n += mjcf_is(c, name);
    return n;
}

/* Geoms that collide (contype or conaffinity nonzero, MuJoCo's default 1), for the warning. */
static sd_status count_geoms(builder_ctx *b, const xmlNode *body, int childclass)
{
    for (const xmlNode *g = body->children; g != NULL; g = g->next) {
        if (!mjcf_is(g, "geom")) continue;
        int cls;
        sd_status st = mjcf_element_class(b->m, g, "geom", childclass, &cls);
        double ct = 1.0, ca = 1.0;
        if (st == SD_OK) st = mjcf_number(b->m, g, MJCF_KIND_GEOM, cls, "geom", "contype", 1.0, &ct);
        if (st == SD_OK) st = mjcf_number(b->m, g, MJCF_KIND_GEOM, cls, "geom", "conaffinity", 1.0, &ca);
        if (st != SD_OK) return st;
        if (ct != 0.0 || ca != 0.0) ++b->unmodelled[U_CONTACT];
    }
    return SD_OK;
}

/* The named sites of MuJoCo body `self` (its placement and orientation, through the site classes),
 * kept to become frames; the world's sites, unnamed ones and those placed by fromto are counted for
 * the warning instead. */
static sd_status read_sites(builder_ctx *b, const xmlNode *body, int self, int childclass)
{
    for (const xmlNode *c = body->children; c != NULL; c = c->next) {
        if (!mjcf_is(c, "site")) continue;
        xmlChar *name = xmlGetNoNsProp(c, (const xmlChar *)"name");
        int cls = -1, n = 0;
        sd_status st = mjcf_element_class(b->m, c, "site", childclass, &cls);
        char *fromto = st == SD_OK ? mjcf_attr(b->m, c, MJCF_KIND_SITE, cls, "fromto") : NULL;
        if (st != SD_OK || name == NULL || self == 0 || fromto != NULL) {
            ++b->unmodelled[U_SITE];
            xmlFree(name);
            free(fromto);
            if (st != SD_OK) return st;
            continue;
        }
        mj_site *sites = grow(b->sites, &b->sites_cap, b->nsites, sizeof *sites);
        char *owner = sites ? sd_io_describe("site", (const char *)name) : NULL;
        if (sites == NULL || owner == NULL) {
            xmlFree(name);
            free(owner);
            return oom(b);
        }
        b->sites = sites;
        mj_site *site = &b->sites[b->nsites];
        sd_transform_identity(&site->X);
        site->body = self;
        site->node = c;
        site->name = sd_io_strdup((const char *)name);
        xmlFree(name);
        st = site->name ? mjcf_numbers(b->m, c, MJCF_KIND_SITE, cls, owner, "pos", 3, 3, site->X.p, &n) : oom(b);
        if (st == SD_OK) st = mjcf_orientation(b->m, c, MJCF_KIND_SITE, cls, owner, site->X.R);
        free(owner);
        if (site->name) ++b->nsites; /* freed with the context, even after an error */
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

static sd_status read_body(builder_ctx *b, const xmlNode *node, int parent, int childclass);

static sd_status read_children(builder_ctx *b, const xmlNode *node, int self, int childclass)
{
    for (const xmlNode *c = node->children; c != NULL; c = c->next) {
        if (mjcf_is(c, "body")) {
            sd_status st = read_body(b, c, self, childclass);
            if (st != SD_OK) return st;
        } else if (mjcf_is(c, "frame") || mjcf_is(c, "replicate") || mjcf_is(c, "attach") || mjcf_is(c, "flexcomp") ||
                   mjcf_is(c, "composite")) {
            return mjcf_fail(b->m, c, SD_E_NOT_SUPPORTED,
                             "<%s> is not offered (newer than MuJoCo 2.2.2, or a generated model)",
                             (const char *)c->name);
        }
    }
    return SD_OK;
}

static sd_status read_body(builder_ctx *b, const xmlNode *node, int parent, int childclass)
{
    mjcf_ctx *m = b->m;
    mj_body *bb = grow(b->bodies, &b->bodies_cap, b->nbodies, sizeof *bb);
    if (bb == NULL) return oom(b);
    b->bodies = bb;
    const int self = b->nbodies++;
    mj_body *me = &b->bodies[self];
    memset(me, 0, sizeof *me);
    me->node = node;
    me->last = -1;
    xmlChar *bn = xmlGetNoNsProp(node, (const xmlChar *)"name");
    me->name = bn ? sd_io_strdup((const char *)bn) : generated_body_name(b, self);
    xmlFree(bn);
    if (me->name == NULL) return oom(b);
    if (strcmp(me->name, "world") == 0) /* the inertial frame's name: an equality's body2="world" means it */
        return mjcf_fail(m, node, SD_E_PARSE, "body 'world': the name is the world body's (MuJoCo refuses it "
                                              "too); rename the body");
    char *owner = sd_io_describe("body", me->name);
    if (owner == NULL) return oom(b);
    /* its own childclass applies to its own elements too */
    sd_status st = SD_OK;
    xmlChar *cc = xmlGetNoNsProp(node, (const xmlChar *)"childclass");
    if (cc != NULL) {
        const int i = mjcf_class_index(m, (const char *)cc);
        if (i < 0) st = mjcf_fail(m, node, SD_E_PARSE, "%s: childclass '%s' does not exist", owner, (const char *)cc);
        else childclass = i;
        xmlFree(cc);
    }
    sd_transform X;
    sd_transform_identity(&X);
    int n = 0;
    if (st == SD_OK) st = mjcf_numbers(m, node, 0, -1, owner, "pos", 3, 3, X.p, &n);
    if (st == SD_OK) st = mjcf_orientation(m, node, 0, -1, owner, X.R);
    for (int i = 0; i < 3 && st == SD_OK; ++i)
        if (fabs(X.p[i]) > SD_MAX_LENGTH)
            st = mjcf_fail(m, node, SD_E_PARSE, "%s: pos beyond %g m, the bound of physical models", owner,
                           SD_MAX_LENGTH);
    if (st != SD_OK) {
        free(owner);
        return st;
    }
    me = &b->bodies[self];
    const mj_body *par = &b->bodies[parent];
    sd_transform_compose(&par->world0, &X, &me->world0);
    if (fabs(me->world0.p[0]) > SD_MAX_LENGTH || fabs(me->world0.p[1]) > SD_MAX_LENGTH ||
        fabs(me->world0.p[2]) > SD_MAX_LENGTH) {
        st = mjcf_fail(m, node, SD_E_PARSE, "%s: placed beyond %g m from the world origin", owner, SD_MAX_LENGTH);
        free(owner);
        return st;
    }
    const sd_transform par_off = par->off;
    const char *par_carrier = par->carrier;
    const char *mj_file = mjcf_file(m, node);
    const int line = mjcf_line(node);

    /* mass: <inertial>, or the geoms (inertiafromgeom) */
    const xmlNode *inertial = NULL;
    for (const xmlNode *c = node->children; c != NULL && inertial == NULL; c = c->next)
        if (mjcf_is(c, "inertial")) inertial = c;
    double mass = 0.0, com[3] = {0.0, 0.0, 0.0}, I[9] = {0};
    const int ifg = m->compiler.inertiafromgeom;
    if (ifg == 1 || (ifg == 2 && inertial == NULL))
        st = mjcf_body_inertia_from_geoms(m, node, childclass, owner, &mass, com, I);
    else if (inertial != NULL)
        st = mjcf_inertial(m, inertial, owner, &mass, com, I);
    if (st == SD_OK) st = count_geoms(b, node, childclass);
    if (st == SD_OK) st = read_sites(b, node, self, childclass);
    if (st != SD_OK) {
        free(owner);
        return st;
    }

    /* the joints, a chain of bodies */
    const int njoint = count_children(node, "joint") + count_children(node, "freejoint");
    sd_transform prev_off = par_off, body_X = X;
    const char *prev = par_carrier;
    int k = 0;
    for (const xmlNode *c = node->children; c != NULL && st == SD_OK; c = c->next) {
        if (!mjcf_is(c, "joint") && !mjcf_is(c, "freejoint")) continue;
        pending *p;
        st = add_pending(b, &p);
        if (st != SD_OK) break;
        mj_joint *mj = grow(b->joints, &b->joints_cap, b->njoints, sizeof *mj);
        if (mj == NULL) {
            st = oom(b);
            break;
        }
        b->joints = mj;
        mj = &b->joints[b->njoints++];
        memset(mj, 0, sizeof *mj);
        mj->body = b->npend - 1;
        double a[3];
        st = read_joint(b, c, childclass, b->bodies[self].name, p, mj, a);
        if (st != SD_OK) break;
        const int last = ++k == njoint;
        /* a massless link of the chain: "<body>/<joint>"; an unnamed joint's name says it already */
        p->name = last       ? sd_io_strdup(b->bodies[self].name)
                  : mj->name ? join_names(b->bodies[self].name, mj->name)
                             : sd_io_strdup(p->joint);
        p->parent = prev ? sd_io_strdup(prev) : NULL;
        if (p->name == NULL || (prev && p->parent == NULL)) {
            st = oom(b);
            break;
        }
        sd_transform place, Ta, Jref;
        if (mj->type == J_FREE) {
            /* MuJoCo's free joint places the body in the world directly: q is its world pose */
            if (parent != 0 || njoint != 1) {
                st = mjcf_fail(m, c, SD_E_NOT_SUPPORTED,
                               "joint '%s': a free joint is offered only as the one joint of a child of the world",
                               mj->name ? mj->name : "(unnamed)");
                break;
            }
            sd_transform_identity(&place);
            const mj_body *w = &b->bodies[self];
            memcpy(p->d.reference, w->world0.p, 3 * sizeof(double));
            sd_m3_to_quat(w->world0.R, p->d.reference + 3);
            sd_transform_identity(&prev_off);
        } else {
            translation(a, &Ta);
            sd_transform_identity(&Jref);
            if (mj->type == J_HINGE) sd_m3_axis_angle(p->d.axis, -mj->ref, Jref.R);
            else if (mj->type == J_SLIDE)
                for (int i = 0; i < 3; ++i) Jref.p[i] = -mj->ref * p->d.axis[i];
            sd_transform t1, t2;
            sd_transform_compose(&prev_off, &body_X, &t1);
            sd_transform_compose(&t1, &Ta, &t2);
            sd_transform_compose(&t2, &Jref, &place);
            const double minus_a[3] = {-a[0], -a[1], -a[2]};
            translation(minus_a, &prev_off);
        }
        sd_transform_identity(&body_X);
        p->d.placement = place;
        p->d.source_file = mj_file;
        p->d.source_line = mjcf_line(c);
        prev = p->name;
    }
    if (st == SD_OK && njoint == 0) {
        pending *p;
        st = add_pending(b, &p);
        if (st == SD_OK) {
            p->name = sd_io_strdup(b->bodies[self].name);
            p->parent = prev ? sd_io_strdup(prev) : NULL;
            if (p->name == NULL || (prev && p->parent == NULL)) st = oom(b);
            sd_transform_compose(&prev_off, &body_X, &p->d.placement);
            sd_transform_identity(&prev_off);
            p->d.hinge = SD_HINGE_FIXED;
            p->d.source_file = mj_file;
            p->d.source_line = line;
        }
    }
    free(owner);
    if (st != SD_OK) return st;
    me = &b->bodies[self];
    me->off = prev_off;
    me->last = b->npend - 1;
    me->carrier = b->pend[me->last].name;
    me->mass = mass;
    memcpy(me->com, com, sizeof com);
    memcpy(me->I, I, sizeof I);
    return read_children(b, node, self, childclass);
}

/* ---------------------------------------------------------------- equalities */

typedef struct eq_src {
    const char *file;
    int line;
    char *name;
} eq_src;

static int find_body(const builder_ctx *b, const char *name)
{
    if (strcmp(name, "world") == 0) return 0;
    for (int i = 1; i < b->nbodies; ++i)
        if (strcmp(b->bodies[i].name, name) == 0) return i;
    return -1;
}

static int find_joint(const builder_ctx *b, const char *name)
{
    for (int i = 0; i < b->njoints; ++i)
        if (b->joints[i].name && strcmp(b->joints[i].name, name) == 0) return i;
    return -1;
}

/* A body attribute of an equality: its index (0: the world, also when absent and optional). */
static sd_status eq_body(builder_ctx *b, const xmlNode *e, const char *owner, const char *attr, int required, int *out)
{
    char *name = mjcf_attr(b->m, e, 0, -1, attr);
    *out = 0;
    if (name == NULL)
        return required ? mjcf_fail(b->m, e, SD_E_PARSE, "%s: no %s", owner, attr) : SD_OK;
    *out = find_body(b, name);
    sd_status st = SD_OK;
    if (*out < 0) st = mjcf_fail(b->m, e, SD_E_PARSE, "%s: %s '%s' is not a body of the model", owner, attr, name);
    free(name);
    return st;
}

static sd_status read_equality(builder_ctx *b, const xmlNode *e, int index, sd_builder *builder, eq_src *src)
{
    mjcf_ctx *m = b->m;
    xmlChar *en = xmlGetNoNsProp(e, (const xmlChar *)"name");
    char *name = en ? sd_io_strdup((const char *)en) : format_name("equality%d", index);
    xmlFree(en);
    if (name == NULL) return oom(b);
    src->name = name;
    src->file = mjcf_file(m, e);
    src->line = mjcf_line(e);
    char *owner = sd_io_describe("equality", name);
    if (owner == NULL) return oom(b);
    int cls = 0, active = 1;
    sd_status st = mjcf_element_class(m, e, owner, 0, &cls);
    static const char *const BOOLS[] = {"false", "true", NULL};
    if (st == SD_OK) st = mjcf_keyword(m, e, MJCF_KIND_EQUALITY, cls, owner, "active", BOOLS, 1, &active);
    if (st != SD_OK || !active) {
        if (st == SD_OK) ++b->unmodelled[U_INACTIVE];
        free(owner);
        return st;
    }
    sd_constraint_desc d;
    sd_constraint_desc_init(&d);
    d.name = name;
    d.source_file = src->file;
    d.source_line = src->line;
    int n = 0;
    if (mjcf_is(e, "connect") || mjcf_is(e, "weld")) {
        int b1 = 0, b2 = 0;
        st = eq_body(b, e, owner, "body1", 1, &b1);
        if (st == SD_OK) st = eq_body(b, e, owner, "body2", 0, &b2);
        if (st == SD_OK && b1 == b2)
            st = mjcf_fail(m, e, SD_E_PARSE, "%s: body1 and body2 are the same body", owner);
        if (st != SD_OK) {
            free(owner);
            return st;
        }
        const mj_body *B1 = &b->bodies[b1], *B2 = &b->bodies[b2];
        sd_transform in1, in2; /* F_A, F_B in the MuJoCo bodies' frames */
        if (mjcf_is(e, "connect")) {
            double anchor[3] = {0.0, 0.0, 0.0};
            st = mjcf_numbers(m, e, 0, -1, owner, "anchor", 3, 3, anchor, &n);
            if (st == SD_OK && n == 0) st = mjcf_fail(m, e, SD_E_PARSE, "%s: <connect> has no anchor", owner);
            for (int i = 0; i < 3 && st == SD_OK; ++i)
                if (fabs(anchor[i]) > SD_MAX_LENGTH)
                    st = mjcf_fail(m, e, SD_E_PARSE, "%s: anchor beyond %g m", owner, SD_MAX_LENGTH);
            if (st == SD_OK) {
                /* the point of body2 that coincides with the anchor at the reference configuration */
                double pw[3];
                sd_transform inv2;
                translation(anchor, &in1);
                sd_transform_point(&B1->world0, anchor, pw);
                sd_transform_inverse(&B2->world0, &inv2);
                sd_transform_identity(&in2);
                sd_transform_point(&inv2, pw, in2.p);
                d.type = SD_CONSTRAINT_BALL;
            }
        } else {
            /* MuJoCo 2.2.2's weld: the point relpose.pos of body1 meets the point `anchor` of body2,
             * and body2's axes are body1's turned by relpose.quat. So F_A = relpose in body1 and
             * F_B = the anchor (body2's axes) in body2; a zero quaternion (the default) takes relpose
             * from the reference configuration: F_A is then where F_B is there. */
            double rel[7] = {0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0}, anchor[3] = {0.0, 0.0, 0.0};
            st = mjcf_numbers(m, e, MJCF_KIND_EQUALITY, cls, owner, "relpose", 7, 7, rel, &n);
            if (st == SD_OK) st = mjcf_numbers(m, e, 0, -1, owner, "anchor", 3, 3, anchor, &n);
            for (int i = 0; i < 3 && st == SD_OK; ++i)
                if (fabs(anchor[i]) > SD_MAX_LENGTH)
                    st = mjcf_fail(m, e, SD_E_PARSE, "%s: anchor beyond %g m", owner, SD_MAX_LENGTH);
            if (st == SD_OK) {
                translation(anchor, &in2);
                const double qn = sqrt(rel[3] * rel[3] + rel[4] * rel[4] + rel[5] * rel[5] + rel[6] * rel[6]);
                if (qn == 0.0) { /* the reference configuration's relative pose */
                    sd_transform inv1, anchor_world;
                    sd_transform_inverse(&B1->world0, &inv1);
                    sd_transform_compose(&B2->world0, &in2, &anchor_world);
                    sd_transform_compose(&inv1, &anchor_world, &in1);
                } else {
                    for (int i = 3; i < 7; ++i) rel[i] /= qn;
                    translation(rel, &in1);
                    sd_quat_to_m3(rel + 3, in1.R);
                }
                for (int i = 0; i < 3 && st == SD_OK; ++i)
                    if (fabs(in1.p[i]) > SD_MAX_LENGTH)
                        st = mjcf_fail(m, e, SD_E_PARSE, "%s: relpose beyond %g m", owner, SD_MAX_LENGTH);
                /* torquescale weighs MuJoCo's rotation rows; at 0 they vanish and only the points meet */
                double torquescale = 1.0;
                if (st == SD_OK) st = mjcf_number(m, e, 0, -1, owner, "torquescale", 1.0, &torquescale);
                d.type = torquescale == 0.0 ? SD_CONSTRAINT_BALL : SD_CONSTRAINT_WELD;
            }
        }
        if (st == SD_OK) {
            d.body_a = B1->carrier;
            d.body_b = B2->carrier;
            sd_transform_compose(&B1->off, &in1, &d.frame_a);
            sd_transform_compose(&B2->off, &in2, &d.frame_b);
            st = sd_builder_add_constraint(builder, &d, m->err);
        }
    } else { /* <joint> */
        char *j1 = mjcf_attr(m, e, 0, -1, "joint1"), *j2 = mjcf_attr(m, e, 0, -1, "joint2");
        double poly[5] = {0.0, 1.0, 0.0, 0.0, 0.0};
        int i1 = -1, i2 = -1;
        if (j1 == NULL) st = mjcf_fail(m, e, SD_E_PARSE, "%s: no joint1", owner);
        if (st == SD_OK && (i1 = find_joint(b, j1)) < 0)
            st = mjcf_fail(m, e, SD_E_PARSE, "%s: joint1 '%s' is not a joint of the model", owner, j1);
        if (st == SD_OK && j2 != NULL && (i2 = find_joint(b, j2)) < 0)
            st = mjcf_fail(m, e, SD_E_PARSE, "%s: joint2 '%s' is not a joint of the model", owner, j2);
        if (st == SD_OK) st = mjcf_numbers(m, e, MJCF_KIND_EQUALITY, cls, owner, "polycoef", 1, 5, poly, &n);
        int degree = 1;
        for (int i = 2; i < 5; ++i)
            if (poly[i] != 0.0) degree = i;
        if (st == SD_OK && degree > 1)
            st = mjcf_fail(m, e, SD_E_NOT_SUPPORTED,
                           "%s: polycoef of degree %d is not offered (a coupling q1 = c0 + c1 q2 is: the last three "
                           "coefficients must be 0)", owner, degree);
        if (st == SD_OK && (i2 < 0 || poly[1] == 0.0))
            st = mjcf_fail(m, e, SD_E_NOT_SUPPORTED,
                           "%s: a joint held in place (%s) is not offered; only couplings of two joints", owner,
                           i2 < 0 ? "no joint2" : "polycoef c1 = 0");
        if (st == SD_OK) {
            const mj_joint *J1 = &b->joints[i1], *J2 = &b->joints[i2];
            if ((J1->type != J_HINGE && J1->type != J_SLIDE) || (J2->type != J_HINGE && J2->type != J_SLIDE))
                st = mjcf_fail(m, e, SD_E_PARSE, "%s: couples joints that are not hinge or slide joints", owner);
            else if (fabs(poly[0]) > SD_MAX_LENGTH || fabs(poly[1]) > SD_MAX_GEAR_RATIO)
                st = mjcf_fail(m, e, SD_E_PARSE, "%s: polycoef beyond the bounds of physical models", owner);
            if (st == SD_OK) {
                d.type = SD_CONSTRAINT_COUPLING;
                d.joint_a = b->pend[J1->body].joint;
                d.joint_b = b->pend[J2->body].joint;
                /* q1 - ref1 = c0 + c1 (q2 - ref2), with q = MuJoCo's qpos */
                d.ratio = poly[1];
                d.offset = poly[0] + J1->ref - poly[1] * J2->ref;
                st = sd_builder_add_constraint(builder, &d, m->err);
            }
        }
        free(j1);
        free(j2);
    }
    free(owner);
    return st;
}

/* ---------------------------------------------------------------- closing the loops */

/* A loop the reference configuration leaves open must be closable: assembly from there. */
static sd_status check_closure(builder_ctx *b, const sd_model *model, const eq_src *src, int nsrc)
{
    const int nc = sd_model_nconstraint_rows(model);
    if (nc == 0) return SD_OK;
    const int nq = sd_model_nq(model);
    double *q0 = calloc((size_t)nq + 1, sizeof *q0), *res = calloc((size_t)nc, sizeof *res);
    sd_data *data = sd_data_new(model);
    sd_status st = (q0 && res && data) ? SD_OK : oom(b);
    if (st == SD_OK) {
        sd_configuration_reference(model, q0);
        st = sd_constraint_residuals(model, data, q0, NULL, res, NULL);
    }
    int worst = -1;
    for (int r = 0; st == SD_OK && r < nc; ++r)
        if (fabs(res[r]) > 1e-9 && (worst < 0 || fabs(res[r]) > fabs(res[worst]))) worst = r;
    if (st == SD_OK && worst >= 0) {
        double left = 0.0;
        sd_status a = sd_assemble_configuration(model, data, q0, NULL, 1e-10, 100, q0, &left);
        if (a != SD_OK) {
            int c = 0;
            for (int k = 0; k < sd_model_nconstraints(model); ++k)
                if (sd_model_constraint_row_offset(model, k) <= worst) c = k;
            const char *cname = sd_model_constraint_name(model, c);
            const eq_src *s = NULL;
            for (int k = 0; k < nsrc; ++k)
                if (src[k].name && cname && strcmp(src[k].name, cname) == 0) s = &src[k];
            st = sd_io_fail(b->m->err, SD_E_MODEL, s ? s->file : b->m->source, s ? s->line : 0,
                            "equality '%s': the loop cannot close (residual %g at the reference configuration, "
                            "and assembly from there fails)", cname ? cname : "?", fabs(res[worst]));
        }
    }
    sd_data_free(data);
    free(q0);
    free(res);
    return st;
}

/* ---------------------------------------------------------------- the model */

static void builder_ctx_free(builder_ctx *b)
{
    for (int i = 0; i < b->nbodies; ++i) free(b->bodies[i].name);
    for (int i = 0; i < b->npend; ++i) {
        free(b->pend[i].name);
        free(b->pend[i].parent);
        free(b->pend[i].joint);
    }
    for (int i = 0; i < b->njoints; ++i) free(b->joints[i].name);
    for (int i = 0; i < b->nnamed; ++i) free(b->named[i]);
    free(b->named);
    for (int i = 0; i < b->nsites; ++i) free(b->sites[i].name);
    for (int i = 0; i < b->nfile_names; ++i) free(b->file_names[i]);
    free(b->file_names);
    free(b->bodies);
    free(b->pend);
    free(b->joints);
    free(b->sites);
}

/* Whether an attribute's text means what `inert` does: the same word, or the same numbers. */
static int same_value(const char *text, const char *inert)
{
    if (strcmp(text, inert) == 0) return 1;
    const char *a = text, *b = inert;
    for (;;) {
        while (sd_io_is_space(*a)) ++a;
        while (sd_io_is_space(*b)) ++b;
        if (*a == '\0' || *b == '\0') return *a == *b;
        const char *ea = a, *eb = b;
        while (*ea != '\0' && !sd_io_is_space(*ea)) ++ea;
        while (*eb != '\0' && !sd_io_is_space(*eb)) ++eb;
        double x, y;
        if (sd_io_parse_number(a, (size_t)(ea - a), &x) != NULL || sd_io_parse_number(b, (size_t)(eb - b), &y) != NULL ||
            x != y)
            return 0;
        a = ea;
        b = eb;
    }
}

/* Count the IGNORED_ATTRIBUTES set on node and below (a <default>'s elements included: they apply). */
static void count_ignored_attributes(builder_ctx *b, const xmlNode *node, int in_equality)
{
    for (const xmlNode *c = node; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        const char *name = (const char *)c->name;
        const int is_equality = in_equality || strcmp(name, "equality") == 0 || strcmp(name, "connect") == 0 ||
                                strcmp(name, "weld") == 0;
        for (int i = 0; i < N_IGNORED_ATTRIBUTES; ++i) {
            const char *e = IGNORED_ATTRIBUTES[i].element;
            const int match = strcmp(e, name) == 0 ? !(in_equality && strcmp(name, "joint") == 0)
                                                   : strcmp(e, "equality") == 0 && is_equality;
            if (!match) continue;
            xmlChar *v = xmlGetNoNsProp(c, (const xmlChar *)IGNORED_ATTRIBUTES[i].attribute);
            const int modelled = v != NULL && strcmp(IGNORED_ATTRIBUTES[i].attribute, "torquescale") == 0 &&
                                 same_value((const char *)v, "0"); /* read: the weld becomes a BALL */
            if (v != NULL && !modelled &&
                (IGNORED_ATTRIBUTES[i].inert == NULL || !same_value((const char *)v, IGNORED_ATTRIBUTES[i].inert)))
                ++b->ignored[i];
            xmlFree(v);
        }
        count_ignored_attributes(b, c->children, mjcf_is(c, "equality"));
    }
}

/* Append one item to a warning's comma-separated list (cut at the buffer's end). */
static void list_append(char *list, size_t size, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void list_append(char *list, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len > 0 && *len + 2 < size) {
        memcpy(list + *len, ", ", 3);
        *len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(list + *len, size - *len, fmt, ap);
    va_end(ap);
    *len = n < 0 ? *len : (size_t)n >= size - *len ? size - 1 : *len + (size_t)n;
}

/* "<file>: <heading>: <list>" as a warning on the model, nothing when the list is empty. */
static sd_status add_list_warning(builder_ctx *b, sd_builder *builder, const char *heading, const char *list)
{
    if (list[0] == '\0') return SD_OK;
    const size_t n = strlen(b->m->source) + strlen(heading) + strlen(list) + 8;
    char *text = malloc(n);
    if (text == NULL) return oom(b);
    snprintf(text, n, "%s: %s: %s", b->m->source, heading, list);
    const sd_status st = sd_builder_add_warning(builder, text);
    free(text);
    return st;
}

/* The attributes of IGNORED_ATTRIBUTES the file sets, in one warning. */
static sd_status add_ignored_attributes_warning(builder_ctx *b, sd_builder *builder)
{
    char list[1200] = "";
    size_t len = 0;
    for (int i = 0; i < N_IGNORED_ATTRIBUTES; ++i) {
        if (b->ignored[i] == 0) continue;
        const char *why = IGNORED_ATTRIBUTES[i].why;
        list_append(list, sizeof list, &len, "%d <%s %s>%s%s%s", b->ignored[i], IGNORED_ATTRIBUTES[i].element,
                    IGNORED_ATTRIBUTES[i].attribute, why ? " (" : "", why ? why : "", why ? ")" : "");
    }
    return add_list_warning(b, builder, "MJCF attributes soadyn reads but does not model, ignored", list);
}

/* Counts of what is not modelled, in one warning. */
static sd_status add_unmodelled_warning(builder_ctx *b, sd_builder *builder)
{
    char list[600] = "";
    size_t len = 0;
    for (int i = 0; i < U_COUNT; ++i)
        if (b->unmodelled[i] > 0) list_append(list, sizeof list, &len, "%d %s", b->unmodelled[i], UNMODELLED[i]);
    return add_list_warning(b, builder, "MJCF elements soadyn does not model, ignored", list);
}

static sd_status build(mjcf_ctx *m, sd_model **model)
{
    builder_ctx b;
    memset(&b, 0, sizeof b);
    b.m = m;
    xmlNode *root = xmlDocGetRootElement(m->doc);
    sd_builder *builder = sd_builder_new();
    eq_src *src = NULL;
    int nsrc = 0;
    b.bodies = calloc(16, sizeof *b.bodies);
    b.bodies_cap = 16;
    sd_status st = builder && b.bodies ? SD_OK : oom(&b);
    if (st == SD_OK) { /* the world */
        b.nbodies = 1;
        b.bodies[0].name = sd_io_strdup("world");
        sd_transform_identity(&b.bodies[0].off);
        sd_transform_identity(&b.bodies[0].world0);
        b.bodies[0].last = -1;
        if (b.bodies[0].name == NULL) st = oom(&b);
    }
    xmlChar *mname = xmlGetNoNsProp(root, (const xmlChar *)"model");
    if (st == SD_OK && mname) st = sd_builder_set_name(builder, (const char *)mname);
    xmlFree(mname);
    for (const xmlNode *c = root->children; c != NULL && st == SD_OK; c = c->next) {
        if (mjcf_is(c, "worldbody")) {
            st = collect_names(&b, c, "joint", "freejoint", &b.named, &b.nnamed, &b.named_cap);
            if (st == SD_OK && b.nnamed > 1) qsort(b.named, (size_t)b.nnamed, sizeof *b.named, compare_names);
            if (st == SD_OK) st = collect_names(&b, c, "body", NULL, &b.file_names, &b.nfile_names, &b.file_names_cap);
            if (st == SD_OK && b.nfile_names > 1)
                qsort(b.file_names, (size_t)b.nfile_names, sizeof *b.file_names, compare_names);
            if (st == SD_OK) st = count_geoms(&b, c, 0);
            if (st == SD_OK) st = read_sites(&b, c, 0, 0);
            if (st == SD_OK) st = read_children(&b, c, 0, 0);
        } else if (mjcf_is(c, "option")) {
            double g[3];
            int n = 0;
            st = mjcf_numbers(m, c, 0, -1, "<option>", "gravity", 3, 3, g, &n);
            if (st == SD_OK && n == 3 && sd_builder_set_gravity(builder, g) != SD_OK)
                st = mjcf_fail(m, c, SD_E_PARSE, "<option gravity>: not finite or beyond 1e7 m/s^2");
            double dt = 0.0; /* the file's step, which simulate takes when given no --dt */
            if (st == SD_OK) st = mjcf_numbers(m, c, 0, -1, "<option>", "timestep", 1, 1, &dt, &n);
            if (st == SD_OK && n == 1 && sd_builder_set_time_step(builder, dt) != SD_OK)
                st = mjcf_fail(m, c, SD_E_PARSE, "<option timestep=\"%g\">: a time step is > 0 and at most 1e3 s", dt);
        } else if (mjcf_is(c, "tendon")) {
            b.unmodelled[U_TENDON] += count_children(c, "fixed") + count_children(c, "spatial");
        } else if (mjcf_is(c, "actuator")) {
            for (const xmlNode *a = c->children; a; a = a->next) b.unmodelled[U_ACTUATOR] += a->type == XML_ELEMENT_NODE;
        } else if (mjcf_is(c, "sensor")) {
            for (const xmlNode *a = c->children; a; a = a->next) b.unmodelled[U_SENSOR] += a->type == XML_ELEMENT_NODE;
        } else if (mjcf_is(c, "contact")) {
            b.unmodelled[U_CONTACT_PAIR] += count_children(c, "pair") + count_children(c, "exclude");
        }
    }
    const double no_gravity[3] = {0.0, 0.0, 0.0}; /* <flag gravity="disable"> */
    if (st == SD_OK && m->flags.gravity_off) st = sd_builder_set_gravity(builder, no_gravity);
    /* the compiler's mass rules, on MuJoCo's bodies (not the massless links of a joint chain) */
    double total = 0.0;
    for (int i = 1; i < b.nbodies && st == SD_OK; ++i) {
        mj_body *B = &b.bodies[i];
        if (B->mass < m->compiler.boundmass) B->mass = m->compiler.boundmass;
        if (m->compiler.boundinertia > 0) mjcf_bound_inertia(B->I, m->compiler.boundinertia);
        total += B->mass;
    }
    if (st == SD_OK && m->compiler.settotalmass > 0 && total > 0) {
        const double s = m->compiler.settotalmass / total;
        for (int i = 1; i < b.nbodies; ++i) {
            b.bodies[i].mass *= s;
            for (int k = 0; k < 9; ++k) b.bodies[i].I[k] *= s;
        }
    }
    for (int i = 1; i < b.nbodies && st == SD_OK; ++i) {
        const mj_body *B = &b.bodies[i];
        pending *p = &b.pend[B->last];
        p->d.mass = B->mass;
        sd_transform_point(&B->off, B->com, p->d.com);
        sd_transform Ri; /* inertia into the carrier's axes: off's rotation (identity unless free) */
        Ri = B->off;
        double T[9];
        sd_m3_mul(Ri.R, B->I, T);
        sd_m3_mul_t(T, Ri.R, p->d.inertia);
    }
    for (int i = 0; i < b.npend && st == SD_OK; ++i) {
        pending *p = &b.pend[i];
        p->d.name = p->name;
        p->d.parent = p->parent;
        p->d.joint_name = p->d.hinge == SD_HINGE_FIXED ? NULL : p->joint;
        st = sd_builder_add_body(builder, &p->d, m->err);
        if (st != SD_OK) {
            /* the builder's message names the body; add where it is */
            char copy[sizeof m->err->message];
            memcpy(copy, m->err->message, sizeof copy);
            st = sd_io_fail(m->err, st, p->d.source_file, p->d.source_line, "%s", copy);
        }
    }
    for (int i = 0; i < b.nsites && st == SD_OK; ++i) { /* in the carrier's frame, as the bodies' data */
        const mj_site *site = &b.sites[i];
        const mj_body *B = &b.bodies[site->body];
        sd_transform X;
        sd_transform_compose(&B->off, &site->X, &X);
        st = sd_builder_add_frame(builder, site->name, B->carrier, &X, m->err);
        if (st != SD_OK) { /* the builder's message names the frame; add where it is */
            char copy[sizeof m->err->message];
            memcpy(copy, m->err->message, sizeof copy);
            st = mjcf_fail(m, site->node, st, "%s", copy);
        }
    }
    if (st == SD_OK) {
        int neq = 0;
        for (const xmlNode *c = root->children; c != NULL; c = c->next)
            if (mjcf_is(c, "equality"))
                for (const xmlNode *e = c->children; e != NULL; e = e->next) neq += e->type == XML_ELEMENT_NODE;
        src = calloc((size_t)neq + 1, sizeof *src);
        if (src == NULL) st = oom(&b);
        int index = 0;
        for (const xmlNode *c = root->children; c != NULL && st == SD_OK; c = c->next) {
            if (!mjcf_is(c, "equality")) continue;
            for (const xmlNode *e = c->children; e != NULL && st == SD_OK; e = e->next) {
                if (e->type != XML_ELEMENT_NODE) continue;
                if (mjcf_is(e, "connect") || mjcf_is(e, "weld") || mjcf_is(e, "joint"))
                    st = read_equality(&b, e, index, builder, &src[nsrc++]);
                else if (mjcf_is(e, "tendon") || mjcf_is(e, "distance"))
                    ++b.unmodelled[U_EQUALITY_OTHER];
                else
                    st = mjcf_fail(m, e, SD_E_PARSE, "<equality>: unknown element <%.40s>", (const char *)e->name);
                ++index;
            }
        }
    }
    if (st == SD_OK) st = add_unmodelled_warning(&b, builder);
    if (st == SD_OK) {
        count_ignored_attributes(&b, root->children, 0);
        st = add_ignored_attributes_warning(&b, builder);
    }
    if (st == SD_OK) st = sd_builder_build(builder, model, m->err);
    if (st == SD_OK) {
        st = check_closure(&b, *model, src, nsrc);
        if (st != SD_OK) {
            sd_model_free(*model);
            *model = NULL;
        }
    }
    for (int i = 0; i < nsrc; ++i) free(src[i].name);
    free(src);
    sd_builder_free(builder);
    builder_ctx_free(&b);
    return st;
}

/* ---------------------------------------------------------------- public entry points */

sd_status sd_mjcf_load_string(const char *xml, size_t length, const char *source_name, sd_model **model,
                              sd_error *err)
{
    if (err != NULL) {
        err->status = SD_OK;
        err->message[0] = '\0';
    }
    const char *source = source_name != NULL ? source_name : "<string>";
    if (model == NULL || xml == NULL)
        return sd_io_fail(err, SD_E_ARGUMENT, source, 0, "sd_mjcf_load_string: %s is NULL",
                          model == NULL ? "model" : "xml");
    *model = NULL;
    if (length > SD_MODEL_FILE_MAX_BYTES)
        return sd_io_fail(err, SD_E_IO, source, 0, "file too large: %zu bytes, model texts are read up to %zu MiB",
                          length, (size_t)SD_MODEL_FILE_MAX_BYTES >> 20);
    sd_error local;
    mjcf_ctx ctx;
    sd_xml_quiet quiet;
    sd_xml_quiet_begin(&quiet);
    sd_status st = mjcf_open(&ctx, xml, length, source, err ? err : &local);
    if (st == SD_OK) st = build(&ctx, model);
    mjcf_close(&ctx);
    return sd_xml_quiet_end(&quiet, st, model, source, err);
}

sd_status sd_mjcf_load_file(const char *path, sd_model **model, sd_error *err)
{
    if (err != NULL) {
        err->status = SD_OK;
        err->message[0] = '\0';
    }
    if (path == NULL || model == NULL)
        return sd_io_fail(err, SD_E_ARGUMENT, "sd_mjcf_load_file", 0, "%s is NULL", path == NULL ? "path" : "model");
    *model = NULL;
    char *text;
    size_t length;
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    st = sd_mjcf_load_string(text, length, path, model, err);
    free(text);
    return st;
}
