/*
 * statx(2)'s struct and bits (uapi/linux/stat.h, uapi/linux/fcntl.h): the same
 * 256 bytes on every arch. stx_mask says which fields hold the file's values.
 */
#ifndef GRACE_UAPI_STATX_H
#define GRACE_UAPI_STATX_H

#include <grace/types.h>

#define STATX_TYPE 0x1
#define STATX_MODE 0x2
#define STATX_NLINK 0x4
#define STATX_UID 0x8
#define STATX_GID 0x10
#define STATX_ATIME 0x20
#define STATX_MTIME 0x40
#define STATX_CTIME 0x80
#define STATX_INO 0x100
#define STATX_SIZE 0x200
#define STATX_BLOCKS 0x400
#define STATX__RESERVED 0x80000000u

#define AT_NO_AUTOMOUNT 0x800
#define AT_STATX_SYNC_TYPE 0x6000 /* both bits at once is not a sync type */

struct statx_timestamp {
	s64 tv_sec;
	u32 tv_nsec;
	s32 __reserved;
};

struct statx {
	u32 stx_mask, stx_blksize;
	u64 stx_attributes;
	u32 stx_nlink, stx_uid, stx_gid;
	u16 stx_mode, __spare0;
	u64 stx_ino, stx_size, stx_blocks, stx_attributes_mask;
	struct statx_timestamp stx_atime, stx_btime, stx_ctime, stx_mtime;
	u32 stx_rdev_major, stx_rdev_minor, stx_dev_major, stx_dev_minor;
	u64 stx_mnt_id;
	u32 stx_dio_mem_align, stx_dio_offset_align;
	u64 __spare3[12];
};
_Static_assert(sizeof(struct statx) == 256, "struct statx is 256 bytes");
_Static_assert(__builtin_offsetof(struct statx, stx_rdev_major) == 128, "stx_rdev_major at 128");

#endif
