/*
 * cli/cmd_codegen.c — `soadyn codegen MODEL`: write the model's generated C (soadyn/codegen.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: soadyn codegen MODEL [--algorithms id,m,fd,minv,forces] [--lanes 4|8|4,8] [-o DIR]\n"
    "                     [--name NAME] [--floating] [--keep-fixed] [--gravity GX,GY,GZ]\n"
    "\n"
    "Write DIR/NAME.c and DIR/NAME.h: dependency-free C99 (libm only) with straight-line code for\n"
    "this model, its constants folded in, no loop over bodies and no branch on hinge types.\n"
    "Functions (each as the library's, same arguments, sd_status return values):\n"
    "  NAME_inverse_dynamics(q, u, qdd, f_ext, tau)   id\n"
    "  NAME_mass_matrix(q, M)                         m\n"
    "  NAME_forward_dynamics(q, u, tau, f_ext, qdd)   fd   (articulated bodies)\n"
    "  NAME_mass_matrix_inverse(q, Minv)              minv\n"
    "  NAME_interbody_forces(q, u, qdd, f_ext, f)     forces (body frame, 6 per body)\n"
    "Build it with e.g. `cc -std=c99 -O2 -c NAME.c`. Rigid-body trees of at most 256 bodies; flexible\n"
    "bodies and closure constraints are refused. Each file is written as NAME.c.partial and renamed\n"
    "when complete.\n"
    "\n"
    "options:\n"
    "  --algorithms LIST  which functions (default: all)\n"
    "  --lanes 4|8|4,8    also NAME_fn_x4 / NAME_fn_x8: 4 or 8 states per call, arrays lane-minor\n"
    "                     (entry i of state l at [i * L + l]), a status per lane, each lane the\n"
    "                     single-state result bit for bit (GCC/Clang vector extensions; build\n"
    "                     with -ffp-contract=off, as -std=c99 does, never -ffast-math)\n"
    "  -o, --output DIR   the directory written to (default: .)\n"
    "  --name NAME        the files' name and the functions' prefix, a C identifier (default:\n"
    "                     the model's name made one)\n"
    "  --floating         attach the root link with a free (6-dof) hinge\n"
    "  --keep-fixed       keep fixed joints as 0-dof bodies instead of merging them\n" CLI_GRAVITY_HELP
    "  --help             this text\n";

/* The model's name as a C identifier: other characters become '_', a leading digit gets one. */
static void default_name(const sd_model *m, char *out, size_t size)
{
    const char *s = sd_model_name(m);
    size_t j = 0;
    if (!s || !*s) s = "model";
    if (*s >= '0' && *s <= '9') out[j++] = '_';
    for (; *s && j + 1 < size; ++s) {
        const char c = *s;
        out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
    }
    out[j] = '\0';
}

int cmd_codegen(int argc, char **argv)
{
    int floating = 0, keep_fixed = 0;
    const char *gravity = NULL, *algorithms = NULL, *dir = NULL, *name = NULL, *lanes = NULL;
    /* -o is the short form of --output: rewrite it before the common parser sees it */
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "-o") == 0) argv[i] = (char *)"--output";
    const cli_option options[] = {{"floating", 0, NULL, &floating},  {"keep-fixed", 0, NULL, &keep_fixed},
                                  {"gravity", 1, &gravity, NULL},    {"algorithms", 1, &algorithms, NULL},
                                  {"output", 1, &dir, NULL},         {"name", 1, &name, NULL},
                                  {"lanes", 1, &lanes, NULL},        {NULL, 0, NULL, NULL}};
    const char *path;
    int rc = cli_parse("codegen", argc, argv, options, help, &path);
    if (rc >= 0) return rc;
    sd_codegen_options o = {0};
    if (lanes) {
        if (!strcmp(lanes, "4")) o.lanes = SD_CODEGEN_LANES_4;
        else if (!strcmp(lanes, "8")) o.lanes = SD_CODEGEN_LANES_8;
        else if (!strcmp(lanes, "4,8") || !strcmp(lanes, "8,4")) o.lanes = SD_CODEGEN_LANES_4 | SD_CODEGEN_LANES_8;
        else {
            fprintf(stderr, "soadyn codegen: --lanes '%s': 4, 8 or 4,8\n", lanes);
            return CLI_USAGE;
        }
    }
    sd_error err;
    if (algorithms && sd_codegen_parse_algorithms(algorithms, &o.algorithms, &err) != SD_OK) {
        fprintf(stderr, "soadyn codegen: %s\n", err.message);
        return CLI_USAGE;
    }
    sd_model *model;
    rc = cli_load_model("codegen", path, floating, keep_fixed, gravity, &model);
    if (rc != CLI_OK) return rc;
    char buf[128];
    if (!name) {
        default_name(model, buf, sizeof buf);
        name = buf;
    }
    const sd_status st = sd_codegen_write(model, &o, dir ? dir : ".", name, &err);
    if (st != SD_OK) {
        fprintf(stderr, "soadyn codegen: %s\n", err.message);
        rc = st == SD_E_ARGUMENT ? CLI_USAGE : st == SD_E_NOT_SUPPORTED ? CLI_MODEL : CLI_FAILURE;
    } else {
        cli_printf("wrote %s/%s.c and %s/%s.h\n", dir ? dir : ".", name, dir ? dir : ".", name);
    }
    sd_model_free(model);
    return rc;
}
