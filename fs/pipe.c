/*
 * Pipes: a 64 KiB ring between a read end and a write end, each an open file
 * on one anonymous inode (S_IFIFO, so fstat says what it is) that no name
 * reaches. As on Linux: a read waits for data and returns what there is, 0 once
 * every writer has closed; a write of at most PIPE_BUF bytes goes in whole or
 * waits, a longer one may be split; a write with no reader left fails with
 * -EPIPE, and the caller raises SIGPIPE. With O_NONBLOCK (pipe2, F_SETFL) a call
 * that would wait returns -EAGAIN instead.
 *
 * pipe->lock protects the ring and the counts; readers and writers sleep on
 * their wait queue and are woken by the other side after every change.
 */
#include <grace/chrdev.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/wait.h>
#include "internal.h"

#define PIPE_SIZE (64 * 1024) /* Linux's default capacity: 16 pages */
#define PIPE_ORDER 4

struct pipe {
	spinlock_t lock;
	char *buf;
	u64 head, tail;		   /* bytes ever written and read; head - tail are in the ring */
	unsigned readers, writers; /* open files on each end */
	struct wait_queue_head rd_wait, wr_wait;
};

static bool pipe_readable(struct pipe *p)
{
	spin_lock(&p->lock);
	bool ok = p->head != p->tail || !p->writers;
	spin_unlock(&p->lock);
	return ok;
}

static long pipe_read(struct file *f, void *buf, size_t count)
{
	struct pipe *p = f->private_data;
	if (!count)
		return 0;
	for (;;) {
		if ((READ_ONCE(f->f_flags) & O_NONBLOCK) && !pipe_readable(p))
			return -EAGAIN;
		if (wait_event_interruptible(p->rd_wait, pipe_readable(p)))
			return -ERESTARTSYS;
		spin_lock(&p->lock);
		size_t n = MIN(count, p->head - p->tail);
		if (!n && !p->writers) {
			spin_unlock(&p->lock);
			return 0;
		}
		for (size_t i = 0; i < n; i++)
			((char *)buf)[i] = p->buf[(p->tail + i) % PIPE_SIZE];
		p->tail += n;
		spin_unlock(&p->lock);
		if (n) {
			wake_up(&p->wr_wait);
			poll_notify();
			return n;
		}
	}
}

/* Room for a write of count bytes: all of a small one, any for a large one; or no reader. */
static bool pipe_writable(struct pipe *p, size_t count)
{
	spin_lock(&p->lock);
	size_t room = PIPE_SIZE - (p->head - p->tail);
	bool ok = !p->readers || room >= MIN(count, PIPE_BUF);
	spin_unlock(&p->lock);
	return ok;
}

static long pipe_write(struct file *f, const void *buf, size_t count)
{
	struct pipe *p = f->private_data;
	size_t done = 0;
	while (done < count) {
		if ((READ_ONCE(f->f_flags) & O_NONBLOCK) && !pipe_writable(p, count - done))
			return done ? (long)done : -EAGAIN;
		if (wait_event_interruptible(p->wr_wait, pipe_writable(p, count - done)))
			return done ? (long)done : -ERESTARTSYS;
		spin_lock(&p->lock);
		if (!p->readers) {
			spin_unlock(&p->lock);
			return done ? (long)done : -EPIPE;
		}
		size_t n = MIN(count - done, PIPE_SIZE - (p->head - p->tail));
		for (size_t i = 0; i < n; i++)
			p->buf[(p->head + i) % PIPE_SIZE] = ((const char *)buf)[done + i];
		p->head += n;
		spin_unlock(&p->lock);
		done += n;
		wake_up(&p->rd_wait);
		poll_notify();
	}
	return done;
}

static void pipe_release(struct file *f)
{
	struct pipe *p = f->private_data;
	spin_lock(&p->lock);
	if (f->f_read)
		p->readers--;
	else
		p->writers--;
	bool last = !p->readers && !p->writers;
	if (!last) {
		/*
		 * The other end learns of it: EOF for readers, EPIPE for writers. Woken
		 * under the lock: the other end's release, which may free the pipe,
		 * takes it first, so the wake-ups are done before it can.
		 */
		wake_up(&p->rd_wait);
		wake_up(&p->wr_wait);
	}
	spin_unlock(&p->lock);
	if (last) {
		free_pages(p->buf, PIPE_ORDER);
		kfree(p);
	}
	poll_notify();
}

static short pipe_poll(struct file *f)
{
	struct pipe *p = f->private_data;
	short ready = 0;
	spin_lock(&p->lock);
	if (p->head != p->tail)
		ready |= POLLIN;
	if (!p->writers)
		ready |= POLLHUP; /* read end: EOF once drained */
	if (PIPE_SIZE - (p->head - p->tail) >= PIPE_BUF)
		ready |= POLLOUT;
	if (!p->readers)
		ready |= POLLERR; /* write end: a write would raise SIGPIPE */
	spin_unlock(&p->lock);
	return ready;
}

static const struct file_ops pipe_ops = {
    .read = pipe_read, .write = pipe_write, .release = pipe_release, .poll = pipe_poll};

/* A new pipe with one reader and one writer counted, for the two files about to be made. */
static struct pipe *pipe_alloc(void)
{
	struct pipe *p = kzalloc(sizeof(*p));
	if (!p)
		return NULL;
	p->buf = alloc_pages(PIPE_ORDER);
	if (!p->buf) {
		kfree(p);
		return NULL;
	}
	spin_lock_init(&p->lock);
	p->readers = p->writers = 1;
	wait_queue_init(&p->rd_wait);
	wait_queue_init(&p->wr_wait);
	return p;
}

/* A file on one end of p, holding the caller's reference to inode; NULL (and the
 * reference dropped) on ENOMEM. */
static struct file *pipe_file(struct pipe *p, struct inode *inode, bool read, int flags)
{
	struct file *f = file_alloc();
	if (!f) {
		iput(inode);
		return NULL;
	}
	file_open_anon(f, inode, (read ? O_RDONLY : O_WRONLY) | (flags & O_NONBLOCK), &pipe_ops);
	f->private_data = p;
	return f;
}

int vfs_pipe2(int fds[2], int flags)
{
	if (flags & ~(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	bool cloexec = flags & O_CLOEXEC;
	struct fs_context *fs = fs_current();
	struct pipe *p = fs ? pipe_alloc() : NULL;
	if (!p)
		return -ENOMEM;
	struct inode *inode = new_inode(root_mnt.mnt_root->d_sb, S_IFIFO | 0600);
	struct file *rd = inode ? pipe_file(p, igrab(inode), true, flags) : NULL;
	if (!rd && inode)
		iput(inode);
	struct file *wr =
	    rd ? pipe_file(p, inode, false, flags) : NULL; /* takes inode's reference */
	if (!wr) {
		/* Undo what exists: the pipe's writer count keeps rd's release from freeing it. */
		if (rd)
			fput(rd);
		free_pages(p->buf, PIPE_ORDER);
		kfree(p);
		return -ENOMEM;
	}
	/* From here each end's release does the freeing. */
	fds[0] = fd_install_lowest(fs, rd, cloexec);
	if (fds[0] < 0) {
		fput(rd);
		fput(wr);
		return fds[0];
	}
	fds[1] = fd_install_lowest(fs, wr, cloexec);
	if (fds[1] < 0) {
		vfs_close(fds[0]);
		fput(wr);
		return fds[1];
	}
	return 0;
}
