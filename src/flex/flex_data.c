/*
 * src/flex/flex_data.c — the owned flexible-body model (flex_data.h): allocation, the description
 * it hands out, release.
 */
#include <stdlib.h>
#include <string.h>

#include "flex/flex_data.h"

sd_flex_data *sd_flex_data_new(int n_nodes, int n_modes, int with_inertia, int with_damping)
{
    if (n_nodes < 0 || n_modes < 0) return NULL;
    sd_flex_data *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    const size_t nn = (size_t)n_nodes, nm = (size_t)n_modes;
    /* calloc(0) may return NULL: every array gets at least one element */
    d->node_position = calloc(3 * nn + 1, sizeof(double));
    d->node_mass = calloc(nn + 1, sizeof(double));
    d->node_inertia = with_inertia ? calloc(9 * nn + 1, sizeof(double)) : NULL;
    d->modes = calloc(6 * nn * nm + 1, sizeof(double));
    d->stiffness = calloc(nm * nm + 1, sizeof(double));
    d->damping = with_damping ? calloc(nm * nm + 1, sizeof(double)) : NULL;
    if (!d->node_position || !d->node_mass || (with_inertia && !d->node_inertia) || !d->modes || !d->stiffness ||
        (with_damping && !d->damping)) {
        sd_flex_data_free(d);
        return NULL;
    }
    d->desc.n_nodes = n_nodes;
    d->desc.node_position = d->node_position;
    d->desc.node_mass = d->node_mass;
    d->desc.node_inertia = d->node_inertia;
    d->desc.n_modes = n_modes;
    d->desc.modes = d->modes;
    d->desc.stiffness = d->stiffness;
    d->desc.damping = d->damping;
    d->desc.mass_model = SD_FLEX_FULL;
    d->desc.source_file = NULL;
    return d;
}

int sd_flex_data_set_source(sd_flex_data *data, const char *path)
{
    free(data->source_file);
    data->source_file = NULL;
    data->desc.source_file = NULL;
    if (path == NULL) return 1;
    const size_t n = strlen(path) + 1;
    data->source_file = malloc(n);
    if (data->source_file == NULL) return 0;
    memcpy(data->source_file, path, n);
    data->desc.source_file = data->source_file;
    return 1;
}

void sd_flex_data_free(sd_flex_data *data)
{
    if (data == NULL) return;
    free(data->node_position);
    free(data->node_mass);
    free(data->node_inertia);
    free(data->modes);
    free(data->stiffness);
    free(data->damping);
    free(data->source_file);
    free(data);
}

const sd_flex_desc *sd_flex_data_desc(const sd_flex_data *data)
{
    return data != NULL ? &data->desc : NULL;
}
