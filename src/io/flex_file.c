/*
 * io/flex_file.c — a flexible body's modal model from a JSON data file (sd_flex_data_read_file,
 * soadyn/flex.h), read with jansson (Debian libjansson-dev). The format, "soadyn-flex" version 1:
 *
 *   {
 *     "format": "soadyn-flex", "version": 1,
 *     "name": "...", "comment": "...",                      optional strings, not used
 *     "mass_model": "full" | "linearised",                   optional, default "full" ("linearized" too)
 *     "nodes": [                                             one object per node, n >= 1
 *       {"position": [x, y, z],                              m, undeformed, body frame
 *        "mass": m,                                          kg, >= 0
 *        "inertia": [9 numbers]},                            optional: kg m^2 about the node, body
 *       ...                                                  axes, row-major; absent: a point mass
 *     ],
 *     "modes": [                                             one object per mode, 1 .. 1000
 *       {"shape": [[rx, ry, rz, tx, ty, tz], ...],           one 6-vector per node, in node order:
 *                                                            small rotation (rad) then translation (m)
 *                                                            per unit modal coordinate, body axes
 *        "omega": w  or  "frequency_hz": f,                  natural frequency (rad/s or Hz), >= 0
 *        "damping_ratio": zeta},                             optional, >= 0 (needs the frequency)
 *       ...
 *     ],
 *     "stiffness": [[...], ...],                             K_m, n_modes x n_modes, symmetric:
 *                                                            instead of the modes' frequencies
 *     "damping": [[...], ...]                                D_m, n_modes x n_modes, symmetric:
 *                                                            instead of damping ratios (optional)
 *   }
 *
 * Stiffness and damping either come as matrices (every mode then gives neither a frequency nor a
 * damping ratio) or follow from each mode's frequency: K_m = diag(omega_r^2 m_r) and D_m =
 * diag(2 zeta_r omega_r m_r), with m_r = Pi_r^T M_s Pi_r the modal mass computed from the nodes
 * (001 Eq 1-2: m_j |t|^2 + r^T J_j r summed over nodes). So shapes may be scaled in any way
 * (mass-normalised ones have m_r = 1 and K_m = diag(omega^2)); but diagonal matrices give the
 * stated frequencies only for mass-orthogonal shapes (the eigenmodes of a finite-element model are),
 * so with frequencies the shapes must be mass-orthogonal: |Pi_r^T M_s Pi_s| <= 1e-3 sqrt(m_r m_s),
 * else the file is refused and should give "stiffness" (and "damping") instead.
 *
 * Checked here, each error naming the file and the member ("modes[3].shape[7]: 5 numbers,
 * expected 6"), and the line and column where jansson gives one (syntax errors): the format and
 * version, members of the right type and count, unknown members (a misspelt "mas" is not silently
 * ignored), duplicate keys, finite numbers (JSON has no NaN or infinity; numbers beyond a double's
 * range are refused), non-negative masses, frequencies and damping ratios, positions within the
 * bounds of physical models, symmetric matrices (1e-9 relative), modes that move some mass. What
 * only a whole model says (positive semi-definite K_m and D_m, independent modes, node inertias)
 * is checked by sd_builder_set_flexible, whose messages name the file too. The file is read as
 * model files are (io_common.c: regular files up to SD_MODEL_FILE_MAX_BYTES), and a file of more
 * than SD_FLEX_FILE_MAX_VALUES JSON values is refused before jansson builds its tree (about 60
 * bytes per value).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "flex/flex_data.h"
#include "io/flex_file.h"
#include "io/io_common.h"
#include "model/model_bounds.h"

/* 8 Mi values: 1.4 million 6-vectors, e.g. 14 000 nodes and 100 modes; jansson's tree of them
 * takes about 500 MB. */
#define SD_FLEX_FILE_MAX_VALUES ((size_t)8 << 20)
#define SD_FLEX_FILE_MAX_MODES 1000
#define SD_FLEX_FILE_MAX_NODES 10000000
/* Symmetry of the matrices, relative to their largest entry (files written with 10 or more digits
 * pass, a typing error does not); mass-orthogonality of the shapes when frequencies are given. */
#define SD_FLEX_FILE_SYM_TOL 1e-9
#define SD_FLEX_FILE_ORTHO_TOL 1e-3

typedef struct reader {
    const char *path;
    sd_error *err;
} reader;

static sd_status bad(const reader *r, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static sd_status bad(const reader *r, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const sd_status st = sd_io_vfail(r->err, SD_E_PARSE, r->path, line, fmt, ap);
    va_end(ap);
    return st;
}

static const char *type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* Refuse members other than the allowed ones (NULL-terminated). */
static sd_status only_members(const reader *r, const json_t *obj, const char *where, const char *const *allowed,
                              const char *list)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        int known = 0;
        for (const char *const *a = allowed; *a != NULL && !known; ++a) known = strcmp(key, *a) == 0;
        if (!known) return bad(r, 0, "%s: unknown member \"%.60s\" (expected %s)", where, key, list);
    }
    return SD_OK;
}

/* A finite number; `what` bounds it: nonnegative, largest magnitude (HUGE_VAL: any). */
static sd_status get_number(const reader *r, const json_t *j, const char *where, int nonnegative, double bound,
                            double *out)
{
    if (!json_is_number(j)) return bad(r, 0, "%s: %s, expected a number", where, type_name(j));
    const double x = json_number_value(j);
    if (!isfinite(x)) return bad(r, 0, "%s: not a finite number", where);
    if (nonnegative && x < 0.0) return bad(r, 0, "%s: %g: must not be negative", where, x);
    if (fabs(x) > bound) return bad(r, 0, "%s: %g is beyond %g, the bound of physical models", where, x, bound);
    *out = x;
    return SD_OK;
}

/* An array of exactly n numbers. */
static sd_status get_numbers(const reader *r, const json_t *j, const char *where, size_t n, double bound, double *out)
{
    if (!json_is_array(j)) return bad(r, 0, "%s: %s, expected an array of %zu numbers", where, type_name(j), n);
    if (json_array_size(j) != n)
        return bad(r, 0, "%s: %zu number%s, expected %zu", where, json_array_size(j),
                   json_array_size(j) == 1 ? "" : "s", n);
    char item[192]; /* where (at most 128) and an index */
    for (size_t i = 0; i < n; ++i) {
        snprintf(item, sizeof item, "%s[%zu]", where, i);
        const sd_status st = get_number(r, json_array_get(j, i), item, 0, bound, &out[i]);
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

/* A member of an object that must be there. */
static sd_status require(const reader *r, const json_t *obj, const char *where, const char *key, json_t **out)
{
    *out = json_object_get(obj, key);
    if (*out == NULL) return bad(r, 0, "%s: no \"%s\"", where, key);
    return SD_OK;
}

/* A non-empty array member of at most max entries. */
static sd_status get_list(const reader *r, const json_t *obj, const char *key, size_t max, const char *what,
                          json_t **out, size_t *n)
{
    sd_status st = require(r, obj, "the top-level object", key, out);
    if (st != SD_OK) return st;
    if (!json_is_array(*out)) return bad(r, 0, "%s: %s, expected an array of %s", key, type_name(*out), what);
    *n = json_array_size(*out);
    if (*n == 0)
        return bad(r, 0, "%s: empty: a flexible body needs at least one %s (a rigid body needs no data file)", key,
                   what);
    if (*n > max) return bad(r, 0, "%s: %zu entries, at most %zu are read", key, *n, max);
    return SD_OK;
}

/* ---------------------------------------------------------------- parts of the file */

static sd_status read_header(const reader *r, const json_t *root, sd_flex_mass_model *mass_model)
{
    static const char *const allowed[] = {"format", "version", "name", "comment", "mass_model",
                                          "nodes", "modes", "stiffness", "damping", NULL};
    sd_status st = only_members(r, root, "the top-level object", allowed,
                                "format, version, name, comment, mass_model, nodes, modes, stiffness, damping");
    if (st != SD_OK) return st;
    json_t *format, *version;
    st = require(r, root, "the top-level object", "format", &format);
    if (st != SD_OK) return st;
    if (!json_is_string(format) || strcmp(json_string_value(format), "soadyn-flex") != 0)
        return bad(r, 0, "format: %s%.40s%s, expected \"soadyn-flex\"", json_is_string(format) ? "\"" : "",
                   json_is_string(format) ? json_string_value(format) : type_name(format),
                   json_is_string(format) ? "\"" : "");
    st = require(r, root, "the top-level object", "version", &version);
    if (st != SD_OK) return st;
    if (!json_is_integer(version))
        return bad(r, 0, "version: %s, expected the integer 1", type_name(version));
    if (json_integer_value(version) != 1)
        return bad(r, 0, "version: %lld: this reader reads version 1", (long long)json_integer_value(version));
    for (const char *const *k = (const char *const[]){"name", "comment", NULL}; *k != NULL; ++k) {
        const json_t *s = json_object_get(root, *k);
        if (s != NULL && !json_is_string(s)) return bad(r, 0, "%s: %s, expected a string", *k, type_name(s));
    }
    *mass_model = SD_FLEX_FULL;
    const json_t *mm = json_object_get(root, "mass_model");
    if (mm == NULL) return SD_OK;
    const char *name = json_is_string(mm) ? json_string_value(mm) : NULL;
    if (name != NULL && strcmp(name, "full") == 0) *mass_model = SD_FLEX_FULL;
    else if (name != NULL && (strcmp(name, "linearised") == 0 || strcmp(name, "linearized") == 0))
        *mass_model = SD_FLEX_LINEARISED;
    else if (name != NULL)
        return bad(r, 0, "mass_model: unknown \"%.40s\" (\"full\" or \"linearised\")", name);
    else
        return bad(r, 0, "mass_model: %s, expected \"full\" or \"linearised\"", type_name(mm));
    return SD_OK;
}

static sd_status read_nodes(const reader *r, const json_t *nodes, sd_flex_data *d)
{
    static const char *const allowed[] = {"position", "mass", "inertia", NULL};
    char where[96], member[128];
    for (size_t j = 0; j < json_array_size(nodes); ++j) {
        const json_t *node = json_array_get(nodes, j);
        snprintf(where, sizeof where, "nodes[%zu]", j);
        if (!json_is_object(node)) return bad(r, 0, "%s: %s, expected an object", where, type_name(node));
        sd_status st = only_members(r, node, where, allowed, "position, mass, inertia");
        json_t *value;
        if (st == SD_OK) st = require(r, node, where, "position", &value);
        snprintf(member, sizeof member, "%s.position", where);
        if (st == SD_OK) st = get_numbers(r, value, member, 3, SD_MAX_LENGTH, d->node_position + 3 * j);
        if (st == SD_OK) st = require(r, node, where, "mass", &value);
        snprintf(member, sizeof member, "%s.mass", where);
        if (st == SD_OK) st = get_number(r, value, member, 1, SD_MAX_MASS, d->node_mass + j);
        value = json_object_get(node, "inertia");
        snprintf(member, sizeof member, "%s.inertia", where);
        if (st == SD_OK && value != NULL)
            st = get_numbers(r, value, member, 9, SD_MAX_MASS * SD_MAX_LENGTH * SD_MAX_LENGTH, d->node_inertia + 9 * j);
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

/* What a mode says besides its shape. */
typedef struct mode_extra {
    int has_omega;
    double omega, zeta;
    int has_zeta;
} mode_extra;

static sd_status read_mode(const reader *r, const json_t *mode, size_t k, sd_flex_data *d, mode_extra *x)
{
    static const char *const allowed[] = {"shape", "omega", "frequency_hz", "damping_ratio", NULL};
    const size_t n = (size_t)d->desc.n_nodes;
    char where[64], member[128];
    snprintf(where, sizeof where, "modes[%zu]", k);
    if (!json_is_object(mode)) return bad(r, 0, "%s: %s, expected an object", where, type_name(mode));
    sd_status st = only_members(r, mode, where, allowed, "shape, omega, frequency_hz, damping_ratio");
    json_t *shape;
    if (st == SD_OK) st = require(r, mode, where, "shape", &shape);
    if (st != SD_OK) return st;
    if (!json_is_array(shape))
        return bad(r, 0, "%s.shape: %s, expected an array of %zu arrays [rx, ry, rz, tx, ty, tz]", where,
                   type_name(shape), n);
    if (json_array_size(shape) != n)
        return bad(r, 0, "%s.shape: %zu entries, expected %zu (one 6-vector per node)", where, json_array_size(shape), n);
    double *Pi = d->modes + 6 * n * k; /* column k */
    for (size_t j = 0; j < n && st == SD_OK; ++j) {
        snprintf(member, sizeof member, "%s.shape[%zu]", where, j);
        st = get_numbers(r, json_array_get(shape, j), member, 6, 1e6, Pi + 6 * j);
    }
    const json_t *omega = json_object_get(mode, "omega"), *hz = json_object_get(mode, "frequency_hz");
    const json_t *zeta = json_object_get(mode, "damping_ratio");
    if (st == SD_OK && omega != NULL && hz != NULL)
        return bad(r, 0, "%s: both \"omega\" and \"frequency_hz\": give one", where);
    x->has_omega = omega != NULL || hz != NULL;
    if (st == SD_OK && x->has_omega) {
        snprintf(member, sizeof member, "%s.%s", where, omega != NULL ? "omega" : "frequency_hz");
        st = get_number(r, omega != NULL ? omega : hz, member, 1, 1e15, &x->omega);
        if (hz != NULL) x->omega *= 2.0 * 3.14159265358979323846;
    }
    x->has_zeta = zeta != NULL;
    if (st == SD_OK && zeta != NULL) {
        snprintf(member, sizeof member, "%s.damping_ratio", where);
        st = get_number(r, zeta, member, 1, 1e6, &x->zeta);
    }
    return st;
}

/* A symmetric nm x nm matrix given as an array of rows, into out (row-major). */
static sd_status read_matrix(const reader *r, const json_t *m, const char *key, size_t nm, double *out)
{
    if (!json_is_array(m))
        return bad(r, 0, "%s: %s, expected an array of %zu rows of %zu numbers", key, type_name(m), nm, nm);
    if (json_array_size(m) != nm)
        return bad(r, 0, "%s: %zu rows, expected %zu (one per mode)", key, json_array_size(m), nm);
    char member[64];
    double big = 0.0;
    for (size_t i = 0; i < nm; ++i) {
        snprintf(member, sizeof member, "%s[%zu]", key, i);
        const sd_status st = get_numbers(r, json_array_get(m, i), member, nm, 1e30, out + nm * i);
        if (st != SD_OK) return st;
        for (size_t j = 0; j < nm; ++j) big = fmax(big, fabs(out[nm * i + j]));
    }
    for (size_t i = 0; i < nm; ++i)
        for (size_t j = 0; j < i; ++j)
            if (fabs(out[nm * i + j] - out[nm * j + i]) > SD_FLEX_FILE_SYM_TOL * big)
                return bad(r, 0, "%s: not symmetric: [%zu][%zu] = %g but [%zu][%zu] = %g", key, i, j,
                           out[nm * i + j], j, i, out[nm * j + i]);
    return SD_OK;
}

/* Pi_r^T M_s Pi_s (001 Eq 2: per node m_j t_r . t_s + r_r^T J_j r_s). */
static double modal_mass(const sd_flex_data *d, int r, int s)
{
    const int n = d->desc.n_nodes;
    const double *a = d->modes + (size_t)6 * n * r, *b = d->modes + (size_t)6 * n * s;
    double sum = 0.0;
    for (int j = 0; j < n; ++j) {
        const double *ra = a + 6 * j, *rb = b + 6 * j;
        sum += d->node_mass[j] * (ra[3] * rb[3] + ra[4] * rb[4] + ra[5] * rb[5]);
        if (d->node_inertia != NULL) {
            const double *J = d->node_inertia + 9 * j;
            for (int p = 0; p < 3; ++p)
                for (int q = 0; q < 3; ++q) sum += ra[p] * J[3 * p + q] * rb[q];
        }
    }
    return sum;
}

/* K_m and D_m from the modes' frequencies and damping ratios (see the file comment). */
static sd_status from_frequencies(const reader *r, sd_flex_data *d, const mode_extra *x)
{
    const int nm = d->desc.n_modes;
    double *mr = malloc((size_t)nm * sizeof *mr);
    if (mr == NULL) return sd_io_fail(r->err, SD_E_MEMORY, r->path, 0, "out of memory");
    sd_status st = SD_OK;
    for (int k = 0; k < nm && st == SD_OK; ++k) {
        mr[k] = modal_mass(d, k, k);
        if (!(mr[k] > 0.0))
            st = bad(r, 0, "modes[%d].shape: moves no mass (modal mass %g): the mode is not a deformation of the "
                           "body's nodes", k, mr[k]);
    }
    for (int k = 0; k < nm && st == SD_OK; ++k)
        for (int l = 0; l < k && st == SD_OK; ++l) {
            const double c = modal_mass(d, k, l) / sqrt(mr[k] * mr[l]);
            if (fabs(c) > SD_FLEX_FILE_ORTHO_TOL)
                st = bad(r, 0, "modes[%d] and modes[%d]: the shapes are not mass-orthogonal (Pi_r^T M_s Pi_s / "
                               "sqrt(m_r m_s) = %.3g), so diagonal K_m and D_m would not give the frequencies given: "
                               "give \"stiffness\" (and \"damping\") instead", l, k, c);
        }
    for (int k = 0; k < nm && st == SD_OK; ++k) {
        d->stiffness[(size_t)nm * k + k] = x[k].omega * x[k].omega * mr[k];
        if (d->damping != NULL) d->damping[(size_t)nm * k + k] = 2.0 * x[k].zeta * x[k].omega * mr[k];
    }
    free(mr);
    return st;
}

/* An upper bound of the number of JSON values in the text (separators and openings outside strings,
 * plus one), so that an enormous file is refused before jansson builds a tree of it. */
static size_t count_values(const char *text, size_t length)
{
    size_t n = 1;
    int in_string = 0;
    for (size_t i = 0; i < length; ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == ',' || c == '[' || c == '{') {
            ++n;
        }
    }
    return n;
}

static sd_status read_document(const reader *r, const json_t *root, sd_flex_data **out)
{
    if (!json_is_object(root)) return bad(r, 0, "the file holds %s, expected an object", type_name(root));
    sd_flex_mass_model mass_model;
    sd_status st = read_header(r, root, &mass_model);
    json_t *nodes, *modes;
    size_t n = 0, nm = 0;
    if (st == SD_OK) st = get_list(r, root, "nodes", SD_FLEX_FILE_MAX_NODES, "node", &nodes, &n);
    if (st == SD_OK) st = get_list(r, root, "modes", SD_FLEX_FILE_MAX_MODES, "mode", &modes, &nm);
    if (st != SD_OK) return st;
    const json_t *K = json_object_get(root, "stiffness"), *D = json_object_get(root, "damping");
    int with_inertia = 0, with_zeta = 0;
    for (size_t j = 0; j < n; ++j) with_inertia |= json_object_get(json_array_get(nodes, j), "inertia") != NULL;
    for (size_t k = 0; k < nm; ++k) with_zeta |= json_object_get(json_array_get(modes, k), "damping_ratio") != NULL;
    sd_flex_data *d = sd_flex_data_new((int)n, (int)nm, with_inertia, D != NULL || with_zeta);
    mode_extra *x = calloc(nm, sizeof *x);
    if (d == NULL || x == NULL || !sd_flex_data_set_source(d, r->path)) {
        sd_flex_data_free(d);
        free(x);
        return sd_io_fail(r->err, SD_E_MEMORY, r->path, 0, "out of memory (%zu nodes, %zu modes)", n, nm);
    }
    d->desc.mass_model = mass_model;
    st = read_nodes(r, nodes, d);
    for (size_t k = 0; k < nm && st == SD_OK; ++k) st = read_mode(r, json_array_get(modes, k), k, d, &x[k]);
    /* where K_m and D_m come from: matrices, or every mode's frequency (and damping ratio) */
    for (size_t k = 0; k < nm && st == SD_OK; ++k) {
        if (K != NULL && x[k].has_omega)
            st = bad(r, 0, "modes[%zu]: a frequency and a \"stiffness\" matrix: give one or the other", k);
        else if (K == NULL && !x[k].has_omega)
            st = bad(r, 0, "modes[%zu]: no \"omega\" or \"frequency_hz\", and no \"stiffness\" matrix", k);
        else if (D != NULL && x[k].has_zeta)
            st = bad(r, 0, "modes[%zu]: a damping_ratio and a \"damping\" matrix: give one or the other", k);
    }
    if (st == SD_OK && K != NULL) st = read_matrix(r, K, "stiffness", nm, d->stiffness);
    if (st == SD_OK && D != NULL) st = read_matrix(r, D, "damping", nm, d->damping);
    if (st == SD_OK && K == NULL) st = from_frequencies(r, d, x);
    free(x);
    if (st != SD_OK) {
        sd_flex_data_free(d);
        return st;
    }
    *out = d;
    return SD_OK;
}

sd_status sd_flex_data_read_text(const char *text, size_t length, const char *source, sd_flex_data **data,
                                 sd_error *err)
{
    *data = NULL;
    const reader r = {source, err};
    const size_t values = count_values(text, length);
    if (values > SD_FLEX_FILE_MAX_VALUES)
        return bad(&r, 0, "about %zu JSON values, more than the %zu a flexible-body data file may hold", values,
                   SD_FLEX_FILE_MAX_VALUES);
    json_error_t jerr;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return sd_io_fail(err, SD_E_MEMORY, source, 0, "out of memory");
        return bad(&r, jerr.line > 0 ? jerr.line : 0, "JSON: %s (column %d)", jerr.text, jerr.column);
    }
    const sd_status st = read_document(&r, root, data);
    json_decref(root);
    return st;
}

sd_status sd_flex_data_read_file(const char *path, sd_flex_data **data, sd_error *err)
{
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (path == NULL || data == NULL)
        return sd_io_fail(err, SD_E_ARGUMENT, "sd_flex_data_read_file", 0, "%s is NULL", path == NULL ? "path" : "data");
    *data = NULL;
    char *text;
    size_t length;
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    st = sd_flex_data_read_text(text, length, path, data, err);
    free(text);
    return st;
}
