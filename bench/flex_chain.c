/*
 * bench/flex_chain.c — the serial chain of flexible bodies of 001 Sec 6 (flex_chain.h), shared by
 * soadyn_bench_flex (Fig 2) and soadyn_bench --codegen.
 */
#include "flex_chain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NNODES = 8 };

sd_model *bench_flexible_chain(int nbodies, int nm, sd_flex_mass_model mass_model)
{
    enum { MAXM = BENCH_FLEX_CHAIN_MAX_MODES };
    double pos[3 * NNODES], mass[NNODES], modes[6 * NNODES * MAXM], K[MAXM * MAXM];
    if (nbodies < 1 || nbodies > BENCH_FLEX_CHAIN_MAX_BODIES || nm < 1 || nm > MAXM) {
        fprintf(stderr, "bench: the flexible chain: %d bodies of %d modes (1 .. %d bodies, 1 .. %d modes)\n", nbodies, nm,
                BENCH_FLEX_CHAIN_MAX_BODIES, MAXM);
        exit(1);
    }
    for (int j = 0; j < NNODES; ++j) {
        const double x = (j + 1.0) / NNODES;
        pos[3 * j] = x;
        pos[3 * j + 1] = pos[3 * j + 2] = 0.0;
        mass[j] = 0.25;
    }
    memset(modes, 0, sizeof modes);
    memset(K, 0, sizeof K);
    for (int r = 0; r < nm; ++r) {
        const int plane = r % 2, order = r / 2 + 1;
        const double beta = (2 * order - 1) * 3.14159265358979323846 / 2;
        for (int j = 0; j < NNODES; ++j) {
            const double x = pos[3 * j], w = 1.0 - cos(beta * x), slope = beta * sin(beta * x);
            double *col = modes + 6 * NNODES * r + 6 * j; /* [rotation; translation] of node j */
            if (plane == 0) { col[2] = slope; col[4] = w; }  /* x-y plane: deflection y, rotation about z */
            else { col[1] = -slope; col[5] = w; }            /* x-z plane: deflection z, rotation about -y */
        }
        K[r * nm + r] = 100.0 * (r + 1) * (r + 1);
    }
    sd_builder *b = sd_builder_new();
    sd_error err;
    char names[BENCH_FLEX_CHAIN_MAX_BODIES][16];
    for (int k = 0; k < nbodies; ++k) {
        snprintf(names[k], sizeof names[k], "link%d", k);
        sd_body_desc desc;
        sd_body_desc_init(&desc);
        desc.name = names[k];
        desc.parent = k ? names[k - 1] : NULL;
        desc.hinge = SD_HINGE_REVOLUTE;
        desc.axis[0] = 0; desc.axis[1] = k % 2 ? 1 : 0; desc.axis[2] = k % 2 ? 0 : 1;
        if (k) {
            desc.placement.p[0] = 1.0;
            desc.parent_node = NNODES - 1;
        }
        desc.mass = 1.0;
        desc.com[0] = 0.5;
        desc.inertia[0] = 0.01; desc.inertia[4] = desc.inertia[8] = 0.09;
        sd_flex_desc fd;
        sd_flex_desc_init(&fd);
        fd.n_nodes = NNODES;
        fd.node_position = pos;
        fd.node_mass = mass;
        fd.n_modes = nm;
        fd.modes = modes;
        fd.stiffness = K;
        fd.mass_model = mass_model;
        fd.source_file = "bench_flex.c";
        if (sd_builder_add_body(b, &desc, &err) != SD_OK || sd_builder_set_flexible(b, names[k], &fd, &err) != SD_OK) {
            fprintf(stderr, "bench: the flexible chain: %s\n", err.message);
            exit(1);
        }
    }
    sd_model *m = NULL;
    if (sd_builder_build(b, &m, &err) != SD_OK) {
        fprintf(stderr, "bench: the flexible chain: %s\n", err.message);
        exit(1);
    }
    sd_builder_free(b);
    return m;
}
