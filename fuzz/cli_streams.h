/*
 * fuzz/cli_streams.h — put in front of cli/args.c (-include) in fuzz_values only: the parser's
 * messages go to streams the target owns, which it reads back (an error must say what is wrong)
 * and reuses, instead of a million lines on the terminal. cli/args.c itself is compiled unchanged.
 */
#ifndef SOADYN_FUZZ_CLI_STREAMS_H
#define SOADYN_FUZZ_CLI_STREAMS_H

#include <stdio.h>

extern FILE *fuzz_cli_stdout;
extern FILE *fuzz_cli_stderr;

#undef stdout
#undef stderr
#define stdout fuzz_cli_stdout
#define stderr fuzz_cli_stderr

#endif /* SOADYN_FUZZ_CLI_STREAMS_H */
