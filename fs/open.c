/*
 * The calls on open files: open and what reads, writes, seeks and lists
 * through a descriptor. Each returns what its system call returns, or -errno.
 */
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uio.h>
#include <asm/memory.h>
#include "internal.h"

/*
 * O_CREAT through an existing symlink at the last component: what it names is
 * opened, or made if missing (as Linux does), by the same steps on the link's
 * text, walked from the link's directory. links: the symlinks this open has
 * followed so far, one budget of SYMLOOP_MAX for the whole open as on Linux.
 * /proc/self/fd/N names a file already open, which is opened again: nothing is
 * made.
 */
static int open_create(int dirfd, const struct path *base, const char *name, int flags,
		       unsigned mode, struct path *out, unsigned links);

static int open_create_through(const struct path *dir, struct inode *link, int flags, unsigned mode,
			       struct path *out, unsigned links)
{
	if (links >= SYMLOOP_MAX)
		return -ELOOP;
	if (link->i_op->jump_link)
		return link->i_op->jump_link(link, out);
	char *buf;
	const char *text;
	long len = inode_get_link(link, &text, &buf);
	int err =
	    len < 0 ? (int)len : open_create(AT_FDCWD, dir, text, flags, mode, out, links + 1);
	kfree(buf);
	return err;
}

/* O_CREAT: find or make the last name under its directory's i_mutex. */
static int open_create(int dirfd, const struct path *base, const char *name, int flags,
		       unsigned mode, struct path *out, unsigned links)
{
	struct parent_lookup pl;
	int err = path_parent_from(dirfd, base, name, links, &pl);
	if (err)
		return err;
	if (pl.last_type != LAST_NORM || pl.trailing_slash) {
		path_parent_put(&pl);
		return -EISDIR;
	}
	struct dentry *dir = pl.dir.dentry, *d;
	struct inode *idir = dir->d_inode;
	mutex_lock(&idir->i_mutex);
	d = lookup_locked(dir, &pl.last, &err);
	if (d && d_is_negative(d))
		err = idir->i_op->create ? idir->i_op->create(idir, d, S_IFREG | (mode & 07777))
					 : -EACCES;
	else if (d && (flags & O_EXCL))
		err = -EEXIST;
	else if (d && S_ISDIR(d->d_inode->i_mode))
		err = -EISDIR;
	mutex_unlock(&idir->i_mutex);
	struct inode *link = d && !err && S_ISLNK(d->d_inode->i_mode) ? d->d_inode : NULL;
	if (!err && !link) {
		*out = (struct path){pl.dir.mnt, d};
		path_get(out);
	}
	if (link)
		err = (flags & O_NOFOLLOW)
			  ? -ELOOP
			  : open_create_through(&pl.dir, link, flags, mode, out, pl.links);
	if (d)
		dput(d); /* after the target is read: the reference keeps the link's inode */
	path_parent_put(&pl);
	return err;
}

int vfs_openat(int dirfd, const char *name, int flags, unsigned mode)
{
	int acc = flags & O_ACCMODE;
	struct fs_context *fs = fs_current();
	struct path p;
	int err;

	/* Access mode 3 (Linux's ioctl-only mode) is not supported; O_CREAT | O_DIRECTORY is
	 * refused as by Linux 6.4. */
	if (acc == O_ACCMODE || (flags & (O_CREAT | O_DIRECTORY)) == (O_CREAT | O_DIRECTORY))
		return -EINVAL;
	if (!fs)
		return -ENOMEM;
	/* A descriptor and a file first: a call that fails for want of them must change nothing. */
	int fd = fd_reserve(fs);
	if (fd < 0)
		return fd;
	struct file *f = file_alloc();
	if (!f)
		return -ENOMEM;
	if (flags & O_CREAT)
		err = open_create(dirfd, NULL, name, flags, mode, &p, 0);
	else
		err = path_lookupat(dirfd, name,
				    ((flags & O_NOFOLLOW) ? 0 : LOOKUP_FOLLOW) |
					((flags & O_DIRECTORY) ? LOOKUP_DIRECTORY : 0),
				    &p);
	if (err) {
		file_free_unopened(f);
		return err;
	}
	struct inode *inode = p.dentry->d_inode;
	if (S_ISLNK(inode->i_mode))
		err = -ELOOP; /* O_NOFOLLOW on a symlink */
	else if (S_ISDIR(inode->i_mode) && (acc != O_RDONLY || (flags & O_TRUNC)))
		err = -EISDIR;
	else if ((flags & O_DIRECTORY) && !S_ISDIR(inode->i_mode))
		err = -ENOTDIR;
	if (err) {
		file_free_unopened(f);
		path_put(&p);
		return err;
	}
	/* Set up before its open runs, which may look at it (a device's replaces f_op). */
	f->f_op = inode->i_fop;
	file_open_path(f, &p, flags & ~O_CLOEXEC); /* close-on-exec is the descriptor's */
	path_put(&p);
	if (f->f_op->open)
		err = f->f_op->open(inode, f); /* a device's driver, or -ENXIO */
	/* As Linux, whatever the access mode; a file system that keeps no size refuses. */
	if (!err && (flags & O_TRUNC) && S_ISREG(inode->i_mode))
		err = notify_change(inode, &(struct iattr){.ia_valid = ATTR_SIZE});
	if (err) {
		fput(f);
		return err;
	}
	/* The reserved one, unless another thread took it; close-on-exec set as it appears. */
	fd = fd_install(fs, fd, f, flags & O_CLOEXEC);
	if (fd < 0)
		fput(f);
	/* Another thread may fork and exec from here on: the flag must be set already. */
	race_point_key("open.installed", inode);
	return fd;
}

/*
 * One read or write of f through the cursor it: at *offset (pread, pwrite), or
 * at the file's position (offset NULL), which moves past what was moved. The
 * file's own calls copy through the cursor, so a copy that faults part way
 * returns what came before the fault and leaves the rest where it was.
 */
static long file_rw(struct file *f, struct iov_iter *it, s64 *offset, bool write)
{
	const struct file_operations *fop = f->f_op;
	bool seekable = fop->llseek != NULL;

	if (offset && !seekable)
		return -ESPIPE; /* a device or pipe has no position: Linux's first check */
	if (write ? !f->f_write : !f->f_read)
		return -EBADF;
	if (!iov_iter_access_ok(it))
		return -EFAULT; /* a range past the user half, however little of it would be used */
	if (!write && S_ISDIR(f->f_inode->i_mode))
		return -EISDIR;
	if (!(write ? fop->write_iter : fop->read_iter))
		return -EINVAL; /* as Linux, for a file without the call */
	struct kiocb k = {f, offset ? *offset : f->f_pos,
			  write && !offset && (f->f_flags & O_APPEND)};
	if (seekable && k.ki_pos < 0)
		return -EINVAL;
	long n = write ? fop->write_iter(&k, it) : fop->read_iter(&k, it);
	/* Only a file with a position keeps one; pread and pwrite leave it where it was. */
	if (seekable && !offset)
		f->f_pos = k.ki_pos;
	return n;
}

static long fd_rw(int fd, struct iov_iter *it, s64 *offset, bool write)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long n = file_rw(f, it, offset, write);
	fput(f);
	return n;
}

long vfs_read(int fd, void *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, buf, count);
	return fd_rw(fd, &it, NULL, false);
}

long vfs_write(int fd, const void *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, (void *)buf, count);
	return fd_rw(fd, &it, NULL, true);
}

long vfs_pread(int fd, void *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, buf, count);
	return fd_rw(fd, &it, &offset, false);
}

long vfs_pwrite(int fd, const void *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, (void *)buf, count);
	return fd_rw(fd, &it, &offset, true);
}

long vfs_read_user(int fd, void __user *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_ubuf(&it, buf, count);
	return fd_rw(fd, &it, NULL, false);
}

long vfs_write_user(int fd, const void __user *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_ubuf(&it, (void __user *)buf, count);
	return fd_rw(fd, &it, NULL, true);
}

long vfs_pread_user(int fd, void __user *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	if (offset < 0)
		return -EINVAL;
	iov_iter_ubuf(&it, buf, count);
	return fd_rw(fd, &it, &offset, false);
}

long vfs_pwrite_user(int fd, const void __user *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	if (offset < 0)
		return -EINVAL;
	iov_iter_ubuf(&it, (void __user *)buf, count);
	return fd_rw(fd, &it, &offset, true);
}

long vfs_rw_vec_user(int fd, const struct iovec __user *uvec, unsigned long nr, bool write)
{
	struct iovec fast[UIO_FASTIOV], *alloc;
	struct iov_iter it;
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long n = iov_iter_import_user(uvec, nr, fast, &alloc, &it);
	if (n >= 0)
		n = file_rw(f, &it, NULL, write);
	kfree(alloc);
	fput(f);
	return n;
}

long vfs_ioctl(int fd, unsigned cmd, unsigned long arg)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long ret = f->f_op->ioctl ? f->f_op->ioctl(f, cmd, arg) : -ENOTTY;
	fput(f);
	return ret;
}

s64 vfs_lseek(int fd, s64 offset, int whence)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	/* A terminal, a device stream, a pipe: no position. */
	s64 pos = f->f_op->llseek ? f->f_op->llseek(f, offset, whence) : -ESPIPE;
	fput(f);
	return pos;
}

int vfs_fstat(int fd, struct stat *st)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	inode_stat(f->f_inode, st);
	fput(f);
	return 0;
}

int vfs_chmodat(int dirfd, const char *name, unsigned mode, int flags)
{
	struct path p;
	int err = path_lookupat(dirfd, name, (flags & AT_SYMLINK_NOFOLLOW) ? 0 : LOOKUP_FOLLOW, &p);
	if (err)
		return err;
	err = notify_change(p.dentry->d_inode,
			    &(struct iattr){.ia_valid = ATTR_MODE, .ia_mode = mode});
	path_put(&p);
	return err;
}

int vfs_fchmod(int fd, unsigned mode)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int err =
	    notify_change(f->f_inode, &(struct iattr){.ia_valid = ATTR_MODE, .ia_mode = mode});
	fput(f);
	return err;
}

int vfs_truncate(const char *name, s64 length)
{
	struct path p;
	int err = path_lookup(name, LOOKUP_FOLLOW, &p);
	if (err)
		return err;
	struct inode *inode = p.dentry->d_inode;
	err = S_ISDIR(inode->i_mode)
		  ? -EISDIR
		  : notify_change(inode, &(struct iattr){.ia_valid = ATTR_SIZE, .ia_size = length});
	path_put(&p);
	return err;
}

int vfs_ftruncate(int fd, s64 length)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int err = (!f->f_write || !S_ISREG(f->f_inode->i_mode))
		      ? -EINVAL
		      : notify_change(f->f_inode,
				      &(struct iattr){.ia_valid = ATTR_SIZE, .ia_size = length});
	fput(f);
	return err;
}
