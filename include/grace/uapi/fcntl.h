/*
 * open() flags, the *at() calls' directory and flags, and fcntl()'s commands
 * (uapi/asm-generic/fcntl.h and uapi/linux/fcntl.h), the same on riscv64 and
 * x86_64.
 */
#ifndef GRACE_UAPI_FCNTL_H
#define GRACE_UAPI_FCNTL_H

#define O_ACCMODE 03
#define O_RDONLY 00
#define O_WRONLY 01
#define O_RDWR 02
#define O_CREAT 0100
#define O_EXCL 0200
#define O_NOCTTY 0400
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_NONBLOCK 04000
#define O_LARGEFILE 0100000
#define O_DIRECTORY 0200000
#define O_NOFOLLOW 0400000
#define O_CLOEXEC 02000000

/* The directory a relative path of an *at() call starts from: the current one. */
#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR 0x200
#define AT_SYMLINK_FOLLOW 0x400
#define AT_EMPTY_PATH 0x1000

#define F_DUPFD 0
#define F_GETFD 1
#define F_SETFD 2
#define F_GETFL 3
#define F_SETFL 4
#define F_DUPFD_CLOEXEC 1030
#define FD_CLOEXEC 1

/* access() and faccessat()'s modes (glibc's unistd.h; the kernel's MAY_* bits). */
#define F_OK 0
#define X_OK 1
#define W_OK 2
#define R_OK 4

#endif
