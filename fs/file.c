/*
 * Open files and each thread's context: its descriptor table and current
 * directory. A table used by one thread takes no lock (kernel threads never
 * share one); the threads of one user process share theirs, and then each use
 * takes its mutex (fs_lock, fs/internal.h). The lowest free descriptor is found
 * by a scan from a hint, and the table doubles when full, up to FD_MAX.
 *
 * A struct file is freed in one of two ways (file_free=, grace/fs.h). rcu:
 * through call_rcu, as Linux did from 2.6.14 (2005) to 6.11, when every
 * close(open()) queued one callback: the workload of the 2009 call_rcu
 * scalability thread. A grace period's worth of such frees then arrives at once,
 * overflows the CPU's slab array and goes back through the node's shared slab
 * lists, only for the next opens to take it from there again. typesafe: the
 * file cache is SLAB_TYPESAFE_BY_RCU and the last fput() frees at once, so the
 * next open on this CPU reuses the object its close just freed, and no shared
 * line moves (Linux 6.12, "fs: port files to file_ref", with SLAB_TYPESAFE_BY_RCU).
 *
 * fget() takes no lock in either mode: under RCU it reads the table and the
 * slot, takes a reference only if the count is not 0 (file_ref_get()), and then
 * reads the slot again. A file freed meanwhile has count 0 until it is opened
 * again; one opened again may be another descriptor's file by then, and is not
 * in the slot: fget() drops that reference and looks again. The table's memory
 * stays valid under RCU: a table that grows is freed through kfree_rcu.
 *
 * vfs=global keeps every open file on one list under files_lock (the pre-2.6.36
 * sb->s_files): each open and each last close takes it.
 */
#include <grace/chrdev.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

#define FD_INITIAL 16

/* Read by every open: on a line of its own, away from files_lock. */
static struct kmem_cache *file_cache[2] __cacheline_aligned; /* by enum file_free_mode */
static enum file_free_mode free_mode = FILE_FREE_TYPESAFE;
/* vfs=global's list of open files and its lock, on a line that nothing else reads. */
static spinlock_t files_lock __cacheline_aligned = SPINLOCK_INIT_NAMED("files_lock");
static LIST_HEAD(open_files);

void file_set_free_mode(enum file_free_mode mode)
{
	WRITE_ONCE(free_mode, mode);
}

enum file_free_mode file_get_free_mode(void)
{
	return READ_ONCE(free_mode);
}

const char *file_free_mode_name(enum file_free_mode mode)
{
	return mode == FILE_FREE_RCU ? "rcu" : "typesafe";
}

/* A descriptor table's block: the RCU head that frees it once it is replaced, the slots, the flags.
 */
struct fd_block {
	struct rcu_head rcu;
	struct file *fd[];
};

/*
 * A descriptor table of n slots, zeroed: the file pointers, then in the same
 * block the close-on-exec flags; *cloexec set to those. NULL on ENOMEM.
 */
static struct file **fd_table_alloc(unsigned n, bool **cloexec)
{
	size_t bytes = n * (sizeof(struct file *) + sizeof(bool));
	struct fd_block *b = fs_alloc(sizeof(*b) + bytes);
	if (!b)
		return NULL;
	memset(b->fd, 0, bytes);
	*cloexec = (bool *)(b->fd + n);
	return b->fd;
}

/* rcu: a lockless fget() may still be reading the table (it was replaced by a bigger one). */
static void fd_table_free(struct file **fd, bool rcu)
{
	if (!fd)
		return;
	struct fd_block *b = container_of((void *)fd, struct fd_block, fd);
	if (rcu)
		kfree_rcu(b, rcu);
	else
		kfree(b);
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
		fd_table_free(fd, false);
		return NULL;
	}
	*fs = (struct fs_context){.fd = fd, .cloexec = cloexec, .max_fds = FD_INITIAL};
	atomic_set(&fs->refs, 1);
	mutex_init(&fs->lock);
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
	t->fs = NULL;
	/* Another thread still uses it: only this thread's reference goes. */
	if (atomic_dec_return(&fs->refs))
		return;
	for (unsigned i = 0; i < fs->max_fds; i++)
		if (fs->fd[i])
			fput(fs->fd[i]);
	path_put(&fs->cwd);
	if (fs->exe)
		fput(fs->exe);
	fd_table_free(fs->fd, false); /* no thread has fs: no fget() reads it */
	kfree(fs);
}

int fs_task_share(struct task *child)
{
	struct fs_context *fs = fs_current();
	if (!fs)
		return -ENOMEM;
	atomic_inc(&fs->refs);
	child->fs = fs;
	return 0;
}

int fs_task_fork(struct task *child)
{
	struct fs_context *fs = fs_current();
	if (!fs)
		return -ENOMEM;
	bool *cloexec;
	bool locked = fs_lock(fs);
	struct fs_context *copy = fs_alloc(sizeof(*copy));
	struct file **fd = fd_table_alloc(fs->max_fds, &cloexec);
	if (!copy || !fd) {
		fs_unlock(fs, locked);
		kfree(copy);
		fd_table_free(fd, false);
		return -ENOMEM;
	}
	if (fs->exe)
		atomic_inc(&fs->exe->f_count); /* the child runs the same program */
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
				    .next_fd = fs->next_fd,
				    .exe = fs->exe};
	path_get(&copy->cwd);
	fs_unlock(fs, locked);
	atomic_set(&copy->refs, 1);
	mutex_init(&copy->lock);
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
	struct file **old = fs->fd;
	rcu_assign_pointer(fs->fd, fd);
	fs->cloexec = cloexec;
	/* Pairs with the smp_load_acquire() in fget(): whoever sees n sees the table of n. */
	smp_store_release(&fs->max_fds, n);
	fd_table_free(old, true);
	return 0;
}

/* The lowest free descriptor, grown into if need be; fs locked if shared. */
static int fd_lowest_free(struct fs_context *fs)
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

int fd_reserve(struct fs_context *fs)
{
	bool locked = fs_lock(fs);
	int fd = fd_lowest_free(fs);
	fs_unlock(fs, locked);
	return fd;
}

/*
 * The flag is set with the slot, under the table's lock when shared: a fork in
 * another thread copies the table under that lock, so it never sees the
 * descriptor without its close-on-exec flag.
 */
static void fd_install_locked(struct fs_context *fs, int fd, struct file *f, bool cloexec)
{
	fs->cloexec[fd] = cloexec;
	/* Pairs with fget()'s rcu_dereference(): the file is set up before it is seen. */
	rcu_assign_pointer(fs->fd[fd], f);
	/*
	 * next_fd has no free slot below it. A reserved descriptor installed above it
	 * (another open took and closed lower ones meanwhile) leaves it where it is:
	 * moved past free slots, the hint would climb until opens failed with EMFILE.
	 */
	if ((unsigned)fd == fs->next_fd)
		fs->next_fd = fd + 1;
}

int fd_install(struct fs_context *fs, int fd, struct file *f, bool cloexec)
{
	bool locked = fs_lock(fs);
	/* Another thread of the process took the reserved one meanwhile: the next lowest. */
	if (fs->fd[fd])
		fd = fd_lowest_free(fs);
	if (fd >= 0)
		fd_install_locked(fs, fd, f, cloexec);
	fs_unlock(fs, locked);
	return fd;
}

int fd_install_lowest(struct fs_context *fs, struct file *f, bool cloexec)
{
	bool locked = fs_lock(fs);
	int fd = fd_lowest_free(fs);
	if (fd >= 0)
		fd_install_locked(fs, fd, f, cloexec);
	fs_unlock(fs, locked);
	return fd;
}

void file_open_anon(struct file *f, struct inode *inode, int flags,
		    const struct file_operations *ops)
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
	vfs_count_add(NR_FILE, 1); /* counted as every open file is: its last fput() uncounts it */
}

/*
 * Once per object's life in the typesafe cache: a free file's count is 0, and a
 * lockless fget() that reaches one before it is opened again takes no reference.
 */
static void file_ctor(void *obj)
{
	struct file *f = obj;
	atomic_set(&f->f_count, 0);
}

struct file *file_alloc(void)
{
	enum file_free_mode how = file_get_free_mode();
	struct file *f = kmem_cache_alloc(file_cache[how]);
	if (f) {
		f->f_op = &empty_fops; /* open sets the file's */
		f->f_free_mode = how;
	}
	return f;
}

/* Its count is 0 (never opened, or fput() dropped the last reference): back to its cache. */
static void file_free(struct file *f)
{
	kmem_cache_free(file_cache[f->f_free_mode], f);
}

void file_free_unopened(struct file *f)
{
	atomic_set(&f->f_count, 0);
	file_free(f);
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

/*
 * A reference on f unless its count is 0: then f is being freed, or free (typesafe:
 * perhaps about to be opened again), and no reference may be taken from its slot.
 */
static bool file_ref_get(struct file *f)
{
	int count = atomic_read(&f->f_count);
	while (count) {
		int seen = atomic_cmpxchg(&f->f_count, count, count + 1);
		if (seen == count)
			return true;
		count = seen;
	}
	return false;
}

struct file *fget(int fd)
{
	struct fs_context *fs = current->fs;
	if (!fs || fd < 0)
		return NULL;
	for (;;) {
		rcu_read_lock();
		/* Pairs with the smp_store_release() in fd_grow(). */
		unsigned max = smp_load_acquire(&fs->max_fds);
		struct file **table = rcu_dereference(fs->fd);
		struct file *f = (unsigned)fd < max ? rcu_dereference(table[fd]) : NULL;
		if (!f) {
			rcu_read_unlock();
			return NULL;
		}
		race_point_key("file.fget_rcu", f);
		if (!file_ref_get(f)) {
			/* Closed under us: its slot no longer holds it. */
			rcu_read_unlock();
			cpu_relax();
			continue;
		}
		/*
		 * typesafe: f may have been closed, freed and opened again as another file
		 * since the slot was read. It is the slot's only if the slot (of the table
		 * in use: one that grew has its slots elsewhere) still holds it. The acquire
		 * pairs with rcu_assign_pointer() at install: f's new fields are seen.
		 */
		bool same = READ_ONCE(fs->fd) == table && smp_load_acquire(&table[fd]) == f;
		rcu_read_unlock();
		if (same)
			return f;
		fput(f); /* someone else's file, or one being closed: perhaps the last reference */
	}
}

int fd_next_open(int from)
{
	struct fs_context *fs = current->fs;
	if (!fs || from < 0)
		return -1;
	bool locked = fs_lock(fs);
	unsigned fd = from;
	while (fd < fs->max_fds && !fs->fd[fd])
		fd++;
	int ret = fd < fs->max_fds ? (int)fd : -1;
	fs_unlock(fs, locked);
	return ret;
}

static void file_free_rcu(struct rcu_head *head)
{
	file_free(container_of(head, struct file, f_rcu));
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
	if (f->f_op->release)
		f->f_op->release(f);
	if (f->f_path.dentry)
		path_put(&f->f_path);
	else
		iput(f->f_inode); /* an anonymous file's inode: no dentry holds it */
	if (f->f_free_mode == FILE_FREE_RCU) {
		call_rcu(&f->f_rcu, file_free_rcu);
	} else {
		/* Count 0: a lockless fget() that still has f takes no reference on it. */
		file_free(f);
		vfs_count_add(NR_FILE, -1);
	}
}

int vfs_close(int fd)
{
	struct fs_context *fs = current->fs;
	if (!fs)
		return -EBADF;
	bool locked = fs_lock(fs);
	struct file *f = fd >= 0 && (unsigned)fd < fs->max_fds ? fs->fd[fd] : NULL;
	if (f) {
		WRITE_ONCE(fs->fd[fd], NULL);
		if ((unsigned)fd < fs->next_fd)
			fs->next_fd = fd;
	}
	fs_unlock(fs, locked);
	if (!f)
		return -EBADF;
	fput(f);
	return 0;
}

int vfs_fd_cloexec(int fd, int set)
{
	struct fs_context *fs = current->fs;
	if (!fs)
		return -EBADF;
	bool locked = fs_lock(fs);
	int ret = -EBADF;
	if (fd >= 0 && (unsigned)fd < fs->max_fds && fs->fd[fd]) {
		if (set >= 0)
			fs->cloexec[fd] = set;
		ret = fs->cloexec[fd];
	}
	fs_unlock(fs, locked);
	return ret;
}

int vfs_fd_flags(int fd)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int flags = f->f_flags & ~O_CREAT & ~O_EXCL & ~O_TRUNC;
	fput(f);
	return flags;
}

int vfs_fd_set_flags(int fd, int flags)
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

int vfs_dup_min(int fd, int min, bool cloexec)
{
	struct fs_context *fs = current->fs;
	if (min < 0 || min >= FD_MAX)
		return -EINVAL;
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	bool locked = fs_lock(fs);
	int ret = -EMFILE;
	for (int i = min; i < FD_MAX; i++) {
		while ((unsigned)i >= fs->max_fds && (ret = fd_grow(fs)) == 0)
			;
		if ((unsigned)i >= fs->max_fds)
			break; /* ret: why the table could not grow */
		if (!fs->fd[i]) {
			fd_install_locked(fs, i, f, cloexec);
			ret = i;
			break;
		}
		ret = -EMFILE;
	}
	fs_unlock(fs, locked);
	if (ret < 0)
		fput(f);
	return ret;
}

void fs_close_on_exec(void)
{
	struct fs_context *fs = current->fs;
	/* execve has ended the process's other threads: the table is this thread's alone. */
	for (unsigned i = 0; fs && i < fs->max_fds; i++)
		if (fs->fd[i] && fs->cloexec[i])
			vfs_close(i);
}

int vfs_dup(int fd)
{
	struct fs_context *fs = current->fs;
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	int nfd = fd_install_lowest(fs, f, false);
	if (nfd < 0)
		fput(f);
	return nfd;
}

int vfs_dup3(int oldfd, int newfd, int flags)
{
	struct fs_context *fs = current->fs;
	if (flags & ~O_CLOEXEC)
		return -EINVAL;
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
	bool locked = fs_lock(fs);
	while ((unsigned)newfd >= fs->max_fds) {
		int err = fd_grow(fs);
		if (err) {
			fs_unlock(fs, locked);
			fput(f);
			return err;
		}
	}
	struct file *old = fs->fd[newfd];
	fd_install_locked(fs, newfd, f, flags & O_CLOEXEC);
	fs_unlock(fs, locked);
	if (old)
		fput(old);
	return newfd;
}

void file_init(void)
{
	file_cache[FILE_FREE_TYPESAFE] =
	    kmem_cache_create("file", sizeof(struct file), 0,
			      SLAB_TYPESAFE_BY_RCU | SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, file_ctor);
	file_cache[FILE_FREE_RCU] = kmem_cache_create("file_rcu", sizeof(struct file), 0,
						      SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, NULL);
	if (!file_cache[FILE_FREE_TYPESAFE] || !file_cache[FILE_FREE_RCU])
		panic("vfs: cannot create the file caches");
}
