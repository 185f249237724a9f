/*
 * src/compile/compile_run.c — running a program with its output captured (compile_run.h). No shell
 * (system() would interpret the compiler's path and flags); the child's output goes through a pipe
 * read to its end before waiting, so a compiler writing more than a pipe holds cannot block.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile_run.h"

extern char **environ;

int sd_run_captured(char *const argv[], char *out, size_t cap, int *exit_status)
{
    int fd[2];
    if (pipe(fd) != 0) return errno;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fd[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fd[1], 2);
    posix_spawn_file_actions_addclose(&actions, fd[0]);
    posix_spawn_file_actions_addclose(&actions, fd[1]);
    pid_t pid;
    const int started = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fd[1]);
    if (started != 0) {
        close(fd[0]);
        return started;
    }
    size_t len = 0;
    char drop[4096];
    for (;;) {
        const int keep = len + 1 < cap;
        const ssize_t got = keep ? read(fd[0], out + len, cap - 1 - len) : read(fd[0], drop, sizeof drop);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (keep) len += (size_t)got;
    }
    close(fd[0]);
    if (cap) out[len] = '\0';
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return errno;
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return 0;
}

int sd_split_words(const char *text, char *buf, size_t cap, char **argv, int *argc, int max)
{
    if (strlen(text) + 1 > cap) return -1;
    strcpy(buf, text);
    for (char *s = buf; *s;) {
        s += strspn(s, " \t");
        if (!*s) break;
        if (*argc >= max) return -1;
        argv[(*argc)++] = s;
        s += strcspn(s, " \t");
        if (*s) *s++ = '\0';
    }
    return 0;
}
