/*
 * fuzz/model_check.h — what every model reader's fuzz target asks of one load (model_check.c says
 * the contract and why). A reader's target is its load call and these two checks.
 */
#ifndef SOADYN_FUZZ_MODEL_CHECK_H
#define SOADYN_FUZZ_MODEL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <soadyn/soadyn.h>

/* A seed for the random configuration and inputs, from the fuzz input itself (FNV-1a, never 0), so a
 * crash replays exactly from its input file. */
uint64_t fuzz_input_seed(const uint8_t *bytes, size_t size);

/* After a load returned `status`: a failure must leave no model and say why in `err`; a success must
 * give a model whose description is finite and which evaluates within the contract. Traps otherwise.
 * `reader` names the load (e.g. "urdf, floating base") in the message printed before the trap. */
void fuzz_check_load(const char *reader, sd_status status, const sd_model *model, const sd_error *err,
                     uint64_t seed);

#endif /* SOADYN_FUZZ_MODEL_CHECK_H */
