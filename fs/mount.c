/*
 * The mount table: which superblock's tree stands where. The root ramfs is
 * mounted at boot; procfs on /proc; a test may mount a file system of its own on
 * a directory and take it down again.
 *
 * Walks read the table under RCU alone: a mountpoint dentry carries
 * DCACHE_MOUNTED, so a step that lands on any other dentry reads nothing here,
 * and the few mounts there are sit in one small array scanned by lookup_mnt().
 * A mount and an umount set or clear the flag inside a d_seq write section of the
 * mountpoint, so an RCU walk that read the dentry before the change fails its
 * check and walks again. A walk looks a mount up and takes what it needs of it
 * inside an RCU read side (fs/namei.c, enter_mounts()), and a mount's struct is
 * freed a grace period after its umount. What a walk finds is the table as it
 * was at one instant, before or after a change, never a mix.
 *
 * Each mount's reference count is per CPU, in one array of MNT_MAX counts per
 * CPU: taking a reference writes only this CPU's line, and mnt_count() sums the
 * CPUs, exact once nothing runs (what vfs_umount() checks before it takes a mount
 * down, under mount_lock, which every change to the table takes). So a mount is
 * taken down only once nothing walks into it any more (a test's mount, its
 * threads done): a walk entering it while vfs_umount() runs would keep a
 * reference past the grace period, which Linux's mount_lock seqcount and
 * MNT_SYNC_UMOUNT prevent and this table does not.
 */
#include <grace/boot_info.h>
#include <grace/irq.h>
#include <grace/percpu.h>
#include <grace/rcupdate.h>
#include <grace/slab.h>
#include "internal.h"

/* Mounts at once: the root, /proc, and what tests mount. */
#define MNT_MAX 16

struct vfsmount root_mnt;
static struct vfsmount *mnt_table[MNT_MAX]; /* written under mount_lock; read under RCU */
static DEFINE_MUTEX(mount_lock);

struct mnt_counts {
	long count[MNT_MAX];
};
static DEFINE_PER_CPU_ALIGNED(struct mnt_counts, mnt_counts);

/* Interrupts off: files are released from RCU callbacks too, on the same CPU. */
void mnt_get(struct vfsmount *mnt)
{
	unsigned long flags = arch_irq_save();
	this_cpu(mnt_counts).count[mnt->mnt_id]++;
	arch_irq_restore(flags);
}

void mnt_put(struct vfsmount *mnt)
{
	unsigned long flags = arch_irq_save();
	this_cpu(mnt_counts).count[mnt->mnt_id]--;
	arch_irq_restore(flags);
}

long mnt_count(struct vfsmount *mnt)
{
	long sum = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += READ_ONCE(per_cpu(mnt_counts, cpu).count[mnt->mnt_id]);
	return sum;
}

/* Beside mnt_get() and mnt_put(), which they inline: every open and close takes both. */
void path_get(const struct path *p)
{
	mnt_get(p->mnt);
	dget(p->dentry);
}

void path_put(const struct path *p)
{
	/* The mount's first: its count frees nothing, and p is then not needed across dput. */
	mnt_put(p->mnt);
	dput(p->dentry);
}

struct vfsmount *lookup_mnt(const struct vfsmount *parent, const struct dentry *d)
{
	for (unsigned i = 1; i < MNT_MAX; i++) {
		struct vfsmount *m = rcu_dereference(mnt_table[i]);
		if (m && m->mnt_parent == parent && m->mnt_mountpoint == d)
			return m;
	}
	return NULL;
}

/* Flag or unflag d as a mountpoint, inside a d_seq write section (the walks' check). */
static void d_set_mounted(struct dentry *d, bool mounted)
{
	d_lock(d);
	write_seqcount_begin(&d->d_seq);
	if (mounted)
		d->d_flags |= DCACHE_MOUNTED;
	else
		d->d_flags &= ~DCACHE_MOUNTED;
	write_seqcount_end(&d->d_seq);
	d_unlock(d);
}

int vfs_mount(struct super_block *sb, const struct path *where)
{
	struct dentry *mp = where->dentry;
	if (!mp->d_inode || !S_ISDIR(mp->d_inode->i_mode))
		return -ENOTDIR;
	struct vfsmount *m = fs_alloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	/*
	 * The directory's i_mutex, which rmdir holds while it checks for a mount:
	 * the mount either comes first and rmdir sees it, or finds the directory dead.
	 */
	mutex_lock(&mp->d_inode->i_mutex);
	mutex_lock(&mount_lock);
	unsigned id = 1;
	while (id < MNT_MAX && mnt_table[id])
		id++;
	int err = id == MNT_MAX			     ? -ENOSPC
		  : mp->d_inode->i_state & I_DEADDIR ? -ENOENT
		  : d_mountpoint(mp)		     ? -EBUSY
						     : 0;
	if (!err) {
		*m = (struct vfsmount){.mnt_sb = sb,
				       .mnt_root = sb->s_root,
				       .mnt_parent = where->mnt,
				       .mnt_mountpoint = dget(mp),
				       .mnt_id = id};
		mnt_get(where->mnt); /* the parent mount stays while this one is on it */
		/* Pairs with lookup_mnt()'s rcu_dereference(): a walk sees m filled in. */
		rcu_assign_pointer(mnt_table[id], m);
		d_set_mounted(mp, true);
	}
	mutex_unlock(&mount_lock);
	mutex_unlock(&mp->d_inode->i_mutex);
	if (err)
		kfree(m);
	return err;
}

static void mnt_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct vfsmount, mnt_rcu));
}

int vfs_umount(const struct path *at)
{
	struct vfsmount *m = at->mnt;
	if (m == &root_mnt || at->dentry != m->mnt_root)
		return -EINVAL;
	mutex_lock(&mount_lock);
	/* The caller's reference is the only one: no walk stands in it, no file is open. */
	int err = mnt_count(m) != 1 || d_mountpoint(m->mnt_root) ? -EBUSY : 0;
	if (!err) {
		d_set_mounted(m->mnt_mountpoint, false);
		rcu_assign_pointer(mnt_table[m->mnt_id], NULL);
	}
	mutex_unlock(&mount_lock);
	if (err)
		return err;
	path_put(at); /* the caller's */
	struct path mp = {m->mnt_parent, m->mnt_mountpoint};
	path_put(&mp);
	call_rcu(&m->mnt_rcu, mnt_free_rcu);
	return 0;
}

void mount_root(struct super_block *sb)
{
	root_mnt = (struct vfsmount){.mnt_sb = sb,
				     .mnt_root = sb->s_root,
				     .mnt_parent = &root_mnt,
				     .mnt_mountpoint = sb->s_root,
				     .mnt_id = 0};
	rcu_assign_pointer(mnt_table[0], &root_mnt);
}
