/*
 * cli/cli.h — what the files of the `soadyn` command share: exit statuses, the subcommands, option
 * parsing, value lists, model loading.
 *
 * Exit status: 0 success; 1 usage error (bad option or value); 2 model error (file unreadable,
 * malformed or invalid); 3 run-time failure (a solver failed, an output file could not be written);
 * 128 + signal number when `simulate` was interrupted (130 SIGINT, 143 SIGTERM).
 */
#ifndef SOADYN_CLI_H
#define SOADYN_CLI_H

#include <stdio.h>

#include <soadyn/soadyn.h>

enum { CLI_OK = 0, CLI_USAGE = 1, CLI_MODEL = 2, CLI_FAILURE = 3 };

int cmd_info(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_bench(int argc, char **argv);

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

/* ---------------------------------------------------------------- models (model_load.c) */

/* Load a URDF model, printing loader errors exactly as given and the model's warnings on stderr.
 * Returns CLI_OK or CLI_MODEL. */
int cli_load_model(const char *path, int floating, int keep_fixed, sd_model **model);

#endif /* SOADYN_CLI_H */
