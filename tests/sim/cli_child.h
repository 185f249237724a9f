/*
 * tests/sim/cli_child.h — what the tests of the `soadyn` program share: running it as a child
 * process with its output captured in files, and reading those files back.
 */
#ifndef SOADYN_TESTS_CLI_CHILD_H
#define SOADYN_TESTS_CLI_CHILD_H

/* The whole file as a NUL-terminated string (free() it), NULL when it cannot be read. */
char *cli_read_all(const char *path);

/* Runs `program` with args (NULL-terminated, at most 22 of them) with stdout and stderr redirected
 * into out_path and err_path; waits for it. Returns its exit status, 1000 + the signal that ended it,
 * or -1 when it could not be waited for (98/99 from the child: exec or the redirection failed). */
int cli_run(const char *program, const char *const *args, const char *out_path, const char *err_path);

#endif
