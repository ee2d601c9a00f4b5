/*
 * The clock calls of the user ABI. There is no battery-backed clock, so the
 * real-time clock starts at the epoch when the kernel boots: CLOCK_REALTIME
 * reads the same as CLOCK_MONOTONIC, and a program sees 1970 plus the uptime.
 * Sleeps wait on the scheduler's timers, so they end no earlier than asked.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/sched.h>
#include <grace/uaccess.h>
#include <grace/wait.h>
#include <grace/uapi/time.h>
#include "syscall_internal.h"

#define NSEC_PER_SEC 1000000000ULL

static int clock_read(unsigned long id, u64 *ns)
{
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		*ns = arch_clock_ns();
		return 0;
	case CLOCK_PROCESS_CPUTIME_ID:
	case CLOCK_THREAD_CPUTIME_ID:
		*ns = task_runtime_ns(current);
		return 0;
	default:
		return -EINVAL;
	}
}

SYSCALL_DEFINE2(clock_gettime, int, which_clock, void __user *, tp)
{
	u64 ns;
	int err = clock_read(which_clock, &ns);
	if (err)
		return err;
	struct timespec ts = {ns / NSEC_PER_SEC, ns % NSEC_PER_SEC};
	return copy_to_user(tp, &ts, sizeof(ts)) ? -EFAULT : 0;
}

/* x86_64's time(): seconds, also stored at tloc if given; glibc calls it with no vDSO. */
SYSCALL_DEFINE1(time, s64 __user *, tloc)
{
	s64 sec = (s64)(arch_clock_ns() / NSEC_PER_SEC);
	if (tloc && copy_to_user((void __user *)tloc, &sec, sizeof(sec)))
		return -EFAULT;
	return sec;
}

SYSCALL_DEFINE2(gettimeofday, void __user *, utv, void __user *, tz)
{
	u64 ns = arch_clock_ns();
	struct timeval tv = {ns / NSEC_PER_SEC, (ns % NSEC_PER_SEC) / 1000};
	if (utv && copy_to_user(utv, &tv, sizeof(tv)))
		return -EFAULT;
	return 0;
}

static DEFINE_WAIT_QUEUE_HEAD(sleep_wq); /* nothing wakes it: sleepers wait out their time */

/*
 * Sleep until the clock reads deadline (in arch_clock_ns() time), or a signal
 * comes: 0, or -EINTR. (A signal that would not run a handler either ends the
 * program or was dropped when sent, so only a handled one ends a sleep.)
 */
static int sleep_until(u64 deadline)
{
	while (arch_clock_ns() < deadline) {
		if (signal_pending())
			return -EINTR;
		wait_event_timeout(sleep_wq, signal_pending(), deadline - arch_clock_ns());
	}
	return 0;
}

/* A user timespec in ns (syscall_internal.h). */
int timespec_from_user(const void __user *uts, u64 *ns)
{
	struct timespec ts;
	if (copy_from_user(&ts, uts, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || (u64)ts.tv_nsec >= NSEC_PER_SEC)
		return -EINVAL;
	if (__builtin_mul_overflow((u64)ts.tv_sec, NSEC_PER_SEC, ns) ||
	    __builtin_add_overflow(*ns, (u64)ts.tv_nsec, ns))
		*ns = ~0ULL;
	return 0;
}

static u64 deadline_after(u64 now, u64 ns)
{
	u64 d;
	return __builtin_add_overflow(now, ns, &d) ? ~0ULL : d;
}

/* A relative sleep: interrupted, the time left goes to *rem (if given), as Linux reports it. */
static long sleep_relative(u64 now, u64 ns, void __user *urem)
{
	u64 deadline = deadline_after(now, ns);
	int err = sleep_until(deadline);
	if (err == -EINTR && urem) {
		u64 left = deadline - MIN(deadline, arch_clock_ns());
		struct timespec rem = {(s64)(left / NSEC_PER_SEC), (s64)(left % NSEC_PER_SEC)};
		if (copy_to_user(urem, &rem, sizeof(rem)))
			return -EFAULT;
	}
	return err;
}

SYSCALL_DEFINE2(nanosleep, const void __user *, rqtp, void __user *, rmtp)
{
	u64 ns;
	int err = timespec_from_user(rqtp, &ns);
	if (err)
		return err;
	return sleep_relative(arch_clock_ns(), ns, rmtp);
}

SYSCALL_DEFINE4(clock_nanosleep, int, which_clock, int, flags, const void __user *, rqtp,
		void __user *, rmtp)
{
	u64 ns, now;
	int err = clock_read(which_clock, &now);
	if (err)
		return err;
	if (which_clock == CLOCK_PROCESS_CPUTIME_ID || which_clock == CLOCK_THREAD_CPUTIME_ID)
		return -EINVAL; /* Linux: -EINVAL for the thread clock, and the process one here */
	if ((err = timespec_from_user(rqtp, &ns)))
		return err;
	if (flags & TIMER_ABSTIME)
		return sleep_until(ns);
	return sleep_relative(now, ns, rmtp);
}
