/*
 * poll and ppoll over the VFS's vfs_poll(). ppoll's signal mask is in force
 * while it waits; a signal it let in is delivered on the way out with that mask
 * still in force, and the caller's own comes back when the handler returns (in
 * the frame's saved mask), as Linux does; otherwise it is put back at once.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/process.h>
#include <grace/slab.h>
#include <grace/uaccess.h>
#include "syscall_internal.h"

struct timespec64 {
	s64 tv_sec, tv_nsec;
};

static long poll_user(unsigned long ufds, unsigned long nfds, s64 timeout_ns)
{
	if (nfds > FD_MAX)
		return -EINVAL; /* Linux: more than RLIMIT_NOFILE */
	struct pollfd *fds = kmalloc((nfds ? nfds : 1) * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	long n = copy_from_user(fds, (const void __user *)ufds, nfds * sizeof(*fds)) ? -EFAULT : 0;
	if (!n)
		n = vfs_poll(fds, (unsigned)nfds, timeout_ns);
	/* Only revents goes back, as Linux writes it: fd and events stay as the program left them.
	 */
	struct pollfd __user *u = (struct pollfd __user *)ufds;
	for (unsigned long i = 0; n >= 0 && i < nfds; i++)
		if (copy_to_user(&u[i].revents, &fds[i].revents, sizeof(fds[i].revents)))
			n = -EFAULT;
	kfree(fds);
	return n;
}

USER_CALL(poll)
{
	int ms = (int)a2;
	return poll_user(a0, a1, ms < 0 ? -1 : (s64)ms * (s64)NSEC_PER_MSEC);
}

USER_CALL(ppoll)
{
	s64 timeout_ns = -1;
	if (a2) {
		struct timespec64 ts;
		if (copy_from_user(&ts, (const void __user *)a2, sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			return -EINVAL;
		timeout_ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	ksigset_t old = signal_blocked(), mask;
	if (a3) {
		if (a4 != sizeof(mask))
			return -EINVAL;
		if (copy_from_user(&mask, (const void __user *)a3, sizeof(mask)))
			return -EFAULT;
		signal_set_blocked(mask);
	}
	long n = poll_user(a0, a1, timeout_ns);
	if (a3 && n == -EINTR)
		signal_restore_after_handler(old);
	else if (a3)
		signal_set_blocked(old);
	return n;
}
