/*
 * futex(): the operations libc's threads use (grace/futex.h has the model).
 * FUTEX_WAIT's timeout is relative; FUTEX_WAIT_BITSET's is an absolute time
 * of CLOCK_MONOTONIC, or of CLOCK_REALTIME with FUTEX_CLOCK_REALTIME, which
 * read the same here (kernel/syscall/sys_time.c). The priority-inheritance
 * operations and FUTEX_WAKE_OP are -ENOSYS: glibc's mutexes, condition
 * variables, barriers and join use none of them unless asked for PI.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/futex.h>
#include <grace/uapi/futex.h>
#include "syscall_internal.h"

/* futex(uaddr, op, val, timeout or val2, uaddr2, val3) */
SYSCALL_DEFINE6(futex, u32 __user *, uaddr, int, futex_op, u32, val, const void __user *, utime,
		u32 __user *, uaddr2, u32, val3)
{
	int op = futex_op & FUTEX_CMD_MASK;
	u64 deadline = UINT64_MAX;

	/* Linux takes the real-time clock only where a wait has an absolute time. */
	if ((futex_op & FUTEX_CLOCK_REALTIME) && op != FUTEX_WAIT_BITSET)
		return -ENOSYS;
	switch (op) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		if (utime) {
			u64 ns;
			int err = timespec_from_user(utime, &ns);
			if (err)
				return err;
			if (op == FUTEX_WAIT_BITSET)
				deadline = ns;
			else if (__builtin_add_overflow(arch_clock_ns(), ns, &deadline))
				deadline = UINT64_MAX;
		}
		return futex_wait(uaddr, val, op == FUTEX_WAIT ? FUTEX_BITSET_ANY : val3, deadline);
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		return futex_wake(uaddr, (int)val, op == FUTEX_WAKE ? FUTEX_BITSET_ANY : val3);
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
		/* The fourth argument is a count here, not a timeout. */
		return futex_requeue(uaddr, (int)val, uaddr2, (int)(unsigned long)utime,
				     op == FUTEX_CMP_REQUEUE, val3);
	default:
		return -ENOSYS;
	}
}
