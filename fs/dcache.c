/*
 * The dentry cache: every name the VFS knows, positive (it names an inode) or
 * negative (it is known not to exist), in a hash table keyed by (parent, name).
 *
 * Readers find a child with d_lookup_rcu(): no lock, no reference, no store; the
 * child's d_seq, sampled before its fields are read and checked after, says
 * whether a rename or unlink changed it meanwhile. Writers take a bucket's bit
 * lock to link or unlink a dentry, the dentry's d_lock (a bit of its lockref word,
 * beside the count) for its fields, and the global rename_lock seqlock to move
 * one: a reader that may have been led astray by a move (a dentry rehashed into
 * another chain while the reader stood on it) sees the seqlock change and looks
 * again, in d_lookup().
 *
 * A child holds a reference on its parent. A dentry whose count drops to zero
 * stays hashed on the LRU (unused), for the next lookup, until the shrinker
 * frees it; an unhashed one is freed at once, after a grace period, because RCU
 * walkers may still be reading it.
 */
#include <grace/hash.h>
#include <grace/lockdep.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/shrinker.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

/* 16K buckets (128 KiB): a few entries each at the benchmarks' hundreds of thousands of names. */
#define D_HASH_BITS 14
#define D_HASH_SIZE (1u << D_HASH_BITS)

/*
 * d_lookup() retries this often while renames keep changing rename_lock, then
 * takes the lock's writer side for one lookup: a rename storm in one directory
 * delays lookups elsewhere by a bounded amount instead of starving them.
 */
#define D_LOOKUP_RETRIES 4

static struct hlist_bl_head dentry_hashtable[D_HASH_SIZE];
static struct lock_class_key dentry_hash_key;
static struct kmem_cache *dentry_cache;

seqlock_t rename_lock;

static DEFINE_SPINLOCK(dcache_lru_lock);
static LIST_HEAD(dcache_lru);

static void assert_d_locked(const struct dentry *d)
{
	BUG_ON(!lockref_is_locked(&d->d_lockref));
}

/* d_lock held: one reference more, or fewer; never to zero (dput() decides that). */
static void __dget_locked(struct dentry *d)
{
	assert_d_locked(d);
	lockref_set_count(&d->d_lockref, d_count(d) + 1);
}

static void __dput_locked(struct dentry *d)
{
	assert_d_locked(d);
	lockref_set_count(&d->d_lockref, d_count(d) - 1);
}

/* Names of DNAME_INLINE_LEN bytes or more, freed after a grace period: walkers may be comparing
 * them. */
struct external_name {
	struct rcu_head rcu;
	char name[];
};

u32 name_hash(const char *name, u32 len)
{
	/* FNV-1a: cheap, and good enough on path components. */
	u32 h = 2166136261u;
	for (u32 i = 0; i < len; i++)
		h = (h ^ (u8)name[i]) * 16777619u;
	return h;
}

u32 d_hash_index(const struct dentry *parent, u32 hash)
{
	return hash_64(((uintptr_t)parent >> 6) ^ hash, D_HASH_BITS);
}

static struct hlist_bl_head *d_bucket(const struct dentry *parent, u32 hash)
{
	return &dentry_hashtable[d_hash_index(parent, hash)];
}

static bool d_name_is(const struct dentry *d, const struct qstr *name)
{
	return d->d_name.hash == name->hash && d->d_name.len == name->len &&
	       !memcmp(d->d_name.name, name->name, name->len);
}

static bool d_name_external(const struct dentry *d)
{
	return d->d_name.name != d->d_iname;
}

static void d_free_name(const char *name, bool rcu)
{
	struct external_name *ext = container_of(name, struct external_name, name[0]);
	if (rcu)
		kfree_rcu(ext, rcu);
	else
		kfree(ext);
}

/* Where a name of len bytes goes: the inline buffer, or a new external one (NULL on ENOMEM). */
static char *d_name_buffer(struct dentry *d, u32 len)
{
	if (len < DNAME_INLINE_LEN)
		return d->d_iname;
	struct external_name *ext = fs_alloc(sizeof(*ext) + len + 1);
	return ext ? ext->name : NULL;
}

static struct dentry *__d_alloc(struct super_block *sb, const struct qstr *name)
{
	struct dentry *d = kmem_cache_alloc(dentry_cache);
	if (!d)
		return NULL;
	char *buf = d_name_buffer(d, name->len);
	if (!buf) {
		kmem_cache_free(dentry_cache, d);
		return NULL;
	}
	memcpy(buf, name->name, name->len);
	buf[name->len] = '\0';
	/* A walker reading a name mid-rename stops at a NUL within the dentry. */
	d->d_iname[DNAME_INLINE_LEN - 1] = '\0';
	d->d_name = (struct qstr){name->hash, name->len, buf};
	lockref_init(&d->d_lockref, 1);
	d->d_seq = (seqcount_t)SEQCOUNT_INIT;
	d->d_flags = 0;
	hlist_bl_init_node(&d->d_hash);
	d->d_parent = d;
	d->d_inode = NULL;
	d->d_sb = sb;
	d->d_op = NULL;
	list_init(&d->d_child);
	list_init(&d->d_subdirs);
	list_init(&d->d_lru);
	vfs_count_add(NR_DENTRY, 1);
	vfs_count_add(NR_DENTRY_NEGATIVE, 1);
	return d;
}

struct dentry *d_alloc_root(struct super_block *sb)
{
	struct qstr root = {name_hash("/", 1), 1, "/"};
	return __d_alloc(sb, &root);
}

struct dentry *d_alloc(struct dentry *parent, const struct qstr *name)
{
	struct dentry *d = __d_alloc(parent->d_sb, name);
	bool global = vfs_global();
	if (!d)
		return NULL;
	dcache_global_lock(global);
	d_lock(parent);
	/* The child's reference on its parent, taken under the lock the list needs anyway. */
	__dget_locked(parent);
	d->d_parent = parent;
	list_add_tail(&d->d_child, &parent->d_subdirs);
	d_unlock(parent);
	dcache_global_unlock(global);
	return d;
}

static void d_free_rcu(struct rcu_head *head)
{
	struct dentry *d = container_of(head, struct dentry, d_rcu);
	if (d_name_external(d))
		d_free_name(d->d_name.name, false);
	kmem_cache_free(dentry_cache, d);
	vfs_count_add(NR_DENTRY, -1);
}

struct dentry *dget(struct dentry *d)
{
	lockref_get(&d->d_lockref);
	return d;
}

struct dentry *dget_parent(struct dentry *d)
{
	struct dentry *p;

	/*
	 * Not under d's d_lock: the parent's lock comes first. The parent read may be
	 * stale by the time its count is taken (a rename moved d); RCU keeps its
	 * memory, and a dead parent refuses the reference.
	 */
	rcu_read_lock();
	for (;;) {
		p = READ_ONCE(d->d_parent);
		if (lockref_get_not_dead(&p->d_lockref)) {
			/* A rename may have moved d away from p since d_parent was read. */
			race_point_key("dcache.dget_parent", d);
			if (p == READ_ONCE(d->d_parent))
				break;
			rcu_read_unlock();
			dput(p);
			rcu_read_lock();
		}
	}
	rcu_read_unlock();
	return p;
}

static void d_lru_del(struct dentry *d);

/*
 * A pinned dentry is in use for good. If it is on the LRU (a negative dentry
 * that a create makes positive), vfs=scalable leaves it there, as a dget() does:
 * the shrinker takes off every dentry it finds referenced, and a create and an
 * unlink in a loop then touch no global lock (d_lru_add() finds it still on).
 * vfs=global takes it off at once, under the LRU lock, so that the unused count
 * is exact at every moment.
 */
void d_pin(struct dentry *d)
{
	d_lock(d);
	__dget_locked(d);
	d->d_flags |= DCACHE_PINNED;
	if (vfs_global())
		d_lru_del(d);
	d_unlock(d);
}

/* The caller holds a reference too, so the count stays above zero. */
void d_unpin(struct dentry *d)
{
	d_lock(d);
	if (d->d_flags & DCACHE_PINNED) {
		d->d_flags &= ~DCACHE_PINNED;
		__dput_locked(d);
	}
	d_unlock(d);
}

static void __d_rehash(struct dentry *d)
{
	struct hlist_bl_head *b = d_bucket(d->d_parent, d->d_name.hash);
	hlist_bl_lock(b);
	hlist_bl_add_head_rcu(&d->d_hash, b);
	hlist_bl_unlock(b);
}

/* d_lock held, inside a d_seq write section. */
static void __d_unhash(struct dentry *d)
{
	if (d_unhashed(d))
		return;
	struct hlist_bl_head *b = d_bucket(d->d_parent, d->d_name.hash);
	hlist_bl_lock(b);
	hlist_bl_del_init_rcu(&d->d_hash);
	hlist_bl_unlock(b);
}

void d_add(struct dentry *d, struct inode *inode)
{
	bool global = vfs_global();
	dcache_global_lock(global);
	d_lock(d);
	if (inode) {
		/* Unhashed still: no reader can see d yet, so no d_seq section. */
		d->d_inode = inode;
		vfs_count_add(NR_DENTRY_NEGATIVE, -1);
	}
	__d_rehash(d); /* publishes d, its inode set first (the bucket's release) */
	d_unlock(d);
	dcache_global_unlock(global);
}

void d_instantiate(struct dentry *d, struct inode *inode)
{
	bool global = vfs_global();
	dcache_global_lock(global);
	d_lock(d);
	write_seqcount_begin(&d->d_seq);
	WRITE_ONCE(d->d_inode, inode);
	write_seqcount_end(&d->d_seq);
	vfs_count_add(NR_DENTRY_NEGATIVE, -1);
	d_unlock(d);
	dcache_global_unlock(global);
}

void d_drop(struct dentry *d)
{
	bool global = vfs_global();
	dcache_global_lock(global);
	d_lock(d);
	write_seqcount_begin(&d->d_seq);
	__d_unhash(d);
	write_seqcount_end(&d->d_seq);
	d_unlock(d);
	dcache_global_unlock(global);
}

void d_delete(struct dentry *d)
{
	bool global = vfs_global();
	struct inode *inode = NULL;

	dcache_global_lock(global);
	d_lock(d);
	write_seqcount_begin(&d->d_seq);
	if (d_count(d) == 1) {
		/* Only the caller uses it: keep the name, as a negative dentry. */
		inode = d->d_inode;
		WRITE_ONCE(d->d_inode, NULL);
		vfs_count_add(NR_DENTRY_NEGATIVE, 1);
	} else {
		/* Open files still reach the inode through d: it goes when they do. */
		__d_unhash(d);
	}
	write_seqcount_end(&d->d_seq);
	d_unlock(d);
	dcache_global_unlock(global);
	if (inode)
		iput(inode);
}

/* d_lock held. The LRU lock is the innermost. */
static void d_lru_add(struct dentry *d)
{
	if (d->d_flags & DCACHE_LRU)
		return;
	spin_lock(&dcache_lru_lock);
	list_add_tail(&d->d_lru, &dcache_lru);
	spin_unlock(&dcache_lru_lock);
	d->d_flags |= DCACHE_LRU;
	vfs_count_add(NR_DENTRY_UNUSED, 1);
}

/* d_lock and the LRU lock held. */
static void __d_lru_del(struct dentry *d)
{
	list_del_init(&d->d_lru);
	d->d_flags &= ~DCACHE_LRU;
	vfs_count_add(NR_DENTRY_UNUSED, -1);
}

static void d_lru_del(struct dentry *d)
{
	if (!(d->d_flags & DCACHE_LRU))
		return;
	spin_lock(&dcache_lru_lock);
	__d_lru_del(d);
	spin_unlock(&dcache_lru_lock);
}

/*
 * d_lock held: also lock d's parent, which comes first in the lock order. With d
 * unlocked for a moment a rename may move it; RCU keeps the old parent's memory
 * while we find out. Returns the parent, locked (d itself for the root).
 */
static struct dentry *d_lock_parent(struct dentry *d)
{
	struct dentry *p = d->d_parent;
	if (p == d || lockref_trylock(&p->d_lockref))
		return p;
	rcu_read_lock();
	for (;;) {
		p = READ_ONCE(d->d_parent);
		d_unlock(d);
		d_lock(p);
		d_lock_nested(d);
		if (p == d->d_parent)
			break;
		d_unlock(p);
	}
	rcu_read_unlock();
	return p;
}

/*
 * Teardown, the one copy: d locked and unhashed, its count the caller's last
 * reference or none, and its parent (if not d itself) locked. Marks d dead,
 * clears its inode under d_seq (RCU-walkers that read it retry), takes it off
 * its parent's list and the LRU (lru_locked: the caller holds the LRU lock),
 * unlocks d and frees it after a grace period. The parent's reference from d
 * and the parent's lock stay with the caller; so does the inode, returned for
 * an iput() once no d_lock is held.
 */
static struct inode *d_kill_locked(struct dentry *d, bool lru_locked)
{
	struct inode *inode = d->d_inode;

	assert_d_locked(d);
	lockref_mark_dead(&d->d_lockref);
	write_seqcount_begin(&d->d_seq);
	WRITE_ONCE(d->d_inode, NULL);
	write_seqcount_end(&d->d_seq);
	if (!inode)
		vfs_count_add(NR_DENTRY_NEGATIVE, -1);
	if (d->d_parent != d)
		list_del_init(&d->d_child);
	if (lru_locked)
		__d_lru_del(d);
	else
		d_lru_del(d);
	d_unlock(d);
	call_rcu(&d->d_rcu, d_free_rcu);
	return inode;
}

/*
 * d and its parent locked, d unhashed with one reference (the caller's): unlink
 * and free it. Returns the parent, whose reference from d the caller must drop.
 */
static struct dentry *__dentry_kill(struct dentry *d, struct dentry *parent)
{
	struct inode *inode = d_kill_locked(d, false);
	if (parent != d)
		d_unlock(parent);
	if (inode)
		iput(inode);
	return parent != d ? parent : NULL;
}

/* d_lock held, the caller's reference the last one or not: drop it. Returns a parent to put. */
static struct dentry *dput_locked(struct dentry *d)
{
	bool last = d_count(d) == 1;
	if (!last || !d_unhashed(d) || d_is_root(d)) {
		if (last)
			d_lru_add(d); /* hashed: keep it for the next lookup */
		__dput_locked(d);
		d_unlock(d);
		return NULL;
	}
	struct dentry *parent = d_lock_parent(d);
	if (d_count(d) > 1) {
		/* Someone took a reference while d was unlocked. */
		__dput_locked(d);
		d_unlock(d);
		if (parent != d)
			d_unlock(parent);
		return NULL;
	}
	return __dentry_kill(d, parent);
}

void d_put_root(struct dentry *root)
{
	bool global = vfs_global();
	dcache_global_lock(global);
	d_lock(root);
	bool last = d_count(root) == 1 && list_empty(&root->d_subdirs);
	if (last)
		__dentry_kill(root, root);
	else
		d_unlock(root);
	dcache_global_unlock(global);
	if (!last)
		dput(root); /* still used: the last dput keeps it, as any root */
}

void dput(struct dentry *d)
{
	while (d) {
		if (lockref_put_or_lock(&d->d_lockref))
			return;
		/* The last reference: vfs=global takes dcache_lock for it, as atomic_dec_and_lock
		 * did. */
		bool global = vfs_global();
		if (global) {
			d_unlock(d);
			dcache_global_lock(true);
			d_lock(d);
		}
		d = dput_locked(d);
		dcache_global_unlock(global);
	}
}

struct dentry *d_lookup_rcu(const struct dentry *parent, const struct qstr *name, u32 *seq)
{
	struct hlist_bl_head *b = d_bucket(parent, name->hash);
	struct dentry *d;

	hlist_bl_for_each_entry_rcu(d, b, d_hash)
	{
		/*
		 * The count first: what follows is read as of this d_seq, and an odd one
		 * (a writer inside) never validates.
		 */
		u32 s = raw_seqcount_begin(&d->d_seq);
		if (READ_ONCE(d->d_parent) != parent || d_unhashed(d))
			continue;
		if (READ_ONCE(d->d_name.hash) != name->hash ||
		    READ_ONCE(d->d_name.len) != name->len)
			continue;
		/*
		 * A rename may be rewriting the name: compare, then check it was stable.
		 * A length read before the rename with a pointer read after could run past
		 * the inline buffer: such a pair is torn anyway, and never compared.
		 */
		const char *dname = READ_ONCE(d->d_name.name);
		if (dname == d->d_iname && name->len >= DNAME_INLINE_LEN)
			continue;
		if (memcmp(dname, name->name, name->len))
			continue;
		if (!d_seq_valid(d, s))
			continue;
		*seq = s;
		return d;
	}
	return NULL;
}

/* Under rcu_read_lock: the child with a reference, or NULL. */
static struct dentry *__d_lookup(struct dentry *parent, const struct qstr *name)
{
	struct hlist_bl_head *b = d_bucket(parent, name->hash);
	struct dentry *d;

	hlist_bl_for_each_entry_rcu(d, b, d_hash)
	{
		/* A rename may take d to another chain from here: d_lookup() retries. */
		race_point_key("dcache.d_lookup_chain", d);
		if (READ_ONCE(d->d_name.hash) != name->hash)
			continue;
		d_lock(d);
		if (d->d_parent == parent && !d_unhashed(d) && d_name_is(d, name)) {
			__dget_locked(d);
			d_unlock(d);
			return d;
		}
		d_unlock(d);
	}
	return NULL;
}

struct dentry *d_lookup(struct dentry *parent, const struct qstr *name)
{
	bool global = vfs_global();
	struct dentry *d = NULL;

	dcache_global_lock(global);
	rcu_read_lock();
	for (unsigned tries = 0;; tries++) {
		if (tries == D_LOOKUP_RETRIES) {
			/* Renames wait for this one lookup. */
			spin_lock(&rename_lock.lock);
			d = __d_lookup(parent, name);
			spin_unlock(&rename_lock.lock);
			break;
		}
		u32 seq = read_seqbegin(&rename_lock);
		d = __d_lookup(parent, name);
		if (d || !read_seqretry(&rename_lock, seq))
			break;
	}
	rcu_read_unlock();
	dcache_global_unlock(global);
	return d;
}

/*
 * Lock a and b, two dentries neither of which is the other's parent, in address
 * order, as the validator's subclasses sub and sub + 1 (rename holds two parents
 * and two children at once).
 */
static void d_lock_two(struct dentry *a, struct dentry *b, unsigned sub)
{
	if (a == b) {
		lockref_lock_nested(&a->d_lockref, sub);
		return;
	}
	if (a > b) {
		struct dentry *t = a;
		a = b;
		b = t;
	}
	lockref_lock_nested(&a->d_lockref, sub);
	lockref_lock_nested(&b->d_lockref, sub + 1);
}

static void d_unlock_two(struct dentry *a, struct dentry *b)
{
	if (a != b)
		d_unlock(b);
	d_unlock(a);
}

int d_move(struct dentry *d, struct dentry *target)
{
	u32 len = target->d_name.len;
	char *buf = d_name_buffer(d, len);
	bool global = vfs_global();
	const char *old_name = NULL;

	if (!buf)
		return -ENOMEM;
	dcache_global_lock(global);
	write_seqlock(&rename_lock);
	struct dentry *old_parent = d->d_parent, *new_parent = target->d_parent;
	/* Parent before child: of two related parents the ancestor first. */
	if (old_parent != new_parent && d_is_subdir(old_parent, new_parent)) {
		lockref_lock_nested(&new_parent->d_lockref, 0);
		lockref_lock_nested(&old_parent->d_lockref, 1);
	} else if (old_parent != new_parent && d_is_subdir(new_parent, old_parent)) {
		lockref_lock_nested(&old_parent->d_lockref, 0);
		lockref_lock_nested(&new_parent->d_lockref, 1);
	} else {
		d_lock_two(old_parent, new_parent, 0);
	}
	d_lock_two(d, target, 2);
	write_seqcount_begin(&d->d_seq);
	write_seqcount_begin(&target->d_seq);

	__d_unhash(d);
	__d_unhash(target);
	if (d_name_external(d))
		old_name = d->d_name.name;
	memcpy(buf, target->d_name.name, len + 1);
	WRITE_ONCE(d->d_name.name, buf);
	WRITE_ONCE(d->d_name.len, len);
	WRITE_ONCE(d->d_name.hash, target->d_name.hash);
	if (old_parent != new_parent) {
		list_del_init(&d->d_child);
		list_add_tail(&d->d_child, &new_parent->d_subdirs);
		__dget_locked(new_parent);
		WRITE_ONCE(d->d_parent, new_parent);
	}
	__d_rehash(d);

	write_seqcount_end(&target->d_seq);
	write_seqcount_end(&d->d_seq);
	d_unlock_two(d, target);
	d_unlock_two(old_parent, new_parent);
	write_sequnlock(&rename_lock);
	dcache_global_unlock(global);

	if (old_name)
		d_free_name(old_name, true);
	if (old_parent != new_parent)
		dput(old_parent); /* d's reference, which it now holds on new_parent */
	return 0;
}

void d_prune_negative_children(struct dentry *dir)
{
	struct dentry *child, *next;
	bool global = vfs_global();

	dcache_global_lock(global);
	d_lock(dir);
	list_for_each_entry_safe(child, next, &dir->d_subdirs, d_child) {
		d_lock_nested(child);
		write_seqcount_begin(&child->d_seq);
		__d_unhash(child);
		write_seqcount_end(&child->d_seq);
		if (d_count(child) || child->d_inode) {
			/* In use: unhashed, it is freed by its last dput. */
			d_unlock(child);
			continue;
		}
		d_kill_locked(child, false);
		/* The child's reference on dir; the caller holds one more, so it stays above zero.
		 */
		__dput_locked(dir);
	}
	d_unlock(dir);
	dcache_global_unlock(global);
}

/*
 * Free up to nr unused dentries. It may run inside an allocation, with any lock
 * held, so it only tries locks and frees through call_rcu: a dentry it cannot
 * take at once is left for the next pass. A dentry whose parent would be left
 * without references is skipped too (that parent is then unused itself, and the
 * LRU reaches it in turn once its children are gone).
 */
unsigned long dcache_shrink(unsigned long nr)
{
	unsigned long freed = 0, seen = 0;
	struct dentry *d, *next;

	if (!spin_trylock(&dcache_lru_lock))
		return 0;
	list_for_each_entry_safe(d, next, &dcache_lru, d_lru) {
		if (freed >= nr || seen++ >= 4 * nr)
			break;
		if (!lockref_trylock(&d->d_lockref))
			continue;
		if (d_count(d)) {
			/* In use again since it was put here. */
			__d_lru_del(d);
			d_unlock(d);
			continue;
		}
		struct dentry *parent = d->d_parent;
		if (parent == d || !lockref_trylock(&parent->d_lockref)) {
			d_unlock(d);
			continue;
		}
		struct hlist_bl_head *b = d_bucket(parent, d->d_name.hash);
		if (d_count(parent) < 2 || d->d_inode || !hlist_bl_trylock(b)) {
			d_unlock(d);
			d_unlock(parent);
			continue;
		}
		write_seqcount_begin(&d->d_seq);
		hlist_bl_del_init_rcu(&d->d_hash);
		write_seqcount_end(&d->d_seq);
		hlist_bl_unlock(b);
		d_kill_locked(d, true);
		__dput_locked(parent);
		d_unlock(parent);
		freed++;
	}
	spin_unlock(&dcache_lru_lock);
	return freed;
}

static unsigned long dcache_shrinker_count(struct shrinker *s)
{
	return (unsigned long)vfs_count_sum(NR_DENTRY_UNUSED);
}

static unsigned long dcache_shrinker_scan(struct shrinker *s, unsigned long nr)
{
	return dcache_shrink(nr);
}

static struct shrinker dcache_shrinker = {
    .name = "dcache",
    .count = dcache_shrinker_count,
    .scan = dcache_shrinker_scan,
};

void dcache_init(void)
{
	seqlock_init(&rename_lock);
	for (unsigned i = 0; i < D_HASH_SIZE; i++)
		hlist_bl_init_head(&dentry_hashtable[i]);
	bit_spin_lock_set_class(dentry_hashtable, sizeof(dentry_hashtable), &dentry_hash_key,
				"dentry_hashtable");
	dentry_cache = kmem_cache_create("dentry", sizeof(struct dentry), 0,
					 SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, NULL);
	if (!dentry_cache)
		panic("vfs: cannot create the dentry cache");
	register_shrinker(&dcache_shrinker);
}
