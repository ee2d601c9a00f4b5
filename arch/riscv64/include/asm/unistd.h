/*
 * System-call numbers of the riscv64 Linux ABI: the asm-generic table
 * (include/uapi/asm-generic/unistd.h, 64-bit), those the kernel implements. A
 * number not here returns -ENOSYS. There is no open, stat, fork or arch_prctl:
 * the generic table has only the *at calls, clone and tp set by the program.
 */
#ifndef ASM_UNISTD_H
#define ASM_UNISTD_H

#define __NR_getcwd 17
#define __NR_dup 23
#define __NR_dup3 24
#define __NR_fcntl 25
#define __NR_ioctl 29
#define __NR_mkdirat 34
#define __NR_unlinkat 35
#define __NR_symlinkat 36
#define __NR_linkat 37
#define __NR_faccessat 48
#define __NR_chdir 49
#define __NR_fchmod 52
#define __NR_fchmodat 53
#define __NR_openat 56
#define __NR_close 57
#define __NR_pipe2 59
#define __NR_getdents64 61
#define __NR_lseek 62
#define __NR_read 63
#define __NR_write 64
#define __NR_readv 65
#define __NR_writev 66
#define __NR_pread64 67
#define __NR_pwrite64 68
#define __NR_ppoll 73
#define __NR_readlinkat 78
#define __NR_newfstatat 79
#define __NR_fstat 80
#define __NR_utimensat 88
#define __NR_exit 93
#define __NR_exit_group 94
#define __NR_set_tid_address 96
#define __NR_futex 98
#define __NR_nanosleep 101
#define __NR_clock_gettime 113
#define __NR_clock_nanosleep 115
#define __NR_sched_setaffinity 122
#define __NR_sched_getaffinity 123
#define __NR_sched_yield 124
#define __NR_kill 129
#define __NR_tkill 130
#define __NR_tgkill 131
#define __NR_rt_sigsuspend 133
#define __NR_rt_sigaction 134
#define __NR_rt_sigprocmask 135
#define __NR_rt_sigpending 136
#define __NR_rt_sigreturn 139
#define __NR_setpgid 154
#define __NR_getpgid 155
#define __NR_getsid 156
#define __NR_setsid 157
#define __NR_uname 160
#define __NR_getrlimit 163
#define __NR_setrlimit 164
#define __NR_umask 166
#define __NR_gettimeofday 169
#define __NR_getpid 172
#define __NR_getppid 173
#define __NR_getuid 174
#define __NR_geteuid 175
#define __NR_getgid 176
#define __NR_getegid 177
#define __NR_gettid 178
#define __NR_sysinfo 179
#define __NR_socket 198
#define __NR_bind 200
#define __NR_listen 201
#define __NR_accept 202
#define __NR_connect 203
#define __NR_getsockname 204
#define __NR_getpeername 205
#define __NR_sendto 206
#define __NR_recvfrom 207
#define __NR_brk 214
#define __NR_munmap 215
#define __NR_clone 220
#define __NR_execve 221
#define __NR_mmap 222
#define __NR_mprotect 226
#define __NR_madvise 233
#define __NR_accept4 242
#define __NR_wait4 260
#define __NR_prlimit64 261
#define __NR_renameat2 276
#define __NR_getrandom 278
#define __NR_statx 291

#define NR_SYSCALLS 512 /* the table's size: every riscv64 number is below it */

#endif
