/*
 * fuzz/libxml2_trap.h — for the targets of the readers built on libxml2 (URDF, MJCF): the library
 * must never print, so libxml2's global error handlers, which print on stderr by default, are
 * replaced by ones that trap; any libxml2 message a reader failed to route into its sd_error is then
 * a finding.
 */
#ifndef SOADYN_FUZZ_LIBXML2_TRAP_H
#define SOADYN_FUZZ_LIBXML2_TRAP_H

/* libFuzzer's start-up hook, defined in libxml2_trap.c for the targets linking it: it installs the
 * trapping handlers once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* SOADYN_FUZZ_LIBXML2_TRAP_H */
