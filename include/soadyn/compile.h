/*
 * soadyn/compile.h — run a model's generated code (soadyn/codegen.h) through the library's own entry
 * points, compiled once per model with the system C compiler and kept in a cache.
 *
 * sd_model_compile() generates the model's straight-line C, compiles it into a shared object, loads
 * it, checks it and, from then on, these entry points run it for that model:
 *   sd_inverse_dynamics, sd_bias_forces, sd_mass_matrix, sd_forward_dynamics, sd_mass_matrix_inverse
 * (and sd_compiled_interbody_forces below). Their arguments, results and statuses are the library's.
 * What changes: a compiled call returns its outputs only and leaves no state in the workspace, so a
 * reader after it (sd_interbody_force, sd_body_velocity, sd_mass_matrix_solve, ...) says which call
 * must come first, as for a fresh workspace; sd_kinematics() and every other call run the library
 * and fill the workspace as always. A call the generated code refuses (an argument or a state that
 * is not finite, a singular D(k) or M) runs the library, whose error names the element. The
 * generated code's singularity test is D(k) > 0, the library's relative (soadyn/codegen.h).
 *
 * The cache. The shared object is DIR/sdc_KEY.so, KEY a 64-bit content hash of everything the code
 * depends on: the model's topology, hinges and their axes, placements, inertias, joint terms
 * (armature, damping, springs), gravity; the generator (its sources, hashed when soadyn is built)
 * and soadyn's version; the compiler's path and its `--version` output; the flags. DIR is
 * options->cache_dir, else $SOADYN_CACHE_DIR, else $XDG_CACHE_HOME/soadyn, else $HOME/.cache/soadyn
 * (made when missing). A cached object is used when it loads, carries its key and soadyn's version
 * (a symbol the compile adds) and passes the self-check; otherwise it is compiled again and
 * replaced. Each compile works in its own temporary directory and renames the finished object into
 * place, so two processes compiling the same model at once both end with a complete object.
 *
 * The self-check: before it is accepted, the loaded code is compared with the library at
 * options->self_check_states random states (default 8): every output of ID, M, FD, M^-1 and the
 * inter-body forces within 1e-12 of the library's, relative to the largest magnitude of that output
 * (FD and M^-1, solves with M: within max(1e-12, 16 eps cond_1(M)), round-off amplified by M's
 * condition and the two factorisations differing).
 *
 * Not offered, and said so (SD_E_NOT_SUPPORTED, the generator's message; the model keeps running
 * the library): flexible bodies, closure constraints, models past the generator's size. No compiler,
 * or a failing compile: SD_E_NOT_SUPPORTED naming the compiler and the first lines of its
 * diagnostics. The model is unchanged by any failure.
 *
 * The parameter setters (soadyn/params.h) switch the compiled code off (the values were folded into
 * it): compile again to switch it on for the new values. sd_model_copy's copy is not compiled.
 * sd_model_compile and sd_model_uncompile change the model: no other thread may use it meanwhile.
 * The library never prints; POSIX systems with a dynamic loader only (dlopen).
 */
#ifndef SOADYN_COMPILE_H
#define SOADYN_COMPILE_H

#include "export.h"
#include "model.h"
#include "dynamics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialise, then set what you need. */
typedef struct sd_compile_options {
    const char *compiler;   /* NULL: $CC, else "cc" (split at blanks: "ccache gcc" works) */
    const char *flags;      /* NULL: "-O2 -std=c99"; the compiler's flags, split at blanks;
                               "-shared -fPIC" and -lm are always added */
    const char *cache_dir;  /* NULL: $SOADYN_CACHE_DIR, $XDG_CACHE_HOME/soadyn, $HOME/.cache/soadyn */
    int self_check_states;  /* random states the self-check compares; 0: 8 */
} sd_compile_options;

/* What the last sd_model_compile() of a model did (sd_model_compile_info). */
typedef struct sd_compile_info {
    int compiled;             /* the compiled code is running (sd_model_compiled) */
    int cache_hit;            /* the object came from the cache: no compiler ran */
    double generate_seconds;  /* writing the C source (0 on a cache hit) */
    double compile_seconds;   /* the compiler's wall time (0 on a cache hit) */
    double check_seconds;     /* loading (dlopen) and the self-check */
    double self_check_error;  /* the self-check's largest relative difference */
    char key[17];             /* the cache key, 16 hex digits */
    char path[4096];          /* the shared object */
    char compiler[256];       /* the compiler as run */
} sd_compile_info;

/* Compile the model's generated code (or find it in the cache), load and check it, and make the
 * entry points above run it. Compiling a model already compiled with the same key does nothing; a
 * model whose parameters changed since is compiled for its new values. On failure the model keeps
 * running the library (and any code compiled before stays off) and err says why. */
SD_API sd_status sd_model_compile(sd_model *model, const sd_compile_options *options, sd_error *err);
/* Nonzero when the model's entry points run compiled code. */
SD_API int sd_model_compiled(const sd_model *model);
/* Back to the library's code; the loaded object is released. */
SD_API void sd_model_uncompile(sd_model *model);
/* What the last sd_model_compile() did; SD_E_ARGUMENT when the model was never compiled. */
SD_API sd_status sd_model_compile_info(const sd_model *model, sd_compile_info *info);
/* How many times this process ran the compiler (sd_model_compile's cache misses). */
SD_API long sd_compile_count(void);

/* The inter-body force of every body (6 per body, [moment; force] on the body from its parent, in its
 * own frame about its origin: sd_interbody_force's SD_FRAME_BODY) at the state (q, u, qdd, f_ext), as
 * sd_inverse_dynamics computes them: the generated function on a compiled model, else the library's
 * inverse dynamics and sd_interbody_force (the workspace then holds that state). u, qdd, f_ext may
 * be NULL (zero). */
SD_API sd_status sd_compiled_interbody_forces(const sd_model *model, sd_data *data, const double *q,
                                              const double *u, const double *qdd, const double *f_ext, double *f);

#ifdef __cplusplus
}
#endif

#endif /* SOADYN_COMPILE_H */
