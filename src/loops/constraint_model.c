/*
 * src/loops/constraint_model.c — closure constraints in the model: the builder's list, their
 * resolution against the built tree (names to bodies, frames turned onto the axis, rows stacked),
 * the task frames each row acts through, and the body lists that the restricted recursions visit
 * (computed once here, so that an evaluation touches only the bodies a loop involves: the world
 * placements of the frame bodies' ancestors, and the compliance gather over the same paths); the
 * workspace; the queries.
 *
 * Glossary: see loops_internal.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loops_internal.h"

struct sd_loops_builder {
    sd_constraint_desc *items; /* strings owned */
    int n, cap;
};

static const char *const type_names[SD_CONSTRAINT_TYPE_COUNT] = {
    "weld", "ball", "revolute", "prismatic", "distance", "coupling", "point_in_plane", "planar"};
static const int type_rows[SD_CONSTRAINT_TYPE_COUNT] = {6, 3, 5, 5, 1, 1, 1, 3};
/* The components of Delta (0-2 angular, 3-5 linear, in F_A's axes) each cut kind keeps; nsel 0:
 * not a cut kind (distance, coupling). */
static const struct { int nsel, sel[6]; } cut_rows[SD_CONSTRAINT_TYPE_COUNT] = {
    [SD_CONSTRAINT_WELD] = {6, {0, 1, 2, 3, 4, 5}},  [SD_CONSTRAINT_BALL] = {3, {3, 4, 5}},
    [SD_CONSTRAINT_REVOLUTE] = {5, {0, 1, 3, 4, 5}}, [SD_CONSTRAINT_PRISMATIC] = {5, {0, 1, 2, 3, 4}},
    [SD_CONSTRAINT_POINT_IN_PLANE] = {1, {5}},       [SD_CONSTRAINT_PLANAR] = {3, {0, 1, 5}},
};

/* Kinds whose `axis` turns the frames (the free axis, or the plane's normal, becomes z). */
static int has_axis(sd_constraint_type t)
{
    return t == SD_CONSTRAINT_REVOLUTE || t == SD_CONSTRAINT_PRISMATIC || t == SD_CONSTRAINT_POINT_IN_PLANE ||
           t == SD_CONSTRAINT_PLANAR;
}

const char *sd_constraint_type_name(sd_constraint_type t)
{
    return (unsigned)t < SD_CONSTRAINT_TYPE_COUNT ? type_names[t] : "unknown";
}

int sd_constraint_type_nrows(sd_constraint_type t) { return (unsigned)t < SD_CONSTRAINT_TYPE_COUNT ? type_rows[t] : -1; }

void sd_constraint_desc_init(sd_constraint_desc *desc)
{
    if (!desc) return; /* nothing to fill (was a NULL dereference) */
    memset(desc, 0, sizeof *desc);
    desc->type = SD_CONSTRAINT_WELD;
    sd_transform_identity(&desc->frame_a);
    sd_transform_identity(&desc->frame_b);
    desc->axis[2] = 1.0;
    desc->ratio = 1.0;
}

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    const size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static void free_desc_strings(sd_constraint_desc *d)
{
    free((char *)d->name);
    free((char *)d->body_a);
    free((char *)d->body_b);
    free((char *)d->joint_a);
    free((char *)d->joint_b);
    free((char *)d->source_file);
}

void sd_loops_builder_free(struct sd_loops_builder *lb)
{
    if (!lb) return;
    for (int i = 0; i < lb->n; ++i) free_desc_strings(&lb->items[i]);
    free(lb->items);
    free(lb);
}

/* "file:line: " of a description, or "" (messages name where a constraint came from). */
static void where(const char *file, int line, char *out, size_t size)
{
    if (file && line > 0) snprintf(out, size, "%s:%d: ", file, line);
    else if (file) snprintf(out, size, "%s: ", file);
    else out[0] = '\0';
}

static int finite_n(const double *x, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* A placement is usable when finite and its R is a rotation (to 1e-6). */
static int valid_transform(const sd_transform *X)
{
    if (!finite_n(X->R, 9) || !finite_n(X->p, 3)) return 0;
    double RtR[9];
    sd_m3t_mul(X->R, X->R, RtR);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (fabs(RtR[3 * i + j] - (i == j)) > 1e-6) return 0;
    const double *R = X->R; /* det > 0: a rotation, not a reflection */
    const double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                       R[2] * (R[3] * R[7] - R[4] * R[6]);
    return det > 0.0;
}

static int empty_name(const char *s) { return !s || !s[0]; }

sd_status sd_builder_add_constraint(sd_builder *b, const sd_constraint_desc *desc, sd_error *err)
{
    if (!b || !desc) return sd_error_set(err, SD_E_ARGUMENT, "sd_builder_add_constraint: NULL argument");
    char at[300];
    where(desc->source_file, desc->source_line, at, sizeof at);
    if (empty_name(desc->name)) return sd_error_set(err, SD_E_MODEL, "%sa constraint has no name", at);
    const char *name = desc->name;
    if ((unsigned)desc->type >= SD_CONSTRAINT_TYPE_COUNT)
        return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': unknown type %d", at, name, (int)desc->type);
    struct sd_loops_builder **slot = sd_builder_loops(b);
    if (*slot)
        for (int i = 0; i < (*slot)->n; ++i)
            if (strcmp((*slot)->items[i].name, name) == 0)
                return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s' is defined twice", at, name);
    const sd_constraint_type t = desc->type;
    if (t == SD_CONSTRAINT_COUPLING) {
        if (empty_name(desc->joint_a) || empty_name(desc->joint_b))
            return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': a coupling needs joint_a and joint_b", at, name);
        if (strcmp(desc->joint_a, desc->joint_b) == 0)
            return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': couples joint '%s' to itself", at, name,
                                desc->joint_a);
        if (!isfinite(desc->ratio) || !isfinite(desc->offset) || desc->ratio == 0.0)
            return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': ratio must be finite and nonzero, offset finite",
                                at, name);
    } else {
        if (!valid_transform(&desc->frame_a) || !valid_transform(&desc->frame_b))
            return sd_error_set(err, SD_E_MODEL,
                                "%sconstraint '%s': frame_a or frame_b is not a finite rigid placement", at, name);
        if (has_axis(t) && (!finite_n(desc->axis, 3) || !(sd_v3_norm(desc->axis) > 1e-12)))
            return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': the %s is zero or not finite", at, name,
                                t == SD_CONSTRAINT_POINT_IN_PLANE || t == SD_CONSTRAINT_PLANAR ? "plane's normal"
                                                                                               : "axis");
        if (t == SD_CONSTRAINT_DISTANCE && !(desc->distance > 0.0 && isfinite(desc->distance)))
            return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': distance must be finite and > 0 (got %g)", at,
                                name, desc->distance);
    }
    if (!*slot && !(*slot = calloc(1, sizeof **slot))) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    struct sd_loops_builder *lb = *slot;
    if (lb->n == lb->cap) {
        const int cap = lb->cap ? 2 * lb->cap : 8;
        sd_constraint_desc *p = realloc(lb->items, (size_t)cap * sizeof *p);
        if (!p) return sd_error_set(err, SD_E_MEMORY, "out of memory");
        lb->items = p;
        lb->cap = cap;
    }
    sd_constraint_desc *c = &lb->items[lb->n];
    *c = *desc;
    c->name = dup_str(desc->name);
    c->body_a = dup_str(desc->body_a);
    c->body_b = dup_str(desc->body_b);
    c->joint_a = dup_str(desc->joint_a);
    c->joint_b = dup_str(desc->joint_b);
    c->source_file = dup_str(desc->source_file);
    if (!c->name || (desc->body_a && !c->body_a) || (desc->body_b && !c->body_b) || (desc->joint_a && !c->joint_a) ||
        (desc->joint_b && !c->joint_b) || (desc->source_file && !c->source_file)) {
        free_desc_strings(c);
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    }
    lb->n++;
    return SD_OK;
}

/* ---------------------------------------------------------------- resolution at build */

/* A body or model-frame name to (body, placement of the named thing in the body); "" is the world. */
static int resolve_side(const sd_model *m, const char *name, const sd_transform *local, int *body, sd_transform *X)
{
    if (empty_name(name)) {
        *body = -1;
        *X = *local;
        return 1;
    }
    int k = sd_model_body_index(m, name);
    if (k >= 0) {
        *body = k;
        *X = *local;
        return 1;
    }
    const int fr = sd_model_frame_index(m, name);
    if (fr < 0) return 0;
    *body = m->frame_body[fr];
    sd_transform_compose(&m->frame_placement[fr], local, X);
    return 1;
}

/* The rotation Q whose z column is the unit axis n (x, y any right-handed completion). */
static void rotation_onto_axis(const double n[3], double Q[9])
{
    double z[3], x[3], y[3];
    const double len = sd_v3_norm(n);
    for (int i = 0; i < 3; ++i) z[i] = n[i] / len;
    const double t[3] = {fabs(z[0]) < 0.9 ? 1.0 : 0.0, fabs(z[0]) < 0.9 ? 0.0 : 1.0, 0.0};
    sd_v3_cross(t, z, y);
    const double ly = sd_v3_norm(y);
    for (int i = 0; i < 3; ++i) y[i] /= ly;
    sd_v3_cross(y, z, x);
    for (int i = 0; i < 3; ++i) {
        Q[3 * i + 0] = x[i];
        Q[3 * i + 1] = y[i];
        Q[3 * i + 2] = z[i];
    }
}

static sd_status resolve_constraint(const sd_model *m, const sd_constraint_desc *in, sd_loop_constraint *c,
                                    sd_error *err)
{
    char at[300];
    where(in->source_file, in->source_line, at, sizeof at);
    c->type = in->type;
    c->nrows = type_rows[in->type];
    c->embed = in->embed != 0;
    if (in->type == SD_CONSTRAINT_COUPLING) {
        const char *jn[2] = {in->joint_a, in->joint_b};
        int *jb[2] = {&c->body_a, &c->body_b};
        for (int s = 0; s < 2; ++s) {
            const int k = sd_model_joint_index(m, jn[s]);
            if (k < 0) return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': no joint '%s'", at, in->name, jn[s]);
            if (m->hinge[k] != SD_HINGE_REVOLUTE && m->hinge[k] != SD_HINGE_PRISMATIC)
                return sd_error_set(err, SD_E_MODEL,
                                    "%sconstraint '%s': joint '%s' is %s; a coupling needs revolute or prismatic", at,
                                    in->name, jn[s], sd_hinge_type_name(m->hinge[k]));
            *jb[s] = k;
        }
        c->ratio = in->ratio;
        c->offset = in->offset;
        return SD_OK;
    }
    if (!resolve_side(m, in->body_a, &in->frame_a, &c->body_a, &c->frame_a))
        return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': body_a '%s' is neither a body nor a frame", at,
                            in->name, in->body_a);
    if (!resolve_side(m, in->body_b, &in->frame_b, &c->body_b, &c->frame_b))
        return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s': body_b '%s' is neither a body nor a frame", at,
                            in->name, in->body_b);
    if (c->body_a == c->body_b)
        return sd_error_set(err, SD_E_MODEL, "%sconstraint '%s' ties %s%s%s to itself", at, in->name,
                            c->body_a < 0 ? "the inertial frame" : "body '",
                            c->body_a < 0 ? "" : m->desc[c->body_a].name, c->body_a < 0 ? "" : "'");
    if (has_axis(in->type)) {
        double Q[9], R[9]; /* both frames turned alike, so that the axis (F_A coordinates) is their z */
        rotation_onto_axis(in->axis, Q);
        sd_m3_mul(c->frame_a.R, Q, R);
        memcpy(c->frame_a.R, R, sizeof R);
        sd_m3_mul(c->frame_b.R, Q, R);
        memcpy(c->frame_b.R, R, sizeof R);
    }
    c->length = in->distance;
    c->nsel = cut_rows[in->type].nsel;
    memcpy(c->sel, cut_rows[in->type].sel, sizeof c->sel);
    return SD_OK;
}

/* The task frames of constraint c (their roles: see constraint_kinematics.c). */
static int constraint_frames(const sd_model *m, const sd_loop_constraint *c, int *body, int *role)
{
    int n = 0;
    if (c->type == SD_CONSTRAINT_COUPLING) {
        const int bodies[4] = {c->body_a, m->parent[c->body_a], c->body_b, m->parent[c->body_b]};
        for (int r = 0; r < 4; ++r)
            if (bodies[r] >= 0) body[n] = bodies[r], role[n++] = 2 + r;
    } else {
        if (c->body_a >= 0) body[n] = c->body_a, role[n++] = 0;
        if (c->body_b >= 0) body[n] = c->body_b, role[n++] = 1;
    }
    return n;
}

/* Lowest common ancestor (-1: the inertial frame; different trees meet there). */
static int lowest_common_ancestor(const sd_model *m, int a, int b)
{
    while (a != b && a >= 0 && b >= 0) {
        if (a > b) a = m->parent[a]; /* parents have smaller indices */
        else b = m->parent[b];
    }
    return a == b ? a : -1;
}

/* A coupling must also hold the two hinges themselves: when one of its bodies is the other's
 * ancestor, the loop hangs on that body's parent. */
int sd_loops_loop_top(const sd_model *m, const sd_loop_constraint *c)
{
    int top = lowest_common_ancestor(m, c->body_a, c->body_b);
    if (c->type == SD_CONSTRAINT_COUPLING && top >= 0 && (top == c->body_a || top == c->body_b)) top = m->parent[top];
    return top;
}

static int find_root(int *uf, int k)
{
    while (uf[k] != k) k = uf[k] = uf[uf[k]];
    return k;
}

/* The rank groups (loops_internal.h): union-find of the constraints over the bodies of their
 * loops; groups numbered by first constraint, rows listed group by group. */
static int rank_groups(const sd_model *m, sd_loops_model *L)
{
    const int nb = m->n > 0 ? m->n : 1;
    int *uf = malloc((size_t)L->ncons * sizeof(int)), *owner = malloc((size_t)nb * sizeof(int));
    int *gid = malloc((size_t)L->ncons * sizeof(int));
    L->group_row0 = calloc((size_t)L->ncons + 1, sizeof(int));
    L->group_rows = malloc((size_t)(L->nrows > 0 ? L->nrows : 1) * sizeof(int));
    int ok = uf && owner && gid && L->group_row0 && L->group_rows;
    if (ok) {
        for (int k = 0; k < m->n; ++k) owner[k] = -1;
        for (int c = 0; c < L->ncons; ++c) uf[c] = c;
        for (int c = 0; c < L->ncons; ++c) {
            const sd_loop_constraint *con = &L->cons[c];
            const int top = sd_loops_loop_top(m, con), ends[2] = {con->body_a, con->body_b};
            /* a flexible top's modes move the loop when a path leaves it at a node, and two loops
             * hanging on it share them: its modal speeds are the loop's too */
            const int top_modes = top >= 0 && m->n_modes && m->n_modes[top] > 0;
            for (int s = 0; s < 2; ++s)
                for (int k = ends[s]; k >= 0 && (k != top || top_modes); k = m->parent[k]) {
                    if (owner[k] >= 0) uf[find_root(uf, c)] = find_root(uf, owner[k]);
                    else owner[k] = c;
                    if (k == top) break;
                }
        }
        L->ngroups = 0;
        for (int c = 0; c < L->ncons; ++c) gid[c] = find_root(uf, c) == c ? L->ngroups++ : -1;
        for (int c = 0; c < L->ncons; ++c) gid[c] = gid[find_root(uf, c)];
        int at = 0;
        L->max_group_rows = 0;
        for (int g = 0; g < L->ngroups; ++g) {
            L->group_row0[g] = at;
            for (int c = 0; c < L->ncons; ++c)
                if (gid[c] == g)
                    for (int i = 0; i < L->cons[c].nrows; ++i) L->group_rows[at++] = L->cons[c].row + i;
            if (at - L->group_row0[g] > L->max_group_rows) L->max_group_rows = at - L->group_row0[g];
        }
        L->group_row0[L->ngroups] = at;
    }
    free(uf);
    free(owner);
    free(gid);
    return ok;
}

static void mark_ancestors(const sd_model *m, int k, int *mark)
{
    for (; k >= 0 && !mark[k]; k = m->parent[k]) mark[k] = 1;
}

/* Body lists: slots for the marked bodies in ascending order; returns their number. */
static int slots_from_marks(int n, const int *mark, int *list, int *slot)
{
    int count = 0;
    for (int k = 0; k < n; ++k) {
        slot[k] = mark[k] ? count : -1;
        if (mark[k]) list[count++] = k;
    }
    return count;
}

sd_status sd_loops_build(struct sd_loops_builder *lb, sd_model *m, sd_error *err)
{
    m->loops = NULL;
    if (!lb || lb->n == 0) return SD_OK;
    const int n = m->n, nb = n > 0 ? n : 1;
    sd_loops_model *L = calloc(1, sizeof *L);
    if (!L) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    m->loops = L; /* freed with the model, also on failure */
    L->cons = calloc((size_t)lb->n, sizeof *L->cons);
    L->frames = calloc(4 * (size_t)lb->n, sizeof *L->frames);
    L->kin_slot = malloc((size_t)nb * sizeof(int));
    L->kin_bodies = malloc((size_t)nb * sizeof(int));
    L->fb_slot = malloc((size_t)nb * sizeof(int));
    L->fb_bodies = malloc((size_t)nb * sizeof(int));
    L->fb_lo = malloc((size_t)nb * sizeof(int));
    L->fb_hi = malloc((size_t)nb * sizeof(int));
    L->fb_root = malloc((size_t)nb * sizeof(int));
    int *mark = calloc((size_t)nb, sizeof(int)), *fmark = calloc((size_t)nb, sizeof(int));
    sd_status st = SD_OK;
    if (!L->cons || !L->frames || !L->kin_slot || !L->kin_bodies || !L->fb_slot || !L->fb_bodies || !L->fb_lo ||
        !L->fb_hi || !L->fb_root || !mark || !fmark) {
        st = sd_error_set(err, SD_E_MEMORY, "out of memory");
        goto done;
    }
    L->ncons = lb->n;
    for (int i = 0; i < lb->n; ++i) {
        sd_loop_constraint *c = &L->cons[i];
        if ((st = resolve_constraint(m, &lb->items[i], c, err)) != SD_OK) goto done;
        c->row = L->nrows;
        L->nrows += c->nrows;
        c->name = dup_str(lb->items[i].name);
        c->source_file = dup_str(lb->items[i].source_file);
        c->source_line = lb->items[i].source_line;
        if (!c->name || (lb->items[i].source_file && !c->source_file)) {
            st = sd_error_set(err, SD_E_MEMORY, "out of memory");
            goto done;
        }
    }
    for (int i = 0; i < L->ncons; ++i) { /* task frames, and the bodies the recursions must visit */
        int body[4], role[4];
        const int nf = constraint_frames(m, &L->cons[i], body, role);
        for (int j = 0; j < nf; ++j) {
            sd_loop_frame *f = &L->frames[L->nframes++];
            f->body = body[j];
            f->constraint = i;
            f->role = role[j];
            f->ew = L->ew_total;
            L->ew_total += 6 * L->cons[i].nrows;
            /* world placements: of F_A and F_B, and of every gather body (the compliance gather
             * works in world axes, closed_dynamics.c); the gather bodies */
            mark_ancestors(m, body[j], mark);
            mark_ancestors(m, body[j], fmark);
        }
    }
    L->nkin = slots_from_marks(n, mark, L->kin_bodies, L->kin_slot);
    L->nfb = slots_from_marks(n, fmark, L->fb_bodies, L->fb_slot);
    /* the rows whose forces reach each gather body: those of the constraints with a frame in its
     * subtree, spanned by one range [lo, hi) so that the gather's products stay contiguous */
    for (int i = 0; i < L->nfb; ++i) { /* each gather body's root: the origin its gather works about */
        int root = L->fb_bodies[i];
        while (m->parent[root] >= 0) root = m->parent[root];
        L->fb_root[i] = L->kin_slot[root];
    }
    for (int i = 0; i < L->nfb; ++i) L->fb_lo[i] = L->nrows, L->fb_hi[i] = 0;
    for (int fi = 0; fi < L->nframes; ++fi) {
        const sd_loop_constraint *c = &L->cons[L->frames[fi].constraint];
        for (int k = L->frames[fi].body; k >= 0; k = m->parent[k]) {
            const int sl = L->fb_slot[k];
            if (c->row < L->fb_lo[sl]) L->fb_lo[sl] = c->row;
            if (c->row + c->nrows > L->fb_hi[sl]) L->fb_hi[sl] = c->row + c->nrows;
        }
    }
    if (!rank_groups(m, L)) {
        st = sd_error_set(err, SD_E_MEMORY, "out of memory");
        goto done;
    }
    for (int i = 0; i < lb->n; ++i) free_desc_strings(&lb->items[i]); /* the builder is emptied */
    lb->n = 0;
done:
    free(mark);
    free(fmark);
    return st;
}

void sd_loops_model_free(sd_loops_model *L)
{
    if (!L) return;
    if (L->cons)
        for (int i = 0; i < L->ncons; ++i) {
            free(L->cons[i].name);
            free(L->cons[i].source_file);
        }
    free(L->cons);
    free(L->frames);
    free(L->kin_bodies);
    free(L->kin_slot);
    free(L->fb_bodies);
    free(L->fb_slot);
    free(L->fb_lo);
    free(L->fb_hi);
    free(L->fb_root);
    free(L->group_row0);
    free(L->group_rows);
    free(L);
}

/* count ints copied; NULL when out of memory. */
static int *copy_ints(const int *src, size_t count)
{
    int *c = malloc(count * sizeof(int));
    if (c) memcpy(c, src, count * sizeof(int));
    return c;
}

/* (A new array in sd_loops_model needs its copy here as well as its free above.) */
sd_loops_model *sd_loops_model_copy(const sd_loops_model *L, int n)
{
    const size_t nb = (size_t)(n > 0 ? n : 1), ncons = (size_t)(L->ncons > 0 ? L->ncons : 1);
    sd_loops_model *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *L;
    c->cons = calloc(ncons, sizeof *c->cons);
    c->frames = calloc(4 * ncons, sizeof *c->frames);
    c->kin_bodies = copy_ints(L->kin_bodies, nb);
    c->kin_slot = copy_ints(L->kin_slot, nb);
    c->fb_bodies = copy_ints(L->fb_bodies, nb);
    c->fb_slot = copy_ints(L->fb_slot, nb);
    c->fb_lo = copy_ints(L->fb_lo, nb);
    c->fb_hi = copy_ints(L->fb_hi, nb);
    c->fb_root = copy_ints(L->fb_root, nb);
    /* the rank rule's groups (sizes as sd_loops_model_new allocates them) */
    c->group_row0 = L->group_row0 ? copy_ints(L->group_row0, (size_t)L->ncons + 1) : NULL;
    c->group_rows = L->group_rows ? copy_ints(L->group_rows, (size_t)(L->nrows > 0 ? L->nrows : 1)) : NULL;
    int ok = c->cons && c->frames && c->kin_bodies && c->kin_slot && c->fb_bodies && c->fb_slot && c->fb_lo && c->fb_hi && c->fb_root &&
             (c->group_row0 || !L->group_row0) && (c->group_rows || !L->group_rows);
    if (c->frames) memcpy(c->frames, L->frames, (size_t)L->nframes * sizeof *c->frames);
    for (int i = 0; ok && i < L->ncons; ++i) {
        c->cons[i] = L->cons[i];
        c->cons[i].name = dup_str(L->cons[i].name);
        c->cons[i].source_file = dup_str(L->cons[i].source_file);
        ok = c->cons[i].name && (!L->cons[i].source_file || c->cons[i].source_file);
    }
    if (!ok) {
        if (!c->cons) c->ncons = 0;
        sd_loops_model_free(c);
        return NULL;
    }
    return c;
}

/* ---------------------------------------------------------------- workspace */

sd_loops_data *sd_loops_data_new(const sd_model *m)
{
    const sd_loops_model *L = m->loops;
    sd_loops_data *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t nc = (size_t)(L->nrows > 0 ? L->nrows : 1), n = (size_t)(m->n > 0 ? m->n : 1);
    const size_t nv = (size_t)(m->nv > 0 ? m->nv : 1), nc_cons = (size_t)(L->ncons > 0 ? L->ncons : 1);
    w->Xw = malloc((size_t)(L->nkin > 0 ? L->nkin : 1) * sizeof(sd_transform));
    w->Ew = calloc((size_t)(L->ew_total > 0 ? L->ew_total : 1), sizeof(double));
    w->Eww = calloc((size_t)(L->ew_total > 0 ? L->ew_total : 1), sizeof(double));
    w->Xf = malloc(2 * nc_cons * sizeof(sd_transform));
    w->F = calloc(6 * nc * (size_t)(L->nfb > 0 ? L->nfb : 1), sizeof(double));
    w->HF = calloc(nv * nc, sizeof(double));
    w->DHF = calloc(6 * nc, sizeof(double));
    w->Sc = calloc(nc * nc, sizeof(double));
    w->Sf = calloc(nc * nc, sizeof(double));
    w->eig = calloc(nc, sizeof(double));
    w->gamma = calloc(nc, sizeof(double));
    w->lambda = calloc(nc, sizeof(double));
    w->rhs = calloc(nc, sizeof(double));
    w->alpha = calloc(6 * n, sizeof(double));
    w->dense = calloc(nc * nv, sizeof(double));
    w->vq = calloc((size_t)(m->nq > 0 ? m->nq : 1), sizeof(double));
    w->vv = calloc(nv, sizeof(double));
    w->vv2 = calloc(nv, sizeof(double));
    w->rank = -1;
    w->work = calloc(4 * nc + 1, sizeof(double)); /* LAPACK dpstrf's and dgeqp3's work (closed_dynamics.c) */
    w->Kf = calloc(nc * nc, sizeof(double));
    w->tmp = calloc(nc, sizeof(double));
    w->piv = calloc(nc, sizeof(int));
    w->sub = calloc(nc, sizeof(int));
    w->sub_col = calloc(nc, sizeof(int));
    w->fb_slo = calloc((size_t)(L->nfb > 0 ? L->nfb : 1), sizeof(int));
    w->fb_shi = calloc((size_t)(L->nfb > 0 ? L->nfb : 1), sizeof(int));
    w->qdd_save = calloc(nv, sizeof(double));
    w->alpha_save = calloc(6 * n, sizeof(double));
    w->basis = calloc(nc * nc, sizeof(double));
    w->fx = calloc(6 * n, sizeof(double));
    w->tau_work = calloc(nv, sizeof(double));
    if (!w->fx || !w->tau_work) {
        sd_loops_data_free(w);
        return NULL;
    }
    if (m->nflex > 0) { /* the dense compliance of the engine path (closed_dynamics.c) */
        w->Mff = calloc(nv * nv, sizeof(double));
        w->Z = calloc(nc * nv, sizeof(double));
        w->free_speed = calloc(nv, sizeof(int));
        if (!w->Mff || !w->Z || !w->free_speed) {
            sd_loops_data_free(w);
            return NULL;
        }
    }
    if (!w->basis || !sd_row_space_init(&w->rows, L->max_group_rows, m->nv)) {
        sd_loops_data_free(w);
        return NULL;
    }
    if (!w->sub || !w->sub_col || !w->fb_slo || !w->fb_shi || !w->qdd_save || !w->alpha_save) {
        sd_loops_data_free(w);
        return NULL;
    }
    if (!w->Xw || !w->Xf || !w->Ew || !w->Eww || !w->F || !w->HF || !w->DHF || !w->Sc || !w->Sf || !w->eig || !w->gamma || !w->lambda || !w->rhs ||
        !w->alpha || !w->dense || !w->vq || !w->vv || !w->vv2 || !w->work || !w->Kf || !w->tmp || !w->piv) {
        sd_loops_data_free(w);
        return NULL;
    }
    return w;
}

void sd_loops_data_free(sd_loops_data *w)
{
    if (!w) return;
    free(w->Xw);
    free(w->Ew);
    free(w->Eww);
    free(w->Xf);
    free(w->F);
    free(w->HF);
    free(w->DHF);
    free(w->Sc);
    free(w->Sf);
    free(w->eig);
    free(w->work);
    free(w->Kf);
    free(w->tmp);
    free(w->piv);
    free(w->sub);
    free(w->sub_col);
    free(w->fb_slo);
    free(w->fb_shi);
    free(w->qdd_save);
    free(w->alpha_save);
    free(w->basis);
    free(w->fx);
    free(w->tau_work);
    free(w->Mff);
    free(w->Z);
    free(w->free_speed);
    sd_row_space_free(&w->rows);
    free(w->gamma);
    free(w->lambda);
    free(w->rhs);
    free(w->alpha);
    free(w->dense);
    free(w->vq);
    free(w->vv);
    free(w->vv2);
    free(w);
}

/* ---------------------------------------------------------------- queries */

int sd_model_nconstraints(const sd_model *m) { return m && m->loops ? m->loops->ncons : 0; }
int sd_model_nconstraint_rows(const sd_model *m) { return m && m->loops ? m->loops->nrows : 0; }

int sd_model_constraint_index(const sd_model *m, const char *name)
{
    if (!m || !m->loops || !name) return -1;
    for (int i = 0; i < m->loops->ncons; ++i)
        if (strcmp(m->loops->cons[i].name, name) == 0) return i;
    return -1;
}

static const sd_loop_constraint *get(const sd_model *m, int i)
{
    return m && m->loops && i >= 0 && i < m->loops->ncons ? &m->loops->cons[i] : NULL;
}

const char *sd_model_constraint_name(const sd_model *m, int i)
{
    const sd_loop_constraint *c = get(m, i);
    return c ? c->name : NULL;
}

int sd_model_constraint_embed(const sd_model *m, int i)
{
    return m && m->loops && i >= 0 && i < m->loops->ncons ? m->loops->cons[i].embed : -1;
}

sd_constraint_type sd_model_constraint_type(const sd_model *m, int i)
{
    const sd_loop_constraint *c = get(m, i);
    return c ? c->type : SD_CONSTRAINT_TYPE_COUNT;
}

int sd_model_constraint_nrows(const sd_model *m, int i)
{
    const sd_loop_constraint *c = get(m, i);
    return c ? c->nrows : -1;
}

int sd_model_constraint_row_offset(const sd_model *m, int i)
{
    const sd_loop_constraint *c = get(m, i);
    return c ? c->row : -1;
}

sd_status sd_model_constraint_bodies(const sd_model *m, int i, int *body_a, int *body_b)
{
    const sd_loop_constraint *c = get(m, i);
    if (!c) return SD_E_ARGUMENT;
    if (body_a) *body_a = c->body_a;
    if (body_b) *body_b = c->body_b;
    return SD_OK;
}
