/*
 * io/urdf_loops.c — the closure constraints of a URDF file (loops.h), from what urdf.c read and
 * the tree urdf_build.c resolved:
 *   - URDF+ <loop> (Chignoli, Slotine, Wensing, Kim 2024, arXiv 2411.19753): a loop joint between
 *     a frame on the predecessor link and a frame on the successor link, a REVOLUTE, PRISMATIC,
 *     BALL or WELD constraint. A link is named to the loops builder as it is in the model: a body,
 *     a frame (a link merged into its parent body by a fixed joint), or the inertial frame (the
 *     "world" root, which is not a body);
 *   - URDF+ <coupling>: q(successor) = ratio q(predecessor) + offset, a COUPLING of two joints
 *     (URDF+ names the links they move: "ratio = successor velocity / predecessor velocity" in its
 *     authors' parser);
 *   - <mimic joint="J" multiplier="r" offset="c"/> in joint K: q(K) = r q(J) + c, a COUPLING named
 *     after K, unless the options keep mimic joints independent (urdf_build.c then warns).
 * Each of the three may say embed="true" (or "false", the default): the constraint's embed flag,
 * the model's choice between constraint embedding (soadyn/embed.h) and tree augmentation; urdf.c
 * reads it and refuses any other value with the element's file:line.
 * Everything a constraint names is checked here first, so that each error names the element's
 * file:line; what only the built tree can tell (a loop between two links of the same body) comes
 * from the model builder, which names the constraint and the same file:line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/urdf_internal.h"

static const char *const SIDE_NAMES[2] = {"predecessor", "successor"};

static sd_status fail(const sd_urdf_tree *t, sd_status st, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static sd_status fail(const sd_urdf_tree *t, sd_status st, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = sd_io_vfail(t->err, st, t->src, line, fmt, ap);
    va_end(ap);
    return st;
}

static int one_coordinate(sd_hinge_type hinge) { return hinge == SD_HINGE_REVOLUTE || hinge == SD_HINGE_PRISMATIC; }

/* What a joint's type is called in the file, for messages. */
static const char *joint_kind(const sd_urdf_joint *j)
{
    switch (j->hinge) {
    case SD_HINGE_REVOLUTE: return j->continuous ? "continuous" : "revolute";
    case SD_HINGE_PRISMATIC: return "prismatic";
    case SD_HINGE_FIXED: return "fixed";
    case SD_HINGE_FREE: return "floating";
    case SD_HINGE_PLANAR: return "planar";
    default: return "not a one-coordinate joint";
    }
}

static int compare_named(const void *a, const void *b)
{
    const sd_urdf_named *x = a, *y = b;
    const int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* The names of the <loop> (index i) and <coupling> (index nloops + i) elements, sorted; NULL when
 * memory runs out (there is always room for one entry). */
static sd_urdf_named *urdfplus_names(const sd_urdf_robot *r)
{
    const int n = r->nloops + r->ncouplings;
    sd_urdf_named *table = malloc((size_t)(n > 0 ? n : 1) * sizeof *table);
    if (table == NULL) return NULL;
    for (int i = 0; i < n; ++i) {
        table[i].index = i;
        table[i].name = i < r->nloops ? r->loops[i].name : r->couplings[i - r->nloops].name;
    }
    qsort(table, (size_t)n, sizeof *table, compare_named);
    return table;
}

static int urdfplus_line(const sd_urdf_robot *r, int index)
{
    return index < r->nloops ? r->loops[index].line : r->couplings[index - r->nloops].line;
}

/* ---------------------------------------------------------------- checks */

/* A <mimic> names another revolute, continuous or prismatic joint, from one; coupled, its
 * multiplier must be nonzero (q = offset would lock the joint, which a coupling cannot say). */
static sd_status check_mimic(const sd_urdf_tree *t, int k)
{
    const sd_urdf_robot *r = t->robot;
    const sd_urdf_joint *j = &r->joints[k];
    const int target = sd_urdf_find_named(t->joint_names, r->njoints, j->mimic);
    const char *why = NULL;
    const sd_urdf_joint *J = target >= 0 ? &r->joints[target] : NULL;
    if (J == NULL) why = "no such joint";
    else if (target == k) why = "a joint cannot mimic itself";
    else if (!one_coordinate(j->hinge))
        why = "only revolute, continuous and prismatic joints can mimic";
    else if (!t->mimic_independent && j->mimic_multiplier == 0.0)
        why = "multiplier 0 would lock the joint; a mimic coupling needs a nonzero multiplier";
    if (why != NULL)
        return fail(t, SD_E_PARSE, j->mimic_line, "joint '%s': <mimic joint=\"%s\">: %s", j->name, j->mimic, why);
    if (!one_coordinate(J->hinge))
        return fail(t, SD_E_PARSE, j->mimic_line,
                    "joint '%s': <mimic joint=\"%s\">: that joint (line %d) is %s%s; a mimic follows a revolute, "
                    "continuous or prismatic joint", j->name, j->mimic, J->line, joint_kind(J),
                    J->hinge == SD_HINGE_FIXED ? " (it has no coordinate: merged into its parent's body, or a "
                                                 "0-dof body)" : "");
    return SD_OK;
}

/* The joint one side of a coupling names: directly, or as the joint that moves the named link. */
static sd_status coupling_joint(const sd_urdf_tree *t, const sd_urdf_coupling *c, int side, int *joint)
{
    const sd_urdf_robot *r = t->robot;
    const int line = c->side_line[side];
    if (c->joint[side] != NULL) {
        *joint = sd_urdf_find_named(t->joint_names, r->njoints, c->joint[side]);
        if (*joint < 0)
            return fail(t, SD_E_PARSE, line, "coupling '%s': <%s joint=\"%s\">: no such joint", c->name,
                        SIDE_NAMES[side], c->joint[side]);
    } else {
        const int link = sd_urdf_find_named(t->link_names, r->nlinks, c->link[side]);
        if (link < 0)
            return fail(t, SD_E_PARSE, line, "coupling '%s': <%s link=\"%s\">: no such link", c->name,
                        SIDE_NAMES[side], c->link[side]);
        *joint = r->links[link].parent_joint;
        if (*joint < 0)
            return fail(t, SD_E_PARSE, line,
                        "coupling '%s': <%s link=\"%s\">: the root link has no joint in the file to couple", c->name,
                        SIDE_NAMES[side], c->link[side]);
    }
    const sd_urdf_joint *J = &r->joints[*joint];
    if (!one_coordinate(J->hinge))
        return fail(t, SD_E_PARSE, line,
                    "coupling '%s': the %s's joint '%s' (line %d) is %s; a coupling needs revolute, continuous or "
                    "prismatic joints", c->name, SIDE_NAMES[side], J->name, J->line, joint_kind(J));
    return SD_OK;
}

static sd_status check_coupling(const sd_urdf_tree *t, const sd_urdf_coupling *c)
{
    int joint[2];
    for (int side = 0; side < 2; ++side) {
        const sd_status st = coupling_joint(t, c, side, &joint[side]);
        if (st != SD_OK) return st;
    }
    if (joint[0] == joint[1])
        return fail(t, SD_E_PARSE, c->line, "coupling '%s': couples joint '%s' to itself", c->name,
                    t->robot->joints[joint[0]].name);
    return SD_OK;
}

static sd_status check_loop(const sd_urdf_tree *t, const sd_urdf_loop *l)
{
    for (int side = 0; side < 2; ++side)
        if (sd_urdf_find_named(t->link_names, t->robot->nlinks, l->link[side]) < 0)
            return fail(t, SD_E_PARSE, l->side_line[side], "loop '%s': <%s link=\"%s\">: no such link", l->name,
                        SIDE_NAMES[side], l->link[side]);
    return SD_OK;
}

/* Names of <loop> and <coupling> elements are unique among them. */
static sd_status check_names(const sd_urdf_tree *t)
{
    const sd_urdf_robot *r = t->robot;
    sd_urdf_named *table = urdfplus_names(r);
    if (table == NULL) return fail(t, SD_E_MEMORY, 0, "out of memory");
    sd_status st = SD_OK;
    for (int i = 1; i < r->nloops + r->ncouplings && st == SD_OK; ++i)
        if (strcmp(table[i - 1].name, table[i].name) == 0)
            st = fail(t, SD_E_PARSE, urdfplus_line(r, table[i].index),
                      "constraint '%s' is defined twice (first at line %d; <loop> and <coupling> names are one "
                      "namespace)", table[i].name, urdfplus_line(r, table[i - 1].index));
    free(table);
    return st;
}

sd_status sd_urdf_check_constraints(const sd_urdf_tree *t)
{
    const sd_urdf_robot *r = t->robot;
    sd_status st = SD_OK;
    for (int k = 0; k < r->njoints && st == SD_OK; ++k)
        if (r->joints[k].mimic != NULL && r->joints[k].hinge != SD_HINGE_FIXED) st = check_mimic(t, k);
    if (st == SD_OK) st = check_names(t);
    for (int i = 0; i < r->nloops && st == SD_OK; ++i) st = check_loop(t, &r->loops[i]);
    for (int i = 0; i < r->ncouplings && st == SD_OK; ++i) st = check_coupling(t, &r->couplings[i]);
    return st;
}

/* ---------------------------------------------------------------- constraints */

/* How the loops builder finds a link: the inertial frame (NULL) for a link carried by no body, the
 * link's name otherwise (a body, or a frame of the body it was merged into). */
static const char *link_as_named(const sd_urdf_tree *t, const char *link)
{
    const int L = sd_urdf_find_named(t->link_names, t->robot->nlinks, link);
    return t->host[L] < 0 ? NULL : link;
}

static sd_status add_loop(const sd_urdf_tree *t, sd_builder *builder, const sd_urdf_loop *l)
{
    sd_constraint_desc d;
    sd_constraint_desc_init(&d);
    d.name = l->name;
    d.type = l->type;
    d.body_a = link_as_named(t, l->link[SD_URDF_PREDECESSOR]);
    d.frame_a = l->origin[SD_URDF_PREDECESSOR];
    d.body_b = link_as_named(t, l->link[SD_URDF_SUCCESSOR]);
    d.frame_b = l->origin[SD_URDF_SUCCESSOR];
    memcpy(d.axis, l->axis, sizeof d.axis);
    d.embed = l->embed;
    d.source_file = t->src;
    d.source_line = l->line;
    return sd_builder_add_constraint(builder, &d, t->err);
}

/* q(successor) = ratio q(predecessor) + offset: loops.h's joint_a is the successor's joint. */
static sd_status add_coupling(const sd_urdf_tree *t, sd_builder *builder, const sd_urdf_coupling *c)
{
    int joint[2];
    for (int side = 0; side < 2; ++side) {
        const sd_status st = coupling_joint(t, c, side, &joint[side]);
        if (st != SD_OK) return st;
    }
    sd_constraint_desc d;
    sd_constraint_desc_init(&d);
    d.name = c->name;
    d.type = SD_CONSTRAINT_COUPLING;
    d.joint_a = t->robot->joints[joint[SD_URDF_SUCCESSOR]].name;
    d.joint_b = t->robot->joints[joint[SD_URDF_PREDECESSOR]].name;
    d.ratio = c->ratio;
    d.offset = c->offset;
    d.embed = c->embed;
    d.source_file = t->src;
    d.source_line = c->line;
    return sd_builder_add_constraint(builder, &d, t->err);
}

/* The name of joint j's mimic coupling: the joint's own, unless a <loop> or <coupling> has it; then
 * "<joint>_mimic", "<joint>_mimic2", ..., the first that neither a URDF+ element nor a joint has
 * (joint names are those of other mimic couplings). A malloc'ed string, NULL when memory runs out. */
static char *mimic_name(const sd_urdf_tree *t, const sd_urdf_named *urdfplus, const sd_urdf_joint *j)
{
    const sd_urdf_robot *r = t->robot;
    const int nplus = r->nloops + r->ncouplings;
    const size_t size = strlen(j->name) + 32;
    char *name = malloc(size);
    if (name == NULL) return NULL;
    snprintf(name, size, "%s", j->name);
    for (int k = 1; sd_urdf_find_named(urdfplus, nplus, name) >= 0 ||
                    (k > 1 && sd_urdf_find_named(t->joint_names, r->njoints, name) >= 0);
         ++k) {
        if (k == 1) snprintf(name, size, "%s_mimic", j->name);
        else snprintf(name, size, "%s_mimic%d", j->name, k);
    }
    return name;
}

static sd_status add_mimic(const sd_urdf_tree *t, sd_builder *builder, const sd_urdf_named *urdfplus,
                           const sd_urdf_joint *j)
{
    char *name = mimic_name(t, urdfplus, j);
    if (name == NULL) return fail(t, SD_E_MEMORY, 0, "out of memory");
    sd_constraint_desc d;
    sd_constraint_desc_init(&d);
    d.name = name;
    d.type = SD_CONSTRAINT_COUPLING;
    d.joint_a = j->name;
    d.joint_b = j->mimic;
    d.ratio = j->mimic_multiplier;
    d.offset = j->mimic_offset;
    d.embed = j->mimic_embed;
    d.source_file = t->src;
    d.source_line = j->mimic_line;
    const sd_status st = sd_builder_add_constraint(builder, &d, t->err);
    free(name);
    return st;
}

sd_status sd_urdf_add_constraints(const sd_urdf_tree *t, sd_builder *builder)
{
    const sd_urdf_robot *r = t->robot;
    sd_status st = SD_OK;
    for (int i = 0; i < r->nloops && st == SD_OK; ++i) st = add_loop(t, builder, &r->loops[i]);
    for (int i = 0; i < r->ncouplings && st == SD_OK; ++i) st = add_coupling(t, builder, &r->couplings[i]);
    if (st != SD_OK || t->mimic_independent) return st;
    sd_urdf_named *urdfplus = urdfplus_names(r);
    if (urdfplus == NULL) return fail(t, SD_E_MEMORY, 0, "out of memory");
    for (int k = 0; k < r->njoints && st == SD_OK; ++k)
        if (r->joints[k].mimic != NULL && r->joints[k].hinge != SD_HINGE_FIXED)
            st = add_mimic(t, builder, urdfplus, &r->joints[k]);
    free(urdfplus);
    return st;
}
