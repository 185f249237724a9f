/*
 * io/urdf.c — reading a URDF file into an sd_urdf_robot: links with their inertials, joints with
 * their origins, axes, limits, dynamics and mimic tags. Every number is checked (count, syntax,
 * finiteness, sign) and every error names file:line and the element. Unknown elements (gazebo,
 * transmission, sensors, drake:*, xacro:*) are skipped. The tree checks, the lumping of fixed joints
 * and the hand-over to the model builder live in urdf_build.c.
 *
 * libxml2 does the XML; its own printing is silenced by a structured error handler on the parser
 * context (no global state), and its first fatal error is reported with its line.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "io/urdf_internal.h"

/* ---------------------------------------------------------------- small helpers shared by io */

sd_status sd_urdf_vfail(sd_error *err, sd_status status, const char *source, int line, const char *fmt,
                        va_list ap)
{
    if (err == NULL) return status;
    const size_t size = sizeof err->message;
    int n = line > 0 ? snprintf(err->message, size, "%s:%d: ", source, line)
                     : snprintf(err->message, size, "%s: ", source);
    if (n >= 0 && (size_t)n < size) vsnprintf(err->message + n, size - (size_t)n, fmt, ap);
    err->status = status;
    return status;
}

sd_status sd_urdf_fail(sd_error *err, sd_status status, const char *source, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sd_status st = sd_urdf_vfail(err, status, source, line, fmt, ap);
    va_end(ap);
    return st;
}

char *sd_urdf_strdup(const char *s)
{
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy != NULL) memcpy(copy, s, n);
    return copy;
}

void sd_urdf_robot_clear(sd_urdf_robot *robot)
{
    for (int i = 0; i < robot->nlinks; ++i) free(robot->links[i].name);
    for (int i = 0; i < robot->njoints; ++i) {
        sd_urdf_joint *j = &robot->joints[i];
        free(j->name);
        free(j->parent_name);
        free(j->child_name);
        free(j->mimic);
    }
    free(robot->links);
    free(robot->joints);
    free(robot->name);
    memset(robot, 0, sizeof *robot);
}

/* ---------------------------------------------------------------- XML access */

/* What one parse needs to report errors. */
typedef struct parse_ctx {
    const char *source;
    sd_error *err;
} parse_ctx;

static int line_of(const xmlNode *node)
{
    long line = xmlGetLineNo(node);
    return line > 0 && line < INT_MAX ? (int)line : 0;
}

/* URDF elements carry no namespace prefix; <drake:joint> or <xacro:macro> are someone else's. */
static int is_element(const xmlNode *node, const char *name)
{
    return node->type == XML_ELEMENT_NODE && (node->ns == NULL || node->ns->prefix == NULL) &&
           strcmp((const char *)node->name, name) == 0;
}

/* The first child element called `name`, or NULL. */
static const xmlNode *child_element(const xmlNode *parent, const char *name)
{
    for (const xmlNode *c = parent->children; c != NULL; c = c->next)
        if (is_element(c, name)) return c;
    return NULL;
}

/* A malloc'ed copy of an attribute (no namespace), or NULL if absent. */
static char *get_attr(const xmlNode *node, const char *name)
{
    xmlChar *value = xmlGetNoNsProp(node, (const xmlChar *)name);
    if (value == NULL) return NULL;
    char *copy = sd_urdf_strdup((const char *)value);
    xmlFree(value);
    return copy;
}

static sd_status out_of_memory(const parse_ctx *pc)
{
    return sd_urdf_fail(pc->err, SD_E_MEMORY, pc->source, 0, "out of memory");
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* One number of XML text. XML always writes '.' for the decimal point, while strtod follows the
 * C locale the program may have set, so the point is translated for strtod. */
static const char *parse_one(const char *token, size_t len, double *out)
{
    char buf[128];
    if (len >= sizeof buf) return "has a number too long to read";
    memcpy(buf, token, len);
    buf[len] = '\0';
    const char point = localeconv()->decimal_point[0];
    if (point != '.') {
        if (strchr(buf, point) != NULL) return "is not a number";
        for (char *p = buf; *p != '\0'; ++p)
            if (*p == '.') *p = point;
    }
    char *end;
    *out = strtod(buf, &end);
    if (end == buf || *end != '\0') return "is not a number";
    if (!isfinite(*out)) return "is not finite";
    return NULL;
}

/* Parse exactly n whitespace-separated finite numbers. Returns NULL on success, else a reason. */
static const char *parse_numbers(const char *text, int n, double *out)
{
    const char *s = text;
    for (int i = 0; i < n; ++i) {
        while (is_space(*s)) ++s;
        if (*s == '\0') return n == 1 ? "expects a number" : "expects more numbers";
        const char *token = s;
        while (*s != '\0' && !is_space(*s)) ++s;
        const char *why = parse_one(token, (size_t)(s - token), &out[i]);
        if (why != NULL) return why;
    }
    while (is_space(*s)) ++s;
    return *s == '\0' ? NULL : "has too many numbers";
}

/* Read attribute `attr` of `node` as n numbers into out. An absent attribute keeps out as it is,
 * unless `required`. `owner` names the link or joint for the message. */
static sd_status read_numbers(const parse_ctx *pc, const xmlNode *node, const char *owner, const char *attr,
                              int n, int required, double *out)
{
    char *text = get_attr(node, attr);
    if (text == NULL) {
        if (!required) return SD_OK;
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(node),
                            "%s: <%s> has no attribute %s", owner, (const char *)node->name, attr);
    }
    double values[3];
    const char *why = parse_numbers(text, n, values);
    sd_status st = SD_OK;
    if (why != NULL)
        st = sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <%s %s=\"%.60s\">: %s%s",
                          owner, (const char *)node->name, attr, text, why,
                          n == 3 ? " (3 numbers expected)" : "");
    else
        memcpy(out, values, (size_t)n * sizeof(double));
    free(text);
    return st;
}

/* An attribute that must be a number >= 0. */
static sd_status read_nonnegative(const parse_ctx *pc, const xmlNode *node, const char *owner,
                                  const char *attr, int required, double *out)
{
    sd_status st = read_numbers(pc, node, owner, attr, 1, required, out);
    if (st == SD_OK && *out < 0.0)
        st = sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <%s %s=\"%g\">: must not be negative",
                          owner, (const char *)node->name, attr, *out);
    return st;
}

/* The <origin xyz rpy> child of `parent` as a placement (identity when absent). */
static sd_status read_origin(const parse_ctx *pc, const xmlNode *parent, const char *owner, sd_transform *X)
{
    sd_transform_identity(X);
    const xmlNode *origin = child_element(parent, "origin");
    if (origin == NULL) return SD_OK;
    double rpy[3] = {0.0, 0.0, 0.0};
    sd_status st = read_numbers(pc, origin, owner, "xyz", 3, 0, X->p);
    if (st == SD_OK) st = read_numbers(pc, origin, owner, "rpy", 3, 0, rpy);
    if (st == SD_OK) sd_m3_rpy(rpy[0], rpy[1], rpy[2], X->R);
    return st;
}

/* ---------------------------------------------------------------- inertia checks */

/* Eigenvalues of a symmetric 3x3 matrix, ascending (closed form, O. K. Smith 1961). */
static void sym3_eigenvalues(const double A[9], double e[3])
{
    const double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    const double q = (A[0] + A[4] + A[8]) / 3.0;
    if (p1 == 0.0) {
        e[0] = A[0]; e[1] = A[4]; e[2] = A[8];
    } else {
        const double d0 = A[0] - q, d1 = A[4] - q, d2 = A[8] - q;
        const double p = sqrt((d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1) / 6.0);
        /* r = det((A - q I) / p) / 2, in [-1, 1] up to rounding */
        const double B0 = d0 / p, B4 = d1 / p, B8 = d2 / p, B1 = A[1] / p, B2 = A[2] / p, B5 = A[5] / p;
        double r = 0.5 * (B0 * (B4 * B8 - B5 * B5) - B1 * (B1 * B8 - B5 * B2) + B2 * (B1 * B5 - B4 * B2));
        r = r < -1.0 ? -1.0 : (r > 1.0 ? 1.0 : r);
        const double phi = acos(r) / 3.0;
        e[2] = q + 2.0 * p * cos(phi);
        e[0] = q + 2.0 * p * cos(phi + 2.0943951023931957); /* + 2 pi / 3 */
        e[1] = 3.0 * q - e[0] - e[2];
    }
    for (int i = 0; i < 2; ++i) /* sort the three */
        for (int j = 0; j < 2 - i; ++j)
            if (e[j] > e[j + 1]) { double t = e[j]; e[j] = e[j + 1]; e[j + 1] = t; }
}

/* Relative tolerance of the inertia checks: rounding in CAD exports, not physics. */
#define INERTIA_TOL 1e-9

/* 1 if the principal moments break the triangle inequality (largest > sum of the other two). */
static int breaks_triangle(const double e[3])
{
    return e[2] > e[0] + e[1] + INERTIA_TOL * e[2];
}

/* ---------------------------------------------------------------- links */

static sd_status read_inertia_matrix(const parse_ctx *pc, const xmlNode *node, const char *owner, double I[9])
{
    static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    static const int slots[6][2] = {{0, 0}, {1, 3}, {2, 6}, {4, 4}, {5, 7}, {8, 8}};
    for (int k = 0; k < 6; ++k) {
        double v = 0.0;
        sd_status st = read_numbers(pc, node, owner, names[k], 1, 1, &v);
        if (st != SD_OK) return st;
        I[slots[k][0]] = I[slots[k][1]] = v;
    }
    return SD_OK;
}

/* <inertial>: mass, centre of mass and the inertia rotated from the inertial frame into link axes,
 * I_link = R I R^T. */
static sd_status parse_inertial(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_link *link)
{
    sd_transform X;
    sd_status st = read_origin(pc, node, owner, &X);
    if (st != SD_OK) return st;
    const xmlNode *mass = child_element(node, "mass");
    const xmlNode *inertia = child_element(node, "inertia");
    if (mass == NULL || inertia == NULL)
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <inertial> has no <%s>", owner,
                            mass == NULL ? "mass" : "inertia");
    st = read_numbers(pc, mass, owner, "value", 1, 1, &link->mass);
    if (st != SD_OK) return st;
    if (link->mass < 0.0)
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(mass), "%s: <mass value=\"%g\">: negative mass",
                            owner, link->mass);
    double I[9], T[9], e[3];
    st = read_inertia_matrix(pc, inertia, owner, I);
    if (st != SD_OK) return st;
    sym3_eigenvalues(I, e);
    const double scale = fabs(e[0]) > fabs(e[2]) ? fabs(e[0]) : fabs(e[2]);
    if (e[0] < -INERTIA_TOL * scale)
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(inertia),
                            "%s: <inertia> is not positive semi-definite (principal moments %g, %g, %g)", owner, e[0],
                            e[1], e[2]);
    if (link->mass == 0.0 && (e[0] != 0.0 || e[2] != 0.0))
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(mass),
                            "%s: <mass value=\"0\"> with a nonzero <inertia> (a massless link has no inertia)", owner);
    link->triangle_broken = breaks_triangle(e);
    sd_m3_mul(X.R, I, T);
    sd_m3_mul_t(T, X.R, link->inertia);
    memcpy(link->com, X.p, sizeof link->com);
    link->has_inertial = 1;
    return SD_OK;
}

/* items, with room for one more element: the same or a larger block; NULL when out of memory
 * (items is then still valid). */
static void *grow(void *items, int *cap, int count, size_t size)
{
    if (count < *cap) return items;
    int new_cap = *cap > 0 ? 2 * *cap : 16;
    void *p = realloc(items, (size_t)new_cap * size);
    if (p != NULL) *cap = new_cap;
    return p;
}

static sd_status parse_link(const parse_ctx *pc, const xmlNode *node, sd_urdf_robot *robot)
{
    sd_urdf_link *links = grow(robot->links, &robot->links_cap, robot->nlinks, sizeof *links);
    if (links == NULL) return out_of_memory(pc);
    robot->links = links;
    sd_urdf_link *link = &robot->links[robot->nlinks];
    memset(link, 0, sizeof *link);
    link->line = line_of(node);
    link->parent_joint = link->first_child = link->last_child = -1;
    link->name = get_attr(node, "name");
    if (link->name == NULL || link->name[0] == '\0') {
        free(link->name);
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, link->line, "<link> has no name");
    }
    ++robot->nlinks; /* from here on the robot owns the name */
    char owner[300];
    snprintf(owner, sizeof owner, "link '%.250s'", link->name);
    const xmlNode *inertial = child_element(node, "inertial");
    return inertial != NULL ? parse_inertial(pc, inertial, owner, link) : SD_OK;
}

/* ---------------------------------------------------------------- joints */

static int joint_type_from_name(const char *type, sd_hinge_type *hinge, int *continuous)
{
    static const struct { const char *name; sd_hinge_type hinge; int continuous; } types[] = {
        {"revolute", SD_HINGE_REVOLUTE, 0}, {"continuous", SD_HINGE_REVOLUTE, 1},
        {"prismatic", SD_HINGE_PRISMATIC, 0}, {"fixed", SD_HINGE_FIXED, 0},
        {"floating", SD_HINGE_FREE, 0}, {"planar", SD_HINGE_PLANAR, 0},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(type, types[i].name) == 0) {
            *hinge = types[i].hinge;
            *continuous = types[i].continuous;
            return 1;
        }
    return 0;
}

/* <parent link="..."/> or <child link="..."/>, required. */
static sd_status read_link_ref(const parse_ctx *pc, const xmlNode *node, const char *owner, const char *which,
                               char **out)
{
    const xmlNode *ref = child_element(node, which);
    *out = ref != NULL ? get_attr(ref, "link") : NULL;
    if (*out == NULL || (*out)[0] == '\0')
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(ref != NULL ? ref : node),
                            "%s: no <%s link=\"...\"/>", owner, which);
    return SD_OK;
}

/* <axis xyz>, normalised; URDF's default is x. Only moving joints need a nonzero axis. */
static sd_status read_axis(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    sd_v3_set(j->axis, 1.0, 0.0, 0.0);
    const xmlNode *axis = child_element(node, "axis");
    if (axis == NULL) return SD_OK;
    sd_status st = read_numbers(pc, axis, owner, "xyz", 3, 0, j->axis);
    if (st != SD_OK) return st;
    const double n = sd_v3_norm(j->axis);
    const int needs_axis = j->hinge == SD_HINGE_REVOLUTE || j->hinge == SD_HINGE_PRISMATIC ||
                           j->hinge == SD_HINGE_PLANAR;
    if (n < 1e-12) {
        if (needs_axis)
            return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(axis), "%s: <axis> has zero length", owner);
        sd_v3_set(j->axis, 1.0, 0.0, 0.0);
        return SD_OK;
    }
    for (int i = 0; i < 3; ++i) j->axis[i] /= n;
    return SD_OK;
}

/* <limit lower upper effort velocity>: position limits only for revolute and prismatic joints. */
static sd_status read_limit(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    const xmlNode *limit = child_element(node, "limit");
    if (limit == NULL) return SD_OK;
    sd_status st = read_numbers(pc, limit, owner, "lower", 1, 0, &j->lower);
    if (st == SD_OK) st = read_numbers(pc, limit, owner, "upper", 1, 0, &j->upper);
    if (st == SD_OK) st = read_nonnegative(pc, limit, owner, "effort", 0, &j->effort);
    if (st == SD_OK) st = read_nonnegative(pc, limit, owner, "velocity", 0, &j->velocity);
    if (st != SD_OK) return st;
    if (j->lower > j->upper)
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(limit), "%s: <limit> lower %g > upper %g",
                            owner, j->lower, j->upper);
    const int positional = (j->hinge == SD_HINGE_REVOLUTE && !j->continuous) || j->hinge == SD_HINGE_PRISMATIC;
    j->has_limits = positional && j->lower < j->upper;
    if (!positional) j->lower = j->upper = 0.0;
    return SD_OK;
}

static sd_status read_dynamics_and_mimic(const parse_ctx *pc, const xmlNode *node, const char *owner,
                                         sd_urdf_joint *j)
{
    const xmlNode *dynamics = child_element(node, "dynamics");
    sd_status st = SD_OK;
    if (dynamics != NULL) {
        st = read_nonnegative(pc, dynamics, owner, "damping", 0, &j->damping);
        if (st == SD_OK) st = read_nonnegative(pc, dynamics, owner, "friction", 0, &j->friction);
        if (st != SD_OK) return st;
    }
    const xmlNode *mimic = child_element(node, "mimic");
    if (mimic == NULL) return SD_OK;
    j->mimic_line = line_of(mimic);
    j->mimic = get_attr(mimic, "joint");
    if (j->mimic == NULL || j->mimic[0] == '\0')
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, j->mimic_line, "%s: <mimic> has no joint", owner);
    st = read_numbers(pc, mimic, owner, "multiplier", 1, 0, &j->mimic_multiplier);
    if (st == SD_OK) st = read_numbers(pc, mimic, owner, "offset", 1, 0, &j->mimic_offset);
    return st;
}

static sd_status parse_joint_body(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    char *type = get_attr(node, "type");
    if (type == NULL)
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, j->line, "%s: no type", owner);
    int known = joint_type_from_name(type, &j->hinge, &j->continuous);
    sd_status st = known ? SD_OK
                         : sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, j->line, "%s: unknown joint type '%.40s'",
                                        owner, type);
    free(type);
    if (st == SD_OK) st = read_link_ref(pc, node, owner, "parent", &j->parent_name);
    if (st == SD_OK) st = read_link_ref(pc, node, owner, "child", &j->child_name);
    if (st == SD_OK) st = read_origin(pc, node, owner, &j->origin);
    if (st == SD_OK) st = read_axis(pc, node, owner, j);
    if (st == SD_OK) st = read_limit(pc, node, owner, j);
    if (st == SD_OK) st = read_dynamics_and_mimic(pc, node, owner, j);
    return st;
}

static sd_status parse_joint(const parse_ctx *pc, const xmlNode *node, sd_urdf_robot *robot)
{
    sd_urdf_joint *joints = grow(robot->joints, &robot->joints_cap, robot->njoints, sizeof *joints);
    if (joints == NULL) return out_of_memory(pc);
    robot->joints = joints;
    sd_urdf_joint *j = &robot->joints[robot->njoints++]; /* owned by the robot from here on */
    memset(j, 0, sizeof *j);
    j->line = line_of(node);
    j->parent = j->child = j->next_sibling = -1;
    j->mimic_multiplier = 1.0;
    sd_transform_identity(&j->origin);
    j->name = get_attr(node, "name");
    if (j->name == NULL || j->name[0] == '\0')
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, j->line, "<joint> has no name");
    char owner[300];
    snprintf(owner, sizeof owner, "joint '%.250s'", j->name);
    return parse_joint_body(pc, node, owner, j);
}

/* ---------------------------------------------------------------- document */

static sd_status parse_robot(const parse_ctx *pc, const xmlDoc *doc, sd_urdf_robot *robot)
{
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (root == NULL || !is_element(root, "robot"))
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, root != NULL ? line_of(root) : 0,
                            "no <robot> element (the root element is <%.40s>)",
                            root != NULL ? (const char *)root->name : "nothing");
    robot->name = get_attr(root, "name");
    for (const xmlNode *c = root->children; c != NULL; c = c->next) {
        sd_status st = SD_OK;
        if (is_element(c, "link"))
            st = parse_link(pc, c, robot);
        else if (is_element(c, "joint"))
            st = parse_joint(pc, c, robot);
        if (st != SD_OK) return st;
    }
    if (robot->nlinks == 0)
        return sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, line_of(root), "<robot> has no <link>");
    return SD_OK;
}

/* The first fatal XML error, caught instead of printed. */
typedef struct xml_error_sink {
    int have;
    int line;
    char message[200];
} xml_error_sink;

#if LIBXML_VERSION >= 21200
static void record_xml_error(void *user, const xmlError *error)
#else
static void record_xml_error(void *user, xmlErrorPtr error)
#endif
{
    xmlParserCtxtPtr ctxt = user;
    xml_error_sink *sink = ctxt != NULL ? ctxt->_private : NULL;
    if (sink == NULL || sink->have || error == NULL || error->level != XML_ERR_FATAL) return;
    sink->have = 1;
    sink->line = error->line;
    snprintf(sink->message, sizeof sink->message, "%s", error->message != NULL ? error->message : "error");
    size_t n = strlen(sink->message);
    while (n > 0 && (sink->message[n - 1] == '\n' || sink->message[n - 1] == ' ')) sink->message[--n] = '\0';
}

/* Parse XML text; never touches the network, never prints. */
static sd_status parse_xml(const parse_ctx *pc, const char *xml, size_t length, xmlDoc **doc)
{
    *doc = NULL;
    if (length > INT_MAX)
        return sd_urdf_fail(pc->err, SD_E_ARGUMENT, pc->source, 0, "file too large (%zu bytes)", length);
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (ctxt == NULL) return out_of_memory(pc);
    xml_error_sink sink = {0, 0, ""};
    ctxt->_private = &sink;
#if LIBXML_VERSION >= 21300
    xmlCtxtSetErrorHandler(ctxt, record_xml_error, ctxt);
#else
    ctxt->sax->serror = record_xml_error; /* called with ctxt->userData, which is ctxt */
#endif
    const int options = XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR | XML_PARSE_BIG_LINES;
    *doc = xmlCtxtReadMemory(ctxt, xml, (int)length, pc->source, NULL, options);
    sd_status st = SD_OK;
    if (*doc == NULL || !ctxt->wellFormed) {
        st = sd_urdf_fail(pc->err, SD_E_PARSE, pc->source, sink.have ? sink.line : 0, "malformed XML: %s",
                          sink.have ? sink.message : "the document could not be parsed");
        xmlFreeDoc(*doc);
        *doc = NULL;
    }
    xmlFreeParserCtxt(ctxt);
    return st;
}

/* ---------------------------------------------------------------- public entry points */

sd_status sd_urdf_load_string(const char *xml, size_t length, const char *source_name,
                              const sd_urdf_options *options, sd_model **model, sd_error *err)
{
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    const char *source = source_name != NULL ? source_name : "<string>";
    if (model == NULL || xml == NULL)
        return sd_urdf_fail(err, SD_E_ARGUMENT, source, 0, "sd_urdf_load_string: %s is NULL",
                            model == NULL ? "model" : "xml");
    *model = NULL;
    parse_ctx pc = {source, err};
    xmlDoc *doc = NULL;
    sd_status st = parse_xml(&pc, xml, length, &doc);
    if (st != SD_OK) return st;
    sd_urdf_robot robot;
    memset(&robot, 0, sizeof robot);
    robot.source = source;
    st = parse_robot(&pc, doc, &robot);
    xmlFreeDoc(doc);
    if (st == SD_OK) st = sd_urdf_robot_build(&robot, options, model, err);
    sd_urdf_robot_clear(&robot);
    return st;
}

/* The whole file in a malloc'ed buffer. */
static sd_status read_file(const char *path, char **text, size_t *length, sd_error *err)
{
    *text = NULL;
    *length = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return sd_urdf_fail(err, SD_E_IO, path, 0, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *bigger = realloc(buf, 2 * cap);
        if (bigger == NULL) { free(buf); buf = NULL; break; }
        buf = bigger;
        cap *= 2;
    }
    const int failed = buf != NULL && ferror(f);
    fclose(f);
    if (buf == NULL) return sd_urdf_fail(err, SD_E_MEMORY, path, 0, "out of memory");
    if (failed) {
        free(buf);
        return sd_urdf_fail(err, SD_E_IO, path, 0, "read error");
    }
    *text = buf;
    *length = n;
    return SD_OK;
}

sd_status sd_urdf_load_file(const char *path, const sd_urdf_options *options, sd_model **model, sd_error *err)
{
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (path == NULL || model == NULL)
        return sd_urdf_fail(err, SD_E_ARGUMENT, "sd_urdf_load_file", 0, "%s is NULL", path == NULL ? "path" : "model");
    *model = NULL;
    char *text;
    size_t length;
    sd_status st = read_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    st = sd_urdf_load_string(text, length, path, options, model, err);
    free(text);
    return st;
}
