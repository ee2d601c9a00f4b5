/*
 * /proc/self/exe: a symlink to the program the calling process runs (busybox
 * runs its applets of a pipeline through it; a program finds itself by it).
 * Its text is made for each caller from the process's descriptor context,
 * where execve leaves the program's absolute path (fs_set_exe), so every walk
 * through it, readlink and open alike, reaches the caller's program. A kernel
 * thread, which runs no program, finds that it names nothing.
 */
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "internal.h"

static long exe_get_link(struct inode *inode, const char **text, char **buf)
{
	/*
	 * Changed only by execve, once the process has no other thread to read it;
	 * copied all the same, so that a caller's text is its own whatever the link.
	 */
	struct fs_context *fs = current->fs;
	const char *exe = fs ? fs->exe : NULL;
	if (!exe)
		return -ENOENT;
	if (!(*buf = fs_alloc(PATH_MAX)))
		return -ENOMEM;
	*text = *buf;
	return strlcpy(*buf, exe, PATH_MAX);
}

static const struct inode_operations exe_iops = {
    .get_link = exe_get_link,
    .setattr = proc_setattr,
};

void fs_set_exe(char *path)
{
	struct fs_context *fs = fs_current();
	if (!fs) {
		kfree(path);
		return;
	}
	kfree(fs->exe);
	fs->exe = path;
}

bool proc_self_add(struct dentry *self)
{
	return proc_add(self, "exe", S_IFLNK | 0777, &exe_iops, &empty_fops) != NULL;
}
