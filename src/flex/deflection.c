/*
 * src/flex/deflection.c — a node's deflection read off the modal coordinates: the spatial
 * deformation of node j is Pi^j eta (001 Eq 3), [small rotation; translation] in body axes. Used by
 * the sim layer's outputs (tip deflection in the CSV and the plot) and by callers that want to see
 * how far a node has moved from its undeformed place.
 */
#include <soadyn/flex.h>

#include "flex/flex_body.h"
#include "internal.h"

sd_status sd_model_node_deflection(const sd_model *m, int body, int node, const double *q, double deflection[6],
                                   sd_error *err)
{
    if (!m || !q || !deflection) return sd_error_set(err, SD_E_ARGUMENT, "sd_model_node_deflection: NULL argument");
    if (body < 0 || body >= m->n)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_model_node_deflection: body %d out of range (0..%d)", body,
                            m->n - 1);
    const sd_flex_body *fb = m->flex ? m->flex[body] : NULL;
    if (!fb)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_model_node_deflection: body %s is not flexible",
                            sd_model_body_name(m, body));
    const int nn = sd_flex_body_nnodes(fb), nm = sd_flex_body_nmodes(fb);
    if (node < 0 || node >= nn)
        return sd_error_set(err, SD_E_ARGUMENT, "sd_model_node_deflection: body %s has no node %d (nodes 0..%d)",
                            sd_model_body_name(m, body), node, nn - 1);
    const sd_flex_desc *desc = sd_flex_body_desc(fb);
    const double *eta = q + m->mode_q_index[body];
    const size_t ld = 6 * (size_t)nn; /* Pi is (6 n_nodes) x n_modes, column-major */
    for (int i = 0; i < 6; ++i) {
        double s = 0.0;
        for (int r = 0; r < nm; ++r) s += desc->modes[(size_t)r * ld + 6 * (size_t)node + (size_t)i] * eta[r];
        deflection[i] = s;
    }
    return SD_OK;
}
