/*
 * src/flex/flex_data.h — the owned flexible-body model behind the public sd_flex_data: arrays the
 * object owns and an sd_flex_desc pointing into them. Made by the beam generator (beam.c) and the
 * data file reader (io/flex_file.c). Library-internal.
 */
#ifndef SOADYN_FLEX_DATA_H
#define SOADYN_FLEX_DATA_H

#include <soadyn/flex.h>

struct sd_flex_data {
    sd_flex_desc desc;     /* points into the arrays below */
    double *node_position; /* 3 n_nodes */
    double *node_mass;     /* n_nodes */
    double *node_inertia;  /* 9 n_nodes, or NULL (point masses) */
    double *modes;         /* 6 n_nodes x n_modes, column-major */
    double *stiffness;     /* n_modes^2 row-major */
    double *damping;       /* n_modes^2 row-major, or NULL */
    char *source_file;     /* or NULL */
};

/* A zero-filled model of n_nodes nodes and n_modes modes (with node inertias and a damping matrix
 * when asked), its desc pointing at the arrays, mass model FULL, no source file. The caller has
 * bounded the counts (the sizes are computed in size_t without overflow for counts below 2^24).
 * NULL when memory runs out. */
sd_flex_data *sd_flex_data_new(int n_nodes, int n_modes, int with_inertia, int with_damping);

/* Keep a copy of `path` as the desc's source_file; 0 when memory runs out. */
int sd_flex_data_set_source(sd_flex_data *data, const char *path);

#endif /* SOADYN_FLEX_DATA_H */
