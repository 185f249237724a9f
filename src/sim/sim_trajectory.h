/*
 * src/sim/sim_trajectory.h — the layout of sd_trajectory, shared by trajectory.c and plot.c.
 */
#ifndef SOADYN_SIM_TRAJECTORY_H
#define SOADYN_SIM_TRAJECTORY_H

#include "internal.h"

struct sd_trajectory {
    const sd_model *model;
    int nq, nv;
    size_t stride;  /* nq + 3 + nv: t, q, kinetic, potential, u (u last: the viewer's forces need it) */
    size_t n, cap;  /* rows used, rows allocated */
    double *rows;
    int ntip;       /* flexible bodies: the plot's deflection panel shows node tip_node[i] of body tip_body[i] */
    int *tip_body, *tip_node;
    char note[160]; /* sd_trajectory_set_note: why the trajectory is incomplete; "" when it is not */
};

#endif /* SOADYN_SIM_TRAJECTORY_H */
