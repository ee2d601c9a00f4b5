/*
 * The initramfs: a cpio "newc" archive (magic 070701, or 070702 with data
 * checksums) that the boot loader hands over, unpacked into the root ramfs at
 * boot through the VFS's own calls, as Linux's init/initramfs.c does. Several
 * archives may follow one another, with NUL padding between them; each ends at
 * its TRAILER!!! entry (which also ends its hard-link table) or at the end of
 * the buffer. docs/vfs.md has what is kept and what is left out.
 */
#ifndef GRACE_INITRAMFS_H
#define GRACE_INITRAMFS_H

#include <grace/types.h>

struct initramfs_report {
	unsigned long entries; /* members made: files, directories, symlinks, hard links */
	unsigned long skipped; /* members not made: device nodes, FIFOs, a call that failed */
	const char *error;     /* NULL: the whole buffer was read; else why unpacking stopped */
	size_t error_offset;   /* with error: the offset in the buffer where it was found */
};

/*
 * Unpack buf[0, len) under dir (an existing directory; "/" at boot). Member
 * names are taken relative to dir whatever their leading "/", and ".." never
 * climbs above it. Malformed input stops unpacking with one error line naming
 * the offset and the reason; what was made before it stays. 0, or -EINVAL
 * (malformed: r->error says why), -ENOENT/-ENOTDIR (dir), -ENOMEM.
 */
int initramfs_unpack(const void *buf, size_t len, const char *dir, struct initramfs_report *r);

/* What the boot-time unpack did, for the tests and the log. */
struct initramfs_boot {
	bool present;		/* the boot loader handed an archive over */
	phys_addr_t start, end; /* its bytes, physical */
	struct initramfs_report report;
	u64 pages_freed;    /* its pages given to the page allocator afterwards */
	u64 managed_before; /* pages the allocator managed just before that */
};
extern struct initramfs_boot initramfs_boot;

/* Unpack boot_info's archive into "/" and give its memory back. After vfs_init(). */
void initramfs_init(void);

#endif
