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
#include "syscall_internal.h"

USER_CALL(exit)
{
	/* This thread only; the process's end if it is the last. */
	thread_exit(((int)a0 & 0xff) << 8);
}

USER_CALL(exit_group)
{
	proc_exit(((int)a0 & 0xff) << 8);
}

USER_CALL(getpid)
{
	return current_process()->pid;
}

USER_CALL(gettid)
{
	return current_thread()->tid;
}

USER_CALL(getppid)
{
	return proc_getppid();
}

USER_CALL(getuid)
{
	return 0;
}

USER_CALL(set_tid_address)
{
	current_thread()->clear_child_tid = a0; /* zeroed and woken at exit */
	return current_thread()->tid;
}

USER_CALL(sched_yield)
{
	yield();
	return 0;
}

#define UTS_LEN 65
struct utsname {
	char sysname[UTS_LEN], nodename[UTS_LEN], release[UTS_LEN];
	char version[UTS_LEN], machine[UTS_LEN], domainname[UTS_LEN];
};

/* The Linux release whose system-call ABI Grace follows (Debian 12's kernel). */
#define UTS_RELEASE "6.1.0-grace"

USER_CALL(uname)
{
	struct utsname u;
	memset(&u, 0, sizeof(u));
	strlcpy(u.sysname, "Grace", UTS_LEN);
	strlcpy(u.nodename, "grace", UTS_LEN);
	strlcpy(u.release, UTS_RELEASE, UTS_LEN);
	strlcpy(u.version, "#1 SMP", UTS_LEN);
	strlcpy(u.machine, arch_name, UTS_LEN);
	strlcpy(u.domainname, "(none)", UTS_LEN);
	return copy_to_user((void __user *)a0, &u, sizeof(u)) ? -EFAULT : 0;
}

#define GRND_NONBLOCK 0x1
#define GRND_RANDOM 0x2
#define GRND_INSECURE 0x4
#define GETRANDOM_MAX (32 * 1024 * 1024) /* Linux caps one call a little under this */

USER_CALL(getrandom)
{
	if (a2 & ~(unsigned long)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
		return -EINVAL;
	size_t n = MIN(a1, (size_t)GETRANDOM_MAX), done = 0;
	if (!access_ok((void __user *)a0, n))
		return -EFAULT;
	u8 chunk[256];
	while (done < n) {
		size_t k = MIN(n - done, sizeof(chunk));
		get_random_bytes(chunk, k);
		if (copy_to_user((u8 __user *)a0 + done, chunk, k))
			return done ? (long)done : -EFAULT;
		done += k;
	}
	return done;
}

#define ARCH_SET_FS 0x1002

/* x86_64's arch_prctl: the FS base, which libc points at the thread's TLS block. */
USER_CALL(arch_prctl)
{
	switch (a0) {
	case ARCH_SET_FS:
		if (a1 >= USER_VA_END)
			return -EPERM;
		arch_set_user_tls(NULL, a1);
		return 0;
	default:
		return -EINVAL;
	}
}
