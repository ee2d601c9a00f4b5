/*
 * The process calls of the user ABI that need no more than the calling
 * process: its ids, its end, the machine's name, random bytes, the TLS pointer.
 * Every process runs as root (uid and gid 0), as init does on Linux.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/process.h>
#include <grace/random.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uapi/prctl.h>
#include <grace/uapi/random.h>
#include <grace/uapi/utsname.h>
#include "syscall_internal.h"

SYSCALL_DEFINE1(exit, int, error_code)
{
	/* This thread only; the process's end if it is the last. */
	thread_exit((error_code & 0xff) << 8);
}

SYSCALL_DEFINE1(exit_group, int, error_code)
{
	proc_exit((error_code & 0xff) << 8);
}

SYSCALL_DEFINE0(getpid)
{
	return current_process()->pid;
}

SYSCALL_DEFINE0(gettid)
{
	return current_thread()->tid;
}

SYSCALL_DEFINE0(getppid)
{
	return proc_getppid();
}

/* Every process is root, with every id 0. */
SYSCALL_DEFINE0(getuid)
{
	return 0;
}

SYSCALL_DEFINE0(geteuid)
{
	return 0;
}

SYSCALL_DEFINE0(getgid)
{
	return 0;
}

SYSCALL_DEFINE0(getegid)
{
	return 0;
}

SYSCALL_DEFINE1(set_tid_address, int __user *, tidptr)
{
	current_thread()->clear_child_tid = (uintptr_t)tidptr; /* zeroed and woken at exit */
	return current_thread()->tid;
}

SYSCALL_DEFINE0(sched_yield)
{
	yield();
	return 0;
}

/* The Linux release whose system-call ABI Grace follows (Debian 12's kernel). */
#define UTS_RELEASE "6.1.0-grace"

SYSCALL_DEFINE1(uname, void __user *, name)
{
	struct utsname u;
	memset(&u, 0, sizeof(u));
	strlcpy(u.sysname, "Grace", UTS_LEN);
	strlcpy(u.nodename, "grace", UTS_LEN);
	strlcpy(u.release, UTS_RELEASE, UTS_LEN);
	strlcpy(u.version, "#1 SMP", UTS_LEN);
	strlcpy(u.machine, arch_name, UTS_LEN);
	strlcpy(u.domainname, "(none)", UTS_LEN);
	return copy_to_user(name, &u, sizeof(u)) ? -EFAULT : 0;
}

#define GETRANDOM_MAX (32 * 1024 * 1024) /* Linux caps one call a little under this */

SYSCALL_DEFINE3(getrandom, char __user *, buf, size_t, count, unsigned, flags)
{
	if (flags & ~(unsigned long)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
		return -EINVAL;
	size_t n = MIN(count, (size_t)GETRANDOM_MAX), done = 0;
	if (!access_ok((void __user *)buf, n))
		return -EFAULT;
	u8 chunk[256];
	while (done < n) {
		size_t k = MIN(n - done, sizeof(chunk));
		get_random_bytes(chunk, k);
		if (copy_to_user((u8 __user *)buf + done, chunk, k))
			return done ? (long)done : -EFAULT;
		done += k;
	}
	return done;
}

/* x86_64's arch_prctl: the FS base, which libc points at the thread's TLS block. */
SYSCALL_DEFINE2(arch_prctl, int, option, unsigned long, arg2)
{
	switch (option) {
	case ARCH_SET_FS:
		if (arg2 >= USER_VA_END)
			return -EPERM;
		arch_set_user_tls(NULL, arg2);
		return 0;
	default:
		return -EINVAL;
	}
}
