/*
 * The backoff tuning's inside: its bounds and table, the paravirtual waits' bound
 * and wait table, and the introspection that kernel/locking/spinlock.c and
 * spinlock_pv.c offer their selftests (tests/kernel/spinlock_test.c,
 * spinlock_pv_test.c) and benchmark (tests/bench/spinlock_bench.c). Nothing else
 * includes this.
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

/*
 * Paravirtual waits (spinlock_pv.c). SPIN_PV_THRESHOLD bounds the spinning before a
 * waiter halts, in loop iterations: polls of owner when spinning plainly, and
 * cpu_relax() iterations plus polls with backoff, so a waiter far from the head
 * (whose backoff is long) halts after fewer polls. Linux 3.12 spun 1 << 15 loops
 * (SPIN_THRESHOLD, "x86, ticketlock: Add slowpath logic", Jeremy Fitzhardinge and
 * Raghavendra K T, 2013), long enough that most waits end before it, on hardware
 * where a loop costs a few ns; under QEMU's TCG a loop costs tens of ns, and a
 * spinning vCPU is preempted by the host long before 1 << 15 loops are done. The
 * spinlock benchmark's mode=pv, three runs each on a 2-core host (medians, one
 * lock / 16 locks, acquisitions per second):
 *
 *                     1 << 10          1 << 12          1 << 15
 *   x86_64  SMP=8     90k / 914k      173k / 886k       63k / 487k
 *   x86_64  SMP=64   175k / 935k      159k / 440k       20k / 280k
 *   riscv64 SMP=8     32k / 341k       19k / 168k       14k / 100k
 *   riscv64 SMP=64    47k / 247k       21k / 185k        6k /  54k
 *
 * In a first, rougher series, 1 << 8 often halted on nearly every acquisition with
 * one lock (up to 1.00 halts per acquisition), which a kick then has to undo.
 *
 * The wait table has SPIN_PV_SLOTS slots, indexed by a hash of the lock address
 * (the backoff table's hash, SPIN_PV_HASH_SHIFT top bits): each a mask of the CPUs
 * whose wait record names a lock of that slot. A CPU waits for one lock at a time,
 * so 64 CPUs fill at most 64 bits; more slots only mean fewer records an unlocker
 * reads for another lock of its slot. 64 slots, one cache line each: 4 KiB.
 */
#define SPIN_PV_THRESHOLD (1u << 10)
#define SPIN_PV_HASH_SHIFT 6
#define SPIN_PV_SLOTS (1u << SPIN_PV_HASH_SHIFT)

/* One contended wait's halting part: true if the lock is ours, false to spin again. */
bool spin_pv_wait(spinlock_t *lock, u32 ticket);
unsigned spin_pv_slot(const spinlock_t *lock);

/*
 * Turn paravirtual waits on or off while other CPUs run (the benchmark's phases, the
 * selftests). On: thread context, interrupts on, no spinlock held (it waits for
 * every CPU to answer a cross-call). Off: any thread context, a spinlock may be
 * held; it returns once no CPU is halted in a wait. One caller at a time.
 */
void spin_pv_set(bool on);

/* Per-CPU counts, only ever rising; this CPU writes its own, with interrupts off. */
struct spin_pv_stats {
	u64 waits; /* contended acquisitions that entered the wait table */
	u64 halts; /* arch_spin_halt() calls */
	u64 wakes; /* waits that halted and then found the lock theirs */
	u64 kicks; /* kicks sent by this CPU's unlocks */
	u64 looks; /* unlocks on this CPU that found SPIN_OWNER_HALTED and read the table */
};
void spin_pv_stats_of_cpu(unsigned cpu, struct spin_pv_stats *out);
/* The sum over all possible CPUs (grace/percpu_counter.h). */
void spin_pv_stats_sum(struct spin_pv_stats *out);
/* The lock cpu's wait record names (it is in the wait table for it), or NULL. */
const spinlock_t *spin_pv_waiting_on(unsigned cpu);
/* Why spinlock_pv is what the boot made it (for the selftests and the boot line). */
const char *spin_pv_boot_reason(void);

#endif
