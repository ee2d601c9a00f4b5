/*
 * The VFS's own structures: dentries, inodes, the mount, open files and the
 * per-thread context. Only fs/ and the white-box tests include this; everyone
 * else uses the calls in grace/fs.h.
 *
 * Lock order, outermost first (docs/vfs.md):
 *   a directory inode's i_mutex (the parent before the child; rename: the
 *     superblock's s_rename_mutex first),
 *   a descriptor table's lock (fs_context.lock: /proc/self/fd's lookup, under
 *     the directory's i_mutex),
 *   vfs=global's dcache_lock, then its inode_lock,
 *   rename_lock (seqlock writers),
 *   a parent dentry's d_lock, then a child's (d_lock_nested),
 *   an inode hash bucket's lock, then an inode's i_lock,
 *   a dentry hash bucket's bit lock,
 *   the dentry LRU lock.
 */
#ifndef FS_INTERNAL_H
#define FS_INTERNAL_H

#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/list.h>
#include <grace/list_bl.h>
#include <grace/lockref.h>
#include <grace/mutex.h>
#include <grace/rculist.h>
#include <grace/rcupdate.h>
#include <grace/seqlock.h>
#include <grace/spinlock.h>

struct inode;
struct super_block;

/* A name and its hash, as the walk and the hash table compare them. */
struct qstr {
	u32 hash;
	u32 len;
	const char *name; /* not NUL-terminated in a walk; a dentry's name is */
};

u32 name_hash(const char *name, u32 len);

/* Names this long or longer (NUL included) are allocated; shorter ones live in the dentry. */
#define DNAME_INLINE_LEN 40

/* d_flags, under d_lock. */
#define DCACHE_LRU (1u << 0)	/* on the unused list */
#define DCACHE_PINNED (1u << 1) /* ramfs holds a reference: the name is the file's only record */

struct dentry {
	struct lockref d_lockref; /* d_lock and the reference count (grace/lockref.h) */
	seqcount_t d_seq;	  /* written by rename and by a change of d_inode */
	u32 d_flags;
	struct hlist_bl_node d_hash; /* in the table, keyed by (d_parent, d_name) */
	struct dentry *d_parent;     /* the root's is itself; a child holds a reference on it */
	struct qstr d_name;
	struct inode *d_inode; /* NULL: a negative dentry, the name does not exist */
	struct super_block *d_sb;
	struct list_head d_child;   /* in d_parent's d_subdirs, under the parent's d_lock */
	struct list_head d_subdirs; /* children, positive and negative, under d_lock */
	struct list_head d_lru;	    /* on the unused list, under the LRU lock */
	struct rcu_head d_rcu;
	char d_iname[DNAME_INLINE_LEN];
};

static inline void d_lock(struct dentry *d)
{
	lockref_lock(&d->d_lockref);
}
static inline void d_unlock(struct dentry *d)
{
	lockref_unlock(&d->d_lockref);
}
/* A child's d_lock while its parent's is held: the validator's subclass 1. */
static inline void d_lock_nested(struct dentry *d)
{
	lockref_lock_nested(&d->d_lockref, 1);
}
/* ramfs's reference on a positive dentry: the name is the file's only record. */
void d_pin(struct dentry *d);
void d_unpin(struct dentry *d);
static inline int d_count(const struct dentry *d)
{
	return lockref_count(&d->d_lockref);
}
static inline bool d_unhashed(const struct dentry *d)
{
	return hlist_bl_unhashed(&d->d_hash);
}
static inline bool d_is_negative(const struct dentry *d)
{
	return READ_ONCE(d->d_inode) == NULL;
}
static inline bool d_is_root(const struct dentry *d)
{
	return d->d_parent == d;
}

/* The dentry cache (fs/dcache.c). */
void dcache_init(void);
struct dentry *d_alloc(struct dentry *parent, const struct qstr *name);
struct dentry *d_alloc_root(struct super_block *sb);
struct dentry *dget(struct dentry *d);
struct dentry *dget_parent(struct dentry *d);
void dput(struct dentry *d);
/* Hash d (negative or positive) under its parent. */
void d_add(struct dentry *d, struct inode *inode);
/* Give a negative dentry its inode (the inode's reference passes to it). */
void d_instantiate(struct dentry *d, struct inode *inode);
/* The name is gone: make d negative in place if the caller holds the only other reference, else
 * unhash it. */
void d_delete(struct dentry *d);
/* Unhash d: lookups no longer find it. */
void d_drop(struct dentry *d);
/* Rename: d takes target's parent and name; target (negative now) is unhashed. */
int d_move(struct dentry *d, struct dentry *target);
/* Unhash and free target's negative children that nobody uses (before rmdir frees it). */
void d_prune_negative_children(struct dentry *dir);
/*
 * Lockless lookup for the RCU walk: the child of parent named name, and its d_seq
 * in *seq to validate what the caller reads of it; NULL if none was seen (maybe a
 * race: the caller falls back to d_lookup()). Writes nothing.
 */
struct dentry *d_lookup_rcu(const struct dentry *parent, const struct qstr *name, u32 *seq);
/* The child with a reference, or NULL; retries against renames, a bounded number of times. */
struct dentry *d_lookup(struct dentry *parent, const struct qstr *name);
/* The hash table bucket of (parent, hash): white-box tests make names share one. */
u32 d_hash_index(const struct dentry *parent, u32 hash);
/* Is d still what the walk saw when it read seq? */
static inline bool d_seq_valid(const struct dentry *d, u32 seq)
{
	return !read_seqcount_retry(&d->d_seq, seq);
}
/* d's path from the root into buf (NUL-terminated); its length, or -ERANGE. */
long d_path(struct dentry *d, char *buf, size_t size);
/* Is d anc or below it? Caller holds the superblock's rename mutex. */
bool d_is_subdir(struct dentry *d, struct dentry *anc);

extern seqlock_t rename_lock;

/* The inode cache (fs/inode.c). */
#define I_FREEING (1u << 0) /* on its way out: lookups must not take it */
#define I_DEADDIR (1u << 1) /* a removed directory: nothing may be created in it */
#define I_SELF_EXE                                                                                 \
	(1u << 2)	    /* a symlink to the caller's program, not to its text: /proc/self/exe */
#define I_SELF_FD (1u << 3) /* /proc/self/fd: its names are the caller's descriptors */
#define I_FD_LINK (1u << 4) /* /proc/self/fd/N: a link to what descriptor N has open */

struct inode {
	spinlock_t i_lock; /* i_state, i_count's last reference */
	atomic_t i_count;  /* references: positive dentries and the calls using it */
	u32 i_state;
	u64 i_ino;
	u32 i_mode;
	u32 i_nlink;
	s64 i_size;
	u32 i_free_mode; /* enum inode_free_mode, fixed at allocation */
	struct super_block *i_sb;
	struct hlist_node i_hash; /* in the inode table, keyed by (i_sb, i_ino) */
	struct mutex i_mutex;	  /* a directory's names; a file's data and size */
	union {
		struct {
			void **pages; /* page-sized blocks; NULL is a hole */
			u64 nr_slots; /* length of pages */
			u64 nr_pages; /* blocks allocated */
		} data;		      /* S_IFREG */
		char *link;	      /* S_IFLNK: the target */
		u32 rdev;	      /* S_IFCHR: the device number (grace/chrdev.h) */
		u64 entries;	      /* S_IFDIR: names in it */
	};
	struct rcu_head i_rcu;
};

void inode_init(void);
/* A new inode of sb with a fresh number, one reference, hashed; NULL on ENOMEM. */
struct inode *new_inode(struct super_block *sb, u32 mode);
struct inode *igrab(struct inode *inode);
void iput(struct inode *inode);
/* The live inode (sb, ino) with a reference, or NULL: a lockless walk, then revalidated. */
struct inode *ilookup(struct super_block *sb, u64 ino);
/*
 * ilookup's revalidation of a candidate found without locks (under RCU or the
 * bucket's lock): take a reference if inode still is (sb, ino) and alive. With
 * inode_free=typesafe the memory may be another inode by now, or a freed one.
 */
bool inode_take_if(struct inode *inode, struct super_block *sb, u64 ino);
/* The inode hash table bucket of (sb, ino): white-box tests make inodes share one. */
u32 inode_hash_index(const struct super_block *sb, u64 ino);

struct super_block {
	struct dentry *s_root;
	atomic64_t s_next_ino;
	struct mutex s_rename_mutex; /* cross-directory renames: the tree's shape */
};

/* The one mount. Its reference count is per CPU: taking it writes only this CPU's line. */
struct vfsmount {
	struct super_block *mnt_sb;
	struct dentry *mnt_root;
};
extern struct vfsmount root_mnt;
void mnt_get(struct vfsmount *mnt);
void mnt_put(struct vfsmount *mnt);
long mnt_count(struct vfsmount *mnt);

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};
void path_get(const struct path *p);
void path_put(const struct path *p);

/* vfs=global's locks (fs/vfs.c); each is a no-op when called with global false. */
bool vfs_global(void);
void dcache_global_lock(bool global);
void dcache_global_unlock(bool global);
void inode_global_lock(bool global);
void inode_global_unlock(bool global);

/* Per-CPU counters (fs/vfs.c): this CPU's slot, interrupts off, summed by vfs_counts(). */
enum vfs_counter {
	NR_DENTRY,
	NR_DENTRY_UNUSED,
	NR_DENTRY_NEGATIVE,
	NR_INODE,
	NR_INODE_UNUSED, /* none on ramfs: a name's dentry holds every inode (docs/vfs.md) */
	NR_FILE,
	NR_VFS_COUNTERS
};
void vfs_count_add(enum vfs_counter c, long v);
long vfs_count_sum(enum vfs_counter c);
/* What this CPU's slot holds: the tests check updates land on the updating CPU. */
long vfs_count_slot(enum vfs_counter c, unsigned cpu);

/* Path walk (fs/namei.c). */
#define LOOKUP_FOLLOW (1u << 0)	   /* follow a symlink in the last component */
#define LOOKUP_DIRECTORY (1u << 1) /* the last component must be a directory */

/* The path's object, with references. */
int path_lookup(const char *name, unsigned flags, struct path *out);
enum last_type { LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT };

/*
 * What path_parent() found: the directory holding the path's last component,
 * with references, and that component (pointing into the caller's name, or into
 * buf, a copy, when it came from a symlink's text: path_parent_put() frees it).
 * The last name may or may not exist; last_type says if it is "." or "..", or if
 * the whole path was "/" (no last name at all). links: the symlinks the walk
 * followed, counted from the links path_parent_at() was given.
 */
struct parent_lookup {
	struct path dir;
	struct qstr last;
	enum last_type last_type;
	bool trailing_slash;
	unsigned links;
	char *buf;
};
int path_parent(const char *name, struct parent_lookup *out);
/* The same from base (NULL: the current directory), links already followed in this walk. */
int path_parent_at(const struct path *base, const char *name, unsigned links,
		   struct parent_lookup *out);
void path_parent_put(struct parent_lookup *pl);
/* With dir's i_mutex held: the child named name, negative if it does not exist; ERR as NULL + *err.
 */
struct dentry *lookup_locked(struct dentry *dir, const struct qstr *name, int *err);
/* Stat the path's object under RCU when possible: stores to no shared line. */
int path_stat(const char *name, unsigned flags, struct stat *st);
void inode_stat(const struct inode *inode, struct stat *st);

/* The calling thread's context (fs/file.c): descriptors and current directory. */
struct file {
	/*
	 * References; 0 while free. fget() takes one without a lock, from a slot it read
	 * under RCU, and only from a count that is not 0 (file_free=typesafe: the memory
	 * may be a new file by then, which fget() finds out by reading the slot again).
	 */
	atomic_t f_count;
	struct path f_path;
	struct inode *f_inode;
	u32 f_flags; /* O_* as opened */
	bool f_read, f_write;
	s64 f_pos;
	const struct file_ops
	    *f_op;		 /* a device's or a pipe's calls (grace/chrdev.h); NULL: ramfs */
	void *private_data;	 /* f_op's own: a pipe's struct pipe */
	struct list_head f_list; /* vfs=global: on the list of open files */
	bool f_listed;
	u8 f_free_mode; /* enum file_free_mode, fixed at allocation: which cache, how freed */
	struct rcu_head f_rcu;
};

/*
 * A thread's descriptor table and current directory. Its own thread uses it
 * without a lock; once threads of one process share it (refs > 1), every use
 * but fget()'s lockless lookup takes lock. Only a thread that has it can share it further (clone),
 * and then it is not using it, so "shared or not" cannot change under a user that checked it,
 * except from shared to not, which only makes the lock unneeded.
 */
struct fs_context {
	struct path cwd;
	/*
	 * max_fds slots, each written under lock (when shared) with rcu_assign_pointer;
	 * fget() reads them under RCU alone. A table that grows is freed after a grace period.
	 */
	struct file **fd;
	bool *cloexec;	   /* max_fds flags: close the descriptor at execve (O_CLOEXEC) */
	unsigned max_fds;  /* stored with release after fd: never more than fd's slots */
	unsigned next_fd;  /* no free descriptor below this one */
	atomic_t refs;	   /* threads using it */
	struct mutex lock; /* the table and cwd, while shared (a mutex: the table grows under it) */
	char *exe; /* the program its process runs (/proc/self/exe), or NULL; set by exec alone */
};

/*
 * A symlink's target as the caller sees it: the length of its text, *text set
 * to it, or -errno (-ENOENT: it names nothing, as a kernel thread's
 * /proc/self/exe). An ordinary link's text is its inode's own, kept by the
 * caller's reference on the link, and buf goes unused; a /proc/self link's
 * (inode_link_made()) is made for the calling process into buf, PATH_MAX bytes.
 */
long inode_link_text(struct inode *inode, char *buf, const char **text);

/* Is inode a link whose text is made for each caller, needing inode_link_text()'s buf? */
static inline bool inode_link_made(const struct inode *inode)
{
	return READ_ONCE(inode->i_state) & (I_SELF_EXE | I_FD_LINK);
}

/* Is d /proc/self/fd? Marked at boot, before any walk reaches it. */
static inline bool d_is_proc_fd(const struct dentry *d)
{
	struct inode *inode = READ_ONCE(d->d_inode);
	return inode && (READ_ONCE(inode->i_state) & I_SELF_FD);
}

/* /proc/self/fd (fs/proc_fd.c). */
/*
 * With dir's (/proc/self/fd's) i_mutex held: the link named name, made the first
 * time any process looks it up, if name is the caller's open descriptor; else
 * NULL and *err -ENOENT (or -ENOMEM).
 */
struct dentry *proc_fd_lookup_locked(struct dentry *dir, const struct qstr *name, int *err);
/* The inode number of dir's link for the caller's descriptor fd, or -errno. */
long proc_fd_ino(struct dentry *dir, int fd);
/* Where a walk through /proc/self/fd/N goes: N's open file, with references; or -errno. */
int proc_fd_follow(struct inode *link, struct path *out);
/* readlink of /proc/self/fd/N, into buf (PATH_MAX bytes): its length or -errno. */
long proc_fd_link_text(struct inode *link, char *buf);
void proc_fd_init(void);
/* The caller's lowest open descriptor at or above from, or -1 (fs/file.c). */
int fd_next_open(int from);

/* Take fs's lock if it is shared; what fs_unlock() needs to know. */
static inline bool fs_lock(struct fs_context *fs)
{
	if (atomic_read(&fs->refs) == 1)
		return false;
	mutex_lock(&fs->lock);
	return true;
}

static inline void fs_unlock(struct fs_context *fs, bool locked)
{
	if (locked)
		mutex_unlock(&fs->lock);
}
/* The caller's context, made on first use: NULL on ENOMEM. */
struct fs_context *fs_current(void);
/* A file struct to open later, so that nothing is left to fail once a call has changed the tree. */
struct file *file_alloc(void);
void file_free_unopened(struct file *f);
/* Open f on p (taking references on p) with the open() flags. */
void file_open_path(struct file *f, const struct path *p, int flags);
/* Open f on an inode no name reaches (a pipe's), taking over the caller's reference. */
void file_open_anon(struct file *f, struct inode *inode, int flags, const struct file_ops *ops);
struct file *fget(int fd);
void fput(struct file *f);
void file_init(void);
/*
 * The lowest free descriptor, the table grown if needed: the fd, -EMFILE or -ENOMEM.
 * It stays free until fd_install() fills it: a check that a descriptor is left,
 * before a call changes anything.
 */
int fd_reserve(struct fs_context *fs);
/*
 * Install f at fd, or at the lowest free one if another thread of the process took
 * fd meanwhile: the descriptor used, or -EMFILE/-ENOMEM (f is not consumed).
 */
int fd_install(struct fs_context *fs, int fd, struct file *f);

/* Install f at the lowest free descriptor: the fd, or -EMFILE/-ENOMEM (f is not consumed). */
int fd_install_lowest(struct fs_context *fs, struct file *f);

/* ramfs (fs/ramfs.c). */
struct super_block *ramfs_mount(void);
/*
 * Through the cursor, as much as it has room for (read) or holds (write): a copy
 * that faults stops there, returning what was copied before it, or -EFAULT if
 * nothing was; a write keeps what it copied in.
 */
struct iov_iter;
long ramfs_read(struct inode *inode, struct iov_iter *to, s64 pos);
/* At *pos (at the end of the file if append), which moves past what was written. */
long ramfs_write(struct inode *inode, struct iov_iter *from, s64 *pos, bool append);
int ramfs_truncate(struct inode *inode, s64 size);
void ramfs_evict(struct inode *inode);
/*
 * With dir's i_mutex held, d negative: make the file, directory, symlink
 * (link: its target) or character device (rdev: its number) d names. 0 or
 * -ENOMEM, and then nothing changed.
 */
int ramfs_mknod(struct dentry *dir, struct dentry *d, u32 mode, const char *link, u32 rdev);
/* With dir's i_mutex held: another name for inode, at the negative d. */
int ramfs_link(struct dentry *dir, struct dentry *d, struct inode *inode);
/* With dir's i_mutex held: remove the name d (a directory: empty, its i_mutex held too). */
void ramfs_unlink(struct dentry *dir, struct dentry *d);
/*
 * Both directories' i_mutex held (and a directory target's): move old to new's
 * name, replacing what new names. 0, or -ENOMEM and nothing changed.
 */
int ramfs_rename(struct dentry *odir, struct dentry *ndir, struct dentry *old, struct dentry *new);
/* Is the directory empty? Its i_mutex held. */
bool ramfs_dir_empty(const struct inode *dir);

/* Allocation with failure injection (failslab=), for every allocation the VFS makes. */
void *fs_alloc(size_t size);

#endif
