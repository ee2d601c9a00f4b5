/* struct stat of the x86_64 Linux ABI (arch/x86/include/uapi/asm/stat.h): 144 bytes. */
#ifndef ASM_STAT_H
#define ASM_STAT_H

#include <grace/types.h>

struct user_stat {
	u64 st_dev, st_ino, st_nlink;
	u32 st_mode, st_uid, st_gid, pad0;
	u64 st_rdev;
	s64 st_size, st_blksize, st_blocks;
	u64 st_atime, st_atime_nsec, st_mtime, st_mtime_nsec, st_ctime, st_ctime_nsec;
	s64 unused[3];
};
_Static_assert(sizeof(struct user_stat) == 144, "x86_64 struct stat is 144 bytes");

#endif
