/*
 * The system-call table: Linux's number for each call on this arch
 * (asm/unistd.h) to its handler. Empty slots return -ENOSYS.
 */
#include "syscall_internal.h"

const syscall_fn syscall_table[NR_SYSCALLS] = {
    [__NR_read] = user_read,
    [__NR_write] = user_write,
    [__NR_readv] = user_readv,
    [__NR_writev] = user_writev,
    [__NR_pread64] = user_pread64,
    [__NR_pwrite64] = user_pwrite64,
    [__NR_openat] = user_openat,
    [__NR_close] = user_close,
    [__NR_lseek] = user_lseek,
    [__NR_fstat] = user_fstat,
    [__NR_newfstatat] = user_newfstatat,
    [__NR_getdents64] = user_getdents64,
    [__NR_ioctl] = user_ioctl,
    [__NR_dup] = user_dup,
    [__NR_dup3] = user_dup3,
    [__NR_getcwd] = user_getcwd,
    [__NR_chdir] = user_chdir,
    [__NR_mkdirat] = user_mkdirat,
    [__NR_unlinkat] = user_unlinkat,
    [__NR_renameat2] = user_renameat2,
    [__NR_linkat] = user_linkat,
    [__NR_symlinkat] = user_symlinkat,
    [__NR_readlinkat] = user_readlinkat,
    [__NR_umask] = user_umask,
    [__NR_brk] = user_brk,
    [__NR_mmap] = user_mmap,
    [__NR_munmap] = user_munmap,
    [__NR_mprotect] = user_mprotect,
    [__NR_madvise] = user_madvise,
    [__NR_exit] = user_exit,
    [__NR_exit_group] = user_exit_group,
    [__NR_getpid] = user_getpid,
    [__NR_getppid] = user_getppid,
    [__NR_gettid] = user_gettid,
    [__NR_getuid] = user_getuid,
    [__NR_geteuid] = user_getuid,
    [__NR_getgid] = user_getuid,
    [__NR_getegid] = user_getuid,
    [__NR_set_tid_address] = user_set_tid_address,
    [__NR_sched_yield] = user_sched_yield,
    [__NR_uname] = user_uname,
    [__NR_getrandom] = user_getrandom,
    [__NR_clone] = user_clone,
#ifdef __NR_fork
    [__NR_fork] = user_fork,
    [__NR_vfork] = user_fork,
#endif
    [__NR_execve] = user_execve,
    [__NR_wait4] = user_wait4,
#ifdef __NR_arch_prctl
    [__NR_arch_prctl] = user_arch_prctl,
#endif
    [__NR_clock_gettime] = user_clock_gettime,
    [__NR_gettimeofday] = user_gettimeofday,
    [__NR_nanosleep] = user_nanosleep,
    [__NR_clock_nanosleep] = user_clock_nanosleep,
};
