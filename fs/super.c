/*
 * Superblocks: one per mounted instance of a file system, with its root
 * directory and an anonymous device number for st_dev (major 0, as Linux gives
 * ramfs, tmpfs and procfs: the minor counts the instances made since boot).
 */
#include <grace/slab.h>
#include <grace/string.h>
#include "internal.h"

/* Minor numbers of anonymous devices; 0 is never one (Linux's get_anon_bdev starts at 1). */
static atomic_t anon_dev_next = ATOMIC_INIT(0);

struct super_block *sb_alloc(const char *type, const struct super_operations *s_op, u32 mode)
{
	struct super_block *sb = fs_alloc(sizeof(*sb));
	if (!sb)
		return NULL;
	memset(sb, 0, sizeof(*sb));
	atomic64_set(&sb->s_next_ino, 0);
	mutex_init(&sb->s_rename_mutex);
	sb->s_op = s_op;
	sb->s_type = type;
	struct inode *root = new_inode(sb, mode);
	struct dentry *d = root ? d_alloc_root(sb) : NULL;
	if (!d) {
		if (root)
			iput(root);
		kfree(sb);
		return NULL;
	}
	/* The root is never hashed: no lookup names it. Its reference passes to the mount. */
	d->d_inode = root;
	vfs_count_add(NR_DENTRY_NEGATIVE, -1);
	sb->s_root = d;
	sb->s_dev = atomic_inc_return(&anon_dev_next);
	return sb;
}
