/*
 * The VFS's own structures: dentries, inodes, the mount, open files and the
 * per-thread context. Only fs/ and the white-box tests include this; everyone
 * else uses the calls in grace/fs.h.
 *
 * Lock order, outermost first (docs/vfs.md):
 *   a directory inode's i_mutex (the parent before the child; rename: the
 *     superblock's s_rename_mutex first),
 *   the mount table's mount_lock (under a mountpoint's i_mutex: fs/mount.c),
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

struct dentry;
struct inode;
struct path;
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
#define DCACHE_LRU (1u << 0)	 /* on the unused list */
#define DCACHE_PINNED (1u << 1)	 /* ramfs holds a reference: the name is the file's only record */
#define DCACHE_MOUNTED (1u << 2) /* a mount's mountpoint: walks go on in what is mounted */

/* What a file system says about its dentries beyond the cache's own rules. */
struct dentry_operations {
	/*
	 * May a cached d still be used by this caller? 0, or the error its walk
	 * fails with (a /proc/self/fd name the caller has no descriptor for).
	 * Called in ref-walk only: an RCU walk meeting a d_op leaves it to ref-walk.
	 */
	int (*d_revalidate)(struct dentry *d);
};

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
	const struct dentry_operations *d_op; /* set before the dentry is hashed; NULL: none */
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
/* Is something mounted on d? A walk reads it locklessly; mount and umount bump d_seq. */
static inline bool d_mountpoint(const struct dentry *d)
{
	return READ_ONCE(d->d_flags) & DCACHE_MOUNTED;
}

/* The dentry cache (fs/dcache.c). */
void dcache_init(void);
struct dentry *d_alloc(struct dentry *parent, const struct qstr *name);
struct dentry *d_alloc_root(struct super_block *sb);
struct dentry *dget(struct dentry *d);
struct dentry *dget_parent(struct dentry *d);
void dput(struct dentry *d);
/*
 * A superblock's own reference to its root, its tree taken down: the root and
 * its inode are freed if nothing else holds them (a root is never put on the
 * LRU's way out, as a hashed dentry is).
 */
void d_put_root(struct dentry *root);
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
/*
 * p's path from the root into buf (NUL-terminated), crossing mounts; its
 * length, or -ERANGE.
 */
struct path;
long d_path(const struct path *p, char *buf, size_t size);
/* Is d anc or below it? Caller holds the superblock's rename mutex. */
bool d_is_subdir(struct dentry *d, struct dentry *anc);

extern seqlock_t rename_lock;

/* The inode cache (fs/inode.c). */
#define I_FREEING (1u << 0) /* on its way out: lookups must not take it */
#define I_DEADDIR (1u << 1) /* a removed directory: nothing may be created in it */

/* What setattr changes: the fields named in ia_valid. */
#define ATTR_MODE (1u << 0) /* the permission bits, from ia_mode */
#define ATTR_SIZE (1u << 1) /* the size, from ia_size (truncate) */
struct iattr {
	u32 ia_valid;
	u32 ia_mode;
	s64 ia_size;
};

/*
 * What a kind of inode does: the only way the generic code reaches a file
 * system's names, links and attributes. An operation left NULL is refused with
 * Linux's error for a file system without it (-EPERM; lookup: -ENOTDIR; create:
 * -EACCES).
 * The directory operations run with the directory's i_mutex held, d a dentry
 * of it: negative for the calls that make a name, positive for those that
 * remove one; each instantiates or removes d itself, and fails leaving nothing
 * changed.
 */
struct inode_operations {
	/*
	 * d new and unhashed: make it what the name is, with d_add() (d_inode NULL
	 * for a name that does not exist); 0, or -errno and d left unhashed.
	 */
	int (*lookup)(struct inode *dir, struct dentry *d);
	/* A regular file (create), directory, character device node or symlink. */
	int (*create)(struct inode *dir, struct dentry *d, u32 mode);
	int (*mkdir)(struct inode *dir, struct dentry *d, u32 mode);
	int (*mknod)(struct inode *dir, struct dentry *d, u32 mode, u32 rdev);
	int (*symlink)(struct inode *dir, struct dentry *d, const char *target);
	/* Another name for old's inode at the negative d. */
	int (*link)(struct dentry *old, struct inode *dir, struct dentry *d);
	int (*unlink)(struct inode *dir, struct dentry *d);
	/* d's own i_mutex held too; -ENOTEMPTY unless it is empty. */
	int (*rmdir)(struct inode *dir, struct dentry *d);
	/*
	 * Both directories' i_mutex held (and a directory new's): old takes new's
	 * name, replacing what new names (-ENOTEMPTY for a directory that is not empty).
	 */
	int (*rename)(struct inode *odir, struct dentry *old, struct inode *ndir,
		      struct dentry *new);
	/*
	 * A symlink's text: its length with *text set, or -errno. A text made for
	 * the caller is made in a buffer the call allocates into *buf (PATH_MAX
	 * bytes), which the caller frees once done with the text; else *buf stays NULL.
	 */
	long (*get_link)(struct inode *inode, const char **text, char **buf);
	/*
	 * A "magic" link (/proc/self/fd/N): where a walk through it goes, with
	 * references, instead of walking its text. NULL for an ordinary link.
	 */
	int (*jump_link)(struct inode *inode, struct path *out);
	int (*setattr)(struct inode *inode, const struct iattr *attr);
};

/* What a file system does with its superblock's inodes. */
struct super_operations {
	/* The inode's last reference is gone: free what the file system keeps for it. */
	void (*evict_inode)(struct inode *inode);
};

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
	const struct inode_operations *i_op; /* set by the file system before it is reachable */
	const struct file_operations *i_fop; /* what a file opened on it starts with; the same */
	struct hlist_node i_hash;	     /* in the inode table, keyed by (i_sb, i_ino) */
	struct mutex i_mutex;		     /* a directory's names; a file's data and size */
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
/*
 * A new inode of sb with a fresh number, one reference, hashed; NULL on ENOMEM.
 * Its i_op is empty_iops until the file system sets its own.
 */
struct inode *new_inode(struct super_block *sb, u32 mode);
extern const struct inode_operations empty_iops;
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

/* A mounted file system's instance (fs/super.c). Fixed once mounted. */
struct super_block {
	struct dentry *s_root;
	atomic64_t s_next_ino;
	struct mutex s_rename_mutex; /* cross-directory renames: the tree's shape */
	const struct super_operations *s_op;
	const char *s_type; /* the file system's name, as /proc/mounts would give it */
	u32 s_dev;	    /* st_dev of its files: an anonymous device number, major 0 */
};
/*
 * A superblock of type (kmalloc'd, s_dev its own), with a root directory inode of
 * mode made by new_inode() for the file system to fill in: NULL on ENOMEM.
 */
struct super_block *sb_alloc(const char *type, const struct super_operations *s_op, u32 mode);

/*
 * A superblock where the tree has it (fs/mount.c). Mounts are made and taken
 * down by the kernel (boot, tests); a walk reads the table under RCU alone.
 * The reference count is per CPU: taking it writes only this CPU's line.
 */
struct vfsmount {
	struct super_block *mnt_sb;
	struct dentry *mnt_root;
	struct vfsmount *mnt_parent;   /* the mount mnt_mountpoint is in; the root's: itself */
	struct dentry *mnt_mountpoint; /* where it is mounted; a reference */
	unsigned mnt_id;	       /* its slot in the table and in the per-CPU counts */
	struct rcu_head mnt_rcu;
};
extern struct vfsmount root_mnt;
void mnt_get(struct vfsmount *mnt);
void mnt_put(struct vfsmount *mnt);
long mnt_count(struct vfsmount *mnt);
/* The mount on dentry d of parent, or NULL; under RCU, which keeps it until a reference is taken.
 */
struct vfsmount *lookup_mnt(const struct vfsmount *parent, const struct dentry *d);
/*
 * Mount sb on the directory at (a reference on) where: 0, -ENOTDIR, -ENOENT
 * (removed), -EBUSY (something is mounted there already), -ENOSPC (the table is
 * full) or -ENOMEM.
 * The mount takes over the caller's reference on sb's root.
 */
int vfs_mount(struct super_block *sb, const struct path *where);
/*
 * Take down the mount whose root is at, consuming the caller's reference on at;
 * -EINVAL if at is no mount's root, -EBUSY while anything but that reference
 * uses it. Its superblock and tree (the superblock's reference on its root) are
 * then the caller's to free; the mount struct goes after a grace period.
 */
int vfs_umount(const struct path *at);
/*
 * The superblock of the files no name reaches (pipes, sockets), mounted nowhere,
 * as Linux's pipefs and sockfs: their st_dev is its own.
 */
extern struct super_block *anon_sb;
/* Make sb's tree the root of every walk; at boot, before anything uses a path. */
void mount_root(struct super_block *sb);

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

/*
 * The path's object, with references. A relative name starts at dirfd's
 * directory (AT_FDCWD: the current directory); the forms without "at" take
 * AT_FDCWD.
 */
int path_lookupat(int dirfd, const char *name, unsigned flags, struct path *out);
int path_lookup(const char *name, unsigned flags, struct path *out);
enum last_type { LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT };

/*
 * What path_parent() found: the directory holding the path's last component,
 * with references, and that component (pointing into the caller's name, or into
 * buf, a copy, when it came from a symlink's text: path_parent_put() frees it).
 * The last name may or may not exist; last_type says if it is "." or "..", or if
 * the whole path was "/" (no last name at all). links: the symlinks the walk
 * followed, counted from the links path_parent_from() was given.
 */
struct parent_lookup {
	struct path dir;
	struct qstr last;
	enum last_type last_type;
	bool trailing_slash;
	unsigned links;
	char *buf;
};
int path_parentat(int dirfd, const char *name, struct parent_lookup *out);
int path_parent(const char *name, struct parent_lookup *out);
/* The same from base (NULL: dirfd's directory), links already followed in this walk. */
int path_parent_from(int dirfd, const struct path *base, const char *name, unsigned links,
		     struct parent_lookup *out);
void path_parent_put(struct parent_lookup *pl);
/* With dir's i_mutex held: the child named name, negative if it does not exist; ERR as NULL + *err.
 */
struct dentry *lookup_locked(struct dentry *dir, const struct qstr *name, int *err);
/* Stat the path's object under RCU when possible: stores to no shared line. */
int path_statat(int dirfd, const char *name, unsigned flags, struct stat *st);
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
	const struct file_operations
	    *f_op;		 /* what the file does (grace/fs.h); never NULL once open */
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
	struct file *exe;  /* the program its process runs (/proc/self/exe), or NULL; set by exec */
};

/*
 * A symlink's text as the caller sees it (i_op->get_link): its length with
 * *text set, or -errno; *buf, if the call made one, for the caller to kfree.
 */
long inode_get_link(struct inode *inode, const char **text, char **buf);

/* procfs (fs/proc/): mounted on /proc at boot. */
void proc_init(void);
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
void file_open_anon(struct file *f, struct inode *inode, int flags,
		    const struct file_operations *ops);
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
 * Install f at fd with its close-on-exec flag, or at the lowest free one if another thread of the
 * process took fd meanwhile: the descriptor used, or -EMFILE/-ENOMEM (f is not consumed).
 */
int fd_install(struct fs_context *fs, int fd, struct file *f, bool cloexec);

/* Install f at the lowest free descriptor: the fd, or -EMFILE/-ENOMEM (f is not consumed). */
int fd_install_lowest(struct fs_context *fs, struct file *f, bool cloexec);

/* ramfs (fs/ramfs.c): a new instance, its root one reference for the mount; NULL on ENOMEM. */
struct super_block *ramfs_mount(void);
/* Operations that have none (fs/libfs.c): what new_inode() gives an inode. */
extern const struct file_operations empty_fops;
/* lseek within 0..: SEEK_SET, SEEK_CUR, SEEK_END from i_size (-EINVAL past them). */
s64 generic_file_llseek(struct file *f, s64 offset, int whence);
/* A directory's type byte for a listing (DT_*) from an inode's mode (fs/readdir.c). */
u8 dirent_type(u32 mode);
/* A listing of the names d_subdirs holds (ramfs, procfs's fixed directories). */
int dcache_readdir(struct file *f, struct dir_context *ctx);
/* A directory's file operations when its names live in the dcache: dcache_readdir, llseek. */
extern const struct file_operations simple_dir_fops;

/* Helpers for file systems whose names live in the dcache alone (fs/libfs.c). */
/* A lookup in such a directory: every name not in the cache does not exist. */
int simple_lookup(struct inode *dir, struct dentry *d);
/*
 * A name made at mount time in a tree that has no other record of it: d (new,
 * unhashed) gets inode, hashed and pinned. The inode's reference
 * passes to d.
 */
void simple_add(struct dentry *d, struct inode *inode);
/* The permission bits (ATTR_MODE) under the inode's i_mutex; a size is -EPERM. */
int simple_setattr(struct inode *inode, const struct iattr *attr);
/* Change an inode's attributes: its setattr, or simple_setattr() without one, as on Linux. */
int notify_change(struct inode *inode, const struct iattr *attr);

/* Allocation with failure injection (failslab=), for every allocation the VFS makes. */
void *fs_alloc(size_t size);

#endif
