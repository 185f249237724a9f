/*
 * cli/main.c — the `soadyn` command: picks the subcommand and hands it the rest of the arguments,
 * then closes standard output, so that output lost on the way (disk full, closed pipe) makes the
 * exit status 3 rather than 0. SIGPIPE is ignored for that: a write into a closed pipe then fails
 * with EPIPE, which is reported, instead of ending the process without a word.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: soadyn COMMAND [options] MODEL\n"
    "\n"
    "Multibody dynamics by Spatial Operator Algebra. MODEL is a URDF, MJCF (MuJoCo) or SDF file,\n"
    "told apart by its content (the root element), not by its name.\n"
    "\n"
    "commands:\n"
    "  info       describe a model: bodies, hinges, tree, serial chains, mass-matrix sparsity\n"
    "  eval       evaluate the dynamics at one state (mass matrix, forward/inverse dynamics, ...)\n"
    "  simulate   integrate the motion in time; CSV output and plots\n"
    "  bench      time each algorithm on a model\n"
    "  view       write a self-contained HTML page that draws the model and plays a motion\n"
    "  campaign   run a Monte Carlo campaign of dispersed simulations (SPEC.yaml; runs Python)\n"
    "  codegen    write the model's dynamics as straight-line C (a .c and a .h)\n"
    "\n"
    "`soadyn COMMAND --help` describes a command's options.\n"
    "exit status: 0 ok, 1 usage error, 2 model error, 3 run-time failure (also: output\n"
    "             lost, e.g. disk full),\n"
    "             130/143/129 simulate interrupted by SIGINT/SIGTERM/SIGHUP\n";

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"info", cmd_info}, {"eval", cmd_eval}, {"simulate", cmd_simulate}, {"bench", cmd_bench},
    {"view", cmd_view}, {"campaign", cmd_campaign}, {"codegen", cmd_codegen}};

int main(int argc, char **argv)
{
    /* A closed stdout pipe is a failed write (EPIPE), reported by cli_output_close with exit 3,
     * not a silent death by SIGPIPE; SIGUSR1 (simulate: "where are you?") never kills. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        cli_write(usage, sizeof(usage) - 1);
        return cli_output_close(NULL, CLI_OK);
    }
    if (strcmp(argv[1], "--version") == 0) {
        cli_printf("soadyn %s\n", SOADYN_VERSION);
        return cli_output_close(NULL, CLI_OK);
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); ++i)
        if (strcmp(argv[1], commands[i].name) == 0)
            return cli_output_close(commands[i].name, commands[i].run(argc - 1, argv + 1));
    fprintf(stderr, "soadyn: unknown command '%s'\n\n%s", argv[1], usage);
    return CLI_USAGE;
}
