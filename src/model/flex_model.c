/*
 * src/model/flex_model.c — flexible bodies in the model layer (soadyn/flex.h): the builder keeps a
 * deep copy of each body's modal description (keyed by body name, checked at once by making the
 * flexible body), and the build turns them into the flexible fields of sd_model: one sd_flex_body
 * per flexible body, q and u laid out with each body's modal coordinates right after its hinge's,
 * the children riding on parent nodes checked and placed in their undeformed node frames. The
 * model queries of flex.h live here too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_body.h"
#include "internal.h"
#include "name_table.h"

typedef struct flex_entry {
    char *body;       /* the body's name, owned */
    sd_flex_desc desc; /* arrays and source_file owned */
} flex_entry;

struct sd_flex_builder {
    flex_entry *entries;
    int n, cap;
};

void sd_flex_desc_init(sd_flex_desc *desc)
{
    if (!desc) return;
    memset(desc, 0, sizeof *desc);
    desc->mass_model = SD_FLEX_FULL;
}

static void desc_free(sd_flex_desc *d)
{
    free((void *)d->node_position);
    free((void *)d->node_mass);
    free((void *)d->node_inertia);
    free((void *)d->modes);
    free((void *)d->stiffness);
    free((void *)d->damping);
    free((void *)d->source_file);
    memset(d, 0, sizeof *d);
}

/* A copy of count doubles (NULL for none); *ok cleared when out of memory. */
static const double *copy_doubles(const double *x, size_t count, int *ok)
{
    if (!x || count == 0) return NULL;
    double *c = malloc(count * sizeof(double));
    if (!c) {
        *ok = 0;
        return NULL;
    }
    memcpy(c, x, count * sizeof(double));
    return c;
}

/* Deep copy of a description whose sizes sd_flex_body_new has accepted; 0 when out of memory. */
static int desc_copy(const sd_flex_desc *src, sd_flex_desc *dst)
{
    const size_t n = (size_t)src->n_nodes, nm = (size_t)src->n_modes;
    int ok = 1;
    *dst = *src;
    dst->node_position = copy_doubles(src->node_position, 3 * n, &ok);
    dst->node_mass = copy_doubles(src->node_mass, n, &ok);
    dst->node_inertia = copy_doubles(src->node_inertia, 9 * n, &ok);
    dst->modes = copy_doubles(src->modes, 6 * n * nm, &ok);
    dst->stiffness = copy_doubles(src->stiffness, nm * nm, &ok);
    dst->damping = copy_doubles(src->damping, nm * nm, &ok);
    dst->source_file = NULL;
    if (src->source_file) {
        const size_t len = strlen(src->source_file) + 1;
        char *s = malloc(len);
        if (s) memcpy(s, src->source_file, len);
        else ok = 0;
        dst->source_file = s;
    }
    if (!ok) desc_free(dst);
    return ok;
}

void sd_flex_builder_free(struct sd_flex_builder *fb)
{
    if (!fb) return;
    for (int i = 0; i < fb->n; ++i) {
        free(fb->entries[i].body);
        desc_free(&fb->entries[i].desc);
    }
    free(fb->entries);
    free(fb);
}

sd_status sd_builder_set_flexible(sd_builder *b, const char *body, const sd_flex_desc *desc, sd_error *err)
{
    if (!b || !body || !body[0] || !desc)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_builder_set_flexible: NULL builder, body name or description");
    /* Check now, so the error comes at this call: the same checks the build makes, with no rigid part. */
    sd_error local;
    sd_error *e = err ? err : &local;
    const double zero[9] = {0};
    sd_flex_body *check = sd_flex_body_new(desc, 0.0, zero, zero, body, e);
    if (!check) return e->status != SD_OK ? e->status : SD_E_MODEL;
    sd_flex_body_free(check);

    struct sd_flex_builder **slot = sd_builder_flex(b);
    if (!*slot && !(*slot = calloc(1, sizeof **slot))) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    struct sd_flex_builder *fb = *slot;
    sd_flex_desc copy;
    if (!desc_copy(desc, &copy)) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    for (int i = 0; i < fb->n; ++i)
        if (strcmp(fb->entries[i].body, body) == 0) { /* a second call for a body replaces the first */
            desc_free(&fb->entries[i].desc);
            fb->entries[i].desc = copy;
            return SD_OK;
        }
    if (fb->n == fb->cap) {
        const int cap = fb->cap ? 2 * fb->cap : 4;
        flex_entry *grown = realloc(fb->entries, (size_t)cap * sizeof *grown);
        if (!grown) {
            desc_free(&copy);
            return sd_error_set(err, SD_E_MEMORY, "out of memory");
        }
        fb->entries = grown;
        fb->cap = cap;
    }
    const size_t len = strlen(body) + 1;
    char *name = malloc(len);
    if (!name) {
        desc_free(&copy);
        return sd_error_set(err, SD_E_MEMORY, "out of memory");
    }
    memcpy(name, body, len);
    fb->entries[fb->n].body = name;
    fb->entries[fb->n].desc = copy;
    fb->n++;
    return SD_OK;
}

/* ---------------------------------------------------------------- build */

/* Fail naming where a body was described ("file:line: "), like the builder's own messages. */
/* Which body each description is for (indices of m), -1 where none: an error naming the body. */
static sd_status match_bodies(const struct sd_flex_builder *fb, const sd_model *m, int *body_of, sd_error *err)
{
    sd_name_table *names = sd_name_table_new(m->n);
    if (!names) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    for (int k = 0; k < m->n; ++k) sd_name_table_insert(names, m->desc[k].name, k);
    sd_status st = SD_OK;
    for (int i = 0; i < fb->n && st == SD_OK; ++i) {
        body_of[i] = sd_name_table_find(names, fb->entries[i].body);
        if (body_of[i] < 0) {
            const char *src = fb->entries[i].desc.source_file;
            st = sd_error_set(err, SD_E_MODEL, "%s%sflexible body '%s' (sd_builder_set_flexible): no body of that name "
                              "was added", src ? src : "", src ? ": " : "", fb->entries[i].body);
        }
    }
    sd_name_table_free(names);
    return st;
}

static int flex_alloc(sd_model *m)
{
    const size_t N = (size_t)(m->n > 0 ? m->n : 1);
    m->flex = calloc(N, sizeof *m->flex);
    m->n_modes = calloc(N, sizeof(int));
    m->mode_q_index = malloc(N * sizeof(int));
    m->mode_v_index = malloc(N * sizeof(int));
    m->parent_node = malloc(N * sizeof(int));
    m->node_placement = malloc(N * sizeof(sd_transform));
    return m->flex && m->n_modes && m->mode_q_index && m->mode_v_index && m->parent_node && m->node_placement;
}

/* Every child riding on a node: a flexible parent that has the node. */
static sd_status check_parent_nodes(const sd_model *m, sd_error *err)
{
    for (int k = 0; k < m->n; ++k) {
        const sd_body_desc *d = &m->desc[k];
        const int t = d->parent_node, p = m->parent[k];
        if (t < 0) continue;
        if (p < 0)
            return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': parent node %d given, but the body hangs from the inertial frame",
                             d->name, t);
        const sd_flex_body *fp = m->flex ? m->flex[p] : NULL;
        if (!fp)
            return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': parent node %d of body '%s', which is not flexible (no "
                             "sd_builder_set_flexible for it)", d->name, t, m->desc[p].name);
        const int nn = sd_flex_body_nnodes(fp);
        if (t >= nn)
            return sd_body_desc_fail(err, SD_E_MODEL, d, "body '%s': parent node %d of flexible body '%s', which has %d nodes (0 .. %d)",
                             d->name, t, m->desc[p].name, nn, nn - 1);
    }
    return SD_OK;
}

sd_status sd_flex_model_build(const struct sd_flex_builder *fb, sd_model *m, sd_error *err)
{
    if (!fb || fb->n == 0) return check_parent_nodes(m, err); /* rigid: the layout stays as it is */
    int *body_of = malloc((size_t)fb->n * sizeof(int));
    if (!body_of) return sd_error_set(err, SD_E_MEMORY, "out of memory");
    sd_status st = match_bodies(fb, m, body_of, err);
    if (st == SD_OK && !flex_alloc(m)) st = sd_error_set(err, SD_E_MEMORY, "out of memory");
    for (int i = 0; i < fb->n && st == SD_OK; ++i) {
        const int k = body_of[i];
        sd_flex_body *f = sd_flex_body_new(&fb->entries[i].desc, m->mass[k], m->com + 3 * k, m->inertia_com + 9 * k,
                                           m->desc[k].name, err);
        if (!f) {
            st = err && err->status != SD_OK ? err->status : SD_E_MODEL;
            break;
        }
        m->flex[k] = f;
        m->n_modes[k] = sd_flex_body_nmodes(f);
        m->nflex++;
        /* the nodes' masses are part of the model's */
        const sd_flex_desc *d = sd_flex_body_desc(f);
        for (int j = 0; j < d->n_nodes; ++j) m->total_mass += d->node_mass[j];
    }
    free(body_of);
    if (st != SD_OK) return st;
    if ((st = check_parent_nodes(m, err)) != SD_OK) return st;

    /* q and u: each body's hinge block, then its modal block (flex.h) */
    int nq = 0, nv = 0;
    for (int k = 0; k < m->n; ++k) {
        m->q_index[k] = nq;
        m->v_index[k] = nv;
        m->mode_q_index[k] = nq += m->nq_k[k];
        m->mode_v_index[k] = nv += m->nv_k[k];
        nq += m->n_modes[k];
        nv += m->n_modes[k];
    }
    m->nq = nq;
    m->nv = nv;
    m->v_index[m->n] = nv;

    /* node_placement = N0_t^-1 placement with the undeformed node frame N0_t = (1, l0_t) in the parent's
     * body frame: the joint frame seen from the node (the overview); the parent frame's own for t = -1 */
    for (int k = 0; k < m->n; ++k) {
        const int t = m->parent_node[k] = m->desc[k].parent_node;
        m->node_placement[k] = m->placement[k];
        if (t < 0) continue;
        const double *l0 = sd_flex_body_node_position(m->flex[m->parent[k]], t);
        for (int i = 0; i < 3; ++i) m->node_placement[k].p[i] -= l0[i];
    }
    return SD_OK;
}

void sd_flex_model_free(sd_model *m)
{
    if (m->flex)
        for (int k = 0; k < m->n; ++k) sd_flex_body_free(m->flex[k]);
    free(m->flex);
    free(m->n_modes);
    free(m->mode_q_index);
    free(m->mode_v_index);
    free(m->parent_node);
    free(m->node_placement);
    m->flex = NULL;
    m->n_modes = m->mode_q_index = m->mode_v_index = m->parent_node = NULL;
    m->node_placement = NULL;
    m->nflex = 0;
}

/* ---------------------------------------------------------------- queries */

static int body_ok(const sd_model *m, int k) { return m && k >= 0 && k < m->n; }
static const sd_flex_body *flex_of(const sd_model *m, int k) { return body_ok(m, k) && m->flex ? m->flex[k] : NULL; }

int sd_model_nflexible(const sd_model *m) { return m ? m->nflex : 0; }
int sd_model_body_nmodes(const sd_model *m, int k)
{
    return body_ok(m, k) ? (m->n_modes ? m->n_modes[k] : 0) : -1;
}
int sd_model_body_nnodes(const sd_model *m, int k)
{
    const sd_flex_body *f = flex_of(m, k);
    return f ? sd_flex_body_nnodes(f) : body_ok(m, k) ? 0 : -1;
}
/* A rigid body's (empty) modal block starts where its hinge's ends, like a flexible one's. */
int sd_model_mode_q_index(const sd_model *m, int k)
{
    return body_ok(m, k) ? (m->mode_q_index ? m->mode_q_index[k] : m->q_index[k] + m->nq_k[k]) : -1;
}
int sd_model_mode_v_index(const sd_model *m, int k)
{
    return body_ok(m, k) ? (m->mode_v_index ? m->mode_v_index[k] : m->v_index[k] + m->nv_k[k]) : -1;
}
int sd_model_parent_node(const sd_model *m, int k) { return body_ok(m, k) ? m->desc[k].parent_node : -1; }
double sd_model_body_total_mass(const sd_model *m, int k)
{
    if (!body_ok(m, k)) return NAN;
    double mass = m->mass[k]; /* the rigid part (sd_model_body_mass) */
    const sd_flex_body *f = flex_of(m, k);
    if (f) {
        const sd_flex_desc *d = sd_flex_body_desc(f);
        for (int j = 0; j < d->n_nodes; ++j) mass += d->node_mass[j];
    }
    return mass;
}
/* A rigid body's mass matrix is exact: SD_FLEX_FULL; an index out of range: -1. */
sd_flex_mass_model sd_model_flex_mass_model(const sd_model *m, int k)
{
    const sd_flex_body *f = flex_of(m, k);
    return f ? sd_flex_body_mass_model(f) : body_ok(m, k) ? SD_FLEX_FULL : (sd_flex_mass_model)-1;
}
