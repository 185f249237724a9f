/*
 * tests/sim/cli_child.c — running the `soadyn` program as a child process (see cli_child.h).
 */
#define _XOPEN_SOURCE 700

#include "cli_child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

char *cli_read_all(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = s ? fread(s, 1, (size_t)n, fp) : 0;
    if (s) s[got] = '\0';
    fclose(fp);
    return s;
}

int cli_run(const char *program, const char *const *args, const char *out_path, const char *err_path)
{
    const char *argv[24] = {program};
    int n = 1;
    for (; args[n - 1] && n < 23; ++n) argv[n] = args[n - 1];
    argv[n] = NULL;
    fflush(NULL); /* the child must not write the parent's buffered output a second time */
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0) _exit(99);
        dup2(fo, STDOUT_FILENO);
        dup2(fe, STDERR_FILENO);
        execv(argv[0], (char *const *)argv);
        _exit(98);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}
