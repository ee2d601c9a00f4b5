/*
 * The system-call table and its handlers. A handler is named user_<call>: the
 * call as a user program makes it, with user pointers, Linux's argument order
 * and Linux's errors. Handlers in sys_fs.c copy paths and buffers across and
 * call the VFS's kernel-pointer calls (grace/fs.h).
 */
#ifndef KERNEL_SYSCALL_INTERNAL_H
#define KERNEL_SYSCALL_INTERNAL_H

#include <grace/syscall.h>
#include <asm/unistd.h>

extern const syscall_fn syscall_table[NR_SYSCALLS];

/*
 * Raise sig against the calling program for something it did (a fault, a frame
 * rt_sigreturn cannot read): delivered on the way back to user mode even if it
 * is blocked or ignored, as Linux's force_sig_fault().
 */
void user_signal_force(int sig, int code, uintptr_t addr);

/*
 * A user struct timespec at uts in ns (saturating: 584 years is for ever):
 * 0, -EFAULT, or -EINVAL for a negative time or tv_nsec past a second.
 */
int timespec_from_user(unsigned long uts, u64 *ns);

#define USER_CALL(name)                                                                            \
	long user_##name(unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,   \
			 unsigned long a4, unsigned long a5)

/* sys_fs.c */
USER_CALL(read);
USER_CALL(write);
USER_CALL(readv);
USER_CALL(writev);
USER_CALL(pread64);
USER_CALL(pwrite64);
USER_CALL(openat);
USER_CALL(close);
USER_CALL(lseek);
USER_CALL(fstat);
USER_CALL(newfstatat);
USER_CALL(statx);
USER_CALL(getdents64);
USER_CALL(ioctl);
USER_CALL(dup);
USER_CALL(dup3);
USER_CALL(getcwd);
USER_CALL(chdir);
USER_CALL(mkdirat);
USER_CALL(unlinkat);
USER_CALL(renameat2);
USER_CALL(linkat);
USER_CALL(symlinkat);
USER_CALL(readlinkat);
USER_CALL(umask);
USER_CALL(dup2);
USER_CALL(pipe);
USER_CALL(pipe2);
USER_CALL(fcntl);
USER_CALL(fchmodat);
USER_CALL(fchmod);
USER_CALL(utimensat);
/* x86_64's calls from before the *at family, on the current directory */
USER_CALL(open);
USER_CALL(stat);
USER_CALL(lstat);
USER_CALL(access);
USER_CALL(faccessat);
USER_CALL(mkdir);
USER_CALL(rmdir);
USER_CALL(unlink);
USER_CALL(rename);
USER_CALL(renameat);
USER_CALL(link);
USER_CALL(symlink);
USER_CALL(readlink);
USER_CALL(chmod);
/* sys_mm.c */
USER_CALL(brk);
USER_CALL(mmap);
USER_CALL(munmap);
USER_CALL(mprotect);
USER_CALL(madvise);
/* sys_futex.c */
USER_CALL(futex);
/* sys_proc.c */
USER_CALL(exit);
USER_CALL(exit_group);
USER_CALL(getpid);
USER_CALL(getppid);
USER_CALL(gettid);
USER_CALL(getuid);
USER_CALL(set_tid_address);
USER_CALL(sched_yield);
USER_CALL(uname);
USER_CALL(getrandom);
USER_CALL(arch_prctl);
/* sys_sched.c */
USER_CALL(sched_getaffinity);
USER_CALL(sched_setaffinity);
/* vfs_poll.c */
USER_CALL(poll);
USER_CALL(ppoll);
/* sys_signal.c */
USER_CALL(rt_sigaction);
USER_CALL(rt_sigprocmask);
USER_CALL(rt_sigpending);
USER_CALL(rt_sigsuspend);
USER_CALL(rt_sigreturn);
USER_CALL(pause);
USER_CALL(kill);
USER_CALL(tkill);
USER_CALL(tgkill);
USER_CALL(setpgid);
USER_CALL(getpgid);
USER_CALL(getpgrp);
USER_CALL(setsid);
USER_CALL(getsid);
/* sys_fork.c */
USER_CALL(clone);
USER_CALL(fork);
USER_CALL(vfork);
USER_CALL(execve);
USER_CALL(wait4);
/* sys_socket.c */
USER_CALL(socket);
USER_CALL(bind);
USER_CALL(connect);
USER_CALL(sendto);
USER_CALL(recvfrom);
USER_CALL(getsockname);
USER_CALL(getpeername);
USER_CALL(listen);
USER_CALL(accept);
USER_CALL(accept4);
/* sys_resource.c */
USER_CALL(getrlimit);
USER_CALL(setrlimit);
USER_CALL(prlimit64);
USER_CALL(sysinfo);
/* sys_time.c */
USER_CALL(clock_gettime);
USER_CALL(gettimeofday);
USER_CALL(time);
USER_CALL(nanosleep);
USER_CALL(clock_nanosleep);

#endif
