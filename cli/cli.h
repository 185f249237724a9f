/*
 * cli/cli.h — what the files of the `soadyn` command share: exit statuses, the subcommands, option
 * parsing, value lists, model loading.
 *
 * Exit status: 0 success; 1 usage error (bad option or value); 2 model error (file unreadable,
 * malformed or invalid); 3 run-time failure (a solver failed, an output file could not be written);
 * 128 + signal number when `simulate` was interrupted (130 SIGINT, 143 SIGTERM). Every status other
 * than 0 comes with a message on stderr; a lost write to stdout is a run-time failure (3).
 */
#ifndef SOADYN_CLI_H
#define SOADYN_CLI_H

#include <stdio.h>

#include <soadyn/soadyn.h>

enum { CLI_OK = 0, CLI_USAGE = 1, CLI_MODEL = 2, CLI_FAILURE = 3 };

/* Largest nv for which eval and bench form dense nv x nv matrices (M, M^-1, the Cholesky reference:
 * 128 MiB each, as the library's dense path); beyond it those results are left out with a note. */
enum { CLI_DENSE_MAX_NV = 4096 };

int cmd_info(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_campaign(int argc, char **argv);
int cmd_codegen(int argc, char **argv);

/* ---------------------------------------------------------------- options (args.c) */

/* One option of a subcommand: "--name" alone (flag) or "--name VALUE" / "--name=VALUE". */
typedef struct cli_option {
    const char *name;   /* without the dashes */
    int takes_value;
    const char **value; /* where a value goes (takes_value) */
    int *flag;          /* set to 1 when present (flags) */
} cli_option;

/* Parse argv[1..] of subcommand `cmd`: options from the table, at most one positional argument (the
 * model) into *positional. Returns -1 to go on, or an exit status: CLI_OK after printing `help` for
 * --help / -h, CLI_USAGE after an error message on stderr. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_option *options, const char *help,
              const char **positional);
/* A strict number: the whole text must be a finite double. Returns 0 on success. */
int cli_parse_double(const char *text, double *out);
int cli_parse_long(const char *text, long *out);

/* Which labels a value list is matched against. */
typedef enum cli_list_kind { CLI_LIST_Q, CLI_LIST_V } cli_list_kind;

/* Fill out (nq or nv entries, already holding defaults) from `text`: a full comma list of every value
 * ("0.1,0.2,...") or name=value pairs ("shoulder=0.3,elbow=-1.2") matched against the coordinate or
 * speed labels (sd_coordinate_label / sd_speed_label; a bare joint name of a several-dof hinge sets all
 * its entries). If `given` is not NULL the entries set are flagged there. Returns 0, or 1 after an
 * error on stderr naming the option and every unknown name. */
int cli_parse_values(const sd_model *model, const char *option, const char *text, cli_list_kind kind,
                     double *out, unsigned char *given);
/* The label of coordinate (CLI_LIST_Q) or speed (CLI_LIST_V) i, as long as the joint name makes it;
 * the caller frees it. NULL when out of memory. */
char *cli_label(const sd_model *model, cli_list_kind kind, int i);

/* ---------------------------------------------------------------- the viewer's meshes (cmd_view.c) */

struct sd_view_options;
/* What a page's mesh reports need: the command's name and how many were told. */
typedef struct cli_view_meshes {
    const char *command;
    char *path; /* the mesh path given to the library (owned) */
    int told, more;
} cli_view_meshes;
/* Where the page's meshes are looked for beyond the model's folder: `mesh_path` (--mesh-path, may be
 * NULL) then $ROS_PACKAGE_PATH, ':'-separated, into vo->mesh_path; and each mesh not drawn reported
 * on stderr as "soadyn COMMAND: warning: ..." (the first CLI_VIEW_MESH_WARNINGS of them; the rest
 * counted by cli_view_meshes_done). CLI_OK, or CLI_FAILURE out of memory (said on stderr). */
enum { CLI_VIEW_MESH_WARNINGS = 10 };
int cli_view_meshes_begin(struct sd_view_options *vo, cli_view_meshes *state, const char *command, const char *mesh_path);
/* After the page is written: say how many more were not drawn, and free the path. */
void cli_view_meshes_done(cli_view_meshes *state);

/* ---------------------------------------------------------------- standard output (output.c) */

#if defined(__GNUC__) || defined(__clang__)
#define CLI_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CLI_PRINTF_LIKE(fmt, args)
#endif

/* Everything a command prints on stdout goes through these two, so that no lost write goes unseen:
 * the first failure (disk full, closed pipe) is remembered with its errno and later writes are
 * skipped. Messages and progress go to stderr as usual. */
int cli_printf(const char *format, ...) CLI_PRINTF_LIKE(1, 2);
void cli_write(const char *text, size_t length);
/* 1 once a write to stdout has failed: commands with long outputs stop early. */
int cli_output_failed(void);
/* Hand what is buffered to the system now (bench rows appear as they are measured, and a closed
 * pipe is seen at once). */
void cli_output_flush(void);
/* At exit (main): flush and close stdout. If any write failed, print "soadyn COMMAND: cannot write
 * to standard output: <reason>" on stderr and turn CLI_OK into CLI_FAILURE; any other
 * status is kept. */
int cli_output_close(const char *command, int status);

/* ---------------------------------------------------------------- models (model_load.c) */

/* Load a model, printing loader errors exactly as given and the model's warnings on stderr, then
 * apply --gravity GX,GY,GZ (`gravity` NULL: the file's gravity stays), which every command that
 * loads a model takes: gravity in the world frame, m/s^2, in place of the model file's
 * (sd_model_set_gravity). Returns CLI_OK, CLI_MODEL, or CLI_USAGE after "soadyn CMD: --gravity: ..."
 * on stderr (not three finite numbers, or beyond the bound of physical models); *model is NULL
 * unless CLI_OK. */
int cli_load_model(const char *cmd, const char *path, int floating, int keep_fixed, const char *gravity,
                   sd_model **model);
#define CLI_GRAVITY_HELP                                                                            \
    "  --gravity GX,GY,GZ  gravity in the world frame, m/s^2, in place of the model file's (MJCF\n" \
    "                    <option gravity>, URDF <soadyn:gravity>; default 0,0,-9.81)\n"

/* --embed all|none|LOOP,... and --independent JOINT,... (constraint embedding, soadyn/embed.h), taken
 * by every command that loads a model: CLI_EMBED_OPTIONS(args) in its option table. */
typedef struct cli_embed_args {
    const char *embed;       /* NULL: the model file's choice */
    const char *independent; /* NULL: the split chosen by pivoting */
} cli_embed_args;
#define CLI_EMBED_OPTIONS(args) {"embed", 1, &(args).embed, NULL}, {"independent", 1, &(args).independent, NULL}
/* The text of the two options for a command's --help. */
#define CLI_EMBED_HELP                                                                                   \
    "  --embed LOOPS     closure constraints embedded into aggregate nodes: all, none, or a comma\n"   \
    "                    list of constraint names (the others tree-augmented); default: the model\n"  \
    "                    file's choice (URDF+ embed=\"true\")\n"                                       \
    "  --independent J,..  joints whose speeds are an aggregate's independent ones (default: chosen\n" \
    "                    by pivoting at the configuration)\n"

/* The embedding the arguments ask for (the model file's choice when neither option is given), the
 * split chosen at q when q closes the loops (to 1e-9), else (or q NULL) at the model's reference
 * configuration closed by the library: as sd_simulate chooses it. *embedding is NULL when no
 * constraint ends up embedded (a tree, --embed none, a file that embeds nothing): the command then
 * runs as for a model without embedding. Errors are the library's, printed as "soadyn CMD: ...":
 * CLI_USAGE for a bad name or an override that does not fit (SD_E_ARGUMENT, SD_E_NOT_SUPPORTED),
 * CLI_MODEL when a loop cannot be assembled or split (SD_E_SINGULAR), CLI_FAILURE out of memory. */
int cli_embedding(const char *cmd, const sd_model *model, const cli_embed_args *args, const double *q,
                  sd_embedding **embedding);
/* Name of embedded speed i (the tree speed's label, sd_speed_label); the caller frees it. */
char *cli_embedded_speed_label(const sd_embedding *embedding, int i);

/* ---------------------------------------------------------------- --compiled (compiled.c) */

/* --compiled, taken by eval, simulate and bench: compile the model's generated code (soadyn/compile.h,
 * the default cache and compiler: $CC, else cc) so that the library's entry points run it. `line`
 * receives what runs, for the command's summary: the compiled code with the cache hit or miss and the
 * times, or the library; when the code cannot be compiled (no compiler, a model the generator does
 * not take) a warning goes to stderr and the library runs: not an error. */
void cli_compile(const char *cmd, sd_model *model, char *line, size_t cap);
#define CLI_COMPILED_HELP                                                                               \
    "  --compiled        run the model's generated code (soadyn codegen), compiled with $CC (else cc)\n" \
    "                    into the cache ($SOADYN_CACHE_DIR, $XDG_CACHE_HOME/soadyn, ~/.cache/soadyn);\n"  \
    "                    without a compiler, or for a model it does not cover: a warning, and the\n"    \
    "                    library's code runs (soadyn/compile.h says what the compiled code covers)\n"

#endif /* SOADYN_CLI_H */
