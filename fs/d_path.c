/*
 * A name for a dentry: its path from the root, read under RCU without a lock
 * and crossing mounts, and whether one dentry lies below another. A rename
 * while d_path() climbs may have moved a dentry it passed: rename_lock's
 * sequence count says so, and the path is climbed again.
 */
#include <grace/race_point.h>
#include <grace/string.h>

#include "internal.h"

long d_path(const struct path *path, char *buf, size_t size)
{
	long len;

	rcu_read_lock();
	for (;;) {
		u32 seq = read_seqbegin(&rename_lock);
		char *end = buf + size, *p = end;
		len = 0;
		if (size < 2) {
			len = -ERANGE;
			break;
		}
		*--p = '\0';
		const struct vfsmount *mnt = path->mnt;
		struct dentry *cur = path->dentry;
		for (;;) {
			/* A mount's root: on in the mount it is mounted in, from its mountpoint. */
			if (d_is_root(cur) && mnt != &root_mnt && cur == mnt->mnt_root) {
				cur = mnt->mnt_mountpoint;
				mnt = mnt->mnt_parent;
				continue;
			}
			if (d_is_root(cur))
				break;
			u32 n = READ_ONCE(cur->d_name.len);
			const char *name = READ_ONCE(cur->d_name.name);
			if (name == cur->d_iname && n >= DNAME_INLINE_LEN)
				n = DNAME_INLINE_LEN -
				    1; /* torn by a rename: the retry redoes it */
			if ((size_t)(p - buf) < n + 1) {
				len = -ERANGE;
				break;
			}
			p -= n;
			memcpy(p, name, n);
			*--p = '/';
			/* A rename may move cur from here: rename_lock's retry redoes the path. */
			race_point_key("dcache.d_path", cur);
			cur = READ_ONCE(cur->d_parent);
		}
		if (len == 0) {
			if (p == end - 1)
				*--p = '/';
			len = end - 1 - p;
			memmove(buf, p, len + 1);
		}
		if (!read_seqretry(&rename_lock, seq))
			break;
	}
	rcu_read_unlock();
	return len;
}

bool d_is_subdir(struct dentry *d, struct dentry *anc)
{
	for (;;) {
		if (d == anc)
			return true;
		if (d_is_root(d))
			return false;
		d = d->d_parent;
	}
}
