/*
 * cli/progress.h — the progress line of `soadyn simulate` on a terminal: simulated time reached,
 * real-time factor and time left, redrawn in place with '\r' on stderr.
 *
 * It appears only when stderr is a terminal, and only once a run has taken a second of wall time
 * (a short run prints nothing, so nothing flickers); it is redrawn at most ten times a second, so
 * its cost does not depend on the step size. When stderr is a file or a pipe nothing is written:
 * logs get no control characters.
 */
#ifndef SOADYN_CLI_PROGRESS_H
#define SOADYN_CLI_PROGRESS_H

typedef struct cli_progress {
    int enabled;      /* stderr is a terminal */
    int shown;        /* a line is on the screen (and must be ended) */
    int width;        /* characters of the line drawn last, to blank what a shorter one leaves */
    double t0, t_end; /* simulated times of the start and the end, s */
    double wall_start, last_draw;
} cli_progress;

/* Start timing a run from t0 to t_end (enabled when stderr is a terminal). */
void cli_progress_start(cli_progress *p, double t0, double t_end);
/* The simulation reached time t: redraw when due. Fits sd_progress_fn (user = the cli_progress). */
void cli_progress_update(void *p, double t, long steps);
/* The run ended at time t: draw the line a last time and end it, if it was ever shown. */
void cli_progress_finish(cli_progress *p, double t);

#endif /* SOADYN_CLI_PROGRESS_H */
