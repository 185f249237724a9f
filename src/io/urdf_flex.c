/*
 * io/urdf_flex.c — flexible links in URDF files: soadyn's extension elements (urdf.h documents them
 * for users; README "Flexible bodies"):
 *
 *   <link name="array">
 *     <inertial> ... </inertial>                       the rigid part, as for any link (optional)
 *     <soadyn:flexible file="array.json"/>             a data file (soadyn/flex.h, io/flex_file.c),
 *                                                      relative to the URDF file's folder
 *     or
 *     <soadyn:flexible>
 *       <beam length="2" EI="150" mass_per_length="0.8" elements="20" modes="4"
 *             boundary="cantilever" planes="both" damping_ratio="0.01"/>
 *     </soadyn:flexible>                               the uniform beam along the link's x axis
 *                                                      (sd_beam_modes; defaults of sd_beam_spec_init)
 *   </link>
 *   <joint name="tip" type="revolute">
 *     <parent link="array"/> <child link="panel"/>
 *     <soadyn:node index="20"/>                        the joint rides on node 20 of its parent
 *     <origin xyz="2 0 0"/> ...                        (placement still in the parent link's frame)
 *   </joint>
 *
 * <soadyn:flexible> may also say mass_model="full" or "linearised" (the file's or the beam's
 * otherwise). The beam's boundary is "cantilever" or "free-free", its planes "both", "xy" or "xz".
 *
 * The prefix is matched literally: URDF files rarely declare namespaces, and libxml2 keeps an
 * undeclared "soadyn:flexible" as that element name (a namespace warning, not an error), while a
 * file that declares xmlns:soadyn="..." (any URI) gives the element "flexible" in a namespace
 * whose prefix is "soadyn"; both are read. Other tools skip the elements as unknown ones.
 *
 * A flexible link is always a body of its own (never merged into its parent along a fixed joint),
 * and so is a link whose joint rides on a node. Every error names file:line of the element.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "flex/flex_data.h"
#include "io/urdf_internal.h"

struct sd_urdf_flex {
    int line;              /* of <soadyn:flexible> */
    sd_flex_data *data;    /* the model, loaded while the file is read */
};

void sd_urdf_flex_free(sd_urdf_flex *flex)
{
    if (flex == NULL) return;
    sd_flex_data_free(flex->data);
    free(flex);
}

static int line_of(const xmlNode *node)
{
    const long line = xmlGetLineNo(node);
    return line > 0 && line < INT_MAX ? (int)line : 0;
}

/* <soadyn:NAME>, declared or not (see the file comment). */
int sd_urdf_is_soadyn(const xmlNode *node, const char *name)
{
    if (node->type != XML_ELEMENT_NODE) return 0;
    const char *n = (const char *)node->name;
    if (node->ns != NULL && node->ns->prefix != NULL)
        return strcmp((const char *)node->ns->prefix, "soadyn") == 0 && strcmp(n, name) == 0;
    return strncmp(n, "soadyn:", 7) == 0 && strcmp(n + 7, name) == 0;
}

/* The one child <soadyn:NAME> of node, NULL if none; a second one is an error (*st). */
static const xmlNode *soadyn_child(const char *src, sd_error *err, const xmlNode *node, const char *owner,
                                   const char *name, sd_status *st)
{
    const xmlNode *found = NULL;
    *st = SD_OK;
    for (const xmlNode *c = node->children; c != NULL; c = c->next) {
        if (!sd_urdf_is_soadyn(c, name)) continue;
        if (found != NULL) {
            *st = sd_io_fail(err, SD_E_PARSE, src, line_of(c), "%s: <soadyn:%s> given twice (first at line %d)", owner,
                             name, line_of(found));
            return NULL;
        }
        found = c;
    }
    return found;
}

static char *attr(const xmlNode *node, const char *name)
{
    xmlChar *v = xmlGetNoNsProp(node, (const xmlChar *)name);
    if (v == NULL) return NULL;
    char *copy = sd_io_strdup((const char *)v);
    xmlFree(v);
    return copy;
}

/* Refuse attributes other than the allowed ones (a misspelt "elemnts" would silently keep a default). */
static sd_status only_attributes(const char *src, sd_error *err, const xmlNode *node, const char *owner,
                                 const char *const *allowed, const char *list)
{
    for (const xmlAttr *a = node->properties; a != NULL; a = a->next) {
        int known = 0;
        for (const char *const *k = allowed; *k != NULL && !known; ++k) known = strcmp((const char *)a->name, *k) == 0;
        if (!known)
            return sd_io_fail(err, SD_E_PARSE, src, line_of(node), "%s: <%s>: unknown attribute %.40s (expected %s)",
                              owner, (const char *)node->name, (const char *)a->name, list);
    }
    return SD_OK;
}

/* A number attribute (XML writes '.', whatever the C locale's decimal point); absent: out unchanged
 * unless required. `integer`: a whole number in int range. */
static sd_status number_attr(const char *src, sd_error *err, const xmlNode *node, const char *owner, const char *name,
                             int required, int integer, double *out)
{
    char *text = attr(node, name);
    if (text == NULL) {
        if (!required) return SD_OK;
        return sd_io_fail(err, SD_E_PARSE, src, line_of(node), "%s: <%s> has no attribute %s", owner,
                          (const char *)node->name, name);
    }
    const char point = localeconv()->decimal_point[0];
    int bad = point != '.' && strchr(text, point) != NULL;
    for (char *p = text; *p != '\0' && point != '.'; ++p)
        if (*p == '.') *p = point;
    char *end;
    errno = 0;
    const double x = bad ? 0.0 : strtod(text, &end);
    if (!bad) {
        while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
        bad = end == text || *end != '\0' || !isfinite(x) || errno == ERANGE;
    }
    if (!bad && integer) bad = x != floor(x) || fabs(x) > INT_MAX;
    sd_status st = SD_OK;
    if (bad)
        st = sd_io_fail(err, SD_E_PARSE, src, line_of(node), "%s: <%s %s=\"%.40s\">: not %s", owner,
                        (const char *)node->name, name, text, integer ? "a whole number" : "a finite number");
    else
        *out = x;
    free(text);
    return st;
}

/* An attribute naming one of `n` words; absent: *out unchanged. */
static sd_status word_attr(const char *src, sd_error *err, const xmlNode *node, const char *owner, const char *name,
                           const char *const *words, const int *values, int n, const char *list, int *out)
{
    char *text = attr(node, name);
    if (text == NULL) return SD_OK;
    for (int i = 0; i < n; ++i)
        if (strcmp(text, words[i]) == 0) {
            *out = values[i];
            free(text);
            return SD_OK;
        }
    const sd_status st = sd_io_fail(err, SD_E_PARSE, src, line_of(node), "%s: <%s %s=\"%.40s\">: expected %s", owner,
                                    (const char *)node->name, name, text, list);
    free(text);
    return st;
}

/* <beam .../> into a beam specification, then its modes. */
static sd_status read_beam(const char *src, sd_error *err, const xmlNode *beam, const char *owner, sd_flex_data **data)
{
    static const char *const allowed[] = {"length", "EI", "mass_per_length", "elements", "modes", "boundary",
                                          "planes", "damping_ratio", NULL};
    sd_status st = only_attributes(src, err, beam, owner, allowed,
                                   "length, EI, mass_per_length, elements, modes, boundary, planes, damping_ratio");
    sd_beam_spec spec;
    sd_beam_spec_init(&spec);
    double elements = spec.elements, modes = spec.modes;
    if (st == SD_OK) st = number_attr(src, err, beam, owner, "length", 1, 0, &spec.length);
    if (st == SD_OK) st = number_attr(src, err, beam, owner, "EI", 1, 0, &spec.EI);
    if (st == SD_OK) st = number_attr(src, err, beam, owner, "mass_per_length", 1, 0, &spec.mass_per_length);
    if (st == SD_OK) st = number_attr(src, err, beam, owner, "elements", 0, 1, &elements);
    if (st == SD_OK) st = number_attr(src, err, beam, owner, "modes", 0, 1, &modes);
    if (st == SD_OK) st = number_attr(src, err, beam, owner, "damping_ratio", 0, 0, &spec.damping_ratio);
    static const char *const boundaries[] = {"cantilever", "free-free"};
    static const int boundary_values[] = {SD_BEAM_CANTILEVER, SD_BEAM_FREE_FREE};
    int boundary = spec.boundary, planes = spec.planes;
    if (st == SD_OK)
        st = word_attr(src, err, beam, owner, "boundary", boundaries, boundary_values, 2, "cantilever or free-free",
                       &boundary);
    static const char *const plane_words[] = {"both", "xy", "xz"};
    static const int plane_values[] = {0, 1, 2};
    if (st == SD_OK) st = word_attr(src, err, beam, owner, "planes", plane_words, plane_values, 3, "both, xy or xz", &planes);
    if (st != SD_OK) return st;
    spec.elements = (int)elements;
    spec.modes = (int)modes;
    spec.boundary = (sd_beam_boundary)boundary;
    spec.planes = planes;
    sd_error inner;
    st = sd_beam_modes(&spec, data, &inner);
    if (st != SD_OK)
        return sd_io_fail(err, st == SD_E_ARGUMENT ? SD_E_PARSE : st, src, line_of(beam), "%s: <beam>: %s", owner,
                          inner.message + (strncmp(inner.message, "sd_beam_modes: ", 15) == 0 ? 15 : 0));
    return SD_OK;
}

/* file="..." relative to the folder of the URDF file (when its name has one). */
static char *resolve(const char *src, const char *file)
{
    const char *slash = strrchr(src, '/');
    if (file[0] == '/' || slash == NULL) return sd_io_strdup(file);
    const size_t dir = (size_t)(slash - src) + 1, n = dir + strlen(file) + 1;
    char *path = malloc(n);
    if (path == NULL) return NULL;
    memcpy(path, src, dir);
    memcpy(path + dir, file, n - dir);
    return path;
}

static sd_status read_file(const char *src, sd_error *err, const xmlNode *flexible, const char *owner,
                           const char *file, sd_flex_data **data, size_t *file_bytes)
{
    if (file[0] == '\0')
        return sd_io_fail(err, SD_E_PARSE, src, line_of(flexible), "%s: <soadyn:flexible file=\"\">: empty file name",
                          owner);
    char *path = resolve(src, file);
    if (path == NULL) return sd_io_fail(err, SD_E_MEMORY, src, 0, "out of memory");
    /* the budget is checked before reading: refusing costs a stat, not the file */
    const long long size = sd_io_file_size(path);
    if (size > 0 && *file_bytes + (size_t)size > SD_URDF_MAX_FLEX_FILE_BYTES) {
        free(path);
        return sd_io_fail(err, SD_E_IO, src, line_of(flexible),
                          "%s: <soadyn:flexible file=\"%.200s\">: the flexible data files of this URDF together pass "
                          "%zu MiB (a file counts every time a link names it)",
                          owner, file, SD_URDF_MAX_FLEX_FILE_BYTES >> 20);
    }
    if (size > 0) *file_bytes += (size_t)size;
    sd_error inner;
    sd_status st = sd_flex_data_read_file(path, data, &inner);
    if (st != SD_OK) /* the inner message names the data file and the member */
        st = sd_io_fail(err, st, src, line_of(flexible), "%s: <soadyn:flexible file=\"%.200s\">: %s", owner, file,
                        inner.message);
    free(path);
    return st;
}

sd_status sd_urdf_read_flexible(const char *src, sd_error *err, const xmlNode *link_node, const char *owner,
                                sd_urdf_link *link, size_t *file_bytes)
{
    sd_status st;
    const xmlNode *flexible = soadyn_child(src, err, link_node, owner, "flexible", &st);
    if (flexible == NULL) return st;
    static const char *const allowed[] = {"file", "mass_model", NULL};
    st = only_attributes(src, err, flexible, owner, allowed, "file, mass_model");
    if (st != SD_OK) return st;
    const xmlNode *beam = NULL;
    for (const xmlNode *c = flexible->children; c != NULL; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        const int is_beam = strcmp((const char *)c->name, "beam") == 0 || sd_urdf_is_soadyn(c, "beam");
        if (!is_beam || beam != NULL)
            return sd_io_fail(err, SD_E_PARSE, src, line_of(c), "%s: <soadyn:flexible> holds %s<%.40s>%s", owner,
                              is_beam ? "a second " : "", (const char *)c->name,
                              is_beam ? "" : " (only a <beam> may be given)");
        beam = c;
    }
    char *file = attr(flexible, "file");
    if ((file == NULL) == (beam == NULL)) {
        free(file);
        return sd_io_fail(err, SD_E_PARSE, src, line_of(flexible),
                          beam == NULL ? "%s: <soadyn:flexible> needs file=\"...\" or a <beam> element"
                                       : "%s: <soadyn:flexible> has both file=\"...\" and a <beam> element: give one",
                          owner);
    }
    link->flex = calloc(1, sizeof *link->flex);
    if (link->flex == NULL) {
        free(file);
        return sd_io_fail(err, SD_E_MEMORY, src, 0, "out of memory");
    }
    link->flex->line = line_of(flexible);
    st = file != NULL ? read_file(src, err, flexible, owner, file, &link->flex->data, file_bytes)
                      : read_beam(src, err, beam, owner, &link->flex->data);
    free(file);
    if (st != SD_OK) return st;
    if (beam != NULL) { /* the beam's messages (sd_builder_set_flexible) point at the URDF line */
        char label[4200];
        snprintf(label, sizeof label, "%s:%d", src, line_of(beam));
        if (!sd_flex_data_set_source(link->flex->data, label)) return sd_io_fail(err, SD_E_MEMORY, src, 0, "out of memory");
    }
    static const char *const mass_words[] = {"full", "linearised", "linearized"};
    static const int mass_values[] = {SD_FLEX_FULL, SD_FLEX_LINEARISED, SD_FLEX_LINEARISED};
    int mass_model = link->flex->data->desc.mass_model;
    st = word_attr(src, err, flexible, owner, "mass_model", mass_words, mass_values, 3, "full or linearised", &mass_model);
    link->flex->data->desc.mass_model = (sd_flex_mass_model)mass_model;
    return st;
}

sd_status sd_urdf_read_node(const char *src, sd_error *err, const xmlNode *joint_node, const char *owner,
                            sd_urdf_joint *joint)
{
    sd_status st;
    joint->has_node = 0;
    joint->parent_node = -1;
    const xmlNode *node = soadyn_child(src, err, joint_node, owner, "node", &st);
    if (node == NULL) return st;
    static const char *const allowed[] = {"index", NULL};
    double index = -1.0;
    st = only_attributes(src, err, node, owner, allowed, "index");
    if (st == SD_OK) st = number_attr(src, err, node, owner, "index", 1, 1, &index);
    if (st != SD_OK) return st;
    if (index < 0.0)
        return sd_io_fail(err, SD_E_PARSE, src, line_of(node), "%s: <soadyn:node index=\"%g\">: must not be negative",
                          owner, index);
    joint->has_node = 1;
    joint->parent_node = (int)index;
    joint->node_line = line_of(node);
    return SD_OK;
}

sd_status sd_urdf_add_flexible(const sd_urdf_robot *robot, const int *host, sd_builder *builder, sd_error *err)
{
    const char *src = robot->source;
    for (int k = 0; k < robot->njoints; ++k) { /* nodes exist on the parent link */
        const sd_urdf_joint *j = &robot->joints[k];
        if (!j->has_node) continue;
        const sd_urdf_link *parent = &robot->links[j->parent];
        if (parent->flex == NULL)
            return sd_io_fail(err, SD_E_PARSE, src, j->node_line,
                              "joint '%s': <soadyn:node> on link '%s', which is not flexible (no <soadyn:flexible>)",
                              j->name, parent->name);
        const int n = parent->flex->data->desc.n_nodes;
        if (j->parent_node >= n)
            return sd_io_fail(err, SD_E_PARSE, src, j->node_line,
                              "joint '%s': <soadyn:node index=\"%d\">: link '%s' has %d nodes (0 .. %d)", j->name,
                              j->parent_node, parent->name, n, n - 1);
    }
    for (int L = 0; L < robot->nlinks; ++L) {
        const sd_urdf_link *link = &robot->links[L];
        if (link->flex == NULL) continue;
        if (host[L] != L)
            return sd_io_fail(err, SD_E_PARSE, src, link->flex->line,
                              "link '%s': the inertial frame (a root link named 'world') cannot be flexible", link->name);
        const sd_status st = sd_builder_set_flexible(builder, link->name, sd_flex_data_desc(link->flex->data), err);
        if (st != SD_OK) return st;
    }
    return SD_OK;
}

double sd_urdf_flex_mass(const sd_urdf_link *link)
{
    if (link->flex == NULL) return 0.0;
    const sd_flex_desc *d = sd_flex_data_desc(link->flex->data);
    double m = 0.0;
    for (int j = 0; j < d->n_nodes; ++j) m += d->node_mass[j];
    return m;
}
