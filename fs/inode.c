/*
 * The inode cache: inodes hashed by (superblock, number), a lock per bucket,
 * each inode's own i_lock for its state and last reference.
 *
 * Lockless lookups (ilookup) walk a bucket under RCU and must not find freed
 * memory. Two ways to give that, switchable (inode_free=):
 *   typesafe: the cache is SLAB_TYPESAFE_BY_RCU. An inode's memory may be a new
 *     inode at once, so a lookup locks the candidate and checks its number,
 *     superblock and state again; i_lock is made once, by the constructor, so
 *     that a lookup may take it on memory just reused.
 *   call_rcu: the inode is freed after a grace period; a lookup's candidate is
 *     the inode it looks like until rcu_read_unlock.
 * The first frees at once, the second pays for a callback and keeps the memory
 * cold for a grace period: the 2010 thread's creat/unlink penalty, measured by
 * the creat_unlink benchmark in both modes.
 */
#include <grace/hash.h>
#include <grace/irq.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

#define I_HASH_BITS 12
#define I_HASH_SIZE (1u << I_HASH_BITS)

struct inode_bucket {
	spinlock_t lock;
	struct hlist_head head;
};

static struct inode_bucket inode_hashtable[I_HASH_SIZE] __cacheline_aligned;
/* Read by every new inode: on a line of their own, away from the buckets' locks. */
static struct kmem_cache *inode_cache[2] __cacheline_aligned; /* by enum inode_free_mode */
static enum inode_free_mode free_mode = INODE_FREE_TYPESAFE;

void inode_set_free_mode(enum inode_free_mode mode)
{
	WRITE_ONCE(free_mode, mode);
}

enum inode_free_mode inode_get_free_mode(void)
{
	return READ_ONCE(free_mode);
}

const char *inode_free_mode_name(enum inode_free_mode mode)
{
	return mode == INODE_FREE_CALL_RCU ? "call_rcu" : "typesafe";
}

/*
 * I_HASH_RUN numbers in a row go to I_HASH_RUN neighbouring buckets, one cache
 * line of them (16-byte buckets), and the runs are hashed: a CPU makes its inodes
 * from a batch of consecutive numbers (inode_next_ino()), so a create and an
 * unlink in a loop write a line that no other CPU writes, a new one every
 * I_HASH_RUN creates, where hashing each number alone would write a new line,
 * last written by any CPU, every time.
 */
#define I_HASH_RUN_SHIFT 2
#define I_HASH_RUN (1u << I_HASH_RUN_SHIFT)

u32 inode_hash_index(const struct super_block *sb, u64 ino)
{
	u32 run = hash_64(((uintptr_t)sb >> 6) ^ (ino >> I_HASH_RUN_SHIFT),
			  I_HASH_BITS - I_HASH_RUN_SHIFT);
	return run << I_HASH_RUN_SHIFT | (u32)(ino & (I_HASH_RUN - 1));
}

static struct inode_bucket *i_bucket(const struct super_block *sb, u64 ino)
{
	return &inode_hashtable[inode_hash_index(sb, ino)];
}

/*
 * Inode numbers handed out per CPU, a batch at a time from the superblock's
 * counter, so that a create writes no line another CPU wrote (Linux's
 * get_next_ino(), 2.6.37, takes LAST_INO_BATCH 1024 at once; a batch lasts a CPU
 * 1024 creates and the counter's line moves once for them).
 */
#define INO_BATCH 1024

struct ino_batch {
	struct super_block *sb; /* whose numbers next..end-1 are; superblocks are never freed */
	u64 next, end;
};
static DEFINE_PER_CPU(struct ino_batch, ino_batch); /* its CPU's, with irqs off */

/* vfs=global takes each number from the counter, as before 2.6.37. */
static u64 inode_next_ino(struct super_block *sb, bool global)
{
	if (global)
		return atomic64_inc_return(&sb->s_next_ino);
	unsigned long flags = arch_irq_save();
	struct ino_batch *b = this_cpu_ptr(&ino_batch);
	if (b->sb != sb || b->next == b->end) {
		b->end = atomic64_add_return(&sb->s_next_ino, INO_BATCH) + 1;
		b->next = b->end - INO_BATCH;
		b->sb = sb;
	}
	u64 ino = b->next++;
	arch_irq_restore(flags);
	return ino;
}

/* Once per object's life in the cache: a lookup may lock an inode being reused. */
static void inode_ctor(void *obj)
{
	struct inode *inode = obj;
	spin_lock_init_named(&inode->i_lock, "inode.i_lock");
	mutex_init(&inode->i_mutex);
	inode->i_state = I_FREEING;
	hlist_init_node(&inode->i_hash);
}

struct inode *new_inode(struct super_block *sb, u32 mode)
{
	enum inode_free_mode how = inode_get_free_mode();
	struct inode *inode = kmem_cache_alloc(inode_cache[how]);
	bool global = vfs_global();

	if (!inode)
		return NULL;
	spin_lock(&inode->i_lock);
	atomic_set(&inode->i_count, 1);
	inode->i_ino = inode_next_ino(sb, global);
	inode->i_sb = sb;
	inode->i_op = &empty_iops;
	inode->i_fop = &empty_fops;
	inode->i_mode = mode;
	inode->i_nlink = S_ISDIR(mode) ? 2 : 1;
	inode->i_size = 0;
	inode->i_free_mode = how;
	memset(&inode->data, 0, sizeof(inode->data));
	inode->i_state = 0;
	spin_unlock(&inode->i_lock);

	struct inode_bucket *b = i_bucket(sb, inode->i_ino);
	inode_global_lock(global);
	spin_lock(&b->lock);
	hlist_add_head_rcu(&inode->i_hash, &b->head);
	spin_unlock(&b->lock);
	inode_global_unlock(global);
	vfs_count_add(NR_INODE, 1);
	return inode;
}

struct inode *igrab(struct inode *inode)
{
	atomic_inc(&inode->i_count);
	return inode;
}

static void inode_free_rcu(struct rcu_head *head)
{
	struct inode *inode = container_of(head, struct inode, i_rcu);
	kmem_cache_free(inode_cache[INODE_FREE_CALL_RCU], inode);
	vfs_count_add(NR_INODE, -1);
}

/* The last reference is gone: unhash, drop the data, free. */
static void evict(struct inode *inode, bool global)
{
	struct inode_bucket *b = i_bucket(inode->i_sb, inode->i_ino);
	spin_lock(&b->lock);
	hlist_del_init_rcu(&inode->i_hash);
	spin_unlock(&b->lock);
	inode_global_unlock(global);

	if (inode->i_sb->s_op && inode->i_sb->s_op->evict_inode)
		inode->i_sb->s_op->evict_inode(inode);
	if (inode->i_free_mode == INODE_FREE_CALL_RCU) {
		call_rcu(&inode->i_rcu, inode_free_rcu);
	} else {
		kmem_cache_free(inode_cache[INODE_FREE_TYPESAFE], inode);
		vfs_count_add(NR_INODE, -1);
	}
}

void iput(struct inode *inode)
{
	int count = atomic_read(&inode->i_count);

	/* Not the last reference: one compare-and-swap, no lock. */
	while (count > 1) {
		int seen = atomic_cmpxchg(&inode->i_count, count, count - 1);
		if (seen == count)
			return;
		count = seen;
	}
	bool global = vfs_global();
	inode_global_lock(global);
	spin_lock(&inode->i_lock);
	if (atomic_dec_return(&inode->i_count) > 0) {
		spin_unlock(&inode->i_lock);
		inode_global_unlock(global);
		return;
	}
	/*
	 * ramfs keeps no inode without a name (a name's dentry holds a reference), so
	 * the last reference always frees.
	 */
	inode->i_state |= I_FREEING;
	spin_unlock(&inode->i_lock);
	evict(inode, global); /* drops the global lock */
}

bool inode_take_if(struct inode *inode, struct super_block *sb, u64 ino)
{
	bool ok;
	spin_lock(&inode->i_lock);
	ok = inode->i_ino == ino && inode->i_sb == sb && !(inode->i_state & I_FREEING) &&
	     atomic_read(&inode->i_count) > 0;
	if (ok)
		atomic_inc(&inode->i_count);
	spin_unlock(&inode->i_lock);
	return ok;
}

struct inode *ilookup(struct super_block *sb, u64 ino)
{
	struct inode_bucket *b = i_bucket(sb, ino);
	bool global = vfs_global();
	struct inode *inode;

	inode_global_lock(global);
	rcu_read_lock();
	hlist_for_each_entry_rcu(inode, &b->head, i_hash) {
		/*
		 * Standing on inode, which may be freed from here: a number still matching
		 * is checked again under i_lock, and memory become an inode of another
		 * bucket leads the walk astray (the locked pass below).
		 */
		race_point_key("icache.ilookup_rcu", inode);
		if (READ_ONCE(inode->i_ino) == ino && READ_ONCE(inode->i_sb) == sb &&
		    inode_take_if(inode, sb, ino))
			goto found;
	}
	rcu_read_unlock();
	/*
	 * A miss may be false: a typesafe inode freed and reused in another bucket while
	 * the walk stood on it leads the walk into that bucket. Look again, locked.
	 */
	spin_lock(&b->lock);
	hlist_for_each_entry_rcu(inode, &b->head, i_hash) {
		if (inode_take_if(inode, sb, ino)) {
			spin_unlock(&b->lock);
			inode_global_unlock(global);
			return inode;
		}
	}
	spin_unlock(&b->lock);
	inode_global_unlock(global);
	return NULL;
found:
	rcu_read_unlock();
	inode_global_unlock(global);
	return inode;
}

void inode_stat(const struct inode *inode, struct stat *st)
{
	st->st_dev = READ_ONCE(inode->i_sb)->s_dev;
	st->st_ino = READ_ONCE(inode->i_ino);
	st->st_mode = READ_ONCE(inode->i_mode);
	st->st_nlink = READ_ONCE(inode->i_nlink);
	st->st_size = READ_ONCE(inode->i_size);
	st->st_blocks = S_ISREG(st->st_mode) ? READ_ONCE(inode->data.nr_pages) * (4096 / 512) : 0;
	st->st_rdev = S_ISCHR(st->st_mode) ? inode->rdev : 0;
}

void inode_init(void)
{
	for (unsigned i = 0; i < I_HASH_SIZE; i++) {
		spin_lock_init_named(&inode_hashtable[i].lock, "inode_hashtable");
		inode_hashtable[i].head.first = NULL;
	}
	inode_cache[INODE_FREE_TYPESAFE] = kmem_cache_create(
	    "inode", sizeof(struct inode), 0,
	    SLAB_TYPESAFE_BY_RCU | SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, inode_ctor);
	inode_cache[INODE_FREE_CALL_RCU] = kmem_cache_create(
	    "inode_rcu", sizeof(struct inode), 0, SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, inode_ctor);
	if (!inode_cache[0] || !inode_cache[1])
		panic("vfs: cannot create the inode caches");
}
