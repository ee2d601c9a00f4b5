/*
 * The calls on open files: open and what reads, writes, seeks and lists
 * through a descriptor. Each returns what its system call returns, or -errno.
 */
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/chrdev.h>
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
	else if (S_ISCHR(inode->i_mode) && !(f->f_op = chrdev_ops(inode->rdev)))
		err = -ENXIO;
	if (err)
		file_free_unopened(f);
	else
		file_open_path(f, &p, flags & ~O_CLOEXEC); /* the descriptor's, not the file's */
	path_put(&p);
	if (err)
		return err;
	/* As Linux, whatever the access mode. To zero: allocates nothing, cannot fail. */
	if ((flags & O_TRUNC) && S_ISREG(inode->i_mode))
		notify_change(inode, &(struct iattr){.ia_valid = ATTR_SIZE});
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
	s64 *pos = offset ? offset : &f->f_pos;
	long n;

	if (write ? !f->f_write : !f->f_read)
		n = -EBADF;
	else if (!iov_iter_access_ok(it))
		n = -EFAULT; /* a range past the user half, however little of it would be used */
	else if (!write && S_ISDIR(f->f_inode->i_mode))
		n = -EISDIR;
	else if (f->f_op && offset)
		n = -ESPIPE; /* a device or pipe has no position to read or write at */
	else if (f->f_op && !(write ? f->f_op->write_iter : f->f_op->read_iter))
		n = -EINVAL; /* as Linux, for a file without the call */
	else if (f->f_op)
		n = write ? f->f_op->write_iter(f, it) : f->f_op->read_iter(f, it);
	else if (*pos < 0)
		n = -EINVAL;
	else if (write)
		n = ramfs_write(f->f_inode, it, pos, !offset && (f->f_flags & O_APPEND));
	else if ((n = ramfs_read(f->f_inode, it, *pos)) > 0)
		*pos += n;
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

long sys_read(int fd, void *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, buf, count);
	return fd_rw(fd, &it, NULL, false);
}

long sys_write(int fd, const void *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, (void *)buf, count);
	return fd_rw(fd, &it, NULL, true);
}

long sys_pread(int fd, void *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, buf, count);
	return fd_rw(fd, &it, &offset, false);
}

long sys_pwrite(int fd, const void *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	iov_iter_kbuf(&it, (void *)buf, count);
	return fd_rw(fd, &it, &offset, true);
}

long sys_read_user(int fd, void __user *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_ubuf(&it, buf, count);
	return fd_rw(fd, &it, NULL, false);
}

long sys_write_user(int fd, const void __user *buf, size_t count)
{
	struct iov_iter it;
	iov_iter_ubuf(&it, (void __user *)buf, count);
	return fd_rw(fd, &it, NULL, true);
}

long sys_pread_user(int fd, void __user *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	if (offset < 0)
		return -EINVAL;
	iov_iter_ubuf(&it, buf, count);
	return fd_rw(fd, &it, &offset, false);
}

long sys_pwrite_user(int fd, const void __user *buf, size_t count, s64 offset)
{
	struct iov_iter it;
	if (offset < 0)
		return -EINVAL;
	iov_iter_ubuf(&it, (void __user *)buf, count);
	return fd_rw(fd, &it, &offset, true);
}

long sys_rw_vec_user(int fd, const struct iovec __user *uvec, unsigned long nr, bool write)
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

long sys_fd_path(int fd, char *buf, size_t size)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long len = f->f_path.dentry ? d_path(&f->f_path, buf, size) : -ENOENT;
	fput(f);
	return len;
}

long sys_ioctl(int fd, unsigned cmd, unsigned long arg)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long ret = f->f_op && f->f_op->ioctl ? f->f_op->ioctl(f, cmd, arg) : -ENOTTY;
	fput(f);
	return ret;
}

s64 sys_lseek(int fd, s64 offset, int whence)
{
	struct file *f = fget(fd);
	s64 base, pos;

	if (!f)
		return -EBADF;
	if (f->f_op) {
		fput(f);
		return -ESPIPE; /* a terminal or a device stream: no position */
	}
	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = f->f_pos;
		break;
	case SEEK_END:
		base = READ_ONCE(f->f_inode->i_size);
		break;
	default:
		fput(f);
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, offset, &pos) || pos < 0) {
		fput(f);
		return -EINVAL;
	}
	f->f_pos = pos;
	fput(f);
	return pos;
}

int sys_fstat(int fd, struct stat *st)
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

int sys_fchmod(int fd, unsigned mode)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int err =
	    notify_change(f->f_inode, &(struct iattr){.ia_valid = ATTR_MODE, .ia_mode = mode});
	fput(f);
	return err;
}

int sys_truncate(const char *name, s64 length)
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

int sys_ftruncate(int fd, s64 length)
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

static u8 dirent_type(u32 mode)
{
	return S_ISDIR(mode) ? DT_DIR : S_ISLNK(mode) ? DT_LNK : S_ISCHR(mode) ? DT_CHR : DT_REG;
}

/* One record at *used if it fits: false if not. */
static bool dirent_put(void *buf, size_t size, size_t *used, u64 ino, s64 next, u8 type,
		       const char *name, u32 len)
{
	size_t reclen = (offsetof(struct dirent64, d_name) + len + 1 + 7) & ~(size_t)7;
	if (*used + reclen > size)
		return false;
	struct dirent64 *de = (struct dirent64 *)((char *)buf + *used);
	de->d_ino = ino;
	de->d_off = next;
	de->d_reclen = reclen;
	de->d_type = type;
	memcpy(de->d_name, name, len);
	de->d_name[len] = '\0';
	*used += reclen;
	return true;
}

/*
 * /proc/self/fd's names from *pos on: the caller's descriptors, position fd + 2
 * for descriptor fd (as Linux numbers them), so that a descriptor opened or
 * closed meanwhile moves no other. True if the buffer filled up; *err if a
 * name could not be made.
 */
static bool getdents_fds(struct dentry *dir, void *buf, size_t size, size_t *used, s64 *pos,
			 long *err)
{
	char name[12]; /* an int in decimal */
	for (int fd; *pos - 2 < FD_MAX && (fd = fd_next_open(*pos - 2)) >= 0; *pos = fd + 3) {
		long ino = proc_fd_ino(dir, fd);
		if (ino == -ENOENT)
			continue; /* closed since: no name to give */
		if (ino < 0) {
			*err = ino;
			return false;
		}
		int len = snprintf(name, sizeof(name), "%d", fd);
		if (!dirent_put(buf, size, used, ino, fd + 3, DT_LNK, name, len))
			return true;
	}
	return false;
}

/* The names of a ramfs directory from *pos on (n + 2: its n-th child); true if buf filled up. */
static bool getdents_children(struct dentry *dir, void *buf, size_t size, size_t *used, s64 *pos)
{
	struct dentry *child;
	s64 n = 2;
	bool full = false, global = vfs_global();
	dcache_global_lock(global);
	d_lock(dir);
	list_for_each_entry(child, &dir->d_subdirs, d_child) {
		if (full)
			break;
		/* The child's lock: an unlink clears d_inode and frees the inode under it. */
		d_lock_nested(child);
		struct inode *inode = child->d_inode;
		if (inode && !d_unhashed(child) && n++ >= *pos) {
			full = !dirent_put(buf, size, used, inode->i_ino, *pos + 1,
					   dirent_type(inode->i_mode), child->d_name.name,
					   child->d_name.len);
			*pos += !full;
		}
		d_unlock(child);
	}
	d_unlock(dir);
	dcache_global_unlock(global);
	return full;
}

/*
 * Positions: 0 is ".", 1 is "..", n + 2 the n-th name in the directory's child
 * list. A name added or removed while a reader is part-way through may shift
 * the later ones by one, as with any position-based readdir. /proc/self/fd
 * lists the caller's descriptors instead (getdents_fds()).
 */
static long file_getdents(struct file *f, void *buf, size_t size)
{
	size_t used = 0;

	if (!S_ISDIR(f->f_inode->i_mode))
		return -ENOTDIR;
	if (f->f_inode->i_state & I_DEADDIR)
		return -ENOENT;
	struct dentry *dir = f->f_path.dentry;
	s64 pos = f->f_pos;
	bool full = false;
	long err = 0;
	if (pos == 0) {
		full = !dirent_put(buf, size, &used, dir->d_inode->i_ino, 1, DT_DIR, ".", 1);
		pos += !full;
	}
	if (pos == 1 && !full) {
		struct dentry *parent = dget_parent(dir);
		full = !dirent_put(buf, size, &used, parent->d_inode->i_ino, 2, DT_DIR, "..", 2);
		dput(parent);
		pos += !full;
	}
	if (!full && proc_fd_dir(dir))
		full = getdents_fds(dir, buf, size, &used, &pos, &err);
	else if (!full)
		full = getdents_children(dir, buf, size, &used, &pos);
	f->f_pos = pos;
	if (used == 0 && err)
		return err;
	/* Nothing fitted although there was something to give: the buffer is too small. */
	return used == 0 && full ? -EINVAL : (long)used;
}

long sys_getdents(int fd, void *buf, size_t size)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long n = file_getdents(f, buf, size);
	fput(f);
	return n;
}

/*
 * The records are made into a kernel buffer, since the directory's locks are
 * held while they are (a copy to user memory may sleep), and copied out after.
 * A copy that faults part way keeps the records wholly copied, and the
 * position goes back to just after the last of them, as Linux's filldir64()
 * stops at the record it could not write: no name is skipped.
 */
long sys_getdents_user(int fd, void __user *ubuf, size_t size)
{
	char *kbuf = kmalloc(size ? size : 1);
	struct file *f = fget(fd);
	long n = !f ? -EBADF : !kbuf ? -ENOMEM : 0;
	if (n) {
		if (f)
			fput(f);
		kfree(kbuf);
		return n;
	}
	s64 start = f->f_pos;
	n = file_getdents(f, kbuf, size);
	size_t copied = n > 0 ? (size_t)n - copy_to_user(ubuf, kbuf, n) : 0;
	if (n > 0 && copied < (size_t)n) {
		size_t whole = 0;
		s64 pos = start;
		for (struct dirent64 *de = (struct dirent64 *)kbuf; whole + de->d_reclen <= copied;
		     de = (struct dirent64 *)(kbuf + whole)) {
			pos = de->d_off;
			whole += de->d_reclen;
		}
		f->f_pos = pos;
		n = whole ? (long)whole : -EFAULT;
	}
	fput(f);
	kfree(kbuf);
	return n;
}
