/*
 * The file system calls of the user ABI, over the VFS's calls (grace/fs.h). A
 * path is copied in by getname() (strncpy_from_user into a PATH_MAX buffer),
 * a struct stat translated into the arch's layout, and read and write data go
 * straight between the file and user memory (vfs_read_user and its kin). A bad
 * pointer is -EFAULT before anything changes; a copy that faults part way
 * returns what was done, as Linux does.
 *
 * A path relative to a directory descriptor is walked from that directory
 * itself (the vfs_*at() calls), as on Linux: however deep it lies and whatever
 * it is renamed to meanwhile.
 */
#include <grace/chrdev.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/process.h>
#include <grace/signal.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uapi/statx.h>
#include <grace/uapi/time.h>
#include <grace/uio.h>
#include <grace/uapi/uio.h>
#include <asm/memory.h>
#include <asm/stat.h>
#include "syscall_internal.h"

/* The largest directory listing one getdents64 returns, in bytes. */
#define GETDENTS_MAX (64 * 1024)

/*
 * A user path copied in: a PATH_MAX buffer to kfree, or NULL with *err
 * (-EFAULT, -ENAMETOOLONG, -ENOENT for "", -ENOMEM).
 */
static char *getname(const char __user *upath, int *err)
{
	char *buf = kmalloc(PATH_MAX);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	long len = strncpy_from_user(buf, upath, PATH_MAX);
	*err = len < 0 ? (int)len : len == PATH_MAX ? -ENAMETOOLONG : len == 0 ? -ENOENT : 0;
	if (*err) {
		kfree(buf);
		return NULL;
	}
	return buf;
}

SYSCALL_DEFINE3(read, int, fd, char __user *, buf, size_t, count)
{
	return vfs_read_user(fd, (void __user *)buf, count);
}

SYSCALL_DEFINE3(write, int, fd, const char __user *, buf, size_t, count)
{
	long ret = vfs_write_user(fd, (const void __user *)buf, count);
	/* A write to a pipe no one reads raises SIGPIPE too (its default action ends the program).
	 */
	if (ret == -EPIPE) {
		struct ksiginfo info = {.code = SI_USER, .pid = current_process()->pid};
		signal_send_thread(current_thread(), SIGPIPE, &info);
	}
	return ret;
}

/* readv and writev: one call of the file's over a cursor on every segment, as Linux's. */
static long user_rw_vec(int fd, const struct iovec __user *uiov, unsigned long cnt, bool write)
{
	long ret = vfs_rw_vec_user(fd, uiov, cnt, write);
	/* A write to a pipe no one reads raises SIGPIPE, as write(2) does. */
	if (write && ret == -EPIPE) {
		struct ksiginfo info = {.code = SI_USER, .pid = current_process()->pid};
		signal_send_thread(current_thread(), SIGPIPE, &info);
	}
	return ret;
}

SYSCALL_DEFINE3(readv, int, fd, const struct iovec __user *, vec, unsigned long, vlen)
{
	return user_rw_vec(fd, vec, vlen, false);
}

SYSCALL_DEFINE3(writev, int, fd, const struct iovec __user *, vec, unsigned long, vlen)
{
	return user_rw_vec(fd, vec, vlen, true);
}

SYSCALL_DEFINE4(pread64, int, fd, char __user *, buf, size_t, count, s64, pos)
{
	return vfs_pread_user(fd, (void __user *)buf, count, pos);
}

SYSCALL_DEFINE4(pwrite64, int, fd, const char __user *, buf, size_t, count, s64, pos)
{
	return vfs_pwrite_user(fd, (const void __user *)buf, count, pos);
}

SYSCALL_DEFINE4(openat, int, dfd, const char __user *, filename, int, flags, unsigned, mode)
{
	int err;
	char *path = getname(filename, &err);
	if (!path)
		return err;
	/* Flags that change nothing for ramfs and the console. */
	flags &= ~(O_NONBLOCK | O_NOCTTY | O_LARGEFILE);
	long fd = vfs_openat(dfd, path, flags, mode & ~current_process()->umask);
	kfree(path);
	return fd;
}

SYSCALL_DEFINE1(close, int, fd)
{
	return vfs_close(fd);
}

SYSCALL_DEFINE3(lseek, int, fd, s64, offset, int, whence)
{
	return vfs_lseek(fd, offset, whence);
}

/* Block size st_blksize reports: a page, what ramfs allocates in. */
#define STAT_BLKSIZE 4096

static long stat_to_user(const struct stat *st, void __user *ubuf)
{
	struct user_stat us;
	memset(&us, 0, sizeof(us));
	us.st_dev = st->st_dev;
	us.st_ino = st->st_ino;
	us.st_nlink = st->st_nlink;
	us.st_mode = st->st_mode;
	us.st_rdev = st->st_rdev;
	us.st_size = st->st_size;
	us.st_blksize = STAT_BLKSIZE;
	us.st_blocks = st->st_blocks;
	return copy_to_user(ubuf, &us, sizeof(us)) ? -EFAULT : 0;
}

SYSCALL_DEFINE2(fstat, int, fd, void __user *, statbuf)
{
	struct stat st;
	int err = vfs_fstat(fd, &st);
	return err ? err : stat_to_user(&st, statbuf);
}

/* What newfstatat and statx stat: upath at dirfd, or dirfd itself for "" with AT_EMPTY_PATH. */
static int stat_at(int dirfd, const char __user *upath, int flags, struct stat *st)
{
	int err;
	char *path = getname(upath, &err);
	if (!path && err == -ENOENT && (flags & AT_EMPTY_PATH))
		return dirfd == AT_FDCWD ? vfs_stat(".", st) : vfs_fstat(dirfd, st);
	if (!path)
		return err;
	err = vfs_statat(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, st);
	kfree(path);
	return err;
}

SYSCALL_DEFINE4(newfstatat, int, dfd, const char __user *, filename, void __user *, statbuf, int,
		flags)
{
	struct stat st;

	/* AT_NO_AUTOMOUNT changes nothing: there are no automounts. */
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT))
		return -EINVAL;
	int err = stat_at(dfd, filename, flags, &st);
	return err ? err : stat_to_user(&st, statbuf);
}

/*
 * What statx reports: the fields newfstatat gives. ramfs keeps no times, so
 * STATX_ATIME, STATX_MTIME and STATX_CTIME stay out of the mask (their fields
 * are 0), as do the birth time and the mount id.
 */
#define STATX_GRACE                                                                                \
	(STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID | STATX_INO | STATX_SIZE |  \
	 STATX_BLOCKS)

static long statx_to_user(const struct stat *st, void __user *ubuf)
{
	struct statx sx;
	memset(&sx, 0, sizeof(sx));
	sx.stx_mask = STATX_GRACE;
	sx.stx_blksize = STAT_BLKSIZE;
	sx.stx_nlink = st->st_nlink;
	sx.stx_mode = (u16)st->st_mode;
	sx.stx_ino = st->st_ino;
	sx.stx_size = (u64)st->st_size;
	sx.stx_blocks = st->st_blocks;
	sx.stx_rdev_major = MAJOR(st->st_rdev);
	sx.stx_rdev_minor = MINOR(st->st_rdev);
	sx.stx_dev_major = MAJOR(st->st_dev);
	sx.stx_dev_minor = MINOR(st->st_dev);
	return copy_to_user(ubuf, &sx, sizeof(sx)) ? -EFAULT : 0;
}

SYSCALL_DEFINE5(statx, int, dfd, const char __user *, filename, int, flags, unsigned, mask,
		void __user *, buffer)
{
	struct stat st;

	/* Linux's do_statx() and vfs_statx(), in their order; the mask asks, it does not limit. */
	if (mask & STATX__RESERVED)
		return -EINVAL;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
		return -EINVAL;
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
		return -EINVAL;
	int err = stat_at(dfd, filename, flags, &st);
	return err ? err : statx_to_user(&st, buffer);
}

SYSCALL_DEFINE3(getdents64, int, fd, void __user *, dirent, unsigned, count)
{
	size_t size = MIN(count, (size_t)GETDENTS_MAX);
	if (!access_ok(dirent, size))
		return -EFAULT;
	return vfs_getdents_user(fd, dirent, size);
}

SYSCALL_DEFINE3(ioctl, int, fd, unsigned, cmd, unsigned long, arg)
{
	return vfs_ioctl(fd, cmd, arg);
}

SYSCALL_DEFINE1(dup, int, fd)
{
	return vfs_dup(fd);
}

SYSCALL_DEFINE3(dup3, int, oldfd, int, newfd, int, flags)
{
	if (oldfd == newfd)
		return -EINVAL; /* dup3 refuses what dup2 allows */
	return vfs_dup3(oldfd, newfd, flags);
}

SYSCALL_DEFINE2(dup2, int, oldfd, int, newfd)
{
	return vfs_dup2(oldfd, newfd);
}

SYSCALL_DEFINE2(pipe2, int __user *, fildes, int, flags)
{
	int fds[2];
	if (flags & ~(unsigned long)(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	/* Checked first: a pipe made and then not reported would leak its descriptors. */
	if (!access_ok((void __user *)fildes, sizeof(fds)))
		return -EFAULT;
	int err = vfs_pipe2(fds, flags);
	if (err)
		return err;
	if (copy_to_user((void __user *)fildes, fds, sizeof(fds))) {
		vfs_close(fds[0]);
		vfs_close(fds[1]);
		return -EFAULT;
	}
	return 0;
}

SYSCALL_DEFINE1(pipe, int __user *, fildes)
{
	return do_sys_pipe2(fildes, 0);
}

SYSCALL_DEFINE3(fcntl, int, fd, unsigned, cmd, unsigned long, arg)
{
	int fl = vfs_fd_flags(fd);
	if (fl < 0)
		return fl; /* a bad descriptor first, whatever the command, as Linux's fdget() */
	switch (cmd) {	   /* Linux reads cmd as an unsigned int */
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return vfs_dup_min(fd, (int)arg, cmd == F_DUPFD_CLOEXEC);
	case F_GETFD: {
		int on = vfs_fd_cloexec(fd, -1);
		return on < 0 ? on : on ? FD_CLOEXEC : 0;
	}
	case F_SETFD:
		return vfs_fd_cloexec(fd, (arg & FD_CLOEXEC) != 0) < 0 ? -EBADF : 0;
	case F_GETFL:
		return fl;
	case F_SETFL:
		return vfs_fd_set_flags(fd, (int)arg);
	default:
		return -EINVAL;
	}
}

SYSCALL_DEFINE2(getcwd, char __user *, ubuf, unsigned long, size)
{
	char *buf = kmalloc(PATH_MAX);
	if (!buf)
		return -ENOMEM;
	long len = vfs_getcwd(buf, MIN(size, PATH_MAX));
	/* Linux returns the length with the NUL. */
	if (len >= 0)
		len = copy_to_user(ubuf, buf, len + 1) ? -EFAULT : len + 1;
	kfree(buf);
	return len;
}

/* A call on one path at dirfd: copy it in, call fn, free it. */
static long with_path(int dirfd, const char __user *upath,
		      int (*fn)(int dirfd, const char *path, unsigned arg), unsigned arg)
{
	int err;
	char *path = getname(upath, &err);
	if (!path)
		return err;
	err = fn(dirfd, path, arg);
	kfree(path);
	return err;
}

static int chdir_path(int dirfd, const char *path, unsigned unused)
{
	return vfs_chdir(path);
}

SYSCALL_DEFINE1(chdir, const char __user *, filename)
{
	return with_path(AT_FDCWD, filename, chdir_path, 0);
}

SYSCALL_DEFINE3(mkdirat, int, dfd, const char __user *, pathname, unsigned, mode)
{
	return with_path(dfd, pathname, vfs_mkdirat, mode & ~current_process()->umask);
}

static int unlink_path(int dirfd, const char *path, unsigned flags)
{
	return vfs_unlinkat(dirfd, path, (int)flags);
}

SYSCALL_DEFINE3(unlinkat, int, dfd, const char __user *, pathname, int, flag)
{
	if (flag & ~(unsigned long)AT_REMOVEDIR)
		return -EINVAL;
	return with_path(dfd, pathname, unlink_path, (unsigned)flag);
}

/* Two paths copied in, both or neither. */
static long getname2(const char __user *uold, const char __user *unew, char **oldp, char **newp)
{
	int err;
	*oldp = getname(uold, &err);
	if (!*oldp)
		return err;
	*newp = getname(unew, &err);
	if (!*newp) {
		kfree(*oldp);
		return err;
	}
	return 0;
}

SYSCALL_DEFINE5(renameat2, int, olddfd, const char __user *, oldname, int, newdfd,
		const char __user *, newname, unsigned, flags)
{
	char *oldp, *newp;
	if (flags & ~(unsigned long)RENAME_NOREPLACE)
		return -EINVAL;
	long err = getname2(oldname, newname, &oldp, &newp);
	if (err)
		return err;
	err = vfs_renameat(olddfd, oldp, newdfd, newp, flags);
	kfree(oldp);
	kfree(newp);
	return err;
}

/*
 * AT_EMPTY_PATH is accepted and has no effect: an empty oldpath is -ENOENT, as
 * for a caller without CAP_DAC_READ_SEARCH on Linux.
 */
SYSCALL_DEFINE5(linkat, int, olddfd, const char __user *, oldname, int, newdfd, const char __user *,
		newname, int, flags)
{
	char *oldp, *newp;
	if (flags & ~(unsigned long)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	long err = getname2(oldname, newname, &oldp, &newp);
	if (err)
		return err;
	err = vfs_linkat(olddfd, oldp, newdfd, newp, (int)(flags & AT_SYMLINK_FOLLOW));
	kfree(oldp);
	kfree(newp);
	return err;
}

SYSCALL_DEFINE3(symlinkat, const char __user *, oldname, int, newdfd, const char __user *, newname)
{
	char *target, *linkpath;
	/* The target's errors first, as Linux's getname() of it: "" is -ENOENT. */
	long err = getname2(oldname, newname, &target, &linkpath);
	if (err)
		return err;
	err = vfs_symlinkat(target, newdfd, linkpath);
	kfree(target);
	kfree(linkpath);
	return err;
}

SYSCALL_DEFINE4(readlinkat, int, dfd, const char __user *, pathname, char __user *, buf, int,
		bufsiz)
{
	int err;
	if ((long)bufsiz <= 0)
		return -EINVAL;
	char *path = getname(pathname, &err);
	if (!path)
		return err;
	size_t size = MIN(bufsiz, PATH_MAX);
	char *kbuf = kmalloc(size);
	long n = kbuf ? vfs_readlinkat(dfd, path, kbuf, size) : -ENOMEM;
	if (n > 0 && copy_to_user(buf, kbuf, n))
		n = -EFAULT;
	kfree(kbuf);
	kfree(path);
	return n;
}

SYSCALL_DEFINE1(umask, int, mask)
{
	struct process *p = current_process();
	unsigned old = p->umask;
	p->umask = (unsigned)mask & 0777;
	return old;
}

static int access_path(int dirfd, const char *path, unsigned mode)
{
	struct stat st;
	/* Every process is root: any file is readable and writable, executable if some x bit is. */
	int err = vfs_statat(dirfd, path, 0, &st);
	if (!err && (mode & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111))
		err = -EACCES;
	return err;
}

SYSCALL_DEFINE3(faccessat, int, dfd, const char __user *, filename, int, mode)
{
	if (mode & ~(unsigned long)(R_OK | W_OK | X_OK))
		return -EINVAL;
	return with_path(dfd, filename, access_path, (unsigned)mode);
}

/* The x86_64 calls the *at family replaced: each is its *at form on AT_FDCWD. */

SYSCALL_DEFINE3(open, const char __user *, filename, int, flags, unsigned, mode)
{
	return do_sys_openat(AT_FDCWD, filename, flags, mode);
}

SYSCALL_DEFINE2(stat, const char __user *, filename, void __user *, statbuf)
{
	return do_sys_newfstatat(AT_FDCWD, filename, statbuf, 0);
}

SYSCALL_DEFINE2(lstat, const char __user *, filename, void __user *, statbuf)
{
	return do_sys_newfstatat(AT_FDCWD, filename, statbuf, AT_SYMLINK_NOFOLLOW);
}

SYSCALL_DEFINE2(access, const char __user *, filename, int, mode)
{
	return do_sys_faccessat(AT_FDCWD, filename, mode);
}

SYSCALL_DEFINE2(mkdir, const char __user *, pathname, unsigned, mode)
{
	return do_sys_mkdirat(AT_FDCWD, pathname, mode);
}

SYSCALL_DEFINE1(rmdir, const char __user *, pathname)
{
	return do_sys_unlinkat(AT_FDCWD, pathname, AT_REMOVEDIR);
}

SYSCALL_DEFINE1(unlink, const char __user *, pathname)
{
	return do_sys_unlinkat(AT_FDCWD, pathname, 0);
}

SYSCALL_DEFINE4(renameat, int, olddfd, const char __user *, oldname, int, newdfd,
		const char __user *, newname)
{
	return do_sys_renameat2(olddfd, oldname, newdfd, newname, 0);
}

SYSCALL_DEFINE2(rename, const char __user *, oldname, const char __user *, newname)
{
	return do_sys_renameat2(AT_FDCWD, oldname, AT_FDCWD, newname, 0);
}

SYSCALL_DEFINE2(link, const char __user *, oldname, const char __user *, newname)
{
	return do_sys_linkat(AT_FDCWD, oldname, AT_FDCWD, newname, 0);
}

SYSCALL_DEFINE2(symlink, const char __user *, oldname, const char __user *, newname)
{
	return do_sys_symlinkat(oldname, AT_FDCWD, newname);
}

SYSCALL_DEFINE3(readlink, const char __user *, pathname, char __user *, buf, int, bufsiz)
{
	return do_sys_readlinkat(AT_FDCWD, pathname, buf, bufsiz);
}

static int chmod_path(int dirfd, const char *path, unsigned mode)
{
	return vfs_chmodat(dirfd, path, mode, 0);
}

SYSCALL_DEFINE3(fchmodat, int, dfd, const char __user *, filename, unsigned, mode)
{
	return with_path(dfd, filename, chmod_path, mode);
}

SYSCALL_DEFINE2(chmod, const char __user *, filename, unsigned, mode)
{
	return do_sys_fchmodat(AT_FDCWD, filename, mode);
}

SYSCALL_DEFINE2(fchmod, int, fd, unsigned, mode)
{
	return vfs_fchmod(fd, mode);
}

/*
 * utimensat: ramfs keeps no times (stat reports 0), so there is nothing to set;
 * the call checks what Linux checks and succeeds where Linux would.
 */
SYSCALL_DEFINE4(utimensat, int, dfd, const char __user *, filename, const void __user *, utimes,
		int, flags)
{
	if (flags & ~(unsigned long)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (utimes) {
		struct timespec ts[2];
		if (copy_from_user(ts, utimes, sizeof(ts)))
			return -EFAULT;
	}
	struct stat st;
	if (!filename)
		return vfs_fstat(dfd, &st);	   /* NULL path: the descriptor's own file */
	return stat_at(dfd, filename, flags, &st); /* "" with AT_EMPTY_PATH: dfd's too */
}
