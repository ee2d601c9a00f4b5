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
	if (READ_ONCE(link->i_state) & I_FD_LINK)
		return proc_fd_follow(link, out);
	char *buf = NULL;
	const char *text;
	if (inode_link_made(link) && !(buf = fs_alloc(PATH_MAX)))
		return -ENOMEM;
	long len = inode_link_text(link, buf, &text);
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
	mutex_lock(&dir->d_inode->i_mutex);
	d = lookup_locked(dir, &pl.last, &err);
	if (d && d_is_negative(d))
		err = ramfs_mknod(dir, d, S_IFREG | (mode & 07777), NULL, 0);
	else if (d && (flags & O_EXCL))
		err = -EEXIST;
	else if (d && S_ISDIR(d->d_inode->i_mode))
		err = -EISDIR;
	mutex_unlock(&dir->d_inode->i_mutex);
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
		ramfs_truncate(inode, 0);
	/* The reserved one, unless another thread took it; close-on-exec set as it appears. */
	fd = fd_install(fs, fd, f, flags & O_CLOEXEC);
	if (fd < 0)
		fput(f);
	/* Another thread may fork and exec from here on: the flag must be set already. */
	race_point_key("open.installed", inode);
	return fd;
}

/*
 * A device's read or write with a user buffer: through a kernel page, since a
 * device's calls take kernel buffers. A read is one call of the device's (a
 * terminal's line, what a pipe holds), and what it returned is lost if the copy
 * out faults: as on Linux for a terminal, while Linux's pipe keeps the bytes it
 * could not copy. A write goes a page at a time until all is written or the
 * device writes less.
 */
static long device_rw_user(struct file *f, void *ubuf, size_t count, bool write)
{
	void *kbuf = kmalloc(PAGE_SIZE);
	if (!kbuf)
		return -ENOMEM;
	long ret = 0;
	size_t done = 0;
	if (!write) {
		ret = f->f_op->read(f, kbuf, MIN(count, PAGE_SIZE));
		if (ret > 0 && copy_to_user((void __user *)ubuf, kbuf, ret))
			ret = -EFAULT;
		kfree(kbuf);
		return ret;
	}
	while (done < count) {
		size_t n = MIN(count - done, PAGE_SIZE);
		if (copy_from_user(kbuf, (const char __user *)ubuf + done, n)) {
			ret = -EFAULT;
			break;
		}
		ret = f->f_op->write(f, kbuf, n);
		if (ret <= 0)
			break;
		done += ret;
		if ((size_t)ret < n)
			break;
	}
	kfree(kbuf);
	return done ? (long)done : ret;
}

/*
 * One read or write of fd: at *offset (pread, pwrite), or at the file's position
 * (offset NULL), which moves past what was moved. user: buf is a user pointer.
 */
static long fd_rw(int fd, void *buf, size_t count, s64 *offset, bool write, bool user)
{
	struct file *f = fget(fd);
	long n;

	if (!f)
		return -EBADF;
	s64 *pos = offset ? offset : &f->f_pos;
	if (write ? !f->f_write : !f->f_read)
		n = -EBADF;
	else if (user && !access_ok(buf, count))
		n = -EFAULT; /* a range past the user half, however little of it would be used */
	else if (!write && S_ISDIR(f->f_inode->i_mode))
		n = -EISDIR;
	else if (f->f_op && offset)
		n = -ESPIPE; /* a device or pipe has no position to read or write at */
	else if (f->f_op && user)
		n = device_rw_user(f, buf, count, write);
	else if (f->f_op)
		n = write ? f->f_op->write(f, buf, count) : f->f_op->read(f, buf, count);
	else if (*pos < 0)
		n = -EINVAL;
	else if (write)
		n = ramfs_write(f->f_inode, buf, count, pos, !offset && (f->f_flags & O_APPEND),
				user);
	else if ((n = ramfs_read(f->f_inode, buf, count, *pos, user)) > 0)
		*pos += n;
	fput(f);
	return n;
}

long vfs_read(int fd, void *buf, size_t count)
{
	return fd_rw(fd, buf, count, NULL, false, false);
}

long vfs_write(int fd, const void *buf, size_t count)
{
	return fd_rw(fd, (void *)buf, count, NULL, true, false);
}

long vfs_pread(int fd, void *buf, size_t count, s64 offset)
{
	return fd_rw(fd, buf, count, &offset, false, false);
}

long vfs_pwrite(int fd, const void *buf, size_t count, s64 offset)
{
	return fd_rw(fd, (void *)buf, count, &offset, true, false);
}

long vfs_read_user(int fd, void __user *buf, size_t count)
{
	return fd_rw(fd, (void *)buf, count, NULL, false, true);
}

long vfs_write_user(int fd, const void __user *buf, size_t count)
{
	return fd_rw(fd, (void *)buf, count, NULL, true, true);
}

long vfs_pread_user(int fd, void __user *buf, size_t count, s64 offset)
{
	if (offset < 0)
		return -EINVAL;
	return fd_rw(fd, (void *)buf, count, &offset, false, true);
}

long vfs_pwrite_user(int fd, const void __user *buf, size_t count, s64 offset)
{
	if (offset < 0)
		return -EINVAL;
	return fd_rw(fd, (void *)buf, count, &offset, true, true);
}

long vfs_fd_path(int fd, char *buf, size_t size)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long len = f->f_path.dentry ? d_path(f->f_path.dentry, buf, size) : -ENOENT;
	fput(f);
	return len;
}

long vfs_ioctl(int fd, unsigned cmd, unsigned long arg)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long ret = f->f_op && f->f_op->ioctl ? f->f_op->ioctl(f, cmd, arg) : -ENOTTY;
	fput(f);
	return ret;
}

s64 vfs_lseek(int fd, s64 offset, int whence)
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

int vfs_fstat(int fd, struct stat *st)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	inode_stat(f->f_inode, st);
	fput(f);
	return 0;
}

static void inode_chmod(struct inode *inode, unsigned mode)
{
	mutex_lock(&inode->i_mutex);
	WRITE_ONCE(inode->i_mode, (inode->i_mode & S_IFMT) | (mode & 07777));
	mutex_unlock(&inode->i_mutex);
}

int vfs_chmodat(int dirfd, const char *name, unsigned mode, int flags)
{
	struct path p;
	int err = path_lookupat(dirfd, name, (flags & AT_SYMLINK_NOFOLLOW) ? 0 : LOOKUP_FOLLOW, &p);
	if (err)
		return err;
	inode_chmod(p.dentry->d_inode, mode);
	path_put(&p);
	return 0;
}

int vfs_fchmod(int fd, unsigned mode)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	inode_chmod(f->f_inode, mode);
	fput(f);
	return 0;
}

int vfs_truncate(const char *name, s64 length)
{
	struct path p;
	int err = path_lookup(name, LOOKUP_FOLLOW, &p);
	if (err)
		return err;
	struct inode *inode = p.dentry->d_inode;
	err = S_ISDIR(inode->i_mode) ? -EISDIR : ramfs_truncate(inode, length);
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
		      : ramfs_truncate(f->f_inode, length);
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
long vfs_getdents(int fd, void *buf, size_t size)
{
	struct file *f = fget(fd);
	size_t used = 0;

	if (!f)
		return -EBADF;
	if (!S_ISDIR(f->f_inode->i_mode)) {
		fput(f);
		return -ENOTDIR;
	}
	if (f->f_inode->i_state & I_DEADDIR) {
		fput(f);
		return -ENOENT;
	}
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
	if (!full && d_is_proc_fd(dir))
		full = getdents_fds(dir, buf, size, &used, &pos, &err);
	else if (!full)
		full = getdents_children(dir, buf, size, &used, &pos);
	f->f_pos = pos;
	fput(f);
	if (used == 0 && err)
		return err;
	/* Nothing fitted although there was something to give: the buffer is too small. */
	return used == 0 && full ? -EINVAL : (long)used;
}
