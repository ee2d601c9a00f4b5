/*
 * fork, clone, execve and wait4. clone makes a new process with its own
 * copy-on-write address space (kernel/proc/process.c, mm/fork.c), or with
 * CLONE_THREAD a thread of the caller's (kernel/proc/thread.c), which must
 * share everything a thread shares on Linux: memory, handlers, descriptors
 * and current directory (CLONE_VM | CLONE_SIGHAND | CLONE_FILES | CLONE_FS,
 * as pthread_create asks; Grace keeps descriptors and directory together, so
 * one without the other is -EINVAL). CLONE_VM without CLONE_THREAD or
 * CLONE_VFORK, a process sharing its parent's memory, is -ENOSYS. vfork, and
 * clone with CLONE_VM | CLONE_VFORK (posix_spawn's way), make a child that
 * runs on its parent's memory while the parent sleeps, until the child execs
 * or exits, as on Linux.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/process.h>
#include <grace/sched.h>
#include <grace/signal.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uapi/resource.h>
#include <grace/uapi/sched.h>
#include <asm/memory.h>
#include "syscall_internal.h"

/* The flags a new process may be cloned with. */
#define CLONE_PROCESS_FLAGS                                                                        \
	(CSIGNAL | CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID |           \
	 CLONE_DETACHED | CLONE_CHILD_SETTID)
/* What a thread shares, all of which it must; and what else it may ask for. */
#define CLONE_THREAD_SHARES (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD)
#define CLONE_THREAD_FLAGS                                                                         \
	(CLONE_THREAD_SHARES | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |                \
	 CLONE_CHILD_CLEARTID | CLONE_DETACHED | CLONE_CHILD_SETTID)

/* The argument order differs: x86_64 (flags, sp, ptid, ctid, tls), riscv64 (flags, sp, ptid, tls,
 * ctid). */
#if defined(__x86_64__)
#define CLONE_ARG_CTID 3
#define CLONE_ARG_TLS 4
#else
#define CLONE_ARG_CTID 4
#define CLONE_ARG_TLS 3
#endif

static long clone_thread(unsigned long flags, unsigned long sp, unsigned long ptid,
			 unsigned long ctid, unsigned long tls)
{
	/* Linux's checks (kernel/fork.c): a thread shares handlers, which need shared memory. */
	if (!(flags & CLONE_SIGHAND) || !(flags & CLONE_VM))
		return -EINVAL;
	if ((flags & CLONE_THREAD_SHARES) != CLONE_THREAD_SHARES ||
	    (flags & ~(unsigned long)CLONE_THREAD_FLAGS))
		return -EINVAL; /* CSIGNAL too: a thread's end signals nobody */
#ifdef __x86_64__
	if ((flags & CLONE_SETTLS) && tls >= USER_VA_END)
		return -EPERM; /* x86_64's FS base write refuses it (riscv64's tp takes any value)
				*/
#endif
	struct regs regs = *current->user_regs;
	if (sp)
		regs_set_user_sp(&regs, sp);
	return proc_clone_thread(&regs, flags & CLONE_SETTLS, tls,
				 (flags & CLONE_PARENT_SETTID) ? ptid : 0, ctid,
				 flags & CLONE_CHILD_SETTID, flags & CLONE_CHILD_CLEARTID);
}

static long clone_process(unsigned long flags, unsigned long sp, unsigned long ptid,
			  unsigned long ctid)
{
	if ((flags & CLONE_VM) && !(flags & CLONE_VFORK))
		return -ENOSYS; /* a process sharing its parent's memory */
	if (flags & ~(unsigned long)CLONE_PROCESS_FLAGS)
		return -EINVAL;
	if ((flags & CSIGNAL) && (flags & CSIGNAL) != SIGCHLD)
		return -EINVAL; /* only SIGCHLD (or none) is ever sent to the parent */
	struct regs regs = *current->user_regs;
	if (sp)
		regs_set_user_sp(&regs, sp);
	long pid = proc_fork(&regs, (flags & CLONE_CHILD_SETTID) ? ctid : 0,
			     (flags & CLONE_CHILD_CLEARTID) ? ctid : 0, flags & CLONE_VM,
			     flags & CLONE_VFORK);
	if (pid > 0 && (flags & CLONE_PARENT_SETTID)) {
		int v = (int)pid;
		copy_to_user((void __user *)ptid, &v, sizeof(v)); /* a fault is ignored, as Linux */
	}
	return pid;
}

/*
 * The child's tid pointer and its TLS come third and fourth in one order or the
 * other, by arch (CLONE_ARG_CTID, CLONE_ARG_TLS); the pointers are addresses the
 * child's setup stores to, each checked where it is used.
 */
SYSCALL_DEFINE5(clone, unsigned long, clone_flags, unsigned long, newsp, unsigned long,
		parent_tidptr, unsigned long, arg3, unsigned long, arg4)
{
	const unsigned long args[5] = {clone_flags, newsp, parent_tidptr, arg3, arg4};
	if (clone_flags & CLONE_THREAD)
		return clone_thread(clone_flags, newsp, parent_tidptr, args[CLONE_ARG_CTID],
				    args[CLONE_ARG_TLS]);
	return clone_process(clone_flags, newsp, parent_tidptr, args[CLONE_ARG_CTID]);
}

SYSCALL_DEFINE0(fork)
{
	return clone_process(SIGCHLD, 0, 0, 0);
}

SYSCALL_DEFINE0(vfork)
{
	return clone_process(CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0);
}

/* argv and envp stay where they are: exec_load() copies them into the new program's stack. */
SYSCALL_DEFINE3(execve, const char __user *, filename, const char __user *const __user *, argv,
		const char __user *const __user *, envp)
{
	char *path = kmalloc(PATH_MAX);
	if (!path)
		return -ENOMEM;
	long len = strncpy_from_user(path, filename, PATH_MAX);
	int err = len < 0 ? (int)len : len == PATH_MAX ? -ENAMETOOLONG : len == 0 ? -ENOENT : 0;
	uintptr_t pc = 0, sp = 0;
	if (!err)
		err = exec_load(current_process(), path, (struct exec_vec){.user = argv},
				(struct exec_vec){.user = envp}, &pc, &sp);
	kfree(path);
	if (err)
		return err;
	fs_close_on_exec();
	arch_enter_user(pc, sp);
}

SYSCALL_DEFINE4(wait4, int, upid, int __user *, stat_addr, int, options, void __user *, ru)
{
	int status = 0;
	long pid = proc_wait4(upid, &status, (unsigned)options);
	if (pid <= 0)
		return pid;
	if (stat_addr && copy_to_user(stat_addr, &status, sizeof(status)))
		return -EFAULT;
	if (ru) {
		struct rusage use;
		memset(&use, 0, sizeof(use)); /* resource use is not accounted per process */
		if (copy_to_user(ru, &use, sizeof(use)))
			return -EFAULT;
	}
	return pid;
}
