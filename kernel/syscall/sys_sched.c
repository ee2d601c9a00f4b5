/*
 * sched_getaffinity and sched_setaffinity: the CPUs a thread may run on (named
 * by its tid: pthread_setaffinity_np names another thread of the caller's), as
 * a bitmap of CPU ids, for binding workers to CPUs as the seed benchmarks do. The bitmap is
 * nr_cpu_ids bits (every CPU described, rounded up to whole longs); as on Linux, a shorter user
 * buffer is -EINVAL for get, and bits past the CPUs that exist are ignored for set.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/kthread.h>
#include <grace/process.h>
#include <grace/sched.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include "syscall_internal.h"

/* Bytes of Linux's cpumask for this machine: nr_cpu_ids bits in whole longs. */
static size_t affinity_bytes(void)
{
	return ALIGN_UP(boot_info.nr_cpus, BITS_PER_LONG) / 8;
}

/* The task of thread tid (0: the caller), held (task_put() when done); or NULL. */
static struct task *affinity_task(int tid)
{
	if (tid == 0) {
		task_get(current);
		return current;
	}
	return thread_task_get(tid);
}

SYSCALL_DEFINE3(sched_getaffinity, int, pid, unsigned, len, unsigned long __user *, user_mask_ptr)
{
	size_t n = affinity_bytes();
	if (len < n || len % sizeof(long))
		return -EINVAL;
	struct task *t = affinity_task(pid);
	if (!t)
		return pid < 0 ? -EINVAL : -ESRCH;
	struct cpumask m = t->allowed;
	task_put(t);
	cpumask_and(&m, &m, &cpu_online_mask);
	return copy_to_user((void __user *)user_mask_ptr, m.bits, n) ? -EFAULT : (long)n;
}

SYSCALL_DEFINE3(sched_setaffinity, int, pid, unsigned, len, const unsigned long __user *,
		user_mask_ptr)
{
	struct cpumask m;
	cpumask_clear(&m);
	size_t n = MIN(len, sizeof(m.bits));
	if (copy_from_user(m.bits, (const void __user *)user_mask_ptr, n))
		return -EFAULT;
	struct task *t = affinity_task(pid);
	if (!t)
		return pid < 0 ? -EINVAL : -ESRCH;
	cpumask_and(&m, &m, &cpu_online_mask);
	int err = cpumask_empty(&m) ? -EINVAL : set_cpus_allowed(t, &m);
	task_put(t);
	return err;
}
