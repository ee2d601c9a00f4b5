/*
 * procfs: the files of Linux's /proc that programs need from Grace, as a file
 * system of its own mounted on /proc at boot. Its tree is fixed when it is
 * mounted (/proc/self, self/exe, self/fd) except /proc/self/fd, whose names
 * are the caller's descriptors (fd.c). What an entry gives depends on who
 * looks: self/exe names the calling process's program (self.c).
 *
 * Linux has /proc/<pid>/ for every process and /proc/self a link to the
 * caller's; here /proc/self is a directory holding exe and fd alone.
 */
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "internal.h"

struct super_block *proc_sb;

int proc_setattr(struct inode *inode, const struct iattr *attr)
{
	return -EPERM; /* as Linux's proc_setattr for a mode or a size */
}

const struct inode_operations proc_dir_iops = {.lookup = simple_lookup, .setattr = proc_setattr};

static void proc_evict(struct inode *inode)
{
	if (S_ISLNK(inode->i_mode))
		kfree(inode->link);
	inode->link = NULL;
}

static const struct super_operations proc_sops = {.evict_inode = proc_evict};

struct dentry *proc_add(struct dentry *parent, const char *name, u32 mode,
			const struct inode_operations *iops, const struct file_operations *fops)
{
	u32 len = strlen(name);
	struct qstr q = {name_hash(name, len), len, name};
	struct inode *inode = new_inode(proc_sb, mode);
	struct dentry *d = inode ? d_alloc(parent, &q) : NULL;
	if (!d) {
		if (inode)
			iput(inode);
		return NULL;
	}
	inode->i_op = iops;
	inode->i_fop = fops;
	simple_add(d, inode);
	dput(d); /* the pin keeps it */
	return d;
}

static int proc_mount(void)
{
	proc_sb = sb_alloc("proc", &proc_sops, S_IFDIR | 0555);
	if (!proc_sb)
		return -ENOMEM;
	struct dentry *root = proc_sb->s_root;
	root->d_inode->i_op = &proc_dir_iops;
	root->d_inode->i_fop = &simple_dir_fops;
	struct dentry *self =
	    proc_add(root, "self", S_IFDIR | 0555, &proc_dir_iops, &simple_dir_fops);
	if (!self || !proc_self_add(self) || !proc_fd_add(self))
		return -ENOMEM;
	int err = vfs_mkdir("/proc", 0555);
	struct path where;
	if (!err || err == -EEXIST)
		err = path_lookup("/proc", LOOKUP_DIRECTORY, &where);
	if (err)
		return err;
	err = vfs_mount(proc_sb, &where);
	path_put(&where);
	return err;
}

void proc_init(void)
{
	int err = proc_mount();
	if (err)
		pr_warn("proc: cannot mount procfs on /proc: %s\n", errno_name(err));
}
