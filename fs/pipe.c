/*
 * Pipes: Linux's ring of 16 page buffers between a read end and a write end,
 * each an open file on one anonymous inode (S_IFIFO, so fstat says what it is)
 * that no name reaches. As on Linux: a read waits for data and returns what
 * there is, 0 once every writer has closed; a write of at most PIPE_BUF bytes
 * (4096: it fits one buffer's page) goes in whole or waits, a longer one may
 * be split; a write with no reader left fails with -EPIPE, and the caller
 * raises SIGPIPE. With O_NONBLOCK (pipe2, F_SETFL) a call that would wait
 * returns -EAGAIN instead.
 *
 * A buffer holds the bytes [offset, offset + len) of its page. A write first
 * tops up the last buffer, if the pipe is not empty and the write's odd tail
 * (its length modulo a page) fits there, then fills new pages; a read empties
 * buffers from the tail. The copies go through the caller's cursor and may
 * fault, and then, as in Linux's pipe_read() and pipe_write(), nothing is lost
 * and nothing half-done is shown: a read takes a buffer's bytes only once they
 * are all copied out, so a fault leaves that buffer whole in the pipe and the
 * read returns what the buffers before it gave, or -EFAULT; a write adds a
 * page only once all it was to hold is copied in, and returns what the pages
 * before it took, or -EFAULT.
 *
 * pipe->mutex protects the ring, its pages and the counts of readers and
 * writers: a copy may fault and sleep, so it is a mutex, held across the copy.
 * Readers and writers wait with it dropped, on a condition read without it
 * (head, tail and the counts change by WRITE_ONCE under it), and the other side
 * wakes them after every change. files, the open ends, decides the freeing
 * after the mutex is let go, so no release touches a pipe another has freed.
 */
#include <grace/atomic.h>
#include <grace/chrdev.h>
#include <grace/errno.h>
#include <grace/mutex.h>
#include <grace/page_alloc.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uio.h>
#include <grace/wait.h>
#include <asm/memory.h>
#include "internal.h"

#define PIPE_BUFFERS 16 /* Linux's default ring: 16 pages, 64 KiB */
#define PIPE_ORDER 4	/* the 16 pages as one block: buffer slot i is page i */

struct pipe_buffer {
	u32 offset, len; /* the bytes of the slot's page that are in the pipe */
};

struct pipe {
	struct mutex mutex;
	char *pages;				 /* PIPE_BUFFERS pages, one per slot */
	struct pipe_buffer bufs[PIPE_BUFFERS];	 /* under mutex */
	u32 head, tail;				 /* buffers ever filled, emptied; under mutex */
	unsigned readers, writers;		 /* open files on each end; under mutex */
	atomic_t files;				 /* open files on either end */
	struct wait_queue_head rd_wait, wr_wait; /* readers, writers waiting */
};

static struct pipe_buffer *pipe_buf(struct pipe *p, u32 n)
{
	return &p->bufs[n % PIPE_BUFFERS];
}

static char *pipe_page(struct pipe *p, u32 n)
{
	return p->pages + (n % PIPE_BUFFERS) * PAGE_SIZE;
}

/* Without the mutex, for a wait's condition: head and tail are WRITE_ONCE'd under it. */
static bool pipe_empty(struct pipe *p)
{
	return READ_ONCE(p->head) == READ_ONCE(p->tail);
}

static bool pipe_full(struct pipe *p)
{
	return READ_ONCE(p->head) - READ_ONCE(p->tail) >= PIPE_BUFFERS;
}

static bool pipe_readable(struct pipe *p)
{
	return !pipe_empty(p) || !READ_ONCE(p->writers);
}

static bool pipe_writable(struct pipe *p)
{
	return !pipe_full(p) || !READ_ONCE(p->readers);
}

/* The other side learns of a change, and so do pollers. */
static void pipe_wake(struct wait_queue_head *wq)
{
	wake_up(wq);
	poll_notify();
}

static long pipe_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *f = iocb->ki_filp;
	struct pipe *p = f->private_data;
	long ret = 0;

	if (!iov_iter_count(to))
		return 0;
	mutex_lock(&p->mutex);
	for (;;) {
		while (p->head != p->tail && iov_iter_count(to)) {
			struct pipe_buffer *buf = pipe_buf(p, p->tail);
			size_t chars = MIN(buf->len, iov_iter_count(to));
			char *page = pipe_page(p, p->tail);
			if (copy_to_iter(page + buf->offset, chars, to) < chars) {
				/* The buffer stays as it was: no byte of it is taken. */
				ret = ret ? ret : -EFAULT;
				goto out;
			}
			ret += chars;
			buf->offset += chars;
			buf->len -= chars;
			if (!buf->len)
				WRITE_ONCE(p->tail, p->tail + 1);
		}
		if (!iov_iter_count(to) || !p->writers || ret)
			break;
		if (READ_ONCE(f->f_flags) & O_NONBLOCK) {
			ret = -EAGAIN;
			break;
		}
		mutex_unlock(&p->mutex);
		if (wait_event_interruptible(p->rd_wait, pipe_readable(p)))
			return -ERESTARTSYS;
		mutex_lock(&p->mutex);
	}
out:
	mutex_unlock(&p->mutex);
	if (ret > 0)
		pipe_wake(&p->wr_wait);
	return ret;
}

/*
 * Fill the buffer at slot head from its page's offset on with n bytes of from:
 * false if the copy faulted, and then the buffer keeps what it had.
 */
static bool pipe_fill(struct pipe *p, u32 head, size_t n, struct iov_iter *from)
{
	struct pipe_buffer *buf = pipe_buf(p, head);
	char *page = pipe_page(p, head);
	if (copy_from_iter(page + buf->offset + buf->len, n, from) < n)
		return false;
	buf->len += n;
	return true;
}

static long pipe_write(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *f = iocb->ki_filp;
	struct pipe *p = f->private_data;
	size_t chars = iov_iter_count(from) % PAGE_SIZE;
	long ret = 0;

	if (!iov_iter_count(from))
		return 0;
	mutex_lock(&p->mutex);
	if (!p->readers) {
		ret = -EPIPE;
		goto out;
	}
	/* The odd tail first, onto the last buffer if it fits: small writes share a page. */
	if (chars && p->head != p->tail) {
		struct pipe_buffer *last = pipe_buf(p, p->head - 1);
		if (last->offset + last->len + chars <= PAGE_SIZE) {
			if (!pipe_fill(p, p->head - 1, chars, from)) {
				ret = -EFAULT;
				goto out;
			}
			ret = chars;
		}
	}
	while (iov_iter_count(from)) {
		if (!p->readers) {
			ret = ret ? ret : -EPIPE;
			break;
		}
		if (p->head - p->tail < PIPE_BUFFERS) {
			*pipe_buf(p, p->head) = (struct pipe_buffer){0, 0};
			size_t n = MIN(iov_iter_count(from), PAGE_SIZE);
			if (!pipe_fill(p, p->head, n, from)) {
				ret = ret ? ret : -EFAULT;
				break;
			}
			WRITE_ONCE(p->head, p->head + 1);
			ret += n;
			continue;
		}
		if (READ_ONCE(f->f_flags) & O_NONBLOCK) {
			ret = ret ? ret : -EAGAIN;
			break;
		}
		mutex_unlock(&p->mutex);
		if (ret > 0)
			pipe_wake(&p->rd_wait); /* a reader makes the room this waits for */
		if (wait_event_interruptible(p->wr_wait, pipe_writable(p)))
			return ret ? ret : -ERESTARTSYS;
		mutex_lock(&p->mutex);
	}
out:
	mutex_unlock(&p->mutex);
	if (ret > 0)
		pipe_wake(&p->rd_wait);
	return ret;
}

static void pipe_free(struct pipe *p)
{
	free_pages(p->pages, PIPE_ORDER);
	kfree(p);
}

static void pipe_release(struct file *f)
{
	struct pipe *p = f->private_data;
	mutex_lock(&p->mutex);
	if (f->f_read)
		WRITE_ONCE(p->readers, p->readers - 1);
	else
		WRITE_ONCE(p->writers, p->writers - 1);
	mutex_unlock(&p->mutex);
	/* The other end learns of it: EOF for readers, EPIPE for writers. */
	wake_up(&p->rd_wait);
	wake_up(&p->wr_wait);
	poll_notify();
	if (atomic_dec_return(&p->files) == 0)
		pipe_free(p);
}

static short pipe_poll(struct file *f)
{
	struct pipe *p = f->private_data;
	short ready = 0;
	if (!pipe_empty(p))
		ready |= POLLIN;
	if (!READ_ONCE(p->writers))
		ready |= POLLHUP; /* read end: EOF once drained */
	if (!pipe_full(p))
		ready |= POLLOUT;
	if (!READ_ONCE(p->readers))
		ready |= POLLERR; /* write end: a write would raise SIGPIPE */
	return ready;
}

static const struct file_operations pipe_ops = {
    .read_iter = pipe_read, .write_iter = pipe_write, .release = pipe_release, .poll = pipe_poll};

/* A new pipe with one reader and one writer counted, for the two files about to be made. */
static struct pipe *pipe_alloc(void)
{
	struct pipe *p = kzalloc(sizeof(*p));
	if (!p)
		return NULL;
	p->pages = alloc_pages(PIPE_ORDER);
	if (!p->pages) {
		kfree(p);
		return NULL;
	}
	mutex_init(&p->mutex);
	p->readers = p->writers = 1;
	atomic_set(&p->files, 2);
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
	struct inode *inode = new_inode(anon_sb, S_IFIFO | 0600);
	struct file *rd = inode ? pipe_file(p, igrab(inode), true, flags) : NULL;
	if (!rd && inode)
		iput(inode);
	struct file *wr =
	    rd ? pipe_file(p, inode, false, flags) : NULL; /* takes inode's reference */
	if (!wr) {
		/* Undo what exists: the count of open ends keeps rd's release from freeing it. */
		if (rd)
			fput(rd);
		pipe_free(p);
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
