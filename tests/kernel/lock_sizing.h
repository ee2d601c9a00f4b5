/*
 * Sizing the selftests whose time goes into ticket-lock hand-offs (spinlock, buddy,
 * sched).
 *
 * Under QEMU with 64 vCPUs on 2 host cores a ticket-lock hand-off to a waiter whose
 * vCPU the host has descheduled waited for a host time slice, tens of ms, while the
 * waiters behind it spun; such tests split a fixed total over the CPUs, a few
 * hundred hand-offs at SMP=64. With paravirtual spinlock waits (the default under
 * QEMU) those waiters halt, give the host CPU back, and are kicked in turn: at
 * SMP=64 a hand-off then costs well under a millisecond, and on hardware it always
 * did. So where hand-offs are cheap each unit of work (a CPU, a thread) does the
 * share it has at SMP=4 at any CPU count; only an emulated machine with
 * spinlock_pv=off keeps the split. The rwlock and bit spinlock tests keep theirs:
 * their waiters spin without halting.
 */
#ifndef TESTS_LOCK_SIZING_H
#define TESTS_LOCK_SIZING_H

#include <grace/arch.h>
#include <grace/cpumask.h>
#include <grace/spinlock.h>

#define LOCK_SIZING_CPUS                                                                           \
	4 /* the CPU count whose share every CPU keeps when hand-offs are cheap                    \
	   */

static inline bool lock_handoffs_cheap(void)
{
	return READ_ONCE(spinlock_pv) || !arch_is_virtual(NULL);
}

/*
 * Work per unit for a test that splits total over units (CPUs, or threads in
 * proportion to the CPUs), at least min: total / units, or, where hand-offs are
 * cheap, what each unit gets at SMP=4, where there are units * 4 / cpus of them.
 */
static inline unsigned lock_sized_share(unsigned total, unsigned units, unsigned min)
{
	unsigned cpus = num_online_cpus();
	u64 n = total / (units ? units : 1);
	if (cpus > LOCK_SIZING_CPUS && lock_handoffs_cheap())
		n = (u64)total * cpus / ((u64)(units ? units : 1) * LOCK_SIZING_CPUS);
	return n < min ? min : (unsigned)n;
}

#endif
