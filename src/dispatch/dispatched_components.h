/*
 * src/dispatch/dispatched_components.h — the components' entry points that run the code compiled for
 * the processor, as dispatched.h lists the core's (docs/dispatch.md): the closed-loop forward
 * dynamics of both layers, so that the tree-augmented and the embedded call are measured on the same
 * footing as the tree's. Same form and the same three uses as dispatched.h; the table is
 * dispatch_components.c's, in libsoadyn only (libsoadyn_core has no components).
 */
SD_DISPATCHED(closed_loop_forward_dynamics,
              (const sd_model *model, sd_data *data, const double *q, const double *u, const double *tau,
               const double *f_ext, double *qdd, double *lambda, const sd_closed_loop_options *options),
              (model, data, q, u, tau, f_ext, qdd, lambda, options))
SD_DISPATCHED(embedded_forward_dynamics,
              (const sd_embedding *embedding, sd_embedded_data *data, const double *q, const double *u,
               const double *tau, const double *f_ext, double *qdd, double *qdd_tree,
               const sd_embedded_fd_options *options),
              (embedding, data, q, u, tau, f_ext, qdd, qdd_tree, options))
