/*
 * src/dispatch/dispatched.h — the public entry points that run the code compiled for the processor
 * (docs/dispatch.md). Each line names one function of the single-state hot paths: its parameters as
 * declared in <soadyn/dynamics.h> and the same names as arguments. Every one returns sd_status.
 *
 * This one list makes three things: src/dispatch/sources.cmake reads the names and writes the header
 * that renames the definitions in the hot translation units (sd_X becomes sd_impl_X there), and
 * dispatch.c expands it into the table of implementations and the public wrappers sd_X, each one
 * indirect call through the table chosen once at load.
 *
 * A name missing here but renamed, or here but not renamed, does not link: no function can be
 * silently left out of, or run twice through, the dispatch.
 */
SD_DISPATCHED(kinematics, (const sd_model *model, sd_data *data, const double *q, const double *u, const double *qdd),
              (model, data, q, u, qdd))
SD_DISPATCHED(inverse_dynamics,
              (const sd_model *model, sd_data *data, const double *q, const double *u, const double *qdd,
               const double *f_ext, double *tau),
              (model, data, q, u, qdd, f_ext, tau))
SD_DISPATCHED(bias_forces,
              (const sd_model *model, sd_data *data, const double *q, const double *u, const double *f_ext,
               double *c),
              (model, data, q, u, f_ext, c))
SD_DISPATCHED(mass_matrix, (const sd_model *model, sd_data *data, const double *q, double *M), (model, data, q, M))
SD_DISPATCHED(forward_dynamics,
              (const sd_model *model, sd_data *data, const double *q, const double *u, const double *tau,
               const double *f_ext, double *qdd),
              (model, data, q, u, tau, f_ext, qdd))
SD_DISPATCHED(forward_dynamics_ex,
              (const sd_model *model, sd_data *data, const double *q, const double *u, double *tau,
               const double *f_ext, double *qdd, const sd_fd_options *options),
              (model, data, q, u, tau, f_ext, qdd, options))
SD_DISPATCHED(forward_dynamics_cholesky,
              (const sd_model *model, sd_data *data, const double *q, const double *u, const double *tau,
               const double *f_ext, double *qdd),
              (model, data, q, u, tau, f_ext, qdd))
SD_DISPATCHED(articulated_inertias, (const sd_model *model, sd_data *data, const double *q), (model, data, q))
SD_DISPATCHED(innovations_apply,
              (const sd_model *model, sd_data *data, sd_factor_op op, const double *x, double *y),
              (model, data, op, x, y))
SD_DISPATCHED(mass_matrix_solve, (const sd_model *model, sd_data *data, const double *x, double *y),
              (model, data, x, y))
SD_DISPATCHED(mass_matrix_determinant,
              (const sd_model *model, sd_data *data, const double *q, double *det, double *log_det),
              (model, data, q, det, log_det))
SD_DISPATCHED(mass_matrix_inverse, (const sd_model *model, sd_data *data, const double *q, double *Minv),
              (model, data, q, Minv))
SD_DISPATCHED(operational_space_compliance,
              (const sd_model *model, sd_data *data, const double *q, int nframes, const sd_task_frame *frames,
               double *Lambda_inv),
              (model, data, q, nframes, frames, Lambda_inv))
SD_DISPATCHED(operational_space_inertia,
              (const sd_model *model, sd_data *data, const double *q, int nframes, const sd_task_frame *frames,
               double *Lambda),
              (model, data, q, nframes, frames, Lambda))
SD_DISPATCHED(passive_forces,
              (const sd_model *model, sd_data *data, const double *q, const double *u, double *tau_passive),
              (model, data, q, u, tau_passive))
