/*
 * /proc/self: the files of Linux's /proc that programs need from Grace.
 * /proc/self/exe is a symlink to the program the calling process runs (busybox
 * runs its applets of a pipeline through it; a program finds itself by it): a
 * ramfs symlink made at boot whose inode is marked I_SELF_EXE, so that every
 * walk through it, readlink and open alike, takes its target from the calling
 * process's descriptor context, where execve leaves the program's absolute path
 * (fs_set_exe). A kernel thread, which runs no program, finds it names nothing.
 * /proc/self/fd holds a link per open descriptor (fs/proc_fd.c).
 *
 * Linux's /proc is a file system of its own, with /proc/<pid>/ for every
 * process and /proc/self a link to the caller's; here /proc/self is a plain
 * directory holding exe and fd alone.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "internal.h"

#define PROC_SELF_EXE "/proc/self/exe"

long inode_link_text(struct inode *inode, char *buf, const char **text)
{
	u32 state = READ_ONCE(inode->i_state);
	if (state & I_FD_LINK) {
		*text = buf;
		return proc_fd_link_text(inode, buf);
	}
	if (!(state & I_SELF_EXE)) {
		*text = inode->link;
		return inode->i_size;
	}
	/*
	 * Changed only by execve, once the process has no other thread to read it;
	 * copied all the same, so that a caller's text is its own whatever the link.
	 */
	struct fs_context *fs = current->fs;
	const char *exe = fs ? fs->exe : NULL;
	if (!exe)
		return -ENOENT;
	*text = buf;
	return strlcpy(buf, exe, PATH_MAX);
}

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

void proc_self_init(void)
{
	struct path p;
	int err = vfs_mkdir("/proc", 0555);
	if (!err || err == -EEXIST)
		err = vfs_mkdir("/proc/self", 0555);
	/* The text is never read: the inode's mark sends every reader to the process's program. */
	if (!err || err == -EEXIST)
		err = vfs_symlink("(the calling process's program)", PROC_SELF_EXE);
	if (!err)
		err = path_lookup(PROC_SELF_EXE, 0, &p);
	if (err) {
		pr_warn("proc: cannot make %s: %s\n", PROC_SELF_EXE, errno_name(err));
		return;
	}
	struct inode *inode = p.dentry->d_inode;
	spin_lock(&inode->i_lock);
	inode->i_state |= I_SELF_EXE;
	spin_unlock(&inode->i_lock);
	path_put(&p);
	proc_fd_init();
}
