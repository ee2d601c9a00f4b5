/*
 * Futexes: sleeping on a 32-bit word of user memory until another thread wakes
 * the word (kernel/proc/futex.c). What libc's mutexes, condition variables and
 * pthread_join() are built on.
 *
 * A word is named by its address space and address: every futex is a
 * process-private one, FUTEX_PRIVATE_FLAG or not, which is what threads of one
 * process see. (Linux names a word of a MAP_SHARED mapping by its page, so
 * that processes sharing the mapping meet; Grace's shared anonymous memory is
 * not shared across fork, so no two processes can name one word.)
 */
#ifndef GRACE_FUTEX_H
#define GRACE_FUTEX_H

#include <grace/types.h>
#include <grace/uaccess.h>

/* Wake any waiter, whatever bitset it waits with. */
#define FUTEX_BITSET_ANY 0xffffffffu

/*
 * If *uaddr still holds val, sleep until woken by a waker whose bitset
 * intersects bitset, until arch_clock_ns() reaches deadline_ns (UINT64_MAX: none),
 * or until a signal. 0 (woken), -EAGAIN (*uaddr != val), -ETIMEDOUT,
 * -ERESTARTSYS (a signal), -EFAULT, -EINVAL (uaddr not 4-byte aligned).
 */
int futex_wait(u32 __user *uaddr, u32 val, u32 bitset, u64 deadline_ns);

/*
 * Wake up to nr waiters (at least one, as Linux counts) on uaddr whose bitset
 * intersects bitset: how many, or -EINVAL.
 */
int futex_wake(u32 __user *uaddr, int nr, u32 bitset);

/*
 * Wake up to nr_wake waiters on uaddr and move up to nr_requeue more to wait on
 * uaddr2 instead; with check, only if *uaddr still holds cmpval (else -EAGAIN).
 * The number woken plus moved, or -EFAULT, -EINVAL.
 */
int futex_requeue(u32 __user *uaddr, int nr_wake, u32 __user *uaddr2, int nr_requeue, bool check,
		  u32 cmpval);

/* Set up the buckets, at boot before the first process. */
void futex_init(void);

#endif
