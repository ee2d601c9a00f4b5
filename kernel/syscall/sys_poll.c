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
#include <grace/uapi/time.h>
#include "syscall_internal.h"

static long poll_user(struct pollfd __user *ufds, unsigned long nfds, s64 timeout_ns)
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

SYSCALL_DEFINE3(poll, struct pollfd __user *, ufds, unsigned, nfds, int, timeout_msecs)
{
	int ms = timeout_msecs;
	return poll_user(ufds, nfds, ms < 0 ? -1 : (s64)ms * (s64)NSEC_PER_MSEC);
}

SYSCALL_DEFINE5(ppoll, struct pollfd __user *, ufds, unsigned, nfds, const void __user *, tsp,
		const void __user *, sigmask, size_t, sigsetsize)
{
	s64 timeout_ns = -1;
	if (tsp) {
		struct timespec ts;
		if (copy_from_user(&ts, tsp, sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			return -EINVAL;
		timeout_ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	ksigset_t old = signal_blocked(), mask;
	if (sigmask) {
		if (sigsetsize != sizeof(mask))
			return -EINVAL;
		if (copy_from_user(&mask, sigmask, sizeof(mask)))
			return -EFAULT;
		signal_set_blocked(mask);
	}
	long n = poll_user(ufds, nfds, timeout_ns);
	if (sigmask && n == -EINTR)
		signal_restore_after_handler(old);
	else if (sigmask)
		signal_set_blocked(old);
	return n;
}
