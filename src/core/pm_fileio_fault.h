/* A FileIO wrapper for tests: fails the k-th operation of the chosen kinds
 * (PAIMON_IO, "injected fault"), optionally every later one too (a crash:
 * the process stops doing I/O). Thread-safe counters. */
#ifndef PM_FILEIO_FAULT_H
#define PM_FILEIO_FAULT_H

#include "pm_fileio.h"

enum {
    PM_FAULT_READ = 1 << 0, PM_FAULT_LIST = 1 << 1, PM_FAULT_STAT = 1 << 2, PM_FAULT_EXISTS = 1 << 3,
    PM_FAULT_WRITE = 1 << 4, PM_FAULT_CREATE = 1 << 5, PM_FAULT_REMOVE = 1 << 6, PM_FAULT_MKDIRS = 1 << 7,
    PM_FAULT_ALL = 0xff
};

/* Wraps (and owns) inner. fail_at: 1-based index among operations whose
 * kind is in `kinds`; 0 never fails. crash: after the fault, every
 * operation of any kind fails. */
pm_fileio *pm_fileio_fault_new(pm_fileio *inner, unsigned kinds, long fail_at, int crash);
/* Operations of the chosen kinds seen so far. */
long pm_fileio_fault_count(const pm_fileio *io);
/* Sleep delay_us before every operation of the given kinds (0: none):
 * stretches an operation so that a kill -9 lands in its middle (only the
 * mutations: between any two of them). Set before the operation starts. */
void pm_fileio_fault_set_delay(pm_fileio *io, unsigned kinds, long delay_us);
/* kill -9 sweeps (in a forked child): raise(SIGKILL) at the at-th
 * operation of the chosen kinds (1-based, as pm_fileio_fault_count counts
 * them; 0: never), right before performing it or, with after, right after
 * it returned. Set before the operation starts. */
void pm_fileio_fault_set_kill(pm_fileio *io, long at, int after);
/* Give back the inner FileIO and free the wrapper. */
pm_fileio *pm_fileio_fault_release(pm_fileio *io);

#endif
