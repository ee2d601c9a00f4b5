/*
 * procfs's own: its superblock, how it makes its fixed entries, and the
 * directories under /proc/self (self.c: exe; fd.c: a link per descriptor).
 */
#ifndef FS_PROC_INTERNAL_H
#define FS_PROC_INTERNAL_H

#include "../internal.h"

extern struct super_block *proc_sb;
/* A directory's names are its fixed entries; attributes cannot be changed (-EPERM). */
extern const struct inode_operations proc_dir_iops;
int proc_setattr(struct inode *inode, const struct iattr *attr);
/*
 * A fixed entry named name in parent, of a new inode of mode with iops and fops:
 * made at mount time and kept. Its dentry (no reference), or NULL on ENOMEM.
 */
struct dentry *proc_add(struct dentry *parent, const char *name, u32 mode,
			const struct inode_operations *iops, const struct file_operations *fops);
/*
 * What a link to an open file reads as, into buf (PATH_MAX bytes): its path, with
 * " (deleted)" after it once unlinked, or "pipe:[INODE]" or "socket:[INODE]"; its
 * length or -ENAMETOOLONG.
 */
long file_path_text(struct file *f, char *buf);
/* /proc/self/exe and /proc/self/fd under self; false on ENOMEM. */
bool proc_self_add(struct dentry *self);
bool proc_fd_add(struct dentry *self);

#endif
