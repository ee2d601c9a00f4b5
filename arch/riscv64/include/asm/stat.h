/* struct stat of the riscv64 Linux ABI (asm-generic/stat.h, 64-bit): 128 bytes. */
#ifndef ASM_STAT_H
#define ASM_STAT_H

#include <grace/types.h>

struct user_stat {
	u64 st_dev, st_ino;
	u32 st_mode, st_nlink, st_uid, st_gid;
	u64 st_rdev, pad1;
	s64 st_size;
	s32 st_blksize, pad2;
	s64 st_blocks;
	s64 st_atime;
	u64 st_atime_nsec;
	s64 st_mtime;
	u64 st_mtime_nsec;
	s64 st_ctime;
	u64 st_ctime_nsec;
	u32 unused4, unused5;
};
_Static_assert(sizeof(struct user_stat) == 128, "riscv64 struct stat is 128 bytes");

#endif
