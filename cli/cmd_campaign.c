/*
 * cli/cmd_campaign.c — `soadyn campaign SPEC`: a Monte Carlo campaign (docs/campaigns.md). The
 * campaign machinery is Python (python/soadyn/campaign: YAML, Dask, Zarr, pandas), so this command
 * executes Debian's /usr/bin/python3 -m soadyn.campaign with the same arguments, the soadyn Python
 * package put on PYTHONPATH: the one installed beside this program (PREFIX/bin/soadyn ->
 * PREFIX/SOADYN_PYTHON_INSTALL_DIR), else the build tree's. Both folders are given by
 * python/CMakeLists.txt; a build without the Python package says that the command is not offered.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define PYTHON "/usr/bin/python3"

#if defined(SOADYN_PYTHON_BUILD_DIR) && defined(SOADYN_PYTHON_INSTALL_DIR)
/* (a build without the Python package has only the refusal below) */
static const char help[] =
    "usage: soadyn campaign SPEC.yaml [--output STORE.zarr] [--fresh] [--scheduler ADDRESS]\n"
    "                       [--workers N] [--task-size N] [--plot FILE.png] [--no-progress]\n"
    "\n"
    "Run a Monte Carlo campaign: the runs of SPEC.yaml (a model file, dispersions of its parameters\n"
    "and initial state, inputs, integrator, outputs, number of runs, seed; docs/campaigns.md) on a\n"
    "local pool of processes or a Dask cluster, their results in a Zarr store, resumed when run\n"
    "again. This command executes " PYTHON " -m soadyn.campaign with the same arguments (the\n"
    "soadyn Python package and Debian's python3-dask, -distributed, -zarr, -yaml, -pandas, -tqdm,\n"
    "-matplotlib). Its own help follows.\n"
    "\n";

/* The folder holding this program, from /proc/self/exe; 0 on failure. */
static int program_dir(char *out, size_t size)
{
    const ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0 || (size_t)n >= size - 1) return 0;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash) return 0;
    *slash = '\0';
    return 1;
}

/* Whether `dir` holds the campaign package. */
static int has_campaign(const char *dir)
{
    char path[PATH_MAX + 64];
    const int len = snprintf(path, sizeof path, "%s/soadyn/campaign/__main__.py", dir);
    return len > 0 && (size_t)len < sizeof path && access(path, R_OK) == 0;
}
#endif

int cmd_campaign(int argc, char **argv)
{
#if defined(SOADYN_PYTHON_BUILD_DIR) && defined(SOADYN_PYTHON_INSTALL_DIR)
    char dir[PATH_MAX] = "", installed[2 * PATH_MAX];
    const char *package = NULL;
    if (program_dir(dir, sizeof dir)) {
        snprintf(installed, sizeof installed, "%s/../%s", dir, SOADYN_PYTHON_INSTALL_DIR);
        if (has_campaign(installed)) package = installed;
    }
    if (!package && has_campaign(SOADYN_PYTHON_BUILD_DIR)) package = SOADYN_PYTHON_BUILD_DIR;
    if (!package) {
        fprintf(stderr, "soadyn campaign: the soadyn Python package is not installed beside this program "
                        "(%s/../%s) nor in its build tree (%s)\n", dir, SOADYN_PYTHON_INSTALL_DIR,
                SOADYN_PYTHON_BUILD_DIR);
        return CLI_FAILURE;
    }
    const char *old = getenv("PYTHONPATH");
    const size_t len = strlen(package) + (old ? strlen(old) + 1 : 0) + 1;
    char *pythonpath = malloc(len);
    char **args = malloc(((size_t)argc + 3) * sizeof *args);
    if (!pythonpath || !args) {
        fprintf(stderr, "soadyn campaign: out of memory\n");
        free(pythonpath);
        free(args);
        return CLI_FAILURE;
    }
    snprintf(pythonpath, len, "%s%s%s", package, old ? ":" : "", old ? old : "");
    setenv("PYTHONPATH", pythonpath, 1);
    free(pythonpath);
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(help, stdout);
            break;
        }
    fflush(stdout);
    args[0] = "python3";
    args[1] = "-m";
    args[2] = "soadyn.campaign";
    for (int i = 1; i < argc; ++i) args[i + 2] = argv[i];
    args[argc + 2] = NULL;
    execv(PYTHON, args);
    fprintf(stderr, "soadyn campaign: cannot execute %s (%s)\n", PYTHON, strerror(errno));
    free(args);
    return CLI_FAILURE;
#else
    (void)argc;
    (void)argv;
    fprintf(stderr, "soadyn campaign: not offered by this build: it runs the soadyn Python package, which "
                    "was not built (CMake option SOADYN_WITH_PYTHON, python3-cffi, python3-numpy)\n");
    return CLI_FAILURE;
#endif
}
