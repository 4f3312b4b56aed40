// Swaps two paths in one atomic step, so a namespace directory is replaced by a staged one with
// no moment at which neither exists: Linux's renameat2(RENAME_EXCHANGE) (glibc declares it only
// under _GNU_SOURCE, which Swift's Glibc module is not built with, hence the system call) and
// macOS's renamex_np(RENAME_SWAP). Returns 0, or -1 with errno set (EINVAL or ENOSYS where the
// file system or kernel cannot exchange).
#ifndef RTDB_RENAME_EXCHANGE_H
#define RTDB_RENAME_EXCHANGE_H

#include <errno.h>
#include <fcntl.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

static inline int rtdb_rename_exchange(const char *from, const char *to) {
#if defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 2u /* RENAME_EXCHANGE */);
#else
    errno = ENOSYS;
    return -1;
#endif
}
#elif defined(__APPLE__)
#include <stdio.h>

static inline int rtdb_rename_exchange(const char *from, const char *to) {
    return renamex_np(from, to, RENAME_SWAP);
}
#else
static inline int rtdb_rename_exchange(const char *from, const char *to) {
    (void)from;
    (void)to;
    errno = ENOSYS;
    return -1;
}
#endif

#endif
