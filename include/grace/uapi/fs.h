/*
 * rename()'s flags and lseek()'s whence (uapi/linux/fs.h), and getdents()'s file
 * types (glibc's dirent.h: the kernel's own fs_types.h is not uapi).
 */
#ifndef GRACE_UAPI_FS_H
#define GRACE_UAPI_FS_H

#define RENAME_NOREPLACE (1u << 0)

#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2

#define DT_CHR 2
#define DT_DIR 4
#define DT_REG 8
#define DT_LNK 10

#endif
