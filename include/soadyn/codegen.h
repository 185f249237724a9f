/*
 * soadyn/codegen.h — per-model generated C: straight-line code for one model's dynamics.
 *
 * sd_codegen_write() writes DIR/NAME.c and DIR/NAME.h, dependency-free C99 (libm only), with the
 * model's constants folded in (zero inertia entries dropped, axis-aligned hinges in their
 * axis-selecting form, exact placements, identity rotations skipped), no loop over bodies and no
 * branch on hinge types. The generated functions keep the contracts of dynamics.h: the same
 * arguments in the same order (q, u, qdd or tau, f_ext; u, f_ext and the inverse dynamics' qdd may
 * be NULL, taken as zero; the forward dynamics' tau too), the joint-level terms (armature, damping,
 * springs), gravity, and they return the sd_status values:
 *   NAME_inverse_dynamics(q, u, qdd, f_ext, tau)      sd_inverse_dynamics
 *   NAME_mass_matrix(q, M)                            sd_mass_matrix (nv x nv, row-major)
 *   NAME_forward_dynamics(q, u, tau, f_ext, qdd)      sd_forward_dynamics
 *   NAME_mass_matrix_inverse(q, Minv)                 sd_mass_matrix_inverse
 *   NAME_interbody_forces(q, u, qdd, f_ext, f)        sd_inverse_dynamics, then sd_interbody_force
 *                                                     of every body in SD_FRAME_BODY (6 per body)
 * and with sd_codegen_options.lanes, NAME_<function>_x4 / _x8: the same on 4 or 8 states per call
 * (SD_CODEGEN_LANES_4 below).
 * A NULL required pointer or an input that is not finite is SD_E_ARGUMENT, a non-positive pivot of
 * D(k) or M SD_E_SINGULAR, a result that comes out inf or NaN SD_E_NOT_FINITE; on every error the
 * outputs are untouched. (The library's singularity test is relative, D(k) below 1e-13 of the
 * articulated inertia's scale; the generated code's is D(k) > 0, and a near-singular D(k) shows as
 * SD_E_NOT_FINITE or large accelerations.)
 *
 * Models of rigid bodies, every hinge type, and flexible bodies (assumed modes, full or linearised
 * mass model, children on node frames; the modal integrals folded in as constants, the modes'
 * D_f(k) tested as the library does, relative to its largest diagonal entry). A model with closure
 * constraints is refused (SD_E_NOT_SUPPORTED, saying so); so is a model whose straight-line code would pass
 * the size limit below (a long chain: the loop form over runs of identical bodies is not offered).
 */
#ifndef SOADYN_CODEGEN_H
#define SOADYN_CODEGEN_H

#include "export.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The algorithms to generate (sd_codegen_options.algorithms). */
enum {
    SD_CODEGEN_ID = 1u << 0,     /* inverse dynamics */
    SD_CODEGEN_M = 1u << 1,      /* mass matrix */
    SD_CODEGEN_FD = 1u << 2,     /* forward dynamics (articulated bodies) */
    SD_CODEGEN_MINV = 1u << 3,   /* mass-matrix inverse */
    SD_CODEGEN_FORCES = 1u << 4, /* inter-body forces */
    SD_CODEGEN_ALL = (1u << 5) - 1
};

/* The lane form's widths (sd_codegen_options.lanes): besides each single-state function NAME_fn,
 * NAME_fn_x4 and/or NAME_fn_x8 evaluate 4 or 8 states per call, each lane bit for bit the
 * single-state result. Arrays lane-minor: entry i of state l at [i * L + l]; the arguments are the
 * single-state function's and `int *status` (L return values, may be NULL); the function returns OK
 * or the first failing lane's status. A failing lane (non-finite input, failed pivot, non-finite
 * result) leaves its outputs untouched and the other lanes are stored. The lanes are GCC/Clang
 * vector extensions (another compiler gets a loop over the single-state function). Bit for bit needs
 * no contraction into FMAs: compile with -ffp-contract=off (GCC's default with -std=c99, not with
 * -std=gnu99; Clang's default contracts within one expression only, and every generated statement is
 * one operation), never -ffast-math (the file refuses it). */
enum { SD_CODEGEN_LANES_4 = 4, SD_CODEGEN_LANES_8 = 8 };

/* Zero-initialise, then set what you need. */
typedef struct sd_codegen_options {
    unsigned algorithms; /* SD_CODEGEN_* flags; 0: all */
    unsigned lanes;      /* 0: single-state functions only; SD_CODEGEN_LANES_4 and/or SD_CODEGEN_LANES_8 */
} sd_codegen_options;

/* The largest model, in bodies, whose straight-line code is offered: past it the generated file
 * grows as the square of the chain for M and M^-1 and the C compiler takes minutes. */
#define SD_CODEGEN_MAX_BODIES 256

/* Write DIR/NAME.c and DIR/NAME.h (NAME: a C identifier, the prefix of every generated symbol). Each
 * file is written to NAME.c.partial (.h.partial) and renamed when complete, so a failure leaves no
 * file looking complete. options may be NULL (all algorithms). On failure the message names the
 * element (the body, the argument or the file). */
SD_API sd_status sd_codegen_write(const sd_model *model, const sd_codegen_options *options, const char *dir,
                                  const char *name, sd_error *err);

/* Whether sd_codegen_write takes the model: SD_OK, or SD_E_NOT_SUPPORTED with its message (flexible
 * bodies, closure constraints, too many bodies), without writing anything. */
SD_API sd_status sd_codegen_check(const sd_model *model, sd_error *err);

/* Parse a comma-separated list of id, m, fd, minv, forces into SD_CODEGEN_* flags; the error names
 * the unknown entry. */
SD_API sd_status sd_codegen_parse_algorithms(const char *list, unsigned *flags, sd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_CODEGEN_H */
