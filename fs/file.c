/*
 * Open files and each thread's context: its descriptor table and current
 * directory. A thread's table is its own (kernel threads share none), so it
 * takes no lock: the lowest free descriptor is found by a scan from a hint, and
 * the table doubles when full, up to FD_MAX.
 *
 * A struct file is freed through call_rcu, as Linux did in 2009 when every
 * close(open()) queued one callback: the workload that showed call_rcu's cost
 * growing with the CPUs, and that Grace's per-CPU call_rcu keeps flat.
 *
 * vfs=global keeps every open file on one list under files_lock (the pre-2.6.36
 * sb->s_files): each open and each last close takes it.
 */
#include <grace/chrdev.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

#define FD_INITIAL 16

static struct kmem_cache *file_cache;
/* vfs=global's list of open files and its lock, on a line that nothing else reads. */
static spinlock_t files_lock __cacheline_aligned = SPINLOCK_INIT_NAMED("files_lock");
static LIST_HEAD(open_files);

/*
 * A descriptor table of n slots, zeroed: the file pointers, then in the same
 * block the close-on-exec flags; *cloexec set to those. NULL on ENOMEM.
 */
static struct file **fd_table_alloc(unsigned n, bool **cloexec)
{
	struct file **fd = fs_alloc(n * (sizeof(*fd) + sizeof(bool)));
	if (!fd)
		return NULL;
	memset(fd, 0, n * (sizeof(*fd) + sizeof(bool)));
	*cloexec = (bool *)(fd + n);
	return fd;
}

struct fs_context *fs_current(void)
{
	struct task *t = current;
	if (t->fs)
		return t->fs;
	bool *cloexec;
	struct fs_context *fs = fs_alloc(sizeof(*fs));
	struct file **fd = fd_table_alloc(FD_INITIAL, &cloexec);
	if (!fs || !fd) {
		kfree(fs);
		kfree(fd);
		return NULL;
	}
	*fs = (struct fs_context){.fd = fd, .cloexec = cloexec, .max_fds = FD_INITIAL};
	fs->cwd = (struct path){&root_mnt, root_mnt.mnt_root};
	path_get(&fs->cwd);
	t->fs = fs;
	return fs;
}

void fs_task_exit(struct task *t)
{
	struct fs_context *fs = t->fs;
	if (!fs)
		return;
	for (unsigned i = 0; i < fs->max_fds; i++)
		if (fs->fd[i])
			fput(fs->fd[i]);
	path_put(&fs->cwd);
	kfree(fs->fd);
	kfree(fs);
	t->fs = NULL;
}

int fs_task_fork(struct task *child)
{
	struct fs_context *fs = fs_current();
	if (!fs)
		return -ENOMEM;
	bool *cloexec;
	struct fs_context *copy = fs_alloc(sizeof(*copy));
	struct file **fd = fd_table_alloc(fs->max_fds, &cloexec);
	if (!copy || !fd) {
		kfree(copy);
		kfree(fd);
		return -ENOMEM;
	}
	/* Each open file gains a reference: parent and child share its position, as on Linux. */
	for (unsigned i = 0; i < fs->max_fds; i++) {
		fd[i] = fs->fd[i];
		cloexec[i] = fs->cloexec[i];
		if (fd[i])
			atomic_inc(&fd[i]->f_count);
	}
	*copy = (struct fs_context){.cwd = fs->cwd,
				    .fd = fd,
				    .cloexec = cloexec,
				    .max_fds = fs->max_fds,
				    .next_fd = fs->next_fd};
	path_get(&copy->cwd);
	child->fs = copy;
	return 0;
}

static int fd_grow(struct fs_context *fs)
{
	unsigned n = fs->max_fds * 2 > FD_MAX ? FD_MAX : fs->max_fds * 2;
	if (n == fs->max_fds)
		return -EMFILE;
	bool *cloexec;
	struct file **fd = fd_table_alloc(n, &cloexec);
	if (!fd)
		return -ENOMEM;
	memcpy(fd, fs->fd, fs->max_fds * sizeof(*fd));
	memcpy(cloexec, fs->cloexec, fs->max_fds * sizeof(*cloexec));
	kfree(fs->fd);
	fs->fd = fd;
	fs->cloexec = cloexec;
	fs->max_fds = n;
	return 0;
}

int fd_reserve(struct fs_context *fs)
{
	unsigned i = fs->next_fd;
	while (i < fs->max_fds && fs->fd[i])
		i++;
	if (i == fs->max_fds) {
		int err = fd_grow(fs);
		if (err)
			return err;
	}
	return i;
}

void fd_install(struct fs_context *fs, int fd, struct file *f)
{
	fs->fd[fd] = f;
	fs->cloexec[fd] = false;
	fs->next_fd = fd + 1;
}

int fd_install_lowest(struct fs_context *fs, struct file *f)
{
	int fd = fd_reserve(fs);
	if (fd >= 0)
		fd_install(fs, fd, f);
	return fd;
}

void file_open_anon(struct file *f, struct inode *inode, int flags, const struct file_ops *ops)
{
	atomic_set(&f->f_count, 1);
	f->f_path = (struct path){NULL, NULL};
	f->f_inode = inode;
	f->f_flags = flags;
	f->f_read = (flags & O_ACCMODE) != O_WRONLY;
	f->f_write = (flags & O_ACCMODE) != O_RDONLY;
	f->f_pos = 0;
	f->f_op = ops;
	f->f_listed = false;
	vfs_count_add(NR_FILE, 1); /* counted as every open file is: file_free_rcu() uncounts it */
}

struct file *file_alloc(void)
{
	struct file *f = kmem_cache_alloc(file_cache);
	if (f)
		f->f_op = NULL; /* open sets a device's */
	return f;
}

void file_free_unopened(struct file *f)
{
	kmem_cache_free(file_cache, f);
}

void file_open_path(struct file *f, const struct path *p, int flags)
{
	atomic_set(&f->f_count, 1);
	f->f_path = *p;
	path_get(p);
	f->f_inode = p->dentry->d_inode;
	f->f_flags = flags;
	f->f_read = (flags & O_ACCMODE) != O_WRONLY;
	f->f_write = (flags & O_ACCMODE) != O_RDONLY;
	f->f_pos = 0;
	f->f_listed = vfs_global();
	if (f->f_listed) {
		spin_lock(&files_lock);
		list_add(&f->f_list, &open_files);
		spin_unlock(&files_lock);
	}
	vfs_count_add(NR_FILE, 1);
}

struct file *fget(int fd)
{
	struct fs_context *fs = current->fs;
	if (!fs || fd < 0 || (unsigned)fd >= fs->max_fds || !fs->fd[fd])
		return NULL;
	struct file *f = fs->fd[fd];
	atomic_inc(&f->f_count);
	return f;
}

static void file_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(file_cache, container_of(head, struct file, f_rcu));
	vfs_count_add(NR_FILE, -1);
}

void fput(struct file *f)
{
	if (atomic_dec_return(&f->f_count))
		return;
	if (f->f_listed) {
		spin_lock(&files_lock);
		list_del_init(&f->f_list);
		spin_unlock(&files_lock);
	}
	if (f->f_op && f->f_op->release)
		f->f_op->release(f);
	if (f->f_path.dentry)
		path_put(&f->f_path);
	else
		iput(f->f_inode); /* an anonymous file's inode: no dentry holds it */
	call_rcu(&f->f_rcu, file_free_rcu);
}

int sys_close(int fd)
{
	struct fs_context *fs = current->fs;
	if (!fs || fd < 0 || (unsigned)fd >= fs->max_fds || !fs->fd[fd])
		return -EBADF;
	struct file *f = fs->fd[fd];
	fs->fd[fd] = NULL;
	if ((unsigned)fd < fs->next_fd)
		fs->next_fd = fd;
	fput(f);
	return 0;
}

int sys_fd_cloexec(int fd, int set)
{
	struct fs_context *fs = current->fs;
	if (!fs || fd < 0 || (unsigned)fd >= fs->max_fds || !fs->fd[fd])
		return -EBADF;
	if (set >= 0)
		fs->cloexec[fd] = set;
	return fs->cloexec[fd];
}

int sys_fd_flags(int fd)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int flags = f->f_flags & ~O_CREAT & ~O_EXCL & ~O_TRUNC;
	fput(f);
	return flags;
}

int sys_fd_set_flags(int fd, int flags)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	/* F_SETFL changes only these; the access mode and creation flags stay. */
	u32 settable = O_APPEND | O_NONBLOCK;
	WRITE_ONCE(f->f_flags, (f->f_flags & ~settable) | (flags & settable));
	fput(f);
	return 0;
}

int sys_dup_min(int fd, int min)
{
	struct fs_context *fs = current->fs;
	if (min < 0 || min >= FD_MAX)
		return -EINVAL;
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	for (int i = min; i < FD_MAX; i++) {
		while ((unsigned)i >= fs->max_fds) {
			int err = fd_grow(fs);
			if (err) {
				fput(f);
				return err;
			}
		}
		if (!fs->fd[i]) {
			fs->fd[i] = f;
			fs->cloexec[i] = false;
			return i;
		}
	}
	fput(f);
	return -EMFILE;
}

void fs_close_on_exec(void)
{
	struct fs_context *fs = current->fs;
	for (unsigned i = 0; fs && i < fs->max_fds; i++)
		if (fs->fd[i] && fs->cloexec[i])
			sys_close(i);
}

int sys_dup(int fd)
{
	struct fs_context *fs = current->fs;
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int nfd = fd_install_lowest(fs, f);
	if (nfd < 0)
		fput(f);
	return nfd;
}

int sys_dup2(int oldfd, int newfd)
{
	struct fs_context *fs = current->fs;
	struct file *f = fget(oldfd);
	if (!f)
		return -EBADF;
	if (oldfd == newfd) {
		fput(f);
		return newfd;
	}
	if (newfd < 0 || newfd >= FD_MAX) {
		fput(f);
		return -EBADF;
	}
	while ((unsigned)newfd >= fs->max_fds) {
		int err = fd_grow(fs);
		if (err) {
			fput(f);
			return err;
		}
	}
	struct file *old = fs->fd[newfd];
	fs->fd[newfd] = f;
	fs->cloexec[newfd] = false;
	if (old)
		fput(old);
	return newfd;
}

void file_init(void)
{
	file_cache = kmem_cache_create("file", sizeof(struct file), 0,
				       SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, NULL);
	if (!file_cache)
		panic("vfs: cannot create the file cache");
}
