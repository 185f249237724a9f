/*
 * fuzz/fuzz_folder.h — the working folder of a target that writes files (fuzz_files, fuzz_cli): in
 * /dev/shm, a tmpfs, when there is one, else in $TMPDIR or /tmp. On a disk file system every input's
 * files cost a write-back and a discard (ext4 flushes a file replaced by truncation when it is
 * closed): perf put two thirds of fuzz_files's time in the kernel's block layer. In memory the
 * readers see the same files, and an input runs several times faster.
 */
#ifndef SOADYN_FUZZ_FOLDER_H
#define SOADYN_FUZZ_FOLDER_H

/* the includer defines _POSIX_C_SOURCE 200809L (mkdtemp) */

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Make a fresh folder "BASE/NAME-XXXXXX" into dir (size bytes); aborts (a broken harness, not a finding)
 * when it cannot. */
static inline void fuzz_make_folder(char *dir, size_t size, const char *name)
{
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : getenv("TMPDIR");
    if (base == NULL || base[0] == '\0') base = "/tmp";
    if ((size_t)snprintf(dir, size, "%s/%s-XXXXXX", base, name) >= size || mkdtemp(dir) == NULL) {
        perror("fuzz: working folder");
        abort();
    }
}

#endif /* SOADYN_FUZZ_FOLDER_H */
