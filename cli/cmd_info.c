/*
 * cli/cmd_info.c — `soadyn info MODEL`: what a model is made of. The tree is drawn with one line
 * per body, indented by depth; serial-chain segments are the maximal paths whose inner bodies have
 * exactly one child; the mass-matrix sparsity counts the entries (i, j) that may be nonzero, those
 * whose bodies are related as ancestor and descendant (004 Sec 7).
 */
#include <stdlib.h>

#include "cli.h"

static const char help[] =
    "usage: soadyn info MODEL [--floating] [--keep-fixed]\n"
    "\n"
    "Describe a model: name, bodies, hinges by type, nq/nv, total mass, the tree, serial-chain\n"
    "segments and the structural sparsity of the mass matrix.\n"
    "\n"
    "options:\n"
    "  --floating     attach the root link with a free (6-dof) hinge\n"
    "  --keep-fixed   keep fixed joints as 0-dof bodies instead of merging them\n"
    "  --help         this text\n";

static int nchildren(const sd_model *m, int k)
{
    int c = 0;
    for (int j = k + 1; j < sd_model_nbodies(m); ++j) c += sd_model_parent(m, j) == k;
    return c;
}

static void print_tree(const sd_model *m)
{
    const int n = sd_model_nbodies(m);
    int *depth = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (!depth) return;
    printf("tree:\n  (world)\n");
    for (int k = 0; k < n; ++k) { /* parent-first: the parent's depth is known */
        const int p = sd_model_parent(m, k);
        depth[k] = p < 0 ? 1 : depth[p] + 1;
        printf("%*s- %s  [%s %s, %d dof, %.6g kg]\n", 2 * depth[k], "", sd_model_body_name(m, k),
               sd_hinge_type_name(sd_model_hinge(m, k)), sd_model_joint_name(m, k), sd_model_hinge_nv(m, k),
               sd_model_body_mass(m, k));
    }
    free(depth);
}

/* A segment starts at a body whose parent is the world or branches (not exactly one child). */
static void print_segments(const sd_model *m)
{
    const int n = sd_model_nbodies(m);
    int count = 0;
    printf("serial-chain segments:\n");
    for (int k = 0; k < n; ++k) {
        const int p = sd_model_parent(m, k);
        if (p >= 0 && nchildren(m, p) == 1) continue; /* k continues its parent's segment */
        int len = 1, last = k;
        while (nchildren(m, last) == 1) {
            int c = last + 1;
            while (sd_model_parent(m, c) != last) ++c;
            last = c;
            ++len;
        }
        printf("  %d: %s .. %s (%d bod%s)\n", ++count, sd_model_body_name(m, k), sd_model_body_name(m, last),
               len, len == 1 ? "y" : "ies");
    }
}

/* Fraction of the nv x nv entries of M that are structurally nonzero. */
static double sparsity(const sd_model *m, long *nonzero)
{
    const int n = sd_model_nbodies(m);
    const long nv = sd_model_nv(m);
    long nz = 0;
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
            if (sd_model_is_ancestor(m, a, b) || sd_model_is_ancestor(m, b, a))
                nz += (long)sd_model_hinge_nv(m, a) * sd_model_hinge_nv(m, b);
    *nonzero = nz;
    return nv > 0 ? (double)nz / (double)(nv * nv) : 0.0;
}

static void print_info(const sd_model *m)
{
    const int n = sd_model_nbodies(m);
    int by_type[SD_HINGE_TYPE_COUNT] = {0};
    for (int k = 0; k < n; ++k) ++by_type[sd_model_hinge(m, k)];
    double g[3];
    sd_model_gravity(m, g);
    printf("model:       %s\n", sd_model_name(m));
    printf("bodies:      %d\n", n);
    printf("hinges:     ");
    for (int t = 0; t < SD_HINGE_TYPE_COUNT; ++t)
        if (by_type[t]) printf(" %d %s", by_type[t], sd_hinge_type_name((sd_hinge_type)t));
    printf("\n");
    printf("nq, nv:      %d, %d\n", sd_model_nq(m), sd_model_nv(m));
    printf("total mass:  %.6g kg\n", sd_model_total_mass(m));
    printf("gravity:     %g %g %g m/s^2\n", g[0], g[1], g[2]);
    printf("frames:      %d\n", sd_model_nframes(m));
    print_tree(m);
    print_segments(m);
    long nz;
    const double frac = sparsity(m, &nz);
    printf("mass matrix: %d x %d, %ld structurally nonzero entries (%.1f%%)\n", sd_model_nv(m), sd_model_nv(m),
           nz, 100.0 * frac);
}

int cmd_info(int argc, char **argv)
{
    int floating = 0, keep_fixed = 0;
    const cli_option options[] = {
        {"floating", 0, NULL, &floating}, {"keep-fixed", 0, NULL, &keep_fixed}, {NULL, 0, NULL, NULL}};
    const char *path;
    int rc = cli_parse("info", argc, argv, options, help, &path);
    if (rc >= 0) return rc;
    sd_model *model;
    rc = cli_load_model(path, floating, keep_fixed, &model);
    if (rc != CLI_OK) return rc;
    print_info(model);
    sd_model_free(model);
    return CLI_OK;
}
