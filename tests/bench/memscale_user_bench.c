/*
 * make bench BENCH=memscale_user: the thp_memscale workload from user mode, as
 * its author ran it: one process whose threads, one bound to each CPU, fault
 * regions of their own in one address space (tests/user/memscale.c, glibc's
 * pthreads, linked into the test image). The in-kernel thp_memscale benchmark
 * (tests/bench/thp_memscale_bench.c) runs the same shape without the
 * system-call boundary, the process and its threads; this one is what a
 * program sees. At 1, 2, 4, ... threads and one per online CPU, with 2 MiB and 4 KiB
 * pages (madvise(MADV_NOHUGEPAGE)), in today's page-table design (split PMD
 * locks, VMAs found under RCU) and the one before 2013 (one lock for the mm's
 * page tables, every fault read-locking vma_lock), chosen for the process's
 * address space by the defaults exec's mm_create() takes:
 *
 *   bench: memscale_user arch=riscv64 online=4 cpus=4 ptlock=split vma=rcu pages=huge
 * faults_per_sec=... ns_per_fault=...
 *
 * The time is the wall clock from the spawn to the collection of the process,
 * less that of a run with no cycles (exec, threads, exit); faults_per_sec is
 * every thread's faults over it. Under make profile BENCH=memscale_user each
 * row is a phase, memscale_user/ptlock=<mode>/pages=<pages>/cpus=<k>.
 */
#include <grace/address_space.h>
#include <grace/bench.h>
#include <grace/errno.h>
#include <grace/huge.h>
#include <grace/printk.h>
#include <grace/process.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>
#include "user_prog.h"

#define MEMSCALE_PROGRAM "/bin/memscale"
#define MEMSCALE_MIB 16 /* per thread */
/* Cycles of map, touch, unmap: about as many faults' worth of zeroing in each. */
#define MEMSCALE_CYCLES_HUGE 16
#define MEMSCALE_CYCLES_4K 2

extern const char memscale_start[], memscale_end[];

struct memscale_row {
	enum ptlock_mode ptlock;
	enum vma_lookup lookup;
};

static const struct memscale_row memscale_rows[] = {
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU},
    {PTLOCK_MM, VMA_LOOKUP_LOCKED},
};

/* Run memscale with k threads: the wall-clock time from spawn to collection, or 0 if it failed. */
static u64 memscale_run(unsigned k, unsigned cycles, bool huge)
{
	char threads[8], mib[8], cycles_arg[8];
	snprintf(threads, sizeof(threads), "%u", k);
	snprintf(mib, sizeof(mib), "%u", MEMSCALE_MIB);
	snprintf(cycles_arg, sizeof(cycles_arg), "%u", cycles);
	char *argv[] = {MEMSCALE_PROGRAM, threads, mib, cycles_arg, huge ? "huge" : "4k", NULL};
	char *envp[] = {NULL};
	int err;
	u64 start = arch_clock_ns();
	struct process *p = proc_spawn(MEMSCALE_PROGRAM, argv, envp, &err);
	if (!p)
		return 0;
	int status = proc_wait(p);
	u64 t = arch_clock_ns() - start;
	return status ? 0 : t;
}

static bool memscale_row_run(const struct memscale_row *row, unsigned k, bool huge)
{
	unsigned cycles = huge ? MEMSCALE_CYCLES_HUGE : MEMSCALE_CYCLES_4K;
	u64 faults = (u64)k * cycles * MEMSCALE_MIB * MiB / (huge ? HUGE_SIZE : PAGE_SIZE);
	char phase[80];
	snprintf(phase, sizeof(phase), "memscale_user/ptlock=%s/pages=%s/cpus=%u",
		 ptlock_mode_name(row->ptlock), huge ? "huge" : "4k", k);

	mm_set_default_modes(row->ptlock, row->lookup);
	u64 empty = memscale_run(k, 0, huge);
	bench_phase_begin(phase, k);
	u64 t = memscale_run(k, cycles, huge);
	bench_phase_end(faults);
	if (!empty || !t) {
		bench_error("memscale_user", "%s: the program failed", phase);
		return false;
	}
	u64 ns = t > empty ? t - empty : 1;
	bench_report(
	    "memscale_user", k, "ptlock=%s vma=%s pages=%s faults_per_sec=%llu ns_per_fault=%llu",
	    ptlock_mode_name(row->ptlock), vma_lookup_name(row->lookup), huge ? "huge" : "4k",
	    (unsigned long long)(faults * NSEC_PER_SEC / ns), (unsigned long long)(ns / faults));
	return true;
}

BENCH(memscale_user)
{
	unsigned online = num_online_cpus();
	enum ptlock_mode ptlock = mm_default_ptlock(); /* the rows change them; given back after */
	enum vma_lookup lookup = mm_default_vma_lookup();
	int err = bench_user_install(MEMSCALE_PROGRAM, memscale_start, memscale_end);
	if (err) {
		bench_error("memscale_user", "cannot install %s: %s", MEMSCALE_PROGRAM,
			    errno_name(err));
		return;
	}
	bool ok = true;
	for (unsigned k = 1; ok && k; k = bench_cpus_next(k, online))
		for (unsigned r = 0; ok && r < ARRAY_SIZE(memscale_rows); r++)
			for (int huge = 1; ok && huge >= 0; huge--)
				ok = memscale_row_run(&memscale_rows[r], k, huge);
	mm_set_default_modes(ptlock, lookup);
}
