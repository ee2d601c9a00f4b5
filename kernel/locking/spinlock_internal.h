/*
 * The backoff tuning's inside: its bounds and table, and the introspection that
 * kernel/locking/spinlock.c offers its selftests (tests/kernel/spinlock_test.c)
 * and benchmark (tests/bench/spinlock_bench.c). Nothing else includes this.
 */
#ifndef KERNEL_LOCKING_SPINLOCK_INTERNAL_H
#define KERNEL_LOCKING_SPINLOCK_INTERNAL_H

#include <grace/spinlock.h>

/*
 * SPIN_DELAY_MIN/MAX bound the per-slot delay, in cpu_relax() iterations per waiter
 * ahead of us. 1 and 1000 are the bounds of the patches in "x86,smp: auto tune
 * spinlock backoff delay factor" (Rik van Riel, 2012; MIN_SPINLOCK_DELAY,
 * MAX_SPINLOCK_DELAY): 1000 iterations is about the longest a lock is held in a
 * well-behaved kernel, so a larger delay only oversleeps. SPIN_DELAY_SLOTS = 16
 * (DELAY_HASH_SHIFT 4) is the table size Eric Dumazet measured in that thread.
 */
#define SPIN_DELAY_MIN 1
#define SPIN_DELAY_MAX 1000
#define SPIN_DELAY_HASH_SHIFT 4
#define SPIN_DELAY_SLOTS (1u << SPIN_DELAY_HASH_SHIFT)

unsigned spin_delay_slot(const spinlock_t *lock);
/* This CPU's current delay for lock's slot (or cpu's, with spin_delay_of_cpu). */
unsigned spin_delay_of_cpu(unsigned cpu, const spinlock_t *lock);
/* The largest delay cpu reached for lock's slot since the last spin_delay_reset(). */
unsigned spin_delay_peak_of_cpu(unsigned cpu, const spinlock_t *lock);
/* One tuning step: the new delay after a poll that found the lock taken (busy) or ours. */
unsigned spin_delay_next(unsigned delay, bool acquired, u32 owner);
/* Reset every CPU's table to SPIN_DELAY_MIN (between benchmark phases). */
void spin_delay_reset(void);
/*
 * For the selftests: count the contended acquisitions of one lock, per CPU, by
 * the path they took (tuned backoff or plain spinning). The delay table is
 * shared by every lock that hashes to a slot, the kernel's own included, so a
 * slot's values alone cannot say which lock moved them. Watching resets the counts.
 */
void spin_delay_watch(const spinlock_t *lock);
void spin_delay_watched_waits(unsigned cpu, u32 *tuned, u32 *plain);

#endif
