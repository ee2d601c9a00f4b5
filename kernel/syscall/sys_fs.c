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
#include <asm/memory.h>
#include <asm/stat.h>
#include "syscall_internal.h"

#define IOV_MAX 1024

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

USER_CALL(read)
{
	return vfs_read_user((int)a0, (void __user *)a1, a2);
}

USER_CALL(write)
{
	long ret = vfs_write_user((int)a0, (const void __user *)a1, a2);
	/* A write to a pipe no one reads raises SIGPIPE too (its default action ends the program).
	 */
	if (ret == -EPIPE) {
		struct ksiginfo info = {.code = SI_USER, .pid = current_process()->pid};
		signal_send_thread(current_thread(), SIGPIPE, &info);
	}
	return ret;
}

struct iovec {
	void __user *iov_base;
	size_t iov_len;
};

/* readv and writev: each segment in turn, stopping at the first short one. */
static long user_rw_vec(int fd, const struct iovec __user *uiov, unsigned long cnt, bool write)
{
	if (cnt > IOV_MAX)
		return -EINVAL;
	long total = 0;
	for (unsigned long i = 0; i < cnt; i++) {
		struct iovec v;
		if (copy_from_user(&v, &uiov[i], sizeof(v)))
			return total ? total : -EFAULT;
		if (!v.iov_len)
			continue;
		long n = write ? user_write(fd, (unsigned long)v.iov_base, v.iov_len, 0, 0, 0)
			       : user_read(fd, (unsigned long)v.iov_base, v.iov_len, 0, 0, 0);
		if (n < 0)
			return total ? total : n;
		total += n;
		if ((size_t)n < v.iov_len)
			break;
	}
	return total;
}

USER_CALL(readv)
{
	return user_rw_vec((int)a0, (const struct iovec __user *)a1, a2, false);
}

USER_CALL(writev)
{
	return user_rw_vec((int)a0, (const struct iovec __user *)a1, a2, true);
}

USER_CALL(pread64)
{
	return vfs_pread_user((int)a0, (void __user *)a1, a2, (s64)a3);
}

USER_CALL(pwrite64)
{
	return vfs_pwrite_user((int)a0, (const void __user *)a1, a2, (s64)a3);
}

USER_CALL(openat)
{
	int err;
	char *path = getname((const char __user *)a1, &err);
	if (!path)
		return err;
	/* Flags that change nothing for ramfs and the console. */
	int flags = (int)a2 & ~(O_NONBLOCK | O_NOCTTY | O_LARGEFILE);
	long fd = vfs_openat((int)a0, path, flags, (unsigned)a3 & ~current_process()->umask);
	kfree(path);
	return fd;
}

USER_CALL(close)
{
	return vfs_close((int)a0);
}

USER_CALL(lseek)
{
	return vfs_lseek((int)a0, (s64)a1, (int)a2);
}

/* Block size st_blksize reports: a page, what ramfs allocates in. */
#define STAT_BLKSIZE 4096
/* The st_dev of the root ramfs: an anonymous device, as tmpfs and ramfs are on Linux. */
#define RAMFS_DEV 0x1

static long stat_to_user(const struct stat *st, void __user *ubuf)
{
	struct user_stat us;
	memset(&us, 0, sizeof(us));
	us.st_dev = RAMFS_DEV;
	us.st_ino = st->st_ino;
	us.st_nlink = st->st_nlink;
	us.st_mode = st->st_mode;
	us.st_rdev = st->st_rdev;
	us.st_size = st->st_size;
	us.st_blksize = STAT_BLKSIZE;
	us.st_blocks = st->st_blocks;
	return copy_to_user(ubuf, &us, sizeof(us)) ? -EFAULT : 0;
}

USER_CALL(fstat)
{
	struct stat st;
	int err = vfs_fstat((int)a0, &st);
	return err ? err : stat_to_user(&st, (void __user *)a1);
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

USER_CALL(newfstatat)
{
	int flags = (int)a3;
	struct stat st;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	int err = stat_at((int)a0, (const char __user *)a1, flags, &st);
	return err ? err : stat_to_user(&st, (void __user *)a2);
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
	sx.stx_dev_major = MAJOR(RAMFS_DEV);
	sx.stx_dev_minor = MINOR(RAMFS_DEV);
	return copy_to_user(ubuf, &sx, sizeof(sx)) ? -EFAULT : 0;
}

USER_CALL(statx)
{
	int flags = (int)a2;
	unsigned mask = (unsigned)a3;
	struct stat st;

	/* Linux's do_statx() and vfs_statx(), in their order; the mask asks, it does not limit. */
	if (mask & STATX__RESERVED)
		return -EINVAL;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
		return -EINVAL;
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
		return -EINVAL;
	int err = stat_at((int)a0, (const char __user *)a1, flags, &st);
	return err ? err : statx_to_user(&st, (void __user *)a4);
}

USER_CALL(getdents64)
{
	size_t size = MIN(a2, (size_t)GETDENTS_MAX);
	if (!access_ok((void __user *)a1, size))
		return -EFAULT;
	char *kbuf = kmalloc(size ? size : 1);
	if (!kbuf)
		return -ENOMEM;
	long n = vfs_getdents((int)a0, kbuf, size);
	if (n > 0 && copy_to_user((void __user *)a1, kbuf, n))
		n = -EFAULT;
	kfree(kbuf);
	return n;
}

USER_CALL(ioctl)
{
	return vfs_ioctl((int)a0, (unsigned)a1, a2);
}

USER_CALL(dup)
{
	return vfs_dup((int)a0);
}

USER_CALL(dup3)
{
	if (a0 == a1)
		return -EINVAL; /* dup3 refuses what dup2 allows */
	return vfs_dup3((int)a0, (int)a1, (int)a2);
}

USER_CALL(dup2)
{
	return vfs_dup2((int)a0, (int)a1);
}

USER_CALL(pipe2)
{
	int fds[2];
	if (a1 & ~(unsigned long)(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	/* Checked first: a pipe made and then not reported would leak its descriptors. */
	if (!access_ok((void __user *)a0, sizeof(fds)))
		return -EFAULT;
	int err = vfs_pipe2(fds, (int)a1);
	if (err)
		return err;
	if (copy_to_user((void __user *)a0, fds, sizeof(fds))) {
		vfs_close(fds[0]);
		vfs_close(fds[1]);
		return -EFAULT;
	}
	return 0;
}

USER_CALL(pipe)
{
	return user_pipe2(a0, 0, 0, 0, 0, 0);
}

USER_CALL(fcntl)
{
	int fd = (int)a0;
	switch ((unsigned)a1) { /* Linux reads cmd as an unsigned int */
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return vfs_dup_min(fd, (int)a2, a1 == F_DUPFD_CLOEXEC);
	case F_GETFD: {
		int on = vfs_fd_cloexec(fd, -1);
		return on < 0 ? on : on ? FD_CLOEXEC : 0;
	}
	case F_SETFD:
		return vfs_fd_cloexec(fd, (a2 & FD_CLOEXEC) != 0) < 0 ? -EBADF : 0;
	case F_GETFL:
		return vfs_fd_flags(fd);
	case F_SETFL:
		return vfs_fd_set_flags(fd, (int)a2);
	default:
		return -EINVAL;
	}
}

USER_CALL(getcwd)
{
	char *buf = kmalloc(PATH_MAX);
	if (!buf)
		return -ENOMEM;
	long len = vfs_getcwd(buf, MIN(a1, PATH_MAX));
	/* Linux returns the length with the NUL. */
	if (len >= 0)
		len = copy_to_user((void __user *)a0, buf, len + 1) ? -EFAULT : len + 1;
	kfree(buf);
	return len;
}

/* A call on one path at dirfd: copy it in, call fn, free it. */
static long with_path(int dirfd, unsigned long upath,
		      int (*fn)(int dirfd, const char *path, unsigned arg), unsigned arg)
{
	int err;
	char *path = getname((const char __user *)upath, &err);
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

USER_CALL(chdir)
{
	return with_path(AT_FDCWD, a0, chdir_path, 0);
}

USER_CALL(mkdirat)
{
	return with_path((int)a0, a1, vfs_mkdirat, (unsigned)a2 & ~current_process()->umask);
}

static int unlink_path(int dirfd, const char *path, unsigned flags)
{
	return vfs_unlinkat(dirfd, path, (int)flags);
}

USER_CALL(unlinkat)
{
	if (a2 & ~(unsigned long)AT_REMOVEDIR)
		return -EINVAL;
	return with_path((int)a0, a1, unlink_path, (unsigned)a2);
}

/* Two paths copied in, both or neither. */
static long getname2(unsigned long uold, unsigned long unew, char **oldp, char **newp)
{
	int err;
	*oldp = getname((const char __user *)uold, &err);
	if (!*oldp)
		return err;
	*newp = getname((const char __user *)unew, &err);
	if (!*newp) {
		kfree(*oldp);
		return err;
	}
	return 0;
}

USER_CALL(renameat2)
{
	char *oldp, *newp;
	if (a4 & ~(unsigned long)RENAME_NOREPLACE)
		return -EINVAL;
	long err = getname2(a1, a3, &oldp, &newp);
	if (err)
		return err;
	err = vfs_renameat((int)a0, oldp, (int)a2, newp, (unsigned)a4);
	kfree(oldp);
	kfree(newp);
	return err;
}

/*
 * AT_EMPTY_PATH is accepted and has no effect: an empty oldpath is -ENOENT, as
 * for a caller without CAP_DAC_READ_SEARCH on Linux.
 */
USER_CALL(linkat)
{
	char *oldp, *newp;
	if (a4 & ~(unsigned long)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	long err = getname2(a1, a3, &oldp, &newp);
	if (err)
		return err;
	err = vfs_linkat((int)a0, oldp, (int)a2, newp, (int)(a4 & AT_SYMLINK_FOLLOW));
	kfree(oldp);
	kfree(newp);
	return err;
}

USER_CALL(symlinkat)
{
	char *target = kmalloc(PATH_MAX);
	if (!target)
		return -ENOMEM;
	long len = strncpy_from_user(target, (const char __user *)a0, PATH_MAX);
	long err = len < 0 ? len : len == PATH_MAX ? -ENAMETOOLONG : 0;
	if (!err) {
		int perr;
		char *linkpath = getname((const char __user *)a2, &perr);
		err = linkpath ? vfs_symlinkat(target, (int)a1, linkpath) : perr;
		kfree(linkpath);
	}
	kfree(target);
	return err;
}

USER_CALL(readlinkat)
{
	int err;
	if ((long)a3 <= 0)
		return -EINVAL;
	char *path = getname((const char __user *)a1, &err);
	if (!path)
		return err;
	size_t size = MIN(a3, PATH_MAX);
	char *kbuf = kmalloc(size);
	long n = kbuf ? vfs_readlinkat((int)a0, path, kbuf, size) : -ENOMEM;
	if (n > 0 && copy_to_user((void __user *)a2, kbuf, n))
		n = -EFAULT;
	kfree(kbuf);
	kfree(path);
	return n;
}

USER_CALL(umask)
{
	struct process *p = current_process();
	unsigned old = p->umask;
	p->umask = (unsigned)a0 & 0777;
	return old;
}

#define F_OK 0
#define X_OK 1
#define W_OK 2
#define R_OK 4

static int access_path(int dirfd, const char *path, unsigned mode)
{
	struct stat st;
	/* Every process is root: any file is readable and writable, executable if some x bit is. */
	int err = vfs_statat(dirfd, path, 0, &st);
	if (!err && (mode & X_OK) && !S_ISDIR(st.st_mode) && !(st.st_mode & 0111))
		err = -EACCES;
	return err;
}

USER_CALL(faccessat)
{
	if (a2 & ~(unsigned long)(R_OK | W_OK | X_OK))
		return -EINVAL;
	return with_path((int)a0, a1, access_path, (unsigned)a2);
}

/* The x86_64 calls the *at family replaced: each is its *at form on AT_FDCWD. */

USER_CALL(open)
{
	return user_openat(AT_FDCWD, a0, a1, a2, 0, 0);
}

USER_CALL(stat)
{
	return user_newfstatat(AT_FDCWD, a0, a1, 0, 0, 0);
}

USER_CALL(lstat)
{
	return user_newfstatat(AT_FDCWD, a0, a1, AT_SYMLINK_NOFOLLOW, 0, 0);
}

USER_CALL(access)
{
	return user_faccessat(AT_FDCWD, a0, a1, 0, 0, 0);
}

USER_CALL(mkdir)
{
	return user_mkdirat(AT_FDCWD, a0, a1, 0, 0, 0);
}

USER_CALL(rmdir)
{
	return user_unlinkat(AT_FDCWD, a0, AT_REMOVEDIR, 0, 0, 0);
}

USER_CALL(unlink)
{
	return user_unlinkat(AT_FDCWD, a0, 0, 0, 0, 0);
}

USER_CALL(renameat)
{
	return user_renameat2(a0, a1, a2, a3, 0, 0);
}

USER_CALL(rename)
{
	return user_renameat2(AT_FDCWD, a0, AT_FDCWD, a1, 0, 0);
}

USER_CALL(link)
{
	return user_linkat(AT_FDCWD, a0, AT_FDCWD, a1, 0, 0);
}

USER_CALL(symlink)
{
	return user_symlinkat(a0, AT_FDCWD, a1, 0, 0, 0);
}

USER_CALL(readlink)
{
	return user_readlinkat(AT_FDCWD, a0, a1, a2, 0, 0);
}

static int chmod_path(int dirfd, const char *path, unsigned mode)
{
	return vfs_chmodat(dirfd, path, mode, 0);
}

USER_CALL(fchmodat)
{
	return with_path((int)a0, a1, chmod_path, (unsigned)a2);
}

USER_CALL(chmod)
{
	return user_fchmodat(AT_FDCWD, a0, a1, 0, 0, 0);
}

USER_CALL(fchmod)
{
	return vfs_fchmod((int)a0, (unsigned)a1);
}

static int exists_path(int dirfd, const char *path, unsigned flags)
{
	struct stat st;
	return vfs_statat(dirfd, path, (int)(flags & AT_SYMLINK_NOFOLLOW), &st);
}

/*
 * utimensat: ramfs keeps no times (stat reports 0), so there is nothing to set;
 * the call checks what Linux checks and succeeds where Linux would.
 */
USER_CALL(utimensat)
{
	if (a3 & ~(unsigned long)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (a2) {
		struct {
			s64 tv_sec, tv_nsec;
		} ts[2];
		if (copy_from_user(ts, (const void __user *)a2, sizeof(ts)))
			return -EFAULT;
	}
	if (!a1) {
		struct stat st;
		return vfs_fstat((int)a0, &st); /* NULL path: the descriptor's own file */
	}
	return with_path((int)a0, a1, exists_path, (unsigned)a3);
}
