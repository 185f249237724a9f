/*
 * fuzz/libxml2_trap.h — for the targets of the readers built on libxml2 (URDF, MJCF): the library
 * must never print, so libxml2's global error handlers, which print on stderr by default, are
 * replaced by ones that trap; any libxml2 message a reader failed to route into its sd_error is then
 * a finding.
 */
#ifndef SOADYN_FUZZ_LIBXML2_TRAP_H
#define SOADYN_FUZZ_LIBXML2_TRAP_H

/* Install the trapping handlers (call once, from LLVMFuzzerInitialize). */
void fuzz_trap_libxml2_messages(void);

#endif /* SOADYN_FUZZ_LIBXML2_TRAP_H */
