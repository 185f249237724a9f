/*
 * fuzz/model_check.c — the contract a model reader and the algorithms keep for any input, checked
 * after every load of a fuzz target. A broken contract prints one line saying which and traps, so
 * libFuzzer keeps the input as a crash.
 *
 * A failed load: *model stays NULL, err->status is the returned status and err->message a non-empty
 * string within its buffer.
 *
 * A successful load: every number of the description is finite (masses, centres of mass, inertias,
 * joint placements, axes, frames, limits, gravity) and every name and warning is a string ASan can
 * read to its end. Then, at the neutral configuration with u = 0 and at a random configuration with
 * random u, with random qdd and tau (entries in [-1, 1]: small inputs, so a non-finite output is the
 * library's doing, not the input's):
 *   - sd_data_new succeeds: the inputs are at most -max_len bytes, so the models are small;
 *   - sd_inverse_dynamics and sd_mass_matrix return SD_OK with finite outputs. They invert nothing,
 *     and the inputs are finite and of the right size, so no error is legitimate: an error (or a
 *     non-finite output) means the reader let through a value no physical model has, and the reader
 *     must refuse it with a message instead;
 *   - sd_forward_dynamics returns SD_OK with a finite qdd, or SD_E_SINGULAR with a message: a valid
 *     model may have a singular articulated inertia D(k) at some configuration (a zero-mass leaf link
 *     on a moving joint, which the URDF reader accepts with a warning), and saying so, naming the body,
 *     is the contract. Any other status is a finding for the reason above.
 * SD_OK with any non-finite output traps, whatever the call.
 */
#include "model_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void contract_broken(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fuzz: contract broken: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    __builtin_trap();
}

uint64_t fuzz_input_seed(const uint8_t *bytes, size_t size)
{
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211u;
    return h != 0 ? h : 1;
}

static void check_finite(const char *reader, const char *what, const double *x, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(x[i])) contract_broken("%s: %s[%zu] = %g", reader, what, i, x[i]);
}

static void check_output(const char *reader, const char *call, const char *state, const char *what,
                         const double *x, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(x[i]))
            contract_broken("%s: %s at %s returned SD_OK with %s[%zu] = %g", reader, call, state, what, i, x[i]);
}

/* Reads the string to its end: ASan stops on a dangling or unterminated one. */
static void check_string(const char *reader, const char *what, const char *s)
{
    if (s == NULL) contract_broken("%s: %s is NULL", reader, what);
    (void)strlen(s);
}

static void check_description(const char *reader, const sd_model *m)
{
    check_string(reader, "model name", sd_model_name(m));
    double gravity[3];
    sd_model_gravity(m, gravity);
    check_finite(reader, "gravity", gravity, 3);
    for (int k = 0; k < sd_model_nbodies(m); ++k) {
        check_string(reader, "body name", sd_model_body_name(m, k));
        check_string(reader, "joint name", sd_model_joint_name(m, k));
        const double mass = sd_model_body_mass(m, k);
        check_finite(reader, "body mass", &mass, 1);
        check_finite(reader, "body com", sd_model_body_com(m, k), 3);
        check_finite(reader, "body inertia", sd_model_body_inertia(m, k), 9);
        check_finite(reader, "joint placement R", sd_model_placement(m, k)->R, 9);
        check_finite(reader, "joint placement p", sd_model_placement(m, k)->p, 3);
        check_finite(reader, "joint axis", sd_model_axis(m, k), 3);
        const sd_body_desc *desc = sd_model_body_desc(m, k);
        const double numbers[] = {desc->damping, desc->friction, desc->lower, desc->upper, desc->effort_limit,
                                  desc->velocity_limit, desc->mimic_multiplier, desc->mimic_offset};
        check_finite(reader, "joint dynamics, limits and mimic numbers", numbers, sizeof numbers / sizeof *numbers);
        if (desc->mimic_joint != NULL) check_string(reader, "mimic joint", desc->mimic_joint);
    }
    for (int f = 0; f < sd_model_nframes(m); ++f) {
        check_string(reader, "frame name", sd_model_frame_name(m, f));
        check_finite(reader, "frame placement R", sd_model_frame_placement(m, f)->R, 9);
        check_finite(reader, "frame placement p", sd_model_frame_placement(m, f)->p, 3);
    }
    for (size_t w = 0; w < sd_model_nwarnings(m); ++w) check_string(reader, "warning", sd_model_warning(m, w));
}

/* The arrays of one evaluation, sized by the model (one spare entry: nq or nv may be 0). */
typedef struct eval_buffers {
    double *q, *u, *qdd_given, *tau_given, *tau, *qdd, *M;
} eval_buffers;

static double random_signed(uint64_t *rng)
{
    return 2.0 * sd_random_uniform(rng) - 1.0;
}

/* A status other than SD_OK must be allowed for the call and come with a message; returns whether
 * the outputs are to be checked (SD_OK). */
static int status_allowed(const char *reader, const char *call, const char *state, const sd_data *d,
                          sd_status st, int singular_allowed)
{
    if (st == SD_OK) return 1;
    if (st == SD_E_SINGULAR && singular_allowed) {
        if (sd_data_error(d)[0] == '\0') contract_broken("%s: %s at %s: singular without a message", reader, call, state);
        return 0;
    }
    contract_broken("%s: %s at %s returned '%s' on a model that loaded: %s", reader, call, state,
                    sd_status_name(st), sd_data_error(d));
}

static void evaluate(const char *reader, const char *state, const sd_model *m, sd_data *d, eval_buffers *b,
                     uint64_t *rng)
{
    const int nv = sd_model_nv(m);
    for (int i = 0; i < nv; ++i) {
        b->qdd_given[i] = random_signed(rng);
        b->tau_given[i] = random_signed(rng);
    }
    if (status_allowed(reader, "sd_inverse_dynamics", state, d,
                       sd_inverse_dynamics(m, d, b->q, b->u, b->qdd_given, NULL, b->tau), 0))
        check_output(reader, "sd_inverse_dynamics", state, "tau", b->tau, (size_t)nv);
    if (status_allowed(reader, "sd_mass_matrix", state, d, sd_mass_matrix(m, d, b->q, b->M), 0))
        check_output(reader, "sd_mass_matrix", state, "M", b->M, (size_t)nv * (size_t)nv);
    if (status_allowed(reader, "sd_forward_dynamics", state, d,
                       sd_forward_dynamics(m, d, b->q, b->u, b->tau_given, NULL, b->qdd), 1))
        check_output(reader, "sd_forward_dynamics", state, "qdd", b->qdd, (size_t)nv);
}

static void check_evaluation(const char *reader, const sd_model *m, uint64_t seed)
{
    sd_data *d = sd_data_new(m);
    if (d == NULL) contract_broken("%s: sd_data_new failed on a model of %d bodies", reader, sd_model_nbodies(m));
    const size_t nq = (size_t)sd_model_nq(m) + 1, nv = (size_t)sd_model_nv(m) + 1;
    eval_buffers b = {calloc(nq, sizeof(double)),      calloc(nv, sizeof(double)), calloc(nv, sizeof(double)),
                      calloc(nv, sizeof(double)),      calloc(nv, sizeof(double)), calloc(nv, sizeof(double)),
                      calloc(nv * nv, sizeof(double))};
    if (!b.q || !b.u || !b.qdd_given || !b.tau_given || !b.tau || !b.qdd || !b.M)
        contract_broken("%s: out of memory for the evaluation buffers (nv = %zu)", reader, nv - 1);
    uint64_t rng = seed;

    sd_configuration_neutral(m, b.q);
    evaluate(reader, "the neutral configuration", m, d, &b, &rng);

    sd_configuration_random(m, &rng, b.q);
    for (size_t i = 0; i + 1 < nv; ++i) b.u[i] = random_signed(&rng);
    evaluate(reader, "a random configuration", m, d, &b, &rng);

    free(b.q); free(b.u); free(b.qdd_given); free(b.tau_given); free(b.tau); free(b.qdd); free(b.M);
    sd_data_free(d);
}

void fuzz_check_load(const char *reader, sd_status status, const sd_model *model, const sd_error *err,
                     uint64_t seed)
{
    if (status != SD_OK) {
        if (model != NULL) contract_broken("%s: failed with '%s' but returned a model", reader, sd_status_name(status));
        if (err->status != status)
            contract_broken("%s: returned '%s' but err->status is '%s'", reader, sd_status_name(status),
                            sd_status_name(err->status));
        if (memchr(err->message, '\0', sizeof err->message) == NULL)
            contract_broken("%s: the error message is not terminated", reader);
        if (err->message[0] == '\0') contract_broken("%s: failed with '%s' and no message", reader, sd_status_name(status));
        return;
    }
    if (model == NULL) contract_broken("%s: returned SD_OK and no model", reader);
    check_description(reader, model);
    check_evaluation(reader, model, seed);
}
