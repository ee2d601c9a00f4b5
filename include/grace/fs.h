/*
 * The file-system calls. They are shaped like the system calls of the same names
 * and return what those return, or -errno, on kernel pointers: the system calls
 * (kernel/syscall/sys_fs.c) copy paths in and call them, and kernel threads call
 * them directly. A relative path of a vfs_*at() call is walked from the directory
 * dirfd has open (AT_FDCWD: the current directory), as Linux's *at() calls walk
 * it; the short vfs_ forms without a dirfd take AT_FDCWD. Each thread has its own
 * descriptor table and current directory, made on its first call and released
 * when it exits.
 *
 * One ramfs is mounted at "/". Names are looked up in the dentry cache under RCU
 * first, storing to no shared line, and fall back to taking references when
 * something changed under the walk (docs/vfs.md).
 *
 * vfs=scalable|global (boot argument; vfs_set_mode() between benchmark phases)
 * picks the design: scalable is the RCU dcache with per-bucket and per-dentry
 * locks; global is the pre-2.6.36 design, one dcache_lock and one inode_lock
 * taken by every lookup, create and delete, references on every step, and one
 * lock for the list of open files.
 */
#ifndef GRACE_FS_H
#define GRACE_FS_H

#include <grace/compiler.h>
#include <grace/types.h>
#include <grace/uapi/fcntl.h>
#include <grace/uapi/fs.h>
#include <grace/uapi/limits.h>
#include <grace/uapi/poll.h>
#include <grace/uapi/stat.h>

#define SYMLOOP_MAX 40 /* symbolic links one lookup may follow */

struct stat {
	u32 st_dev; /* the file system's: an anonymous device number, major 0 */
	u64 st_ino;
	u32 st_mode;   /* type and permission bits */
	u32 st_nlink;  /* names (a directory: 2 plus its subdirectories) */
	s64 st_size;   /* bytes; a directory: its entries; a symlink: its target's length */
	u64 st_blocks; /* 512-byte blocks holding data (holes hold none) */
	u32 st_rdev;   /* a character device's number */
};

/* getdents() records, laid out as Linux's struct linux_dirent64 (d_type: DT_*, grace/uapi/fs.h). */
struct dirent64 {
	u64 d_ino;
	s64 d_off;     /* the position after this record, for lseek() */
	u16 d_reclen;  /* bytes of this record, 8-aligned */
	u8 d_type;     /* DT_* */
	char d_name[]; /* NUL-terminated */
};

/* open() with O_CLOEXEC set on the descriptor as it is installed. */
int vfs_openat(int dirfd, const char *path, int flags, unsigned mode);
/* flags: AT_SYMLINK_NOFOLLOW or 0. */
int vfs_statat(int dirfd, const char *path, int flags, struct stat *st);
int vfs_mkdirat(int dirfd, const char *path, unsigned mode);
/* A character device node (mode S_IFCHR | permissions, dev its number); -EINVAL for other types. */
int vfs_mknodat(int dirfd, const char *path, unsigned mode, u32 dev);
/* flags: AT_REMOVEDIR (rmdir) or 0 (unlink). */
int vfs_unlinkat(int dirfd, const char *path, int flags);
int vfs_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		 unsigned flags);
/* flags: AT_SYMLINK_FOLLOW (link what a symlink oldpath names) or 0. */
int vfs_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags);
int vfs_symlinkat(const char *target, int dirfd, const char *linkpath);
long vfs_readlinkat(int dirfd, const char *path, char *buf, size_t size);
/* The permission bits of path; flags: AT_SYMLINK_NOFOLLOW or 0. */
int vfs_chmodat(int dirfd, const char *path, unsigned mode, int flags);

static inline int vfs_open(const char *path, int flags, unsigned mode)
{
	return vfs_openat(AT_FDCWD, path, flags, mode);
}
int vfs_close(int fd);
long vfs_read(int fd, void *buf, size_t count);
long vfs_write(int fd, const void *buf, size_t count);
long vfs_pread(int fd, void *buf, size_t count, s64 offset);
long vfs_pwrite(int fd, const void *buf, size_t count, s64 offset);
/*
 * The same four with a user buffer (system calls). Each builds a copy cursor
 * (grace/uio.h) over the buffer and the file copies through it: a copy stops
 * at the first byte that faults, what was moved before it is the result
 * (-EFAULT if nothing was), and what was not moved stays where it was (in the
 * file, the pipe); the position moves by what was moved. See the file's calls
 * for the few that take or give whole pieces (a pipe's buffers, a datagram).
 */
long vfs_read_user(int fd, void __user *buf, size_t count);
long vfs_write_user(int fd, const void __user *buf, size_t count);
long vfs_pread_user(int fd, void __user *buf, size_t count, s64 offset);
long vfs_pwrite_user(int fd, const void __user *buf, size_t count, s64 offset);
/* readv (write false) and writev: one cursor over the user's nr segments at uvec. */
struct iovec;
long vfs_rw_vec_user(int fd, const struct iovec __user *uvec, unsigned long nr, bool write);
s64 vfs_lseek(int fd, s64 offset, int whence);
static inline int vfs_stat(const char *path, struct stat *st)
{
	return vfs_statat(AT_FDCWD, path, 0, st);
}
static inline int vfs_lstat(const char *path, struct stat *st)
{
	return vfs_statat(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, st);
}
int vfs_fstat(int fd, struct stat *st);
static inline int vfs_mkdir(const char *path, unsigned mode)
{
	return vfs_mkdirat(AT_FDCWD, path, mode);
}
static inline int vfs_rmdir(const char *path)
{
	return vfs_unlinkat(AT_FDCWD, path, AT_REMOVEDIR);
}
static inline int vfs_unlink(const char *path)
{
	return vfs_unlinkat(AT_FDCWD, path, 0);
}
static inline int vfs_rename(const char *oldpath, const char *newpath, unsigned flags)
{
	return vfs_renameat(AT_FDCWD, oldpath, AT_FDCWD, newpath, flags);
}
static inline int vfs_link(const char *oldpath, const char *newpath)
{
	return vfs_linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}
static inline int vfs_symlink(const char *target, const char *linkpath)
{
	return vfs_symlinkat(target, AT_FDCWD, linkpath);
}
static inline int vfs_mknod(const char *path, unsigned mode, u32 dev)
{
	return vfs_mknodat(AT_FDCWD, path, mode, dev);
}
static inline long vfs_readlink(const char *path, char *buf, size_t size)
{
	return vfs_readlinkat(AT_FDCWD, path, buf, size);
}
/* Records into buf, up to size bytes: the bytes written, 0 at the end of the directory. */
long vfs_getdents(int fd, void *buf, size_t size);
/* The same into user memory: the records wholly copied before a fault, or -EFAULT. */
long vfs_getdents_user(int fd, void __user *buf, size_t size);
int vfs_chdir(const char *path);
/* The current directory's absolute path: its length (NUL excluded), or -ERANGE if size is short. */
long vfs_getcwd(char *buf, size_t size);
int vfs_truncate(const char *path, s64 length);
/* The permission bits of fd's file. */
int vfs_fchmod(int fd, unsigned mode);
int vfs_ftruncate(int fd, s64 length);
int vfs_dup(int fd);
/*
 * fd's close-on-exec flag: set (1), cleared (0) or only read (-1); the flag
 * as it is then, or -EBADF.
 */
int vfs_fd_cloexec(int fd, int set);
/* The flags fd was opened with (F_GETFL), or -EBADF. */
int vfs_fd_flags(int fd);
/* F_SETFL: O_APPEND and O_NONBLOCK of fd's open file set as in flags; 0 or -EBADF. */
int vfs_fd_set_flags(int fd, int flags);
/*
 * F_DUPFD (F_DUPFD_CLOEXEC: cloexec): fd again at the lowest free descriptor >= min;
 * -EBADF, -EINVAL, -EMFILE.
 */
int vfs_dup_min(int fd, int min, bool cloexec);
/* Close the calling thread's close-on-exec descriptors (execve). */
void fs_close_on_exec(void);
/*
 * Fill each fds[i].revents; wait up to timeout_ns (< 0: forever) for one to be
 * ready. The number ready, 0 on timeout, -EINTR if a signal came first.
 */
int vfs_poll(struct pollfd *fds, unsigned nfds, s64 timeout_ns);
/* Something a poller may wait for changed (a pipe, the console): look again. */
void poll_notify(void);
/*
 * A pipe: fds[0] its read end, fds[1] its write end, each opened with flags
 * (O_NONBLOCK, O_CLOEXEC; others -EINVAL). 0, -EMFILE or -ENOMEM.
 */
int vfs_pipe2(int fds[2], int flags);
static inline int vfs_pipe(int fds[2])
{
	return vfs_pipe2(fds, 0);
}
/*
 * What an open file does: the only way the generic code reaches a kind of file
 * (a ramfs file or directory, a device, a pipe, a socket, /proc/self/fd). Each
 * inode carries the operations a file opened on it starts with (i_fop); a
 * device's open swaps in its driver's. An operation left NULL gets Linux's
 * error for a file without it: read or write -EINVAL, a position (pread, pwrite,
 * lseek) -ESPIPE, a listing -ENOTDIR, ioctl -ENOTTY; poll NULL is always ready.
 *
 * read_iter and write_iter copy through a cursor (grace/uio.h) over the
 * caller's memory, a program's or the kernel's, and return the bytes moved or
 * -errno. A copy that faults part way returns what was moved before the fault
 * (-EFAULT if nothing), and what it could not move stays where it was: in the
 * file, the pipe, the device, the caller's buffer.
 */
struct file;
struct inode;
struct iov_iter;

/* A read or write in progress (Linux's struct kiocb). */
struct kiocb {
	struct file *ki_filp;
	s64 ki_pos;	/* where it starts in the file; moved past what was moved */
	bool ki_append; /* a write at the end, wherever ki_pos is (O_APPEND, not pwrite) */
};

/* A directory listing being filled (getdents): each name goes to actor until it is full. */
struct dir_context {
	/* Add one record, next the position after it; false if it did not fit. */
	bool (*actor)(struct dir_context *ctx, const char *name, u32 len, s64 next, u64 ino,
		      u8 type);
	s64 pos; /* where the listing goes on: the file system's own numbering */
};
/* dir_emit(): one name into the listing, and pos moved past it; false if it did not fit. */
static inline bool dir_emit(struct dir_context *ctx, const char *name, u32 len, s64 next, u64 ino,
			    u8 type)
{
	if (!ctx->actor(ctx, name, len, next, ino, type))
		return false;
	ctx->pos = next;
	return true;
}

struct file_operations {
	/* The file was opened on inode: may replace f_op (a device's driver); 0 or -errno. */
	int (*open)(struct inode *inode, struct file *f);
	long (*read_iter)(struct kiocb *iocb, struct iov_iter *to);
	long (*write_iter)(struct kiocb *iocb, struct iov_iter *from);
	/* A file with a position: the new one (whence SEEK_*), or -errno. */
	s64 (*llseek)(struct file *f, s64 offset, int whence);
	/* A directory's names from ctx->pos on (after "." and "..", which the caller gives). */
	int (*iterate)(struct file *f, struct dir_context *ctx);
	long (*ioctl)(struct file *f, unsigned cmd, unsigned long arg);
	short (*poll)(struct file *f);	 /* POLLIN/POLLOUT/POLLHUP now */
	void (*release)(struct file *f); /* the last reference to the file is gone */
};

/*
 * A file no name reaches, with calls of its own (a socket's, grace/socket.h):
 * a new inode of mode (type and permission bits), ops for its calls and priv
 * for them (file_private()), flags as open()'s (the access mode, O_NONBLOCK,
 * O_CLOEXEC), installed at the lowest free descriptor. The fd, or -EMFILE or -ENOMEM, and
 * then nothing was made: ops->release is not called and priv is the caller's.
 */
int anon_fd_open(u32 mode, const struct file_operations *ops, void *priv, int flags);
/*
 * fd's open file if its calls are ops, with a reference for file_put(): NULL
 * with *err -EBADF (no such descriptor) or -ENOTSOCK (another kind of file,
 * the error the socket calls give for it).
 */
struct file *file_get_ops(int fd, const struct file_operations *ops, int *err);
void file_put(struct file *f);
void *file_private(const struct file *f);
/* The open() flags of f as F_GETFL reads them (O_NONBLOCK among them). */
int file_flags(const struct file *f);

/*
 * From now on /proc/self/exe leads to f (a reference, taken over; NULL: nowhere)
 * in the calling thread's process: what execve calls once the process is the new
 * program's, with no other thread left. As Linux's mm->exe_file, it is the file
 * itself, not a name: a program renamed or unlinked since is still reached.
 */
void fs_set_exe(struct file *f);
/* fd's open file with a reference for file_put(), or NULL. */
struct file *file_get(int fd);
/* Mount procfs on /proc at boot, after the initramfs. */
void proc_init(void);
/* A device's control call (grace/chrdev.h); -ENOTTY for anything that is not a device. */
long vfs_ioctl(int fd, unsigned cmd, unsigned long arg);
/* newfd made to be oldfd (flags: O_CLOEXEC or 0); newfd, -EBADF or -EINVAL. */
int vfs_dup3(int oldfd, int newfd, int flags);
static inline int vfs_dup2(int oldfd, int newfd)
{
	return vfs_dup3(oldfd, newfd, 0);
}

/* The most descriptors one thread may have open; the table grows to it. */
#define FD_MAX 1024

/* Largest regular file, so that a file's page array stays a small allocation. */
#define RAMFS_MAX_FILE_SIZE (64ull << 20)

enum vfs_mode {
	VFS_SCALABLE,
	VFS_GLOBAL,
};
/*
 * Switch the design. Safe at any time: a walk or call reads the mode once and keeps
 * to it, and the two modes share every data structure (global only adds its
 * locks), so calls in flight under the old mode stay correct.
 */
void vfs_set_mode(enum vfs_mode mode);
enum vfs_mode vfs_get_mode(void);
const char *vfs_mode_name(enum vfs_mode mode);
/* "scalable" or "global" into *mode; false for anything else. */
bool vfs_parse_mode(const char *word, enum vfs_mode *mode);

/*
 * How inodes are freed: typesafe (SLAB_TYPESAFE_BY_RCU: reused at once, lockless
 * readers revalidate) or call_rcu (the memory is kept until a grace period ends).
 * Boot argument inode_free=typesafe|call_rcu.
 */
enum inode_free_mode {
	INODE_FREE_TYPESAFE,
	INODE_FREE_CALL_RCU,
};
void inode_set_free_mode(enum inode_free_mode mode);
enum inode_free_mode inode_get_free_mode(void);
const char *inode_free_mode_name(enum inode_free_mode mode);

/*
 * How a closed file's struct file is freed: typesafe (SLAB_TYPESAFE_BY_RCU: at
 * once, into this CPU's slab array, where the next open finds it; fget() takes its
 * reference only from a non-zero count and then checks that the slot still holds
 * the file, as Linux 6.12's file_ref_get() and fget do) or rcu (call_rcu: the
 * memory waits a grace period, and each grace period's batch of frees overflows
 * the CPU's slab array into the node's shared lists). Boot argument
 * file_free=typesafe|rcu.
 */
enum file_free_mode {
	FILE_FREE_TYPESAFE,
	FILE_FREE_RCU,
};
void file_set_free_mode(enum file_free_mode mode);
enum file_free_mode file_get_free_mode(void);
const char *file_free_mode_name(enum file_free_mode mode);

/*
 * The caches' counts, summed over the CPUs' counters: exact when nothing runs
 * (dentries and inodes freed after a grace period count until they are freed:
 * rcu_barrier() first for a settled figure).
 */
struct vfs_counts {
	long dentries;		/* allocated */
	long dentries_unused;	/* on the LRU: no reference when put there, kept for lookups */
	long dentries_negative; /* of those allocated: names known not to exist */
	long inodes;		/* allocated */
	long inodes_unused;	/* no reference and no dentry (freed soon) */
	long files;		/* open file structs */
};
void vfs_counts(struct vfs_counts *c);

/*
 * Reclaim up to nr unused dentries from the LRU (and the inodes only they kept):
 * what the memory allocator's shrinker calls. Returns how many were freed.
 */
unsigned long dcache_shrink(unsigned long nr);

/* Close every descriptor and drop the current directory of the exiting thread. */
struct task;
void fs_task_exit(struct task *t);
/*
 * Give child (not yet running) a copy of the calling thread's descriptor table,
 * sharing each open file, and its current directory, as fork() does. 0 or -ENOMEM.
 */
int fs_task_fork(struct task *child);
/*
 * Share the calling thread's descriptor table and current directory with child
 * (not yet running), as clone() with CLONE_FILES | CLONE_FS does: 0 or -ENOMEM.
 */
int fs_task_share(struct task *child);

/* Mount the root ramfs. Called once at boot, before any thread uses a path. */
void vfs_init(void);

#endif
