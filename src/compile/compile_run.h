/*
 * src/compile/compile_run.h — running the C compiler (or any program) without a shell: posix_spawn,
 * its standard output and error captured through a pipe.
 */
#ifndef SOADYN_COMPILE_RUN_H
#define SOADYN_COMPILE_RUN_H

#include <stddef.h>

/* Run argv (argv[0] looked up on PATH) with stdin from /dev/null and stdout and stderr into out (the
 * first cap - 1 bytes, NUL-terminated; the rest read and dropped). Returns 0 and the exit status in
 * *exit_status (-1: killed by a signal), or errno when the program could not be started. */
int sd_run_captured(char *const argv[], char *out, size_t cap, int *exit_status);

/* Split text at blanks into at most max words appended to argv from *argc: the words point into
 * buf (a copy of text, of size cap). Returns 0, or -1 when it does not fit. */
int sd_split_words(const char *text, char *buf, size_t cap, char **argv, int *argc, int max);

#endif /* SOADYN_COMPILE_RUN_H */
