/*
 * The VFS's switches and shared state: the vfs=, inode_free= and file_free= modes with
 * vfs=global's two big locks, the per-CPU counters, and boot-time setup.
 *
 * vfs=global adds its locks around the scalable design's own, never instead of
 * them, so a mode switch while calls are in flight is safe: each call reads the
 * mode once and takes or skips the big lock as one unit.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/failslab.h>
#include <grace/irq.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/string.h>

#include "internal.h"

/*
 * Each on its own line: every call reads the mode, and vfs=global's callers write
 * the locks; sharing a line would make the mode's reads miss on every lock taken.
 */
static enum vfs_mode vfs_mode __cacheline_aligned = VFS_SCALABLE;
static spinlock_t dcache_lock __cacheline_aligned = SPINLOCK_INIT_NAMED("dcache_lock");
static spinlock_t inode_lock __cacheline_aligned = SPINLOCK_INIT_NAMED("inode_lock");

bool vfs_global(void)
{
	return READ_ONCE(vfs_mode) == VFS_GLOBAL;
}

void vfs_set_mode(enum vfs_mode mode)
{
	WRITE_ONCE(vfs_mode, mode);
}

enum vfs_mode vfs_get_mode(void)
{
	return READ_ONCE(vfs_mode);
}

const char *vfs_mode_name(enum vfs_mode mode)
{
	return mode == VFS_GLOBAL ? "global" : "scalable";
}

bool vfs_parse_mode(const char *word, enum vfs_mode *mode)
{
	if (!strcmp(word, "scalable"))
		*mode = VFS_SCALABLE;
	else if (!strcmp(word, "global"))
		*mode = VFS_GLOBAL;
	else
		return false;
	return true;
}

void dcache_global_lock(bool global)
{
	if (global)
		spin_lock(&dcache_lock);
}

void dcache_global_unlock(bool global)
{
	if (global)
		spin_unlock(&dcache_lock);
}

void inode_global_lock(bool global)
{
	if (global)
		spin_lock(&inode_lock);
}

void inode_global_unlock(bool global)
{
	if (global)
		spin_unlock(&inode_lock);
}

/*
 * One cache line of counters per CPU. Updates come from threads and from RCU
 * callbacks (softirq) on the same CPU, so each is made with interrupts off; the
 * sum is read without a lock and is exact once nothing updates.
 */
struct vfs_counters {
	long v[NR_VFS_COUNTERS];
};
static DEFINE_PER_CPU_ALIGNED(struct vfs_counters, vfs_counters);

void vfs_count_add(enum vfs_counter c, long v)
{
	unsigned long flags = arch_irq_save();
	struct vfs_counters *mine = this_cpu_ptr(&vfs_counters);
	WRITE_ONCE(mine->v[c], mine->v[c] + v);
	arch_irq_restore(flags);
}

long vfs_count_slot(enum vfs_counter c, unsigned cpu)
{
	return READ_ONCE(per_cpu(vfs_counters, cpu).v[c]);
}

long vfs_count_sum(enum vfs_counter c)
{
	long sum = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += vfs_count_slot(c, cpu);
	return sum;
}

void vfs_counts(struct vfs_counts *c)
{
	c->dentries = vfs_count_sum(NR_DENTRY);
	c->dentries_unused = vfs_count_sum(NR_DENTRY_UNUSED);
	c->dentries_negative = vfs_count_sum(NR_DENTRY_NEGATIVE);
	c->inodes = vfs_count_sum(NR_INODE);
	c->inodes_unused = vfs_count_sum(NR_INODE_UNUSED);
	c->files = vfs_count_sum(NR_FILE);
}

struct super_block *anon_sb;

void *fs_alloc(size_t size)
{
	return kmalloc_failable(size);
}

static void vfs_apply_cmdline(void)
{
	static const char *const modes[] = {[VFS_SCALABLE] = "scalable", [VFS_GLOBAL] = "global"};
	static const char *const frees[] = {
	    [INODE_FREE_TYPESAFE] = "typesafe", [INODE_FREE_CALL_RCU] = "call_rcu"};
	static const char *const file_frees[] = {
	    [FILE_FREE_TYPESAFE] = "typesafe", [FILE_FREE_RCU] = "rcu"};

	vfs_set_mode(cmdline_get_choice("vfs", modes, ARRAY_SIZE(modes), VFS_SCALABLE));
	inode_set_free_mode(
	    cmdline_get_choice("inode_free", frees, ARRAY_SIZE(frees), INODE_FREE_TYPESAFE));
	file_set_free_mode(cmdline_get_choice("file_free", file_frees, ARRAY_SIZE(file_frees),
					      FILE_FREE_TYPESAFE));
}

void vfs_init(void)
{
	vfs_apply_cmdline();
	dcache_init();
	inode_init();
	file_init();
	struct super_block *sb = ramfs_mount();
	anon_sb = sb_alloc("anon_inodefs", NULL, S_IFDIR | 0700);
	if (!sb || !anon_sb)
		panic("vfs: cannot mount the root ramfs");
	mount_root(sb);
	printk("vfs: ramfs on /, %s dcache, inodes freed %s, files freed %s\n",
	       vfs_mode_name(vfs_get_mode()), inode_free_mode_name(inode_get_free_mode()),
	       file_free_mode_name(file_get_free_mode()));
}
