/*
 * cli/cmd_info.c — `soadyn info MODEL`: what a model is made of. The tree is drawn with one line
 * per body in the model's depth-first order, indented by depth; serial-chain segments are the
 * maximal paths whose inner bodies have exactly one child; the mass-matrix sparsity counts the
 * entries (i, j) that may be nonzero, those whose bodies are related as ancestor and descendant
 * (004 Sec 7).
 *
 * The output stays proportional to what it says, whatever the model: a serial chain of more than
 * CHAIN_FOLD_ABOVE bodies is drawn as its first and last two bodies around one line that summarises
 * the bodies between (a 100 000-link chain is a few lines, not the 10 GB that indenting every level
 * would take), the bodies after it are drawn one level below that line, and the indentation stops
 * growing at MAX_INDENT_LEVEL. A line whose indentation is not its depth says "(depth N)".
 * Everything is O(N).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "embed_report.h"
#include <soadyn/flex.h>

#define MAX_INDENT_LEVEL 24 /* deeper bodies are drawn at this indentation, with "(depth N)" */
#define CHAIN_FOLD_ABOVE 20 /* a serial chain of more bodies than this is folded; robots' are shorter */
#define CHAIN_ENDS 2        /* bodies drawn at each end of a folded chain */
#define LABELS_SHOWN 64     /* coordinate or speed labels listed before the rest are counted */
#define LABEL_LINE 96       /* the column a line of labels wraps at */

static const char help[] =
    "usage: soadyn info MODEL [--embed LOOPS] [--independent J,..] [--json] [--floating] [--keep-fixed]\n"
    "                  [--gravity GX,GY,GZ]\n"
    "\n"
    "Describe a model: name, bodies, hinges by type, nq/nv, total mass, the tree, serial-chain\n"
    "segments and the structural sparsity of the mass matrix. Flexible bodies: their modes, nodes,\n"
    "mass model (full or linearised), total mass (rigid part and nodes), the bodies riding on their\n"
    "nodes, each body's natural frequencies with every hinge locked (its riders riding), and the\n"
    "model's system modes: all flexible bodies together, every hinge locked but free joints (a\n"
    "free-flying structure vibrates free-free), each with the body holding most of its kinetic\n"
    "energy and that share;\n"
    "in Hz and rad/s, at the reference configuration.\n"
    "\n"
    "The tree has one line per body, indented by depth. A serial chain of more than 20 bodies shows\n"
    "its first and last two bodies and one line for those between (\"- a .. b  (N bodies in a\n"
    "chain: ...)\"); indentation stops growing at 24 levels. A line indented less than its depth\n"
    "ends with \"(depth N)\".\n"
    "\n"
    "Coordinates and speeds: their names in order, as `soadyn eval --q/--u NAME=VALUE` takes them\n"
    "(a several-dof joint's components: base.x .. base.qw, ball.wx, ..); past 64 the rest are counted\n"
    "(--json lists all).\n"
    "\n"
    "Closure constraints: each one's kind and bodies, the rank of G and the mobility at the reference\n"
    "configuration, and the embedding: which constraints are embedded into aggregate nodes and which\n"
    "tree-augmented, and per aggregate its constraints, bodies, parent body, and its independent and\n"
    "dependent speeds (the split, with cond(Y1) at the reference configuration).\n"
    "\n"
    "options:\n"
    CLI_EMBED_HELP
    "  --json         one JSON object: the summary, the constraints and the embedding (not the tree)\n"
    "  --floating     attach the root link with a free (6-dof) hinge\n"
    "  --keep-fixed   keep fixed joints as 0-dof bodies instead of merging them\n"
    CLI_GRAVITY_HELP
    "  --help         this text\n";

/* Per body: the number of children and the depth (1 for a child of the world); parent-first order
 * makes both one pass. In depth-first order the only child of body k, if it has one, is k + 1.
 * level: the indentation level a body is drawn at (its depth less the chains folded above it). */
typedef struct tree_shape {
    int *nchild, *depth, *level;
} tree_shape;

static int shape_init(tree_shape *t, const sd_model *m)
{
    const size_t n = (size_t)sd_model_nbodies(m);
    t->nchild = calloc(n > 0 ? n : 1, sizeof(int));
    t->depth = calloc(n > 0 ? n : 1, sizeof(int));
    t->level = calloc(n > 0 ? n : 1, sizeof(int));
    if (!t->nchild || !t->depth || !t->level) return 0;
    for (int k = 0; k < (int)n; ++k) {
        const int p = sd_model_parent(m, k);
        t->depth[k] = p < 0 ? 1 : t->depth[p] + 1;
        if (p >= 0) ++t->nchild[p];
    }
    return 1;
}

static void shape_free(tree_shape *t)
{
    free(t->nchild);
    free(t->depth);
    free(t->level);
}

/* The last body of the serial path from k: follow only children while there is exactly one. */
static int chain_end(const tree_shape *t, int k)
{
    while (t->nchild[k] == 1) ++k;
    return k;
}

/* Body k is drawn one level below its parent (which was drawn, or folded into a chain's line). */
static void set_level(tree_shape *t, const sd_model *m, int k)
{
    const int p = sd_model_parent(m, k);
    t->level[k] = p < 0 ? 1 : t->level[p] + 1;
}

static void indent(int level)
{
    cli_printf("%*s", 2 * (level < MAX_INDENT_LEVEL ? level : MAX_INDENT_LEVEL), "");
}

static void end_line(const tree_shape *t, int k)
{
    if (t->level[k] != t->depth[k] || t->level[k] > MAX_INDENT_LEVEL) cli_printf("  (depth %d)", t->depth[k]);
    cli_printf("\n");
}

static void print_body(const sd_model *m, tree_shape *t, int k)
{
    set_level(t, m, k);
    indent(t->level[k]);
    cli_printf("- %s  [%s %s, %d dof, %.6g kg]", sd_model_body_name(m, k), sd_hinge_type_name(sd_model_hinge(m, k)),
               sd_model_joint_name(m, k), sd_model_hinge_nv(m, k), sd_model_body_total_mass(m, k)); /* nodes too */
    end_line(t, k);
}

/* One line for the bodies first .. last of a chain: how many, their hinges by type, dof and mass.
 * They share the line's level, so the body after the chain is drawn one level below it. */
static void print_chain_summary(const sd_model *m, tree_shape *t, int first, int last)
{
    int by_type[SD_HINGE_TYPE_COUNT] = {0}, dof = 0;
    double mass = 0.0;
    set_level(t, m, first);
    for (int k = first; k <= last; ++k) {
        ++by_type[sd_model_hinge(m, k)];
        dof += sd_model_hinge_nv(m, k);
        mass += sd_model_body_total_mass(m, k);
        t->level[k] = t->level[first];
    }
    indent(t->level[first]);
    cli_printf("- %s .. %s  (%d bodies in a chain:", sd_model_body_name(m, first), sd_model_body_name(m, last),
               last - first + 1);
    for (int h = 0; h < SD_HINGE_TYPE_COUNT; ++h)
        if (by_type[h]) cli_printf(" %d %s,", by_type[h], sd_hinge_type_name((sd_hinge_type)h));
    cli_printf(" %d dof, %.6g kg)", dof, mass);
    end_line(t, first);
}

static void print_tree(const sd_model *m, tree_shape *t)
{
    const int n = sd_model_nbodies(m);
    cli_printf("tree:\n  (world)\n");
    for (int k = 0; k < n && !cli_output_failed();) {
        const int last = chain_end(t, k);
        if (last - k + 1 <= CHAIN_FOLD_ABOVE) { /* short: every body */
            print_body(m, t, k++);
            continue;
        }
        for (int j = 0; j < CHAIN_ENDS; ++j) print_body(m, t, k + j);
        print_chain_summary(m, t, k + CHAIN_ENDS, last - CHAIN_ENDS);
        for (int j = CHAIN_ENDS - 1; j >= 0; --j) print_body(m, t, last - j);
        k = last + 1; /* depth-first: the next body is the first child of `last`, or a later branch */
    }
}

/* A segment starts at a body whose parent is the world or branches (not exactly one child). */
static void print_segments(const sd_model *m, const tree_shape *t)
{
    const int n = sd_model_nbodies(m);
    int count = 0;
    cli_printf("serial-chain segments:\n");
    for (int k = 0; k < n && !cli_output_failed(); ++k) {
        const int p = sd_model_parent(m, k);
        if (p >= 0 && t->nchild[p] == 1) continue; /* k continues its parent's segment */
        const int last = chain_end(t, k), len = last - k + 1;
        cli_printf("  %d: %s .. %s (%d bod%s)\n", ++count, sd_model_body_name(m, k), sd_model_body_name(m, last),
                   len, len == 1 ? "y" : "ies");
    }
}

typedef int (*label_fn)(const sd_model *m, int i, char *buf, size_t size);

/* "title (count):" then the labels, space-separated and wrapped at LABEL_LINE columns; past
 * LABELS_SHOWN the rest are counted, so the output stays proportional to what it says. */
static void print_labels(const sd_model *m, const char *title, int count, label_fn label)
{
    char buf[256];
    int column = cli_printf("%s (%d):", title, count);
    const int shown = count <= LABELS_SHOWN ? count : LABELS_SHOWN;
    for (int i = 0; i <= shown && !cli_output_failed(); ++i) {
        if (i < shown) label(m, i, buf, sizeof buf);
        else if (shown < count) snprintf(buf, sizeof buf, "(%d more: --json lists all)", count - shown);
        else break;
        if (column > 2 && column + 1 + (int)strlen(buf) > LABEL_LINE) {
            cli_printf("\n ");
            column = 1;
        }
        column += cli_printf(" %s", buf);
    }
    cli_printf("\n");
}

/* The same labels as a JSON array of strings. */
static void json_labels(json_writer *w, const char *key, const sd_model *m, int count, label_fn label)
{
    char buf[256];
    jw_begin_array(w, key);
    for (int i = 0; i < count; ++i) {
        label(m, i, buf, sizeof buf);
        jw_string(w, NULL, buf);
    }
    jw_end_array(w);
}

/* Structurally nonzero entries of M: the blocks (a, b) with a = b or one an ancestor of the other,
 * nv(a) nv(b) entries each. Summed over b's ancestors a once each (and doubled for the transposed
 * block): nz = sum_b nv(b) (nv(b) + 2 sum_{a ancestor of b} nv(a)). */
static long long sparsity_nonzeros(const sd_model *m)
{
    const int n = sd_model_nbodies(m);
    long long *above = calloc((size_t)(n > 0 ? n : 1), sizeof(long long)); /* dof of the strict ancestors */
    if (!above) return -1;
    long long nz = 0;
    for (int b = 0; b < n; ++b) {
        const int p = sd_model_parent(m, b);
        const long long nv_b = sd_model_hinge_nv(m, b) + sd_model_body_nmodes(m, b); /* a flexible body's modes too */
        above[b] = p < 0 ? 0 : above[p] + sd_model_hinge_nv(m, p) + sd_model_body_nmodes(m, p);
        nz += nv_b * (nv_b + 2 * above[b]);
    }
    free(above);
    return nz;
}

/* The closure constraints (loops.h): name, kind, the bodies (or joints) tied, rows; the total rows,
 * and the rank of G and the mobility at the reference configuration (sd_configuration_reference). */
static int print_constraints(const sd_model *m)
{
    const int nc = sd_model_nconstraints(m);
    if (nc == 0) return CLI_OK;
    cli_printf("constraints: %d (%d rows)\n", nc, sd_model_nconstraint_rows(m));
    for (int c = 0; c < nc; ++c) {
        int a = -1, b = -1;
        sd_model_constraint_bodies(m, c, &a, &b);
        const sd_constraint_type type = sd_model_constraint_type(m, c);
        cli_printf("  - %s  [%s, %d rows] %s %s -> %s\n", sd_model_constraint_name(m, c), sd_constraint_type_name(type),
                   sd_model_constraint_nrows(m, c), type == SD_CONSTRAINT_COUPLING ? "hinges of" : "between",
                   a < 0 ? "(world)" : sd_model_body_name(m, a), b < 0 ? "(world)" : sd_model_body_name(m, b));
    }
    sd_data *d = sd_data_new(m);
    double *q = malloc(sizeof(double) * (size_t)(sd_model_nq(m) + 1));
    int rank = -1, mobility = -1;
    sd_status st = d && q ? SD_OK : SD_E_MEMORY;
    if (st == SD_OK) {
        sd_configuration_reference(m, q);
        st = sd_constraint_rank(m, d, q, &rank, &mobility);
    }
    if (st == SD_OK)
        cli_printf("rank of G:   %d of %d rows at the reference configuration; mobility %d\n", rank,
                   sd_model_nconstraint_rows(m), mobility);
    else
        fprintf(stderr, "soadyn info: rank of the constraints: %s\n", d ? sd_data_error(d) : "out of memory");
    free(q);
    sd_data_free(d);
    return st == SD_OK ? CLI_OK : CLI_FAILURE;
}

/* The joints with an armature, damping or a spring (dynamics.h, joint-level dynamics), one line
 * each: what is zero is left out. Nothing when no joint has any. */
static void print_joint_dynamics(const sd_model *m)
{
    int count = 0;
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const sd_body_desc *d = sd_model_body_desc(m, k);
        count += sd_model_hinge_nv(m, k) > 0 && (d->armature > 0 || d->damping > 0 || d->stiffness > 0);
    }
    if (count == 0) return;
    cli_printf("joint dynamics: %d joint%s with armature, damping or a spring\n", count, count == 1 ? "" : "s");
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        const sd_body_desc *d = sd_model_body_desc(m, k);
        if (sd_model_hinge_nv(m, k) == 0 || !(d->armature > 0 || d->damping > 0 || d->stiffness > 0)) continue;
        const char *sep = "";
        cli_printf("  %s:", sd_model_joint_name(m, k));
        if (d->armature > 0) {
            cli_printf(" armature %.6g", d->armature);
            sep = ",";
        }
        if (d->damping > 0) {
            cli_printf("%s damping %.6g", sep, d->damping);
            sep = ",";
        }
        if (d->stiffness > 0) {
            cli_printf("%s stiffness %.6g", sep, d->stiffness);
            if (sd_model_hinge(m, k) != SD_HINGE_SPHERICAL) cli_printf(" (rest at %.6g)", d->spring_ref);
        }
        cli_printf("\n");
    }
}

static const double TWO_PI = 2.0 * 3.14159265358979323846;

/* The model's system modes (flex.h sd_model_system_frequencies), each with its body. */
static int print_system_modes(const sd_model *m)
{
    const int ns = sd_model_nsystem_modes(m);
    double *omega = malloc(sizeof(double) * (size_t)(ns > 0 ? ns : 1));
    int *body = malloc(sizeof(int) * (size_t)(ns > 0 ? ns : 1));
    double *share = malloc(sizeof(double) * (size_t)(ns > 0 ? ns : 1));
    sd_error err = {0};
    int rc = CLI_OK;
    if (!omega || !body || !share) {
        fprintf(stderr, "soadyn info: out of memory (%d system modes)\n", ns);
        rc = CLI_FAILURE;
    } else if (sd_model_system_frequencies(m, NULL, omega, body, share, &err) != SD_OK) {
        fprintf(stderr, "soadyn info: system modes: %s\n", err.message);
        rc = CLI_FAILURE;
    } else {
        cli_printf("system modes (every hinge locked, free joints free): %d\n", ns);
        for (int r = 0; r < ns; ++r)
            cli_printf("  system mode %d: %.6g Hz, %.6g rad/s (%s: %.0f%% of its energy)\n", r + 1, omega[r] / TWO_PI,
                       omega[r], body[r] >= 0 ? sd_model_body_name(m, body[r]) : "?", 100.0 * share[r]);
    }
    free(omega);
    free(body);
    free(share);
    return rc;
}

/* The flexible bodies (flex.h): modes, nodes, mass model, total mass, the children riding on their
 * nodes, each body's natural frequencies with every hinge locked (its riders riding); then the
 * model's system modes. */
static int print_flexible(const sd_model *m)
{
    const int n = sd_model_nbodies(m), nflex = sd_model_nflexible(m);
    if (nflex == 0) return CLI_OK;
    cli_printf("flexible bodies: %d\n", nflex);
    int rc = CLI_OK;
    for (int k = 0; k < n && rc == CLI_OK; ++k) {
        const int nm = sd_model_body_nmodes(m, k), nn = sd_model_body_nnodes(m, k);
        if (nn <= 0) continue;
        const double total = sd_model_body_total_mass(m, k), rigid = sd_model_body_mass(m, k);
        cli_printf("  - %s: %d mode%s, %d nodes, %s mass model, modal coordinates q[%d..%d]\n",
                   sd_model_body_name(m, k), nm, nm == 1 ? "" : "s", nn,
                   sd_model_flex_mass_model(m, k) == SD_FLEX_FULL ? "full" : "linearised", sd_model_mode_q_index(m, k),
                   sd_model_mode_q_index(m, k) + nm - 1);
        cli_printf("      total mass %.6g kg (rigid part %.6g kg, nodes %.6g kg)\n", total, rigid, total - rigid);
        for (int c = k + 1; c < n; ++c)
            if (sd_model_parent(m, c) == k && sd_model_parent_node(m, c) >= 0)
                cli_printf("      %s (joint %s) rides on node %d\n", sd_model_body_name(m, c), sd_model_joint_name(m, c),
                           sd_model_parent_node(m, c));
        double *omega = malloc(sizeof(double) * (size_t)(nm > 0 ? nm : 1));
        sd_error err = {0};
        if (!omega) {
            fprintf(stderr, "soadyn info: out of memory (%d modes)\n", nm);
            rc = CLI_FAILURE;
        } else if (nm > 0 && sd_model_flex_frequencies(m, k, omega, &err) != SD_OK) {
            fprintf(stderr, "soadyn info: frequencies of %s: %s\n", sd_model_body_name(m, k), err.message);
            rc = CLI_FAILURE;
        } else {
            for (int r = 0; r < nm; ++r)
                cli_printf("      mode %d (%s.eta%d): %.6g Hz, %.6g rad/s\n", r + 1, sd_model_body_name(m, k), r + 1,
                           omega[r] / TWO_PI, omega[r]);
        }
        free(omega);
    }
    return rc == CLI_OK ? print_system_modes(m) : rc;
}

static int print_info(const sd_model *m, const sd_embedding *e, const double *q_ref)
{
    const int n = sd_model_nbodies(m);
    tree_shape t;
    const long long nz = sparsity_nonzeros(m);
    if (!shape_init(&t, m) || nz < 0) {
        shape_free(&t);
        fprintf(stderr, "soadyn info: out of memory (%d bodies)\n", n);
        return CLI_FAILURE;
    }
    int by_type[SD_HINGE_TYPE_COUNT] = {0};
    for (int k = 0; k < n; ++k) ++by_type[sd_model_hinge(m, k)];
    double g[3];
    sd_model_gravity(m, g);
    cli_printf("model:       %s\n", sd_model_name(m));
    cli_printf("bodies:      %d\n", n);
    cli_printf("hinges:     ");
    for (int h = 0; h < SD_HINGE_TYPE_COUNT; ++h)
        if (by_type[h]) cli_printf(" %d %s", by_type[h], sd_hinge_type_name((sd_hinge_type)h));
    cli_printf("\n");
    cli_printf("nq, nv:      %d, %d\n", sd_model_nq(m), sd_model_nv(m));
    cli_printf("total mass:  %.6g kg\n", sd_model_total_mass(m));
    cli_printf("gravity:     %g %g %g m/s^2\n", g[0], g[1], g[2]);
    cli_printf("frames:      %d\n", sd_model_nframes(m));
    if (print_constraints(m) != CLI_OK || cli_embed_print_text("info", m, e, q_ref) != CLI_OK) {
        shape_free(&t);
        return CLI_FAILURE;
    }
    print_tree(m, &t);
    print_segments(m, &t);
    print_labels(m, "coordinates q", sd_model_nq(m), sd_coordinate_label);
    print_labels(m, "speeds u", sd_model_nv(m), sd_speed_label);
    if (print_flexible(m) != CLI_OK) {
        shape_free(&t);
        return CLI_FAILURE;
    }
    print_joint_dynamics(m);
    const double nv = sd_model_nv(m);
    cli_printf("mass matrix: %d x %d, %lld structurally nonzero entries (%.1f%%)\n", sd_model_nv(m), sd_model_nv(m),
               nz, nv > 0 ? 100.0 * (double)nz / (nv * nv) : 0.0);
    shape_free(&t);
    return CLI_OK;
}

/* The summary, the constraints and the embedding as one JSON object (the tree is left out: it is
 * the model file's, and as long as the model). */
static int print_json(const sd_model *m, const sd_embedding *e, const double *q_ref)
{
    const int n = sd_model_nbodies(m), nc = sd_model_nconstraints(m);
    int by_type[SD_HINGE_TYPE_COUNT] = {0};
    for (int k = 0; k < n; ++k) ++by_type[sd_model_hinge(m, k)];
    double g[3];
    sd_model_gravity(m, g);
    json_writer w;
    jw_init(&w);
    jw_begin_object(&w, NULL);
    jw_string(&w, "model", sd_model_name(m));
    jw_int(&w, "bodies", n);
    jw_begin_object(&w, "hinges");
    for (int h = 0; h < SD_HINGE_TYPE_COUNT; ++h)
        if (by_type[h]) jw_int(&w, sd_hinge_type_name((sd_hinge_type)h), by_type[h]);
    jw_end_object(&w);
    jw_int(&w, "nq", sd_model_nq(m));
    jw_int(&w, "nv", sd_model_nv(m));
    jw_number(&w, "total_mass", sd_model_total_mass(m));
    jw_numbers(&w, "gravity", g, 3);
    jw_int(&w, "flexible_bodies", sd_model_nflexible(m));
    json_labels(&w, "coordinates", m, sd_model_nq(m), sd_coordinate_label);
    json_labels(&w, "speeds", m, sd_model_nv(m), sd_speed_label);
    jw_begin_array(&w, "constraints");
    for (int c = 0; c < nc; ++c) {
        int a = -1, b = -1;
        sd_model_constraint_bodies(m, c, &a, &b);
        jw_begin_object(&w, NULL);
        jw_string(&w, "name", sd_model_constraint_name(m, c));
        jw_string(&w, "type", sd_constraint_type_name(sd_model_constraint_type(m, c)));
        jw_int(&w, "rows", sd_model_constraint_nrows(m, c));
        if (a < 0) jw_null(&w, "body_a");
        else jw_string(&w, "body_a", sd_model_body_name(m, a));
        if (b < 0) jw_null(&w, "body_b");
        else jw_string(&w, "body_b", sd_model_body_name(m, b));
        jw_bool(&w, "embedded_in_file", sd_model_constraint_embed(m, c) == 1);
        jw_bool(&w, "embedded", e && sd_embedding_constraint_embedded(e, c) == 1);
        jw_end_object(&w);
    }
    jw_end_array(&w);
    cli_embed_json(&w, m, e, q_ref);
    jw_end_object(&w);
    const int rc = cli_json_emit("info", &w);
    jw_free(&w);
    return rc;
}

/* The reference configuration, closed when the model has loops (the embedding's split and cond(Y1)
 * are taken there). Returns NULL when out of memory; *closed says whether the loops close. */
static double *reference_configuration(const sd_model *m, int *closed)
{
    double *q = malloc(sizeof(double) * (size_t)(sd_model_nq(m) + 1));
    *closed = 0;
    if (!q) return NULL;
    sd_configuration_reference(m, q);
    if (sd_model_nconstraints(m) == 0) return q;
    sd_data *d = sd_data_new(m);
    *closed = d && sd_assemble_configuration(m, d, q, NULL, 1e-12, 100, q, NULL) == SD_OK;
    sd_data_free(d);
    return q;
}

int cmd_info(int argc, char **argv)
{
    int floating = 0, keep_fixed = 0, json = 0;
    const char *gravity = NULL;
    cli_embed_args ea = {0};
    const cli_option options[] = {{"floating", 0, NULL, &floating}, {"keep-fixed", 0, NULL, &keep_fixed},
                                  {"gravity", 1, &gravity, NULL},
                                  {"json", 0, NULL, &json}, CLI_EMBED_OPTIONS(ea), {NULL, 0, NULL, NULL}};
    const char *path;
    int rc = cli_parse("info", argc, argv, options, help, &path);
    if (rc >= 0) return rc;
    sd_model *model;
    rc = cli_load_model("info", path, floating, keep_fixed, gravity, &model);
    if (rc != CLI_OK) return rc;
    int closed = 0;
    double *q_ref = reference_configuration(model, &closed);
    sd_embedding *e = NULL;
    if (!q_ref) {
        fprintf(stderr, "soadyn info: out of memory\n");
        rc = CLI_FAILURE;
    }
    if (rc == CLI_OK) rc = cli_embedding("info", model, &ea, closed ? q_ref : NULL, &e);
    if (rc == CLI_OK) rc = json ? print_json(model, e, closed ? q_ref : NULL) : print_info(model, e, closed ? q_ref : NULL);
    if (e) sd_embedding_free(e);
    free(q_ref);
    sd_model_free(model);
    return rc;
}
