/*
 * io/urdf.c — reading a URDF document into an sd_urdf_robot: links with their inertials, joints
 * with their origins, axes, limits, dynamics and mimic tags. Every number is checked (count,
 * syntax, finiteness, sign, and the bounds of physical models of model_bounds.h) and every error
 * names file:line and the element, names whole. URDF+ <loop> and <coupling> elements (urdf.h has
 * their syntax) are read here too; their links and joints are resolved by urdf_loops.c. Unknown
 * elements (gazebo, sensors, drake:*, xacro:*) are skipped; of a <transmission> only Drake's
 * reflected rotor inertia is read (parse_transmission). The XML is read by io/xml_read.c (quiet, no network, no external
 * entities), the file by io/io_common.c (regular files of bounded size); the tree checks, the
 * lumping of fixed joints and the hand-over to the model builder live in urdf_build.c.
 */
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "io/urdf_internal.h"
#include "io/xml_read.h"
#include "model/model_bounds.h"

void sd_urdf_robot_clear(sd_urdf_robot *robot)
{
    for (int i = 0; i < robot->nlinks; ++i) {
        free(robot->links[i].name);
        sd_urdf_flex_free(robot->links[i].flex);
    }
    for (int i = 0; i < robot->njoints; ++i) {
        sd_urdf_joint *j = &robot->joints[i];
        free(j->name);
        free(j->parent_name);
        free(j->child_name);
        free(j->mimic);
    }
    free(robot->warning);
    for (int i = 0; i < robot->nloops; ++i) {
        sd_urdf_loop *l = &robot->loops[i];
        free(l->name);
        free(l->link[0]);
        free(l->link[1]);
    }
    for (int i = 0; i < robot->ncouplings; ++i) {
        sd_urdf_coupling *c = &robot->couplings[i];
        free(c->name);
        for (int s = 0; s < 2; ++s) {
            free(c->link[s]);
            free(c->joint[s]);
        }
    }
    free(robot->links);
    free(robot->joints);
    free(robot->loops);
    free(robot->couplings);
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
    char *copy = sd_io_strdup((const char *)value);
    xmlFree(value);
    return copy;
}

static sd_status out_of_memory(const parse_ctx *pc)
{
    return sd_io_fail(pc->err, SD_E_MEMORY, pc->source, 0, "out of memory");
}

/* ---------------------------------------------------------------- numbers */

/* Parse exactly n whitespace-separated finite numbers. Returns NULL on success, else a reason. */
static const char *parse_numbers(const char *text, int n, double *out)
{
    const char *s = text;
    for (int i = 0; i < n; ++i) {
        while (sd_io_is_space(*s)) ++s;
        if (*s == '\0') return n == 1 ? "expects a number" : "expects more numbers";
        const char *token = s;
        while (*s != '\0' && !sd_io_is_space(*s)) ++s;
        const char *why = sd_io_parse_number(token, (size_t)(s - token), &out[i]);
        if (why != NULL) return why;
    }
    while (sd_io_is_space(*s)) ++s;
    return *s == '\0' ? NULL : "has too many numbers";
}

/* What a number of the file may hold: the largest magnitude (model_bounds.h; HUGE_VAL: any finite
 * value), its unit for messages, and whether it must not be negative. */
typedef struct number_kind {
    double bound;
    const char *unit;
    int nonnegative;
} number_kind;

static const number_kind ANY = {HUGE_VAL, "", 0};
static const number_kind LENGTH = {SD_MAX_LENGTH, " m", 0};
static const number_kind ANGLE = {SD_MAX_ANGLE, " rad", 0};
static const number_kind DAMPING = {SD_MAX_DAMPING, "", 1};
static const number_kind FRICTION = {SD_MAX_EFFORT, "", 1};
static const number_kind GEAR_RATIO = {SD_MAX_GEAR_RATIO, "", 0};
static const number_kind ROTOR_INERTIA = {SD_MAX_ARMATURE, " kg m^2", 1};
static const number_kind GRAVITY = {SD_MAX_GRAVITY, " m/s^2", 0};

/* Read attribute `attr` of `node` as n numbers of the given kind into out. An absent attribute
 * keeps out as it is, unless `required`. `owner` names the link or joint for the message. */
static sd_status read_numbers(const parse_ctx *pc, const xmlNode *node, const char *owner, const char *attr,
                              int n, int required, number_kind kind, double *out)
{
    char *text = get_attr(node, attr);
    if (text == NULL) {
        if (!required) return SD_OK;
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <%s> has no attribute %s", owner,
                          (const char *)node->name, attr);
    }
    double values[3];
    const char *why = parse_numbers(text, n, values);
    sd_status st = SD_OK;
    if (why != NULL) {
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <%s %s=\"%.60s\">: %s%s", owner,
                        (const char *)node->name, attr, text, why, n == 3 ? " (3 numbers expected)" : "");
    } else {
        for (int i = 0; i < n && st == SD_OK; ++i) {
            if (kind.nonnegative && values[i] < 0.0)
                st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node),
                                "%s: <%s %s=\"%.60s\">: must not be negative", owner, (const char *)node->name,
                                attr, text);
            else if (fabs(values[i]) > kind.bound)
                st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node),
                                "%s: <%s %s=\"%.60s\">: %g%s is beyond %g%s, the bound of physical models", owner,
                                (const char *)node->name, attr, text, values[i], kind.unit, kind.bound, kind.unit);
        }
        if (st == SD_OK) memcpy(out, values, (size_t)n * sizeof(double));
    }
    free(text);
    return st;
}

/* The <origin xyz rpy> child of `parent` as a placement (identity when absent). */
static sd_status read_origin(const parse_ctx *pc, const xmlNode *parent, const char *owner, sd_transform *X)
{
    sd_transform_identity(X);
    const xmlNode *origin = child_element(parent, "origin");
    if (origin == NULL) return SD_OK;
    double rpy[3] = {0.0, 0.0, 0.0};
    sd_status st = read_numbers(pc, origin, owner, "xyz", 3, 0, LENGTH, X->p);
    if (st == SD_OK) st = read_numbers(pc, origin, owner, "rpy", 3, 0, ANGLE, rpy);
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

/* The six numbers of <inertia>; each bounded with the mass below, as they are read. */
static sd_status read_inertia_matrix(const parse_ctx *pc, const xmlNode *node, const char *owner, double I[9])
{
    static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    static const int slots[6][2] = {{0, 0}, {1, 3}, {2, 6}, {4, 4}, {5, 7}, {8, 8}};
    for (int k = 0; k < 6; ++k) {
        double v = 0.0;
        sd_status st = read_numbers(pc, node, owner, names[k], 1, 1, ANY, &v);
        if (st != SD_OK) return st;
        I[slots[k][0]] = I[slots[k][1]] = v;
    }
    return SD_OK;
}

/* The inertia against the mass: a massless link has none, and no principal moment about the centre
 * of mass exceeds m r^2 for a body whose mass lies within r of it (model_bounds.h). No entry of a
 * positive semi-definite matrix exceeds its largest eigenvalue, so the entries are bounded first:
 * the eigenvalue formula squares them. Fills e with the principal moments. */
static sd_status check_inertia(const parse_ctx *pc, const xmlNode *mass, const xmlNode *inertia, const char *owner,
                               double m, const double I[9], double e[3])
{
    const double largest = m * SD_MAX_LENGTH * SD_MAX_LENGTH;
    double scale = 0.0;
    for (int i = 0; i < 9; ++i) scale = fabs(I[i]) > scale ? fabs(I[i]) : scale;
    if (m == 0.0 && scale > 0.0)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(mass),
                          "%s: <mass value=\"0\"> with a nonzero <inertia> (a massless link has no inertia)", owner);
    if (scale > largest)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(inertia),
                          "%s: <inertia> entry %g kg m^2 is beyond mass x (%g m)^2 = %g kg m^2, the bound of physical "
                          "models", owner, scale, SD_MAX_LENGTH, largest);
    sym3_eigenvalues(I, e);
    if (e[0] < -INERTIA_TOL * scale)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(inertia),
                          "%s: <inertia> is not positive semi-definite (principal moments %g, %g, %g)", owner, e[0],
                          e[1], e[2]);
    if (e[2] > largest * (1.0 + 1e-12))
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(inertia),
                          "%s: <inertia> principal moment %g kg m^2 is beyond mass x (%g m)^2 = %g kg m^2, the bound "
                          "of physical models", owner, e[2], SD_MAX_LENGTH, largest);
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
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <inertial> has no <%s>", owner,
                          mass == NULL ? "mass" : "inertia");
    st = read_numbers(pc, mass, owner, "value", 1, 1, ANY, &link->mass);
    if (st != SD_OK) return st;
    if (link->mass < 0.0)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(mass), "%s: <mass value=\"%g\">: negative mass",
                          owner, link->mass);
    if (link->mass > SD_MAX_MASS)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(mass),
                          "%s: <mass value=\"%g\">: beyond %g kg, the bound of physical models", owner, link->mass,
                          SD_MAX_MASS);
    double I[9], T[9], e[3];
    st = read_inertia_matrix(pc, inertia, owner, I);
    if (st == SD_OK) st = check_inertia(pc, mass, inertia, owner, link->mass, I, e);
    if (st != SD_OK) return st;
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
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, link->line, "<link> has no name");
    }
    ++robot->nlinks; /* from here on the robot owns the name */
    const xmlNode *inertial = child_element(node, "inertial");
    char *owner = sd_io_describe("link", link->name);
    if (owner == NULL) return out_of_memory(pc);
    sd_status st = SD_OK;
    /* links and joints are children of <robot>: one inside a link would be dropped without a word */
    for (const xmlNode *c = node->children; c != NULL && st == SD_OK; c = c->next)
        if (is_element(c, "link") || is_element(c, "joint"))
            st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(c),
                            "%s: holds a <%s>; links and joints are children of <robot>", owner,
                            (const char *)c->name);
    if (st == SD_OK && inertial != NULL) st = parse_inertial(pc, inertial, owner, link);
    if (st == SD_OK) st = sd_urdf_read_flexible(pc->source, pc->err, node, owner, link, &robot->flex_file_bytes); /* urdf_flex.c */
    free(owner);
    return st;
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
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(ref != NULL ? ref : node),
                          "%s: no <%s link=\"...\"/>", owner, which);
    return SD_OK;
}

/* The <axis xyz> child of `node`, normalised into out; URDF's default is x. Only an element that
 * moves along or about it (`needs_axis`) must have a nonzero one. An axis is a direction of any
 * length (sd_io_normalize); below 1e-12 it is noise. */
static sd_status read_direction(const parse_ctx *pc, const xmlNode *node, const char *owner, int needs_axis,
                                double out[3])
{
    sd_v3_set(out, 1.0, 0.0, 0.0);
    const xmlNode *axis = child_element(node, "axis");
    if (axis == NULL) return SD_OK;
    double a[3] = {1.0, 0.0, 0.0};
    sd_status st = read_numbers(pc, axis, owner, "xyz", 3, 0, ANY, a);
    if (st != SD_OK) return st;
    if (!sd_io_normalize(a, 3)) {
        if (needs_axis)
            return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(axis), "%s: <axis> has zero length", owner);
        return SD_OK;
    }
    for (int i = 0; i < 3; ++i) out[i] = a[i];
    return SD_OK;
}

/* A joint's <axis>, in its joint frame: revolute, prismatic and planar joints need a nonzero one. */
static sd_status read_axis(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    const int needs_axis = j->hinge == SD_HINGE_REVOLUTE || j->hinge == SD_HINGE_PRISMATIC ||
                           j->hinge == SD_HINGE_PLANAR;
    return read_direction(pc, node, owner, needs_axis, j->axis);
}

/* <limit lower upper effort velocity>: position limits only for revolute and prismatic joints.
 * Files write "no limit" as a huge number (Gazebo's 1e16, or the largest double): a limit beyond
 * the physical bounds is read as no limit, with a warning (urdf_build.c), and never reaches the
 * model, where it would make random configurations overflow. */
static sd_status read_limit(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    const xmlNode *limit = child_element(node, "limit");
    if (limit == NULL) return SD_OK;
    static const number_kind nonnegative = {HUGE_VAL, "", 1};
    sd_status st = read_numbers(pc, limit, owner, "lower", 1, 0, ANY, &j->lower);
    if (st == SD_OK) st = read_numbers(pc, limit, owner, "upper", 1, 0, ANY, &j->upper);
    if (st == SD_OK) st = read_numbers(pc, limit, owner, "effort", 1, 0, nonnegative, &j->effort);
    if (st == SD_OK) st = read_numbers(pc, limit, owner, "velocity", 1, 0, nonnegative, &j->velocity);
    if (st != SD_OK) return st;
    if (j->lower > j->upper)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(limit), "%s: <limit> lower %g > upper %g", owner,
                          j->lower, j->upper);
    const int positional = (j->hinge == SD_HINGE_REVOLUTE && !j->continuous) || j->hinge == SD_HINGE_PRISMATIC;
    const double travel = j->hinge == SD_HINGE_PRISMATIC ? SD_MAX_LENGTH : SD_MAX_ANGLE;
    j->limit_line = line_of(limit);
    if (positional && (fabs(j->lower) > travel || fabs(j->upper) > travel)) {
        j->unbounded_limit = fabs(j->lower) > travel ? "lower" : "upper";
        j->lower = j->upper = 0.0;
    }
    if (j->effort > SD_MAX_EFFORT) {
        if (j->unbounded_limit == NULL) j->unbounded_limit = "effort";
        j->effort = 0.0;
    }
    if (j->velocity > SD_MAX_SPEED) {
        if (j->unbounded_limit == NULL) j->unbounded_limit = "velocity";
        j->velocity = 0.0;
    }
    j->has_limits = positional && j->lower < j->upper;
    if (!positional) j->lower = j->upper = 0.0;
    return SD_OK;
}

static sd_status read_embed(const parse_ctx *pc, const xmlNode *node, const char *owner, int *out);

static sd_status read_dynamics_and_mimic(const parse_ctx *pc, const xmlNode *node, const char *owner,
                                         sd_urdf_joint *j)
{
    const xmlNode *dynamics = child_element(node, "dynamics");
    sd_status st = SD_OK;
    if (dynamics != NULL) {
        st = read_numbers(pc, dynamics, owner, "damping", 1, 0, DAMPING, &j->damping);
        if (st == SD_OK) st = read_numbers(pc, dynamics, owner, "friction", 1, 0, FRICTION, &j->friction);
        if (st != SD_OK) return st;
    }
    const xmlNode *mimic = child_element(node, "mimic");
    if (mimic == NULL) return SD_OK;
    j->mimic_line = line_of(mimic);
    j->mimic = get_attr(mimic, "joint");
    if (j->mimic == NULL || j->mimic[0] == '\0')
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, j->mimic_line, "%s: <mimic> has no joint", owner);
    const number_kind offset = j->hinge == SD_HINGE_PRISMATIC ? LENGTH : ANGLE;
    st = read_numbers(pc, mimic, owner, "multiplier", 1, 0, GEAR_RATIO, &j->mimic_multiplier);
    if (st == SD_OK) st = read_numbers(pc, mimic, owner, "offset", 1, 0, offset, &j->mimic_offset);
    if (st == SD_OK) st = read_embed(pc, mimic, owner, &j->mimic_embed);
    return st;
}

/* soadyn's extension <soadyn:spring stiffness="K" reference="R"/> in a revolute, continuous or
 * prismatic <joint>: the joint's linear spring tau = -K (q - R) (model.h: stiffness, spring_ref; N m/rad
 * and rad, or N/m and m). URDF has no joint spring; SDF's is <dynamics><spring_stiffness>. */
static sd_status read_spring(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    const xmlNode *spring = NULL;
    for (const xmlNode *c = node->children; c != NULL && spring == NULL; c = c->next)
        if (sd_urdf_is_soadyn(c, "spring")) spring = c;
    if (spring == NULL) return SD_OK;
    for (const xmlAttr *a = spring->properties; a != NULL; a = a->next) {
        const char *name = (const char *)a->name;
        if (strcmp(name, "stiffness") != 0 && strcmp(name, "reference") != 0)
            return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(spring),
                              "%s: <soadyn:spring> has no attribute '%.40s' (stiffness, reference)", owner, name);
    }
    const int moving = j->hinge == SD_HINGE_REVOLUTE || j->hinge == SD_HINGE_PRISMATIC;
    if (!moving)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(spring),
                          "%s: <soadyn:spring> on a joint that is not revolute, continuous or prismatic", owner);
    static const number_kind STIFFNESS = {SD_MAX_STIFFNESS, "", 1};
    const number_kind reference = j->hinge == SD_HINGE_PRISMATIC ? LENGTH : ANGLE;
    sd_status st = read_numbers(pc, spring, owner, "stiffness", 1, 1, STIFFNESS, &j->stiffness);
    if (st == SD_OK) st = read_numbers(pc, spring, owner, "reference", 1, 0, reference, &j->spring_ref);
    return st;
}

static sd_status parse_joint_body(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_joint *j)
{
    char *type = get_attr(node, "type");
    if (type == NULL) return sd_io_fail(pc->err, SD_E_PARSE, pc->source, j->line, "%s: no type", owner);
    int known = joint_type_from_name(type, &j->hinge, &j->continuous);
    sd_status st = known ? SD_OK
                         : sd_io_fail(pc->err, SD_E_PARSE, pc->source, j->line, "%s: unknown joint type '%.40s'",
                                      owner, type);
    free(type);
    if (st == SD_OK) st = read_link_ref(pc, node, owner, "parent", &j->parent_name);
    if (st == SD_OK) st = read_link_ref(pc, node, owner, "child", &j->child_name);
    if (st == SD_OK) st = read_origin(pc, node, owner, &j->origin);
    if (st == SD_OK) st = read_axis(pc, node, owner, j);
    if (st == SD_OK) st = read_limit(pc, node, owner, j);
    if (st == SD_OK) st = read_dynamics_and_mimic(pc, node, owner, j);
    if (st == SD_OK) st = read_spring(pc, node, owner, j);
    if (st == SD_OK) st = sd_urdf_read_node(pc->source, pc->err, node, owner, j); /* urdf_flex.c */
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
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, j->line, "<joint> has no name");
    char *owner = sd_io_describe("joint", j->name);
    if (owner == NULL) return out_of_memory(pc);
    const sd_status st = parse_joint_body(pc, node, owner, j);
    free(owner);
    return st;
}

/* ---------------------------------------------------------------- URDF+ loops and couplings */

/* embed="true|false" (also "1|0", XML's booleans) on <loop>, <coupling> or <mimic>: the model's
 * choice of constraint embedding for that constraint (sd_constraint_desc.embed); absent: 0. */
static sd_status read_embed(const parse_ctx *pc, const xmlNode *node, const char *owner, int *out)
{
    char *v = get_attr(node, "embed");
    *out = 0;
    if (v == NULL) return SD_OK;
    sd_status st = SD_OK;
    if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0) *out = 1;
    else if (!(strcmp(v, "false") == 0 || strcmp(v, "0") == 0))
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node),
                        "%s: <%s embed=\"%.40s\">: embed must be true or false", owner, (const char *)node->name, v);
    free(v);
    return st;
}

/* The <predecessor> (side 0) or <successor> (side 1) child of a URDF+ element, or its synonym
 * <parent> / <child>; NULL when absent. Both spellings at once are an error (*st). */
static const xmlNode *side_element(const parse_ctx *pc, const xmlNode *node, const char *owner, int side,
                                   sd_status *st)
{
    static const char *const names[2][2] = {{"predecessor", "parent"}, {"successor", "child"}};
    const xmlNode *a = child_element(node, names[side][0]), *b = child_element(node, names[side][1]);
    *st = SD_OK;
    if (a != NULL && b != NULL)
        *st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(b), "%s: both <%s> (line %d) and <%s>", owner,
                         names[side][0], line_of(a), names[side][1]);
    return a != NULL ? a : b;
}

/* The side element, required. */
static sd_status require_side(const parse_ctx *pc, const xmlNode *node, const char *owner, int side,
                              const xmlNode **out)
{
    sd_status st;
    *out = side_element(pc, node, owner, side, &st);
    if (st != SD_OK) return st;
    if (*out == NULL)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: no <%s link=\"...\"> (or <%s>)", owner,
                          side == SD_URDF_PREDECESSOR ? "predecessor" : "successor",
                          side == SD_URDF_PREDECESSOR ? "parent" : "child");
    return SD_OK;
}

/* A nonempty attribute into *out (malloc'ed), NULL when absent. */
static sd_status optional_name(const parse_ctx *pc, const xmlNode *node, const char *owner, const char *attr,
                               char **out)
{
    *out = get_attr(node, attr);
    if (*out != NULL && (*out)[0] == '\0')
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: <%s %s=\"\">: empty name", owner,
                          (const char *)node->name, attr);
    return SD_OK;
}

static int loop_type_from_name(const char *type, sd_constraint_type *out)
{
    static const struct { const char *name; sd_constraint_type type; } types[] = {
        {"revolute", SD_CONSTRAINT_REVOLUTE}, {"continuous", SD_CONSTRAINT_REVOLUTE},
        {"prismatic", SD_CONSTRAINT_PRISMATIC}, {"fixed", SD_CONSTRAINT_WELD},
        {"spherical", SD_CONSTRAINT_BALL}, {"ball", SD_CONSTRAINT_BALL},
        {"planar", SD_CONSTRAINT_PLANAR}, {"point_in_plane", SD_CONSTRAINT_POINT_IN_PLANE},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(type, types[i].name) == 0) {
            *out = types[i].type;
            return 1;
        }
    return 0;
}

/* <loop type>: one of loop_type_from_name's; a floating loop joint constrains nothing and is named
 * as such. */
static sd_status read_loop_type(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_loop *l)
{
    char *type = get_attr(node, "type");
    if (type == NULL) return sd_io_fail(pc->err, SD_E_PARSE, pc->source, l->line, "%s: no type", owner);
    sd_status st = SD_OK;
    if (!loop_type_from_name(type, &l->type)) {
        const int floating = strcmp(type, "floating") == 0;
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, l->line,
                        floating ? "%s: a %.40s loop joint is not offered (it would constrain nothing)"
                                 : "%s: unknown loop type '%.40s' (revolute, continuous, prismatic, fixed, spherical, "
                                   "ball, planar or point_in_plane)",
                        owner, type);
    }
    free(type);
    return st;
}

/* One side of a <loop>: the link (required) and the loop joint's frame in it. The predecessor may
 * take its frame from an <origin> of the <loop> itself, when its own element has none. */
static sd_status read_loop_side(const parse_ctx *pc, const xmlNode *node, const char *owner, int side,
                                sd_urdf_loop *l)
{
    const xmlNode *e;
    sd_status st = require_side(pc, node, owner, side, &e);
    if (st != SD_OK) return st;
    l->side_line[side] = line_of(e);
    st = optional_name(pc, e, owner, "link", &l->link[side]);
    if (st != SD_OK) return st;
    if (l->link[side] == NULL)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(e), "%s: <%s> has no link", owner,
                          (const char *)e->name);
    const xmlNode *own = child_element(e, "origin"), *outer = child_element(node, "origin");
    if (side == SD_URDF_PREDECESSOR && own != NULL && outer != NULL)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(outer),
                          "%s: the loop joint's frame on the predecessor is given twice: <origin> in <%s> (line %d) "
                          "and in <loop>", owner, (const char *)e->name, line_of(own));
    const xmlNode *from = own != NULL || side == SD_URDF_SUCCESSOR ? e : node;
    return read_origin(pc, from, owner, &l->origin[side]);
}

static sd_status parse_loop_body(const parse_ctx *pc, const xmlNode *node, const char *owner, sd_urdf_loop *l)
{
    sd_status st = read_loop_type(pc, node, owner, l);
    if (st == SD_OK) st = read_loop_side(pc, node, owner, SD_URDF_PREDECESSOR, l);
    if (st == SD_OK) st = read_loop_side(pc, node, owner, SD_URDF_SUCCESSOR, l);
    const int needs_axis = l->type == SD_CONSTRAINT_REVOLUTE || l->type == SD_CONSTRAINT_PRISMATIC ||
                           l->type == SD_CONSTRAINT_PLANAR || l->type == SD_CONSTRAINT_POINT_IN_PLANE;
    if (st == SD_OK) st = read_direction(pc, node, owner, needs_axis, l->axis);
    if (st == SD_OK) st = read_embed(pc, node, owner, &l->embed);
    return st;
}

static sd_status parse_loop(const parse_ctx *pc, const xmlNode *node, sd_urdf_robot *robot)
{
    sd_urdf_loop *loops = grow(robot->loops, &robot->loops_cap, robot->nloops, sizeof *loops);
    if (loops == NULL) return out_of_memory(pc);
    robot->loops = loops;
    sd_urdf_loop *l = &robot->loops[robot->nloops++]; /* owned by the robot from here on */
    memset(l, 0, sizeof *l);
    l->line = line_of(node);
    sd_transform_identity(&l->origin[0]);
    sd_transform_identity(&l->origin[1]);
    l->name = get_attr(node, "name");
    if (l->name == NULL || l->name[0] == '\0')
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, l->line, "<loop> has no name");
    char *owner = sd_io_describe("loop", l->name);
    if (owner == NULL) return out_of_memory(pc);
    const sd_status st = parse_loop_body(pc, node, owner, l);
    free(owner);
    return st;
}

/* A number given as an attribute of the element (ratio="r") or as a child element's value
 * (<ratio value="r"/>, URDF+'s form), not both; absent: *out unchanged. */
static sd_status read_attribute_or_child(const parse_ctx *pc, const xmlNode *node, const char *owner,
                                         const char *name, number_kind kind, double *out)
{
    const xmlNode *child = child_element(node, name);
    xmlChar *attr = xmlGetNoNsProp(node, (const xmlChar *)name);
    const int has_attr = attr != NULL;
    xmlFree(attr);
    if (has_attr && child != NULL)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(child), "%s: %s given twice (attribute and <%s>)",
                          owner, name, name);
    if (child != NULL) return read_numbers(pc, child, owner, "value", 1, 1, kind, out);
    return read_numbers(pc, node, owner, name, 1, 0, kind, out);
}

/* One side of a <coupling>: a joint (joint="...") or the link it moves (link="..."), one of them. */
static sd_status read_coupling_side(const parse_ctx *pc, const xmlNode *node, const char *owner, int side,
                                    sd_urdf_coupling *c)
{
    const xmlNode *e;
    sd_status st = require_side(pc, node, owner, side, &e);
    if (st != SD_OK) return st;
    c->side_line[side] = line_of(e);
    st = optional_name(pc, e, owner, "joint", &c->joint[side]);
    if (st == SD_OK) st = optional_name(pc, e, owner, "link", &c->link[side]);
    if (st != SD_OK) return st;
    if ((c->joint[side] == NULL) == (c->link[side] == NULL))
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(e), "%s: <%s> needs %s joint=\"...\" or link=\"...\"",
                          owner, (const char *)e->name, c->joint[side] == NULL ? "a" : "only one of");
    return SD_OK;
}

static sd_status parse_coupling_body(const parse_ctx *pc, const xmlNode *node, const char *owner,
                                     sd_urdf_coupling *c)
{
    static const number_kind offset = {SD_MAX_LENGTH, "", 0}; /* m or rad: both bounds are 1e6 */
    sd_status st = read_coupling_side(pc, node, owner, SD_URDF_PREDECESSOR, c);
    if (st == SD_OK) st = read_coupling_side(pc, node, owner, SD_URDF_SUCCESSOR, c);
    if (st == SD_OK) st = read_attribute_or_child(pc, node, owner, "ratio", GEAR_RATIO, &c->ratio);
    if (st == SD_OK) st = read_attribute_or_child(pc, node, owner, "offset", offset, &c->offset);
    if (st == SD_OK) st = read_embed(pc, node, owner, &c->embed);
    if (st == SD_OK && c->ratio == 0.0)
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, c->line,
                        "%s: ratio 0 would hold the successor still; a coupling needs a nonzero ratio", owner);
    return st;
}

static sd_status parse_coupling(const parse_ctx *pc, const xmlNode *node, sd_urdf_robot *robot)
{
    sd_urdf_coupling *couplings = grow(robot->couplings, &robot->couplings_cap, robot->ncouplings, sizeof *couplings);
    if (couplings == NULL) return out_of_memory(pc);
    robot->couplings = couplings;
    sd_urdf_coupling *c = &robot->couplings[robot->ncouplings++]; /* owned by the robot from here on */
    memset(c, 0, sizeof *c);
    c->line = line_of(node);
    c->ratio = 1.0;
    c->name = get_attr(node, "name");
    if (c->name == NULL || c->name[0] == '\0')
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, c->line, "<coupling> has no name");
    char *owner = sd_io_describe("coupling", c->name);
    if (owner == NULL) return out_of_memory(pc);
    const sd_status st = parse_coupling_body(pc, node, owner, c);
    free(owner);
    return st;
}

/* ---------------------------------------------------------------- transmissions */

/* An element of Drake's namespace (xmlns:drake="http://drake.mit.edu"), e.g. <drake:gear_ratio>. */
static int is_drake_element(const xmlNode *node, const char *name)
{
    return node->type == XML_ELEMENT_NODE && node->ns != NULL && node->ns->href != NULL &&
           strcmp((const char *)node->ns->href, "http://drake.mit.edu") == 0 &&
           strcmp((const char *)node->name, name) == 0;
}

static const xmlNode *drake_child(const xmlNode *parent, const char *name)
{
    for (const xmlNode *c = parent->children; c != NULL; c = c->next)
        if (is_drake_element(c, name)) return c;
    return NULL;
}

/* A <transmission> whose <actuator> carries <drake:rotor_inertia value> (and <drake:gear_ratio
 * value>, 1 when absent) adds the motor's reflected inertia rotor_inertia x gear_ratio^2 to the
 * armature of the transmission's <joint name> (as Drake's parser makes it; several transmissions on
 * one joint add up). Other transmissions are the controller's business and are skipped. Read after
 * every <joint>, since a transmission may come first. */
static sd_status parse_transmission(const parse_ctx *pc, const xmlNode *node, sd_urdf_robot *robot)
{
    const xmlNode *actuator = child_element(node, "actuator");
    const xmlNode *rotor = actuator != NULL ? drake_child(actuator, "rotor_inertia") : NULL;
    const xmlNode *gear = actuator != NULL ? drake_child(actuator, "gear_ratio") : NULL;
    if (rotor == NULL && gear == NULL) return SD_OK;
    char *name = get_attr(node, "name");
    char *owner = sd_io_describe("transmission", name != NULL ? name : "");
    free(name);
    if (owner == NULL) return out_of_memory(pc);
    double inertia = 0.0, ratio = 1.0;
    sd_status st = SD_OK;
    if (rotor != NULL) st = read_numbers(pc, rotor, owner, "value", 1, 1, ROTOR_INERTIA, &inertia);
    if (st == SD_OK && gear != NULL) st = read_numbers(pc, gear, owner, "value", 1, 1, GEAR_RATIO, &ratio);
    const xmlNode *jn = child_element(node, "joint");
    char *jname = st == SD_OK && jn != NULL ? get_attr(jn, "name") : NULL;
    sd_urdf_joint *joint = NULL;
    for (int i = 0; jname != NULL && i < robot->njoints && joint == NULL; ++i)
        if (strcmp(robot->joints[i].name, jname) == 0) joint = &robot->joints[i];
    if (st == SD_OK && joint == NULL)
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(jn != NULL ? jn : node),
                        jname != NULL ? "%s: drives joint '%s', which the file does not have"
                                      : "%s: has a drake:rotor_inertia but no <joint name=\"...\">%s",
                        owner, jname != NULL ? jname : "");
    const double reflected = inertia * ratio * ratio; /* both bounded: no overflow */
    if (st == SD_OK && joint->armature + reflected > SD_MAX_ARMATURE)
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(rotor != NULL ? rotor : gear),
                        "%s: reflected rotor inertia %g kg m^2 is beyond %g kg m^2, the bound of physical models",
                        owner, joint->armature + reflected, SD_MAX_ARMATURE);
    if (st == SD_OK) joint->armature += reflected;
    free(jname);
    free(owner);
    return st;
}

/* ---------------------------------------------------------------- gravity */

/* soadyn's extension <soadyn:gravity xyz="GX GY GZ"/> under <robot>: the model's gravity in the
 * world frame (URDF has none; 0 0 -9.81 without it), e.g. 0 0 0 for a spacecraft. */
static sd_status parse_gravity(const parse_ctx *pc, const xmlNode *node, sd_urdf_robot *robot)
{
    const char *owner = "<soadyn:gravity>";
    if (robot->has_gravity)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node), "%s: given twice", owner);
    double g[3];
    sd_status st = read_numbers(pc, node, owner, "xyz", 3, 1, GRAVITY, g);
    if (st == SD_OK && sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) > SD_MAX_GRAVITY)
        st = sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(node),
                        "%s: |xyz| is beyond %g m/s^2, the bound of physical models", owner, SD_MAX_GRAVITY);
    if (st != SD_OK) return st;
    memcpy(robot->gravity, g, sizeof g);
    robot->has_gravity = 1;
    return SD_OK;
}

/* ---------------------------------------------------------------- document */

static sd_status parse_robot(const parse_ctx *pc, const xmlDoc *doc, sd_urdf_robot *robot)
{
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (root == NULL || !is_element(root, "robot"))
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, root != NULL ? line_of(root) : 0,
                          "no <robot> element (the root element is <%.40s>)",
                          root != NULL ? (const char *)root->name : "nothing");
    robot->name = get_attr(root, "name");
    for (const xmlNode *c = root->children; c != NULL; c = c->next) {
        sd_status st = SD_OK;
        if (is_element(c, "link"))
            st = parse_link(pc, c, robot);
        else if (is_element(c, "joint"))
            st = parse_joint(pc, c, robot);
        else if (is_element(c, "loop"))
            st = parse_loop(pc, c, robot);
        else if (is_element(c, "coupling"))
            st = parse_coupling(pc, c, robot);
        else if (sd_urdf_is_soadyn(c, "gravity"))
            st = parse_gravity(pc, c, robot);
        if (st != SD_OK) return st;
    }
    for (const xmlNode *c = root->children; c != NULL; c = c->next) {
        const sd_status st = is_element(c, "transmission") ? parse_transmission(pc, c, robot) : SD_OK;
        if (st != SD_OK) return st;
    }
    if (robot->nlinks == 0)
        return sd_io_fail(pc->err, SD_E_PARSE, pc->source, line_of(root), "<robot> has no <link>");
    return SD_OK;
}

/* ---------------------------------------------------------------- public entry points */

sd_status sd_urdf_load_string(const char *xml, size_t length, const char *source_name,
                              const sd_urdf_options *options, sd_model **model, sd_error *err)
{
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    const char *source = source_name != NULL ? source_name : "<string>";
    if (model == NULL || xml == NULL)
        return sd_io_fail(err, SD_E_ARGUMENT, source, 0, "sd_urdf_load_string: %s is NULL",
                          model == NULL ? "model" : "xml");
    *model = NULL;
    if (length > SD_MODEL_FILE_MAX_BYTES)
        return sd_io_fail(err, SD_E_IO, source, 0, "file too large: %zu bytes, model texts are read up to %zu MiB",
                          length, (size_t)SD_MODEL_FILE_MAX_BYTES >> 20);
    parse_ctx pc = {source, err};
    xmlDoc *doc = NULL;
    sd_xml_quiet quiet;
    sd_xml_quiet_begin(&quiet);
    sd_status st = sd_xml_read(xml, length, source, &doc, err);
    sd_urdf_robot robot;
    memset(&robot, 0, sizeof robot);
    robot.source = source;
    if (st == SD_OK) st = parse_robot(&pc, doc, &robot);
    xmlFreeDoc(doc);
    if (st == SD_OK) st = sd_urdf_robot_build(&robot, options, model, err);
    sd_urdf_robot_clear(&robot);
    return sd_xml_quiet_end(&quiet, st, model, source, err);
}

sd_status sd_urdf_load_file(const char *path, const sd_urdf_options *options, sd_model **model, sd_error *err)
{
    if (err != NULL) { err->status = SD_OK; err->message[0] = '\0'; }
    if (path == NULL || model == NULL)
        return sd_io_fail(err, SD_E_ARGUMENT, "sd_urdf_load_file", 0, "%s is NULL", path == NULL ? "path" : "model");
    *model = NULL;
    char *text;
    size_t length;
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    st = sd_urdf_load_string(text, length, path, options, model, err);
    free(text);
    return st;
}
