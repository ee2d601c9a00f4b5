/*
 * The harness of the VFS storms (suite vfs_storm, one storm a file:
 * vfs_storm_create_unlink, vfs_storm_rename, vfs_storm_rmdir, vfs_storm_failslab):
 * every online CPU runs file-system calls at once, each on its own CPU
 * (smp_run_all), on a design where what each call must return is known, and the
 * tree the storm leaves is compared with the one the CPUs' records predict, name
 * for name and byte for byte (vfs_expect_listing). After each storm the caches'
 * counts are what the start plus the storm's leftovers make (storm_expect_counts),
 * and vfs_test_run() checks them again once the directory is gone.
 *
 * storm_cpus is written by storm_cpus_init() in the thread running the test, before
 * the storm's CPUs start, and only read while they run.
 */
#ifndef TESTS_VFS_STORM_TEST_UTIL_H
#define TESTS_VFS_STORM_TEST_UTIL_H

#include <grace/boot_info.h>
#include <grace/fs.h>
#include <grace/types.h>

/*
 * Iterations per storm, split over the CPUs, each CPU doing STORM_MIN_ITERS at
 * least. Unlike the lock tests (lock_sizing.h) the cost here is the calls' own
 * work, not hand-offs: under TCG two host cores run every vCPU, so the total, not
 * the share, sets the time, and a fixed total keeps SMP=64 within seconds.
 */
#define STORM_TOTAL_ITERS 2048
#define STORM_MIN_ITERS 16
#define STORM_PATH 192 /* a worker's path: the test's directory and a few short names */
#define STORM_TEXT 48

/* The online CPUs, numbered densely: a CPU's records are indexed by its place. */
struct storm_cpus {
	unsigned n;
	unsigned cpu[MAX_CPUS];	  /* the CPU at each place */
	unsigned index[MAX_CPUS]; /* the place of each CPU */
};
extern struct storm_cpus storm_cpus;

/* Number the online CPUs into storm_cpus: first thing in a storm, before its CPUs run. */
void storm_cpus_init(void);
/* A CPU's share of total iterations, STORM_MIN_ITERS at least. */
unsigned storm_iters(unsigned total);
/* The calling CPU's place in storm_cpus. */
unsigned storm_my_place(void);
/* A call a storm worker made returned got, which it must not: a failure, false. */
bool storm_bad(const char *call, const char *path, long got);
/* Create path holding text, from a storm CPU: true, or a failure recorded. */
bool storm_create(const char *path, const char *text);
/* After the storm's setup: warm every CPU, let the caches settle, take their counts. */
void storm_begin(const char *dir, struct vfs_counts *base);
/*
 * The counts after a storm that left `left` more names than base had (each its own
 * inode; negative: fewer); storm names the failures.
 */
void storm_expect_counts(const struct vfs_counts *base, long left, const char *storm);
/* The inode number of path, 0 if it cannot be looked up. */
u64 storm_ino(const char *path);
/* Run storm(dir) in mode, and put the mode back however the storm ended. */
void storm_in_mode(const char *dir, enum vfs_mode mode, void (*storm)(const char *dir));

#endif
