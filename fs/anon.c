/*
 * Files that no name reaches and whose calls live outside fs/: sockets. Each
 * has an inode of its own (so fstat reports its type, as Linux's sockfs does)
 * and its file_operations; the open file carries the owner's state in private_data.
 * A pipe makes its files the same way, inside fs/ (fs/pipe.c).
 */
#include <grace/chrdev.h>
#include <grace/errno.h>
#include "internal.h"

int anon_fd_open(u32 mode, const struct file_operations *ops, void *priv, int flags)
{
	struct fs_context *fs = fs_current();
	if (!fs)
		return -ENOMEM;
	/* The descriptor first: a call that fails for want of one must have made nothing. */
	int fd = fd_reserve(fs);
	if (fd < 0)
		return fd;
	struct file *f = file_alloc();
	if (!f)
		return -ENOMEM;
	struct inode *inode = new_inode(anon_sb, mode);
	if (!inode) {
		file_free_unopened(f);
		return -ENOMEM;
	}
	file_open_anon(f, inode, flags & ~O_CLOEXEC, ops); /* takes the inode's reference */
	f->private_data = priv;
	/* The lowest free one now: the reservation only checked that one was left. */
	fd = fd_install_lowest(fs, f, flags & O_CLOEXEC);
	if (fd < 0) {
		/* The table filled up since: undo, not released, priv still the caller's. */
		f->f_op = &empty_fops;
		fput(f);
	}
	return fd;
}

struct file *file_get(int fd)
{
	return fget(fd);
}

struct file *file_get_ops(int fd, const struct file_operations *ops, int *err)
{
	struct file *f = fget(fd);
	if (!f) {
		*err = -EBADF;
		return NULL;
	}
	if (f->f_op != ops) {
		fput(f);
		*err = -ENOTSOCK;
		return NULL;
	}
	return f;
}

void file_put(struct file *f)
{
	fput(f);
}

void *file_private(const struct file *f)
{
	return f->private_data;
}

int file_flags(const struct file *f)
{
	return (int)READ_ONCE(f->f_flags);
}
