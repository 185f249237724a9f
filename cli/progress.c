/*
 * cli/progress.c — see progress.h. The real-time factor is simulated time over wall time since the
 * start; the time left assumes the rest of the run goes at that same rate.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define SHOW_AFTER 1.0     /* s of wall time before the line appears */
#define REDRAW_PERIOD 0.1  /* s of wall time between redraws: at most ten a second */

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "1:02:03", or "-" when it cannot be told yet. */
static void format_duration(char *buf, size_t size, double seconds)
{
    if (!(seconds >= 0.0) || seconds > 359999.0) { /* past 99:59:59 a number says nothing more */
        snprintf(buf, size, "-");
        return;
    }
    const long s = (long)(seconds + 0.5);
    snprintf(buf, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

static void draw(cli_progress *p, double t, double now, int final)
{
    const double wall = now - p->wall_start, simulated = t - p->t0, total = p->t_end - p->t0;
    const double factor = wall > 0.0 ? simulated / wall : 0.0;
    char eta[32], line[160];
    format_duration(eta, sizeof(eta), factor > 0.0 ? (p->t_end - t) / factor : -1.0);
    /* at most some 72 characters: a line wider than the terminal would wrap, and '\r' then
     * redraws only its last part */
    const int n = snprintf(line, sizeof(line), "t = %.4g of %.4g s (%.0f%%), real-time factor %.3g, %s %s", t,
                           p->t_end, total > 0.0 ? 100.0 * simulated / total : 100.0, factor,
                           final ? "took" : "ETA", final ? "" : eta);
    if (final) format_duration(line + n, sizeof(line) - (size_t)n, wall); /* the wall time it took */
    int len = 0;
    while (line[len]) ++len;
    fprintf(stderr, "\r%s%*s", line, p->width > len ? p->width - len : 0, ""); /* blank a longer line */
    if (final) fputc('\n', stderr);
    fflush(stderr);
    p->width = len;
    p->shown = 1;
    p->last_draw = now;
}

void cli_progress_start(cli_progress *p, double t0, double t_end)
{
    p->enabled = isatty(STDERR_FILENO);
    p->shown = 0;
    p->width = 0;
    p->t0 = t0;
    p->t_end = t_end;
    p->wall_start = wall_now();
    p->last_draw = p->wall_start;
}

void cli_progress_update(void *user, double t, long steps)
{
    cli_progress *p = user;
    (void)steps;
    if (!p->enabled) return;
    const double now = wall_now();
    if (now - p->wall_start < SHOW_AFTER || now - p->last_draw < REDRAW_PERIOD) return;
    draw(p, t, now, 0);
}

void cli_progress_finish(cli_progress *p, double t)
{
    if (p->enabled && p->shown) draw(p, t, wall_now(), 1);
}
