/*
 * io/urdf_build.c — from a parsed URDF robot to a model: resolves link references, checks that
 * the links form one tree (duplicates, unknown links, a link with two parents, several roots,
 * cycles), merges fixed joints into their parent body, and hands bodies, frames, closure
 * constraints (urdf_loops.c: URDF+ loops and couplings, mimic joints) and warnings to the model
 * builder. Every error names file:line and the element.
 *
 * Fixed-joint merging (the default). A link whose parent joint is fixed is not a body: it belongs
 * to the body its parent belongs to (its "host"), at the placement X_host_link composed along the
 * chain of fixed joints. Its mass is lumped exactly into the host: for two parts (m1, c1, I1) and
 * (m2, c2, I2), all in host axes with I about each part's own centre of mass,
 *   m = m1 + m2,  c = (m1 c1 + m2 c2) / m,  I = I1 + I2 + (m1 m2 / m) S(c1 - c2),
 *   S(d) = |d|^2 1 - d d^T  (parallel axis theorem in reduced-mass form),
 * where a merged part's inertia is first rotated into host axes, R I R^T. The merged link stays
 * reachable as a frame of that name on its host.
 *
 * The root. A root link named "world" is, by URDF convention, the inertial frame itself (Drake's
 * files name it as a parent without defining it; it is then implied): it is not a body and the
 * links jointed to it hang from the inertial frame (links welded to it stay fixed bodies: the
 * inertial frame cannot carry mass or frames). Any other root link is a body welded to the
 * inertial frame. With options->floating_base the root link gets a free hinge instead; when the
 * root is "world", each link welded to it gets the free hinge. The root body's hinge is not in
 * the file; it is named after the root link, or "<link>_root" when a joint already has that name
 * (links and joints are separate namespaces).
 *
 * Numbers were bounded where they were read (urdf.c); what lumping composes is bounded here (a
 * joint frame reached along merged fixed joints) and by the model builder (lumped mass and
 * inertia), each against model_bounds.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/urdf_internal.h"
#include "model/model_bounds.h"

/* ---------------------------------------------------------------- helpers */

typedef sd_urdf_named named;

static int compare_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

int sd_urdf_find_named(const named *table, int n, const char *name)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(table[mid].name, name);
        if (c == 0) {
            while (mid > 0 && strcmp(table[mid - 1].name, name) == 0) --mid; /* first definition */
            return table[mid].index;
        }
        if (c < 0) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* A growing string for warnings that list several elements. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
    int failed;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) { b->failed = 1; return; }
    if (b->len + (size_t)need + 1 > b->cap) {
        size_t cap = 2 * (b->len + (size_t)need + 1);
        char *s = realloc(b->s, cap);
        if (s == NULL) { b->failed = 1; return; }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
}

/* Mass properties: mass, centre of mass and inertia about it, in one body's frame. */
typedef struct lump {
    double m, c[3], I[9];
} lump;

/* acc += (m, c, I): exact combination of two rigid parts (see the file header). */
static void lump_add(lump *acc, double m, const double c[3], const double I[9])
{
    const double M = acc->m + m;
    double d[3] = {acc->c[0] - c[0], acc->c[1] - c[1], acc->c[2] - c[2]};
    const double k = M > 0.0 ? acc->m * m / M : 0.0; /* reduced mass */
    const double dd = sd_v3_dot(d, d);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            acc->I[3 * i + j] += I[3 * i + j] + k * ((i == j ? dd : 0.0) - d[i] * d[j]);
    if (M > 0.0)
        for (int i = 0; i < 3; ++i) acc->c[i] = (acc->m * acc->c[i] + m * c[i]) / M;
    acc->m = M;
}

static int is_moving(sd_hinge_type hinge) { return hinge != SD_HINGE_FIXED; }

/* ---------------------------------------------------------------- state of one build */

typedef struct build_state {
    sd_urdf_robot *robot;
    int floating_base, keep_fixed, mimic_independent;
    sd_error *err;
    const char *src;
    named *link_names, *joint_names; /* sorted */
    int *order;             /* links in depth-first order from the root, children in document order */
    int world_root;         /* the root link is "world", the inertial frame */
    int *host;              /* per link: the link whose body it belongs to; -1 for the inertial frame */
    sd_transform *X_host;   /* per link: its frame in its host's frame */
    sd_transform *placement;/* per body link: its joint frame in its parent body's frame */
    lump *mass;             /* per body link: lumped mass properties, body frame */
    char *root_joint;       /* the name of the root body's hinge, which the file does not name */
    sd_builder *builder;
} build_state;

static sd_status fail(build_state *b, sd_status st, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static sd_status fail(build_state *b, sd_status st, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = sd_io_vfail(b->err, st, b->src, line, fmt, ap);
    va_end(ap);
    return st;
}

static sd_status allocate(build_state *b)
{
    const int nl = b->robot->nlinks, nj = b->robot->njoints;
    b->link_names = malloc((size_t)nl * sizeof *b->link_names);
    b->joint_names = malloc((size_t)(nj > 0 ? nj : 1) * sizeof *b->joint_names);
    b->order = malloc((size_t)nl * sizeof *b->order);
    b->host = malloc((size_t)nl * sizeof *b->host);
    b->X_host = malloc((size_t)nl * sizeof *b->X_host);
    b->placement = malloc((size_t)nl * sizeof *b->placement);
    b->mass = calloc((size_t)nl, sizeof *b->mass);
    b->builder = sd_builder_new();
    if (!b->link_names || !b->joint_names || !b->order || !b->host || !b->X_host || !b->placement || !b->mass ||
        !b->builder)
        return fail(b, SD_E_MEMORY, 0, "out of memory");
    return SD_OK;
}

static void release(build_state *b)
{
    free(b->link_names);
    free(b->joint_names);
    free(b->order);
    free(b->host);
    free(b->X_host);
    free(b->placement);
    free(b->mass);
    free(b->root_joint);
    sd_builder_free(b->builder);
}

/* ---------------------------------------------------------------- topology */

/* Drake's URDFs name "world" as a parent without defining it: the inertial frame is implied.
 * Add the missing massless link so that the rest sees an ordinary "world" root. */
static sd_status add_implicit_world(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    int line = 0;
    for (int k = 0; k < r->njoints && line == 0; ++k)
        if (strcmp(r->joints[k].parent_name, "world") == 0) line = r->joints[k].line;
    for (int i = 0; i < r->nlinks && line > 0; ++i)
        if (strcmp(r->links[i].name, "world") == 0) line = 0;
    if (line == 0) return SD_OK;
    sd_urdf_link *links = realloc(r->links, (size_t)(r->nlinks + 1) * sizeof *links);
    if (links == NULL) return fail(b, SD_E_MEMORY, 0, "out of memory");
    r->links = links;
    r->links_cap = r->nlinks + 1;
    sd_urdf_link *w = &r->links[r->nlinks];
    memset(w, 0, sizeof *w);
    w->name = sd_io_strdup("world");
    if (w->name == NULL) return fail(b, SD_E_MEMORY, 0, "out of memory");
    w->line = line; /* the first joint that names it */
    w->parent_joint = w->first_child = w->last_child = -1;
    r->nlinks++;
    return SD_OK;
}

/* Sort names; a name seen twice is an error at the second definition. */
static sd_status index_names(build_state *b, named *table, int n, int is_link)
{
    for (int i = 0; i < n; ++i) {
        table[i].index = i;
        table[i].name = is_link ? b->robot->links[i].name : b->robot->joints[i].name;
    }
    qsort(table, (size_t)n, sizeof *table, compare_named);
    for (int i = 1; i < n; ++i) {
        if (strcmp(table[i - 1].name, table[i].name) != 0) continue;
        const int first = table[i - 1].index, second = table[i].index;
        const int l1 = is_link ? b->robot->links[first].line : b->robot->joints[first].line;
        const int l2 = is_link ? b->robot->links[second].line : b->robot->joints[second].line;
        return fail(b, SD_E_PARSE, l2, "%s '%s' is defined twice (first at line %d)", is_link ? "link" : "joint",
                    table[i].name, l1);
    }
    return SD_OK;
}

/* Resolve each joint's parent and child links and hang it in its parent's child list. */
static sd_status resolve_joints(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    for (int k = 0; k < r->njoints; ++k) {
        sd_urdf_joint *j = &r->joints[k];
        j->parent = sd_urdf_find_named(b->link_names, r->nlinks, j->parent_name);
        j->child = sd_urdf_find_named(b->link_names, r->nlinks, j->child_name);
        if (j->parent < 0 || j->child < 0)
            return fail(b, SD_E_PARSE, j->line, "joint '%s': unknown %s link '%s'", j->name,
                        j->parent < 0 ? "parent" : "child", j->parent < 0 ? j->parent_name : j->child_name);
        if (j->parent == j->child)
            return fail(b, SD_E_PARSE, j->line, "joint '%s': link '%s' is its own parent (a cycle)", j->name,
                        j->child_name);
        sd_urdf_link *child = &r->links[j->child];
        if (child->parent_joint >= 0)
            return fail(b, SD_E_PARSE, j->line, "joint '%s': link '%s' already has parent joint '%s' (line %d)",
                        j->name, child->name, r->joints[child->parent_joint].name,
                        r->joints[child->parent_joint].line);
        child->parent_joint = k;
        sd_urdf_link *parent = &r->links[j->parent];
        if (parent->last_child < 0) parent->first_child = k; else r->joints[parent->last_child].next_sibling = k;
        parent->last_child = k;
    }
    return SD_OK;
}

/* Report the cycle reached by walking up from `start` (a link not reachable from the root). */
static sd_status report_cycle(build_state *b, int start)
{
    sd_urdf_robot *r = b->robot;
    int slow = start, fast = start;
    do { /* Floyd: both walkers end inside the cycle */
        slow = r->joints[r->links[slow].parent_joint].parent;
        fast = r->joints[r->links[fast].parent_joint].parent;
        fast = r->joints[r->links[fast].parent_joint].parent;
    } while (slow != fast);
    const sd_urdf_joint *j = &r->joints[r->links[slow].parent_joint];
    return fail(b, SD_E_PARSE, j->line, "joint '%s': the joints form a cycle through link '%s'", j->name,
                r->links[slow].name);
}

/* The single root, then every link in depth-first order; unreached links lie on a cycle. */
static sd_status order_links(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    int root = -1;
    for (int i = 0; i < r->nlinks; ++i) {
        if (r->links[i].parent_joint >= 0) continue;
        if (root >= 0)
            return fail(b, SD_E_PARSE, r->links[i].line,
                        "link '%s': several root links ('%s' at line %d and this one); a URDF is one tree",
                        r->links[i].name, r->links[root].name, r->links[root].line);
        root = i;
    }
    if (root < 0) return report_cycle(b, 0);
    int *stack = b->host; /* borrowed: host[] is filled only after the order is known */
    int top = 0, n = 0;
    stack[top++] = root;
    while (top > 0) {
        const int link = stack[--top];
        b->order[n++] = link;
        int count = 0;
        for (int j = r->links[link].first_child; j >= 0; j = r->joints[j].next_sibling) ++count;
        int pos = top + count; /* pushed in reverse so that they come off in document order */
        for (int j = r->links[link].first_child; j >= 0; j = r->joints[j].next_sibling) stack[--pos] = r->joints[j].child;
        top += count;
    }
    if (n < r->nlinks) {
        for (int i = 0; i < r->nlinks; ++i) b->host[i] = 0;
        for (int i = 0; i < n; ++i) b->host[b->order[i]] = 1;
        for (int i = 0; i < r->nlinks; ++i)
            if (!b->host[i]) return report_cycle(b, i);
    }
    b->world_root = strcmp(r->links[root].name, "world") == 0;
    return SD_OK;
}

/* The root body's hinge (fixed, or free with floating_base) is not in the file, so it needs a
 * name: the root link's, unless a joint of the file has it (links and joints are separate
 * namespaces in URDF, so a joint may well be called like a link), then "<link>_root",
 * "<link>_root2", ... whichever no joint has. */
static sd_status name_root_joint(build_state *b)
{
    if (b->world_root) return SD_OK;
    const sd_urdf_robot *r = b->robot;
    const char *link = r->links[b->order[0]].name;
    const size_t size = strlen(link) + 32;
    b->root_joint = malloc(size);
    if (b->root_joint == NULL) return fail(b, SD_E_MEMORY, 0, "out of memory");
    snprintf(b->root_joint, size, "%s", link);
    for (int k = 1; sd_urdf_find_named(b->joint_names, r->njoints, b->root_joint) >= 0; ++k) {
        if (k == 1) snprintf(b->root_joint, size, "%s_root", link);
        else snprintf(b->root_joint, size, "%s_root%d", link, k);
    }
    return SD_OK;
}

/* ---------------------------------------------------------------- bodies and lumping */

/* Decide, parent before child, which body each link belongs to, and lump the masses. */
static void assign_hosts(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    for (int n = 0; n < r->nlinks; ++n) {
        const int L = b->order[n];
        const sd_urdf_link *link = &r->links[L];
        sd_transform_identity(&b->X_host[L]);
        sd_transform_identity(&b->placement[L]);
        if (link->parent_joint < 0) {
            b->host[L] = b->world_root ? -1 : L;
        } else {
            const sd_urdf_joint *j = &r->joints[link->parent_joint];
            const int hp = b->host[j->parent];
            sd_transform X;
            sd_transform_compose(&b->X_host[j->parent], &j->origin, &X);
            /* flexible links and links riding on a node stay bodies (urdf_flex.c) */
            if (j->hinge == SD_HINGE_FIXED && !b->keep_fixed && hp >= 0 && link->flex == NULL && !j->has_node) {
                b->host[L] = hp; /* merged: its frame lives on the parent's body */
                b->X_host[L] = X;
            } else {
                b->host[L] = L;
                b->placement[L] = X;
            }
        }
        const int h = b->host[L];
        if (h < 0 || !link->has_inertial) continue;
        double c[3], T[9], I[9];
        sd_transform_point(&b->X_host[L], link->com, c);
        sd_m3_mul(b->X_host[L].R, link->inertia, T);
        sd_m3_mul_t(T, b->X_host[L].R, I); /* R I R^T: into host axes */
        lump_add(&b->mass[h], link->mass, c, I);
    }
}

/* The hinge a body link gets: its joint's, or free/fixed at the root. */
static sd_hinge_type body_hinge(const build_state *b, const sd_urdf_link *link)
{
    if (link->parent_joint < 0) return b->floating_base ? SD_HINGE_FREE : SD_HINGE_FIXED;
    const sd_urdf_joint *j = &b->robot->joints[link->parent_joint];
    const int welded_to_world = j->hinge == SD_HINGE_FIXED && b->host[j->parent] < 0;
    return b->floating_base && b->world_root && welded_to_world ? SD_HINGE_FREE : j->hinge;
}

static sd_status add_body(build_state *b, int L)
{
    const sd_urdf_link *link = &b->robot->links[L];
    const sd_urdf_joint *j = link->parent_joint >= 0 ? &b->robot->joints[link->parent_joint] : NULL;
    /* each <origin> was bounded where it was read; merged fixed joints add theirs up */
    const double *p = b->placement[L].p;
    for (int i = 0; i < 3 && j != NULL; ++i)
        if (fabs(p[i]) > SD_MAX_LENGTH)
            return fail(b, SD_E_PARSE, j->line,
                        "joint '%s': its frame lies %g m from its parent body's frame along the fixed joints "
                        "merged between them, beyond %g m, the bound of physical models",
                        j->name, p[i], SD_MAX_LENGTH);
    sd_body_desc d;
    sd_body_desc_init(&d);
    d.name = link->name;
    d.hinge = body_hinge(b, link);
    d.placement = b->placement[L];
    d.mass = b->mass[L].m;
    memcpy(d.com, b->mass[L].c, sizeof d.com);
    memcpy(d.inertia, b->mass[L].I, sizeof d.inertia);
    d.source_file = b->src;
    d.source_line = link->line; /* the builder's remaining checks: the lumped mass, the composed placement */
    if (j == NULL) {
        d.joint_name = b->root_joint;
    } else {
        const int hp = b->host[j->parent];
        d.parent = hp >= 0 ? b->robot->links[hp].name : NULL;
        d.joint_name = j->name;
        if (j->has_node) d.parent_node = j->parent_node; /* <soadyn:node> */
        memcpy(d.axis, j->axis, sizeof d.axis);
        if (j->hinge == SD_HINGE_UNIVERSAL) memcpy(d.axis2, j->axis2, sizeof d.axis2);
        d.damping = j->damping;
        d.armature = j->armature;
        d.stiffness = j->stiffness;
        d.spring_ref = j->spring_ref;
        d.friction = j->friction;
        d.has_limits = j->has_limits;
        d.lower = j->lower;
        d.upper = j->upper;
        d.effort_limit = j->effort;
        d.velocity_limit = j->velocity;
        if (j->mimic != NULL && is_moving(j->hinge)) {
            d.mimic_joint = j->mimic;
            d.mimic_multiplier = j->mimic_multiplier;
            d.mimic_offset = j->mimic_offset;
        }
    }
    return sd_builder_add_body(b->builder, &d, b->err);
}

/* ---------------------------------------------------------------- warnings */

static sd_status warn(build_state *b, strbuf *sb)
{
    sd_status st = sb->failed ? SD_E_MEMORY : sd_builder_add_warning(b->builder, sb->s);
    free(sb->s);
    memset(sb, 0, sizeof *sb);
    return st == SD_OK ? SD_OK : fail(b, st, 0, "could not record a warning");
}

/* One warning listing every mimic joint when they are loaded as independent joints (otherwise they
 * are couplings, urdf_loops.c), one for mimic tags on fixed joints (which have no coordinate to
 * couple). */
static sd_status warn_mimics(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    strbuf moving = {0}, fixed = {0};
    int nmoving = 0, nfixed = 0;
    for (int k = 0; k < r->njoints; ++k) {
        const sd_urdf_joint *j = &r->joints[k];
        if (j->mimic == NULL || (is_moving(j->hinge) && !b->mimic_independent)) continue;
        strbuf *sb = is_moving(j->hinge) ? &moving : &fixed;
        int *count = is_moving(j->hinge) ? &nmoving : &nfixed;
        sb_printf(sb, "%s'%s' (line %d, mimics '%s')", *count > 0 ? ", " : "", j->name, j->line, j->mimic);
        ++*count;
    }
    sd_status st = SD_OK;
    if (nmoving > 0) {
        strbuf w = {0};
        sb_printf(&w, "%s: %d mimic joint%s loaded as independent joint%s (mimic_independent; the coupling "
                      "is kept in the description only): %s", b->src, nmoving, nmoving > 1 ? "s" : "", nmoving > 1 ? "s" : "",
                  moving.s != NULL ? moving.s : "");
        st = warn(b, &w);
    }
    if (st == SD_OK && nfixed > 0) {
        strbuf w = {0};
        sb_printf(&w, "%s: <mimic> ignored on %d fixed joint%s: %s", b->src, nfixed, nfixed > 1 ? "s" : "",
                  fixed.s != NULL ? fixed.s : "");
        st = warn(b, &w);
    }
    free(moving.s);
    free(fixed.s);
    return st;
}

/* One warning per joint whose <limit> held a number beyond the physical bounds, read as no limit
 * (files write "unlimited" as 1e16 or the largest double). */
static sd_status warn_unbounded_limits(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    sd_status st = SD_OK;
    for (int k = 0; k < r->njoints && st == SD_OK; ++k) {
        const sd_urdf_joint *j = &r->joints[k];
        if (j->unbounded_limit == NULL) continue;
        strbuf w = {0};
        sb_printf(&w, "%s:%d: joint '%s': <limit %s> is beyond the bounds of physical models; read as no limit",
                  b->src, j->limit_line, j->name, j->unbounded_limit);
        st = warn(b, &w);
    }
    return st;
}

/* Zero-mass leaves: a moving body whose whole subtree has no mass makes the mass matrix singular. */
static sd_status warn_massless_leaves(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    double *m = calloc((size_t)r->nlinks, sizeof *m);
    if (m == NULL) return fail(b, SD_E_MEMORY, 0, "out of memory");
    for (int n = r->nlinks - 1; n >= 0; --n) { /* gather, tips to base */
        const int L = b->order[n];
        if (b->host[L] != L) continue;
        m[L] += b->mass[L].m + sd_urdf_flex_mass(&r->links[L]); /* a flexible link's nodes count */
        const int pj = r->links[L].parent_joint;
        if (pj >= 0 && b->host[r->joints[pj].parent] >= 0) m[b->host[r->joints[pj].parent]] += m[L];
    }
    sd_status st = SD_OK;
    for (int n = 0; n < r->nlinks && st == SD_OK; ++n) {
        const int L = b->order[n];
        if (b->host[L] != L || m[L] > 0.0 || !is_moving(body_hinge(b, &r->links[L]))) continue;
        const int pj = r->links[L].parent_joint;
        strbuf w = {0};
        sb_printf(&w, "%s:%d: link '%s' is a zero-mass leaf: nothing with mass moves with joint '%s', so the "
                      "mass matrix is singular", b->src, pj >= 0 ? r->joints[pj].line : r->links[L].line,
                  r->links[L].name, pj >= 0 ? r->joints[pj].name : r->links[L].name);
        st = warn(b, &w);
    }
    free(m);
    return st;
}

/* Inertias of merged links are checked here (the builder sees only their lumped sum); the
 * builder checks the inertias of links that stay bodies. */
static sd_status warn_inertias(build_state *b)
{
    sd_urdf_robot *r = b->robot;
    sd_status st = SD_OK;
    for (int L = 0; L < r->nlinks && st == SD_OK; ++L) {
        if (b->host[L] == L || !r->links[L].triangle_broken) continue;
        strbuf w = {0};
        sb_printf(&w, "%s:%d: link '%s': the principal moments of inertia break the triangle inequality",
                  b->src, r->links[L].line, r->links[L].name);
        st = warn(b, &w);
    }
    if (st == SD_OK && b->world_root && r->links[b->order[0]].mass > 0.0) {
        strbuf w = {0};
        sb_printf(&w, "%s:%d: link 'world' is the inertial frame; its mass is ignored", b->src,
                  r->links[b->order[0]].line);
        st = warn(b, &w);
    }
    return st;
}

/* ---------------------------------------------------------------- entry point */

static sd_status emit(build_state *b, const sd_urdf_tree *tree, sd_model **model)
{
    sd_urdf_robot *r = b->robot;
    sd_status st = SD_OK;
    if (r->name != NULL) st = sd_builder_set_name(b->builder, r->name);
    if (st == SD_OK && r->has_gravity && sd_builder_set_gravity(b->builder, r->gravity) != SD_OK)
        st = fail(b, SD_E_PARSE, 0, "<soadyn:gravity>: beyond the bound of physical models"); /* parse checked */
    for (int n = 0; n < r->nlinks && st == SD_OK; ++n)
        if (b->host[b->order[n]] == b->order[n]) st = add_body(b, b->order[n]);
    for (int n = 0; n < r->nlinks && st == SD_OK; ++n) {
        const int L = b->order[n], h = b->host[L];
        if (h >= 0 && h != L)
            st = sd_builder_add_frame(b->builder, r->links[L].name, r->links[h].name, &b->X_host[L], b->err);
    }
    if (st == SD_OK) st = sd_urdf_add_flexible(r, b->host, b->builder, b->err);
    if (st == SD_OK) st = sd_urdf_add_constraints(tree, b->builder);
    if (st == SD_OK) st = warn_mimics(b);
    if (st == SD_OK) st = warn_inertias(b);
    if (st == SD_OK) st = warn_unbounded_limits(b);
    if (st == SD_OK) st = warn_massless_leaves(b);
    if (st == SD_OK && r->warning != NULL && sd_builder_add_warning(b->builder, r->warning) != SD_OK)
        st = fail(b, SD_E_MEMORY, 0, "could not record a warning");
    if (st == SD_OK) st = sd_builder_build(b->builder, model, b->err);
    return st;
}

sd_status sd_urdf_robot_build(sd_urdf_robot *robot, const sd_urdf_options *options, sd_model **model,
                              sd_error *err)
{
    build_state b;
    memset(&b, 0, sizeof b);
    b.robot = robot;
    b.err = err;
    b.src = robot->source;
    b.floating_base = options != NULL && options->floating_base;
    b.keep_fixed = options != NULL && options->keep_fixed_joints;
    b.mimic_independent = options != NULL && options->mimic_independent;
    sd_status st = add_implicit_world(&b);
    if (st == SD_OK) st = allocate(&b);
    if (st == SD_OK) st = index_names(&b, b.link_names, robot->nlinks, 1);
    if (st == SD_OK) st = index_names(&b, b.joint_names, robot->njoints, 0);
    if (st == SD_OK) st = resolve_joints(&b);
    if (st == SD_OK) st = order_links(&b);
    if (st == SD_OK) st = name_root_joint(&b);
    const sd_urdf_tree tree = {robot, b.link_names, b.joint_names, b.host, b.mimic_independent, b.src, err};
    if (st == SD_OK) st = sd_urdf_check_constraints(&tree);
    if (st == SD_OK) {
        assign_hosts(&b);
        st = emit(&b, &tree, model);
    }
    release(&b);
    return st;
}
