/*
 * poll(): which of a set of descriptors are ready, waiting up to a timeout for
 * one to become so. Each kind of file says whether it is ready now (file_ops's
 * poll; a ramfs file always is); a change that can make one ready (a byte typed
 * at the console, a pipe read, written or closed) calls poll_notify(), which
 * bumps one sequence number and wakes every poller to look again. One queue for
 * all is simple and correct: a waker need not know who polls what, and a
 * poller woken for another file's change only scans its set once more.
 */
#include <grace/atomic.h>
#include <grace/chrdev.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/sched.h>
#include <grace/time.h>
#include <grace/wait.h>
#include "internal.h"

static DEFINE_WAIT_QUEUE_HEAD(poll_wq);
static u32 poll_seq; /* bumped by every poll_notify() */

void poll_notify(void)
{
	fetch_add_relaxed(&poll_seq, 1);
	/*
	 * Pairs with the barrier in the poller's prepare_to_wait(): it queues itself and
	 * then reads poll_seq, we bump poll_seq and then look for sleepers; one of us
	 * sees the other's store.
	 */
	smp_mb();
	if (wait_queue_active(&poll_wq))
		wake_up(&poll_wq);
}

/* fd's readiness, as POLL* bits; POLLNVAL for a descriptor that is not open. */
static short poll_fd(int fd, short events)
{
	struct file *f = fget(fd);
	if (!f)
		return POLLNVAL;
	short ready = f->f_op && f->f_op->poll ? f->f_op->poll(f) : POLLIN | POLLOUT;
	if (!f->f_read)
		ready &= ~POLLIN;
	if (!f->f_write)
		ready &= ~POLLOUT;
	fput(f);
	/* POLLHUP, POLLERR and POLLNVAL are reported whether asked for or not. */
	return ready & (events | POLLHUP | POLLERR);
}

/* Fill each revents; the number of descriptors with any. */
static int poll_scan(struct pollfd *fds, unsigned nfds)
{
	int n = 0;
	for (unsigned i = 0; i < nfds; i++) {
		fds[i].revents = fds[i].fd < 0 ? 0 : poll_fd(fds[i].fd, fds[i].events);
		n += fds[i].revents != 0;
	}
	return n;
}

int vfs_poll(struct pollfd *fds, unsigned nfds, s64 timeout_ns)
{
	u64 deadline = timeout_ns < 0 ? ~0ULL : arch_clock_ns() + (u64)timeout_ns;
	for (;;) {
		/* Read before the scan: a change after it bumps the number and ends the wait. */
		u32 seq = smp_load_acquire(&poll_seq);
		int n = poll_scan(fds, nfds);
		if (n)
			return n;
		u64 now = arch_clock_ns();
		if (now >= deadline)
			return 0;
		if (signal_pending())
			return -EINTR;
		wait_event_timeout(poll_wq, READ_ONCE(poll_seq) != seq || signal_pending(),
				   deadline - now);
	}
}
