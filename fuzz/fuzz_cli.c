/*
 * fuzz/fuzz_cli.c — the soadyn command's argument handling as a whole: every command (info, eval,
 * simulate, bench, view) run in this process (the sources of cli/ but main.c, compiled as they are) on a
 * bundled model with a command line from the input. Byte 0 picks the command, byte 1 the model
 * (a tree, a four-bar loop, a flexible arm); the rest is the arguments, one per line (at most 24).
 * The run is kept short and inside a folder of its own: simulate gets --duration 0.01 --dt 0.001
 * and bench --repeats 1 after the input's arguments (the input giving them too is the "given
 * twice" refusal), bench times batches of one call (cmd_bench.c is compiled here with
 * CLI_BENCH_MIN_BATCH_NS=0), an argument holding '/' is not run (the command must not write
 * outside the folder, which is in memory: fuzz_folder.h), and what a run writes there is removed
 * after it. Standard output goes to /dev/null.
 * The contract: the exit status is one the command documents (0 ok, 1 usage, 2 model, 3 run-time
 * failure) and a non-zero one comes with a message on stderr. A broken contract prints the
 * command line and traps.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, dup, fileno */

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz_folder.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

/* cli/args.c is compiled in this folder with fuzz_values's stream redirection (cli_streams.h, a
 * property of the source file): here its streams are the process's own. */
FILE *fuzz_cli_stdout;
FILE *fuzz_cli_stderr;

#define MAX_ARGS 24

static char dir[64]; /* /dev/shm/soadyn-fuzz-cli-XXXXXX (fuzz_folder.h) */
static int stderr_saved = -1;
static FILE *caught; /* the command's stderr */

static void remove_outputs(void)
{
    DIR *d = opendir(".");
    if (d == NULL) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlink(e->d_name);
    closedir(d);
}

static void leave_folder(void)
{
    remove_outputs();
    rmdir(dir);
}

static void start(void)
{
    fuzz_make_folder(dir, sizeof dir, "soadyn-fuzz-cli");
    if (chdir(dir) != 0) {
        perror("fuzz_cli: folder");
        abort();
    }
    atexit(leave_folder);
    const int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0) abort();
    close(null);
    fuzz_cli_stdout = stdout;
    fuzz_cli_stderr = stderr;
    caught = tmpfile();
    stderr_saved = dup(STDERR_FILENO);
    if (caught == NULL || stderr_saved < 0) abort();
}

static void broken(const char *what, int argc, char **argv, int status)
{
    fflush(stderr);
    dup2(stderr_saved, STDERR_FILENO);
    fprintf(stderr, "fuzz: contract broken: cli: %s (exit status %d) for:", what, status);
    for (int i = 0; i < argc; ++i) fprintf(stderr, " '%s'", argv[i]);
    fprintf(stderr, "\n");
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    static int ready;
    if (!ready) {
        start();
        ready = 1;
    }
    if (size < 2) return 0;
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"info", cmd_info}, {"eval", cmd_eval}, {"simulate", cmd_simulate}, {"bench", cmd_bench},
                    {"view", cmd_view}};
    static const char *const models[] = {SOADYN_FUZZ_MODELS "/double_pendulum.urdf",
                                         SOADYN_FUZZ_MODELS "/four_bar.urdf",
                                         SOADYN_FUZZ_MODELS "/flexible_arm.urdf"};
    const int c = bytes[0] % (sizeof commands / sizeof *commands);
    const char *model = models[bytes[1] % (sizeof models / sizeof *models)];
    /* the arguments: lines of the rest, NUL-terminated copies */
    char *text = malloc(size - 1);
    if (text == NULL) return 0;
    memcpy(text, bytes + 2, size - 2);
    text[size - 2] = '\0';
    char *argv[MAX_ARGS + 8];
    int argc = 0;
    argv[argc++] = (char *)commands[c].name;
    for (char *line = text, *next; line != NULL && argc < MAX_ARGS; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (line[0] == '\0' && next == NULL) break;
        if (strchr(line, '/') != NULL) { /* a path out of the folder: not run */
            free(text);
            return 0;
        }
        argv[argc++] = line;
    }
    if (c == 2) {
        static char *bound[] = {"--duration", "0.01", "--dt", "0.001"};
        for (int i = 0; i < 4; ++i) argv[argc++] = bound[i];
    } else if (c == 3) {
        static char *bound[] = {"--repeats", "1"};
        for (int i = 0; i < 2; ++i) argv[argc++] = bound[i];
    }
    argv[argc++] = (char *)model;
    argv[argc] = NULL;

    fflush(stderr);
    rewind(caught);
    if (ftruncate(fileno(caught), 0) != 0) abort();
    dup2(fileno(caught), STDERR_FILENO);
    const int status = commands[c].run(argc, argv);
    fflush(stdout);
    fflush(stderr);
    const int said = lseek(fileno(caught), 0, SEEK_END) > 0;
    dup2(stderr_saved, STDERR_FILENO);
    if (status < 0 || status > 3) broken("an exit status the command does not document", argc, argv, status);
    if (status != 0 && !said) broken("a failure without a message on stderr", argc, argv, status);
    remove_outputs();
    free(text);
    return 0;
}
