/*
 * A process's resource limits (getrlimit, setrlimit, prlimit64) and the
 * machine's resources (sysinfo).
 *
 * Grace keeps no limits per process: each limit is what the kernel enforces on
 * every process, and none can be changed. RLIMIT_NOFILE is the size the
 * descriptor table cannot grow past (FD_MAX), RLIMIT_STACK the stack exec maps
 * (it never grows), RLIMIT_CORE 0 (no core file is ever written). A limit on
 * something Grace does not bound (CPU time, file size, address space, ...) is
 * infinite, and one on something Grace does not have (nice values, real-time
 * priorities, POSIX message queues) is 0. Setting a limit to what it is
 * succeeds; anything else fails with Linux's errors where it has one (EINVAL
 * for a soft limit above the hard one; EPERM for RLIMIT_NOFILE past nr_open,
 * which is FD_MAX here) and EPERM otherwise, what Linux tells a process that
 * may not raise a hard limit.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/numa.h>
#include <grace/page_alloc.h>
#include <grace/process.h>
#include <grace/signal.h>
#include <grace/string.h>
#include <grace/time.h>
#include <grace/uaccess.h>
#include <grace/uapi/resource.h>
#include "syscall_internal.h"

#define UNLIMITED RLIM_INFINITY

static const struct rlimit64 grace_rlimits[RLIM_NLIMITS] = {
    [RLIMIT_CPU] = {UNLIMITED, UNLIMITED},   /* no CPU time is counted against a limit */
    [RLIMIT_FSIZE] = {UNLIMITED, UNLIMITED}, /* ramfs's own size cap is EFBIG, not SIGXFSZ */
    [RLIMIT_DATA] = {UNLIMITED, UNLIMITED},  /* brk and mmap stop only when memory does */
    [RLIMIT_STACK] = {EXEC_STACK_SIZE, EXEC_STACK_SIZE}, /* mapped whole at exec, never grown */
    [RLIMIT_CORE] = {0, 0},				 /* no core file is written */
    [RLIMIT_RSS] = {UNLIMITED, UNLIMITED},		 /* Linux does not enforce it either */
    [RLIMIT_NPROC] = {UNLIMITED, UNLIMITED},		 /* fork stops only when memory does */
    [RLIMIT_NOFILE] = {FD_MAX, FD_MAX},			 /* the descriptor table's most */
    [RLIMIT_MEMLOCK] = {UNLIMITED, UNLIMITED},		 /* nothing is locked, nothing swapped */
    [RLIMIT_AS] = {UNLIMITED, UNLIMITED},		 /* the user half is the only bound */
    [RLIMIT_LOCKS] = {UNLIMITED, UNLIMITED},		 /* there are no file locks to count */
    [RLIMIT_SIGPENDING] = {UNLIMITED, UNLIMITED},	 /* standard signals do not queue */
    [RLIMIT_MSGQUEUE] = {0, 0},				 /* no POSIX message queues */
    [RLIMIT_NICE] = {0, 0},				 /* no priorities to raise */
    [RLIMIT_RTPRIO] = {0, 0},				 /* no real-time scheduling */
    [RLIMIT_RTTIME] = {UNLIMITED, UNLIMITED},		 /* no real-time scheduling */
};

/* Linux's do_prlimit(): resource's limit into *old (if old), then new's checked against it. */
static int rlimit_get_set(unsigned resource, const struct rlimit64 *new, struct rlimit64 *old)
{
	if (resource >= RLIM_NLIMITS)
		return -EINVAL;
	const struct rlimit64 *cur = &grace_rlimits[resource];
	if (new) {
		if (new->rlim_cur > new->rlim_max)
			return -EINVAL;
		if (resource == RLIMIT_NOFILE && new->rlim_max > FD_MAX)
			return -EPERM;
		if (new->rlim_cur != cur->rlim_cur || new->rlim_max != cur->rlim_max)
			return -EPERM;
	}
	if (old)
		*old = *cur;
	return 0;
}

SYSCALL_DEFINE2(getrlimit, unsigned, resource, void __user *, rlim)
{
	struct rlimit64 old;
	int err = rlimit_get_set(resource, NULL, &old);
	if (err)
		return err;
	return copy_to_user(rlim, &old, sizeof(old)) ? -EFAULT : 0;
}

SYSCALL_DEFINE2(setrlimit, unsigned, resource, const void __user *, rlim)
{
	struct rlimit64 new;
	if (copy_from_user(&new, rlim, sizeof(new)))
		return -EFAULT;
	return rlimit_get_set(resource, &new, NULL);
}

SYSCALL_DEFINE4(prlimit64, int, pid, unsigned, resource, const void __user *, new_rlim,
		void __user *, old_rlim)
{
	struct rlimit64 new, old;

	if (new_rlim && copy_from_user(&new, new_rlim, sizeof(new)))
		return -EFAULT;
	/* Every process has the same limits: all that matters is that pid names one (kill's 0). */
	if (pid < 0 || (pid && pid != current_process()->pid && proc_kill(pid, 0, SI_USER)))
		return -ESRCH;
	int err = rlimit_get_set(resource, new_rlim ? &new : NULL, old_rlim ? &old : NULL);
	if (!err && old_rlim && copy_to_user(old_rlim, &old, sizeof(old)))
		err = -EFAULT;
	return err;
}

SYSCALL_DEFINE1(sysinfo, void __user *, uinfo)
{
	struct sysinfo info;
	u64 ns = arch_clock_ns(), managed = 0;

	memset(&info, 0, sizeof(info));
	/* Linux rounds a part of a second up: a machine up 0.1 s has been up 1 s. */
	info.uptime = (s64)(ns / NSEC_PER_SEC + (ns % NSEC_PER_SEC != 0));
	/* No load average is kept (loads stay 0); no swap, no shared memory, no buffer cache. */
	for (unsigned n = 0; n < nr_nodes; n++)
		managed += node_managed_pages((int)n);
	info.totalram = managed * PAGE_SIZE;
	info.freeram = mm_free_bytes();
	unsigned procs = proc_count();
	info.procs = procs > 0xffff ? 0xffff : (u16)procs;
	info.mem_unit = 1; /* bytes: what Linux reports whenever the figures fit in a long */
	return copy_to_user(uinfo, &info, sizeof(info)) ? -EFAULT : 0;
}
