/*
 * cli/output.c — standard output that cannot fail unseen (see cli.h). A full disk, a closed pipe
 * (with SIGPIPE ignored) or an I/O error shows up as a failed write, usually only when stdio flushes
 * its buffer, so every write is checked, the first failure's errno is kept for the message, and the
 * final flush and close are checked too: a command whose output was lost never exits 0.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

static int failed;       /* a write to stdout has failed */
static int failed_errno; /* errno of the first failure */

static void note_failure(void)
{
    if (failed) return;
    failed = 1;
    failed_errno = errno != 0 ? errno : EIO;
}

int cli_printf(const char *format, ...)
{
    if (failed) return -1; /* the output is already lost: do not pretend to add to it */
    va_list ap;
    va_start(ap, format);
    errno = 0;
    const int n = vfprintf(stdout, format, ap);
    va_end(ap);
    if (n < 0 || ferror(stdout)) note_failure();
    return n;
}

void cli_write(const char *text, size_t length)
{
    if (failed) return;
    errno = 0;
    if (fwrite(text, 1, length, stdout) != length || ferror(stdout)) note_failure();
}

int cli_output_failed(void) { return failed; }

void cli_output_flush(void)
{
    if (failed) return;
    errno = 0;
    if (fflush(stdout) != 0) note_failure();
}

int cli_output_close(const char *command, int status)
{
    cli_output_flush(); /* also catches writes made with plain stdio (the --help text of args.c) */
    if (ferror(stdout)) note_failure();
    errno = 0;
    if (fclose(stdout) != 0) note_failure(); /* e.g. a deferred write error of the file system */
    if (!failed) return status;
    fprintf(stderr, "soadyn%s%s: cannot write to standard output: %s\n", command ? " " : "",
            command ? command : "", strerror(failed_errno));
    return status == CLI_OK ? CLI_FAILURE : status;
}
