/*
 * A system-call fuzzer, run on Grace only: children make system calls with
 * random numbers (0 to FUZZ_NR_MAX, every number, whether Grace has a handler
 * or not) and random arguments: small and huge integers, flag words, valid and
 * invalid descriptors, pointers to a scratch buffer, into a read-only page, a
 * PROT_NONE page, unmapped and kernel memory and past the end of the address
 * space, paths in a directory of the child's own, strings that run into an
 * unreadable page, sizes from 0 to 2^64 - 1. The kernel must answer each one
 * and stay up; the test around it (tests/harness/userdiff.py) checks that afterwards
 * its free memory, slab objects and descriptor counts are where they were.
 *
 * What is left out is only what would end a child or block it forever, or
 * change what the rest of the boot sees (never_called, fix_args): exit and
 * execve, signals sent or handlers that jump to junk, sleeps and waits without
 * a short timeout, blocking descriptors (every pipe, socket and event
 * descriptor is made non-blocking, and stays so), locks that wait, mounts,
 * the clock, reboot, persistent IPC objects, resource limits, and changes to
 * the child's own memory: the calls that map, unmap or protect memory work in
 * a playground region with PROT_NONE pages around it, and the buffers the
 * kernel writes are the scratch buffer, guarded the same way, and structures
 * (iovecs, msghdrs, sigactions) refilled before each call, so a call can never
 * reach the fuzzer's own code, stack or state. The calls are made with the
 * syscall instruction itself, not through libc, which would keep errno in TLS.
 *
 * Beside each child's fuzzing thread, a second thread works on the same
 * address space at once (memory_thread): random mmap, munmap, mprotect and
 * madvise calls in a region of its own, reads of /dev/zero into it and writes
 * of it to /dev/null (faults in the kernel's copies), futex calls on its words,
 * so that faults, unmaps, protections and the fuzzing thread's own memory calls
 * race in one mm. It names nothing but its region and two descriptors the
 * fuzzed calls cannot reach, so the strings the fuzzing thread reads, and the
 * dentries they leave, stay the same every run.
 *
 * A child killed by SIGPIPE (a write to a pipe whose reader it closed: Linux
 * kills it so too, and Grace has no sigaction yet to ignore it) is replaced by
 * one with the next seed for the calls it had left; every thousand calls a
 * child sends one byte to the parent on a descriptor no fuzzed argument can
 * name, so the count survives it. A child killed by any other signal, or that
 * exits otherwise, fails the run. The parent removes the children's
 * directories and prints one line, the same every run.
 *
 *   fuzz [SEED [CALLS]]    (default: seed 1, 100000 calls)
 *
 * fuzz: fuzzer_leaves_the_kernel_alive_and_its_memory_where_it_was
 * run: /bin/fuzz
 * prints: fuzz: 100000 system calls with random numbers and arguments, 4 processes of 2 threads
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Linux's numbers reach 462 (mseal, 6.10); a little past Debian 12's headers' last. */
#define FUZZ_NR_MAX 460
/* Processes fuzzing at a time: one per CPU of the userdiff boot (SMP=4). */
#define FUZZ_CHILDREN 4
#define FUZZ_CALLS_DEFAULT 100000
/* Calls a child reports at a time, one byte on the report pipe. */
#define REPORT_EVERY 1000
/* The report pipe's end in each child: an fd argument equal to it is moved off it. */
#define REPORT_FD 200
/* The memory thread's /dev/zero and /dev/null, moved off like the report pipe. */
#define MEMORY_ZERO_FD 201
#define MEMORY_NULL_FD 202
/* The memory thread: its region (2 MiB aligned, so that 2 MiB pages come and go
 * too) and its calls, one for every MEMORY_CALL_EVERY of the fuzzing thread's. */
#define MEMORY_REGION (8UL << 20)
#define MEMORY_CALL_EVERY 4
/* Children killed by SIGPIPE that may be replaced before the run gives up. */
#define MAX_REPLACEMENTS 64
/* The scratch buffer is refilled with random bytes this often: it collects what
 * the kernel wrote, addresses among it (ARCH_GET_FS, get_robust_list). */
#define REFILL_EVERY 1024

#define PAGE 4096UL
#define SCRATCH_PAGES 16
#define RO_PAGES 2
#define PLAY_PAGES 256
/* Bytes that sendfile, splice, copy_file_range and fallocate may move or allocate
 * in one call: /dev/zero has no end, and gigabytes of it would take the run's minute. */
#define MOVE_CAP (1L << 20)
/* The prepared vectors: iovecs and mmsghdrs a call can be given, no more. */
#define IOVS 4
#define MMSGS 2
/* Counts above IOV_MAX are refused before the vector is read; keep them. */
#define IOV_MAX_LINUX 1024

/* Calls Linux has that Debian 12's headers do not name yet. */
#define NR_FUTEX_WAIT 455 /* Linux 6.7: blocks like futex's FUTEX_WAIT */
#if defined(__x86_64__)
#define NR_URETPROBE 335 /* Linux 6.11: SIGSEGV unless called from the uretprobe trampoline */
#define NR_UPROBE 336	 /* Linux 6.16: likewise from the uprobe trampoline */
#endif

/* x86_64's arch_prctl codes (asm/prctl.h) that would move the TLS the child's libc uses. */
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

/* Kernel and non-canonical addresses on both arches: never user memory. */
static const unsigned long bad_addrs[] = {
    0xffff800000000000UL, 0xffffffff81000000UL, 0xffffffc000000000UL,
    0x0000800000000000UL, 0x8000000000000000UL, -PAGE,
};

/* clang-format off */
/* Sizes: none, a byte, around a page and a pipe's worth, past 2^31 and 2^32, all ones. */
static const long sizes[] = {
	0, 1, 2, 7, 8, 16, 100, 255, 256, 4095, 4096, 4097, 65536, 65537,
	1L << 20, 1L << 31, 1L << 32, 1L << 40, -1, -4096, 0x7fffffffffffffffL,
};

/* Integers: small ones, the edges of int and unsigned int, and past them. */
static const long ints[] = {
	0, 1, -1, 2, 3, 4, 7, 8, 16, 64, 255, 256, 4096,
	0x7fffffff, 0x80000000L, 0xffffffffL, 1L << 32, -4096, 1L << 63,
};
/* clang-format on */

static uint64_t rng;

/* xorshift64*: fast, and the same sequence for the same seed on every kernel. */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static long raw_syscall(long nr, const long a[6])
{
#if defined(__x86_64__)
	register long r10 asm("r10") = a[3];
	register long r8 asm("r8") = a[4];
	register long r9 asm("r9") = a[5];
	long ret;
	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
		     : "rcx", "r11", "memory");
	return ret;
#elif defined(__riscv)
	register long a0 asm("a0") = a[0];
	register long a1 asm("a1") = a[1];
	register long a2 asm("a2") = a[2];
	register long a3 asm("a3") = a[3];
	register long a4 asm("a4") = a[4];
	register long a5 asm("a5") = a[5];
	register long a7 asm("a7") = nr;
	asm volatile("ecall"
		     : "+r"(a0)
		     : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a7)
		     : "memory");
	return a0;
#else
#error "fuzz.c knows x86_64 and riscv64"
#endif
}

/* clang-format off */
/* What would end the child, block it for good, or change what the rest of the boot sees. */
static const long never[] = {
	/* The end of the child, or a jump to where no code is. */
	SYS_exit, SYS_exit_group, SYS_execve, SYS_execveat, SYS_rt_sigreturn, SYS_seccomp,
	SYS_prctl, SYS_rseq,
	/* Signals sent (to anyone), processes made, other processes' memory and files. */
	SYS_kill, SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo,
	SYS_pidfd_send_signal, SYS_clone, SYS_clone3, SYS_ptrace, SYS_process_vm_writev,
	SYS_pidfd_getfd, SYS_open_by_handle_at,
	/* Waits with no way out: for a signal, a futex, an event, a message, a timer's signal. */
	SYS_rt_sigsuspend, SYS_futex, SYS_futex_waitv, NR_FUTEX_WAIT, SYS_io_getevents,
	SYS_io_pgetevents, SYS_io_uring_enter, SYS_semop, SYS_semtimedop, SYS_msgsnd, SYS_msgrcv,
	SYS_mq_timedsend, SYS_mq_timedreceive, SYS_setitimer, SYS_timer_settime,
	SYS_userfaultfd,
	/* Writes through pointers in structures the fuzzer cannot keep in bounds, and counters
	 * that signal: aio's iocbs, perf events with sigtrap. */
	SYS_io_submit, SYS_perf_event_open,
	/* Limits that kill (RLIMIT_CPU, RLIMIT_FSIZE) or that lock every later mapping in. */
	SYS_setrlimit, SYS_mlockall,
	/* The machine, its clock, its mounts, its modules, its console log. */
	SYS_reboot, SYS_kexec_load, SYS_kexec_file_load, SYS_init_module, SYS_finit_module,
	SYS_delete_module, SYS_swapon, SYS_swapoff, SYS_mount, SYS_umount2, SYS_pivot_root,
	SYS_move_mount, SYS_mount_setattr, SYS_acct, SYS_syslog, SYS_vhangup, SYS_sethostname,
	SYS_setdomainname, SYS_settimeofday, SYS_clock_settime, SYS_adjtimex, SYS_clock_adjtime,
	/* Objects that outlive the process: IPC, message queues, keys; and device nodes and
	 * FIFOs, whose open would wait. */
	SYS_shmget, SYS_shmat, SYS_semget, SYS_msgget, SYS_mq_open, SYS_add_key,
	SYS_request_key, SYS_mknodat,
#ifdef SYS_fork
	/* x86_64's older calls, which the asm-generic table of riscv64 does without. */
	SYS_fork, SYS_vfork, SYS_pause, SYS_alarm, SYS_mknod,
#endif
#ifdef NR_URETPROBE
	NR_URETPROBE, NR_UPROBE,
#endif
};
/* clang-format on */

/* clang-format off */
/*
 * Calls that write what differs from run to run: the time, random bytes, inode numbers
 * of a global counter. The scratch buffer is put back as it was after each, so that the
 * strings later calls read there, names among them, are the same every run, and so is
 * what the kernel caches of those names (the test compares the dentries it holds).
 */
static const long varying[] = {
	SYS_getrandom, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_times,
	SYS_getrusage, SYS_sysinfo, SYS_nanosleep, SYS_clock_nanosleep, SYS_getitimer,
	SYS_timer_gettime, SYS_timerfd_gettime, SYS_rt_sigtimedwait, SYS_wait4, SYS_waitid,
	SYS_fstat, SYS_newfstatat, SYS_statx, SYS_getdents64, SYS_getcpu,
	SYS_sched_rr_get_interval,
#ifdef SYS_time
	SYS_time, SYS_stat, SYS_lstat, SYS_getdents,
#endif
};
/* clang-format on */

static bool never_called[FUZZ_NR_MAX + 1], varies[FUZZ_NR_MAX + 1];

/* The child's memory for arguments, mapped at start (see make_regions). */
static char *scratch, *scratch_end, *ro, *ro_end, *guard, *play, *play_end;
static char scratch_copy[SCRATCH_PAGES * PAGE]; /* what it holds but for varying[]'s bytes */
static char path_long_name[300], path_too_long[5000];
static const char *paths[16];
static int nr_paths;
static long fds[8];
static int nr_fds;
static unsigned long first_brk;

/* Structures a call may be given, refilled before it (the kernel writes some of them). */
static struct timespec zero_ts, short_ts;
static const struct timespec zero_ts_memory; /* the memory thread's: never written */
static struct timeval zero_tv;
static struct iovec iov_a[IOVS], iov_b[IOVS];
static struct msghdr msg;
static struct mmsghdr mmsg[MMSGS];
static stack_t altstack;
/* rt_sigaction's struct as the kernel reads it: handler, flags, restorer, mask. */
static struct {
	unsigned long handler, flags, restorer, mask;
} ksa;

static long pick(const long *pool, size_t n)
{
	return pool[rnd() % n];
}

static long pick_ptr(void)
{
	size_t scratch_size = scratch_end - scratch;
	switch (rnd() % 16) {
	case 0:
		return 0;
	case 1:
		return (long)scratch;
	case 2:
		return (long)(scratch + 1);
	case 3:
		return (long)(scratch_end - 1);
	case 4:
		return (long)(scratch_end - 8);
	case 5:
		return (long)(scratch_end - PAGE);
	case 6:
		return (long)(scratch + rnd() % scratch_size);
	case 7:
		return (long)ro;
	case 8:
		return (long)(ro_end - 16); /* a string that runs into the guard */
	case 9:
		return (long)guard;
	case 10:
		return 0x1000; /* below mmap_min_addr: never mapped */
	case 11:
		return (long)bad_addrs[rnd() % (sizeof(bad_addrs) / sizeof(bad_addrs[0]))];
	case 12:
		return (long)&raw_syscall; /* code: readable, never writable */
	default:
		return (long)paths[rnd() % nr_paths];
	}
}

static long pick_fd(void)
{
	switch (rnd() % 8) {
	case 0:
		return -1;
	case 1:
		return AT_FDCWD;
	case 2:
		return rnd() % 32;
	case 3:
		return pick(ints, sizeof(ints) / sizeof(ints[0]));
	default:
		return fds[rnd() % nr_fds];
	}
}

static long pick_flags(void)
{
	switch (rnd() % 5) {
	case 0:
		return 0;
	case 1:
		return 1L << (rnd() % 64);
	case 2:
		return rnd() & rnd() & rnd();
	case 3:
		return rnd() % 16;
	default:
		return rnd();
	}
}

static long pick_arg(void)
{
	switch (rnd() % 6) {
	case 0:
		return pick(ints, sizeof(ints) / sizeof(ints[0]));
	case 1:
		return pick_fd();
	case 2:
	case 3:
		return pick_ptr();
	case 4:
		return pick(sizes, sizeof(sizes) / sizeof(sizes[0]));
	default:
		return pick_flags();
	}
}

/* An address for a call that maps, unmaps or protects memory: a page of the playground
 * (now and then one byte off), or one that no length brings into user space. */
static long play_addr(void)
{
	switch (rnd() % 8) {
	case 0:
		return (long)(play + PAGE * (rnd() % PLAY_PAGES) + 1);
	case 1:
		return (long)bad_addrs[rnd() % (sizeof(bad_addrs) / sizeof(bad_addrs[0]))];
	default:
		return (long)(play + PAGE * (rnd() % PLAY_PAGES));
	}
}

/* A length that keeps [addr, addr + len) inside the playground when addr is in it. */
static long play_len(long addr, long len)
{
	if ((char *)addr < play || (char *)addr >= play_end)
		return len;
	unsigned long room = play_end - (char *)addr;
	if ((unsigned long)len <= room)
		return len;
	return rnd() % 2 ? (long)room : (long)(PAGE * (rnd() % (room / PAGE + 1)));
}

static long cap_move(long len)
{
	return (unsigned long)len > MOVE_CAP ? MOVE_CAP : len;
}

static long iov_count(long n)
{
	return n > IOVS && n <= IOV_MAX_LINUX ? IOVS : n;
}

static void fill_iovs(struct iovec *iov)
{
	for (int i = 0; i < IOVS; i++) {
		iov[i].iov_base = (void *)pick_ptr();
		iov[i].iov_len = rnd() % 2 ? rnd() % PAGE
					   : (size_t)pick(sizes, sizeof(sizes) / sizeof(sizes[0]));
	}
}

static void fill_msg(struct msghdr *m)
{
	m->msg_name = (void *)pick_ptr();
	m->msg_namelen = rnd() % 128;
	m->msg_iov = iov_b;
	m->msg_iovlen = rnd() % (IOVS + 1);
	m->msg_control = rnd() % 2 ? NULL : (void *)pick_ptr();
	m->msg_controllen = rnd() % PAGE;
	m->msg_flags = pick_flags();
	fill_iovs(iov_b);
}

/*
 * Bend the arguments of the calls that could end the child, block it, or write where the
 * fuzzer keeps its state; nr may change to the call's non-blocking form. Everything not
 * named here goes to the kernel as drawn.
 */
static void fix_args(long *nr, long a[6])
{
	zero_ts = (struct timespec){0, 0};
	short_ts = (struct timespec){0, 1000};
	zero_tv = (struct timeval){0, 0};
	switch (*nr) {
	/* Memory: only the playground may change. */
	case SYS_mmap:
		if (a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
			a[0] = play_addr();
			a[1] = play_len(a[0], a[1]);
		}
		break;
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_pkey_mprotect:
	case SYS_madvise:
	case SYS_remap_file_pages:
		a[0] = play_addr();
		a[1] = play_len(a[0], a[1]);
		break;
	case SYS_mremap:
		a[0] = play_addr();
		a[1] = play_len(a[0], a[1]);
		if (a[3] & MREMAP_FIXED) {
			a[4] = play_addr();
			a[2] = play_len(a[4], a[2]);
		}
		break;
	case SYS_brk:
		/* Below the first break lies libc's TLS block (static binaries take it with sbrk).
		 */
		if (a[0] && (unsigned long)a[0] < first_brk)
			a[0] = first_brk;
		break;
#ifdef SYS_arch_prctl
	case SYS_arch_prctl:
		if ((int)a[0] == ARCH_SET_FS || (int)a[0] == ARCH_SET_GS)
			a[0] = ARCH_GET_FS;
		break;
#endif
		/* Descriptors stay non-blocking, and no signal is asked for. */
#ifdef SYS_pipe
	case SYS_pipe:
		*nr = SYS_pipe2;
		a[1] = O_NONBLOCK;
		break;
#endif
	case SYS_pipe2:
		a[1] |= O_NONBLOCK;
		break;
	case SYS_fcntl:
		if ((unsigned)a[1] == F_SETFL)
			a[2] = (a[2] | O_NONBLOCK) & ~(long)O_ASYNC;
		else if ((unsigned)a[1] == F_SETLKW)
			a[1] = F_SETLK;
		else if ((unsigned)a[1] == F_OFD_SETLKW)
			a[1] = F_OFD_SETLK;
		else if ((unsigned)a[1] == F_SETOWN || (unsigned)a[1] == F_SETOWN_EX ||
			 (unsigned)a[1] == F_NOTIFY || (unsigned)a[1] == F_SETLEASE)
			a[1] = F_GETFL;
		break;
	case SYS_ioctl:
		if ((unsigned)a[1] == FIONBIO || (unsigned)a[1] == FIOASYNC ||
		    (unsigned)a[1] == FIOSETOWN || (unsigned)a[1] == SIOCSPGRP)
			a[1] = FIONREAD;
		break;
	case SYS_flock:
		a[1] |= LOCK_NB;
		break;
	case SYS_socket:
	case SYS_socketpair:
		a[1] |= SOCK_NONBLOCK;
		break;
#ifdef SYS_accept
	case SYS_accept:
		*nr = SYS_accept4;
		a[3] = SOCK_NONBLOCK;
		break;
#endif
	case SYS_accept4:
		a[3] |= SOCK_NONBLOCK;
		break;
#ifdef SYS_eventfd
	case SYS_eventfd:
		*nr = SYS_eventfd2;
		a[1] = O_NONBLOCK;
		break;
	case SYS_signalfd:
		*nr = SYS_signalfd4;
		a[3] = O_NONBLOCK;
		break;
	case SYS_inotify_init:
		*nr = SYS_inotify_init1;
		a[0] = O_NONBLOCK;
		break;
#endif
	case SYS_eventfd2:
	case SYS_timerfd_create:
		a[1] |= O_NONBLOCK;
		break;
	case SYS_signalfd4:
		a[3] |= O_NONBLOCK;
		break;
	case SYS_inotify_init1:
		a[0] |= O_NONBLOCK;
		break;
	case SYS_fanotify_init:
		a[0] |= 0x2; /* FAN_NONBLOCK */
		break;
	case SYS_getrandom:
		a[2] |= GRND_NONBLOCK;
		break;
	case SYS_prlimit64:
		a[2] = 0; /* read the limits only: RLIMIT_CPU or _FSIZE would kill */
		break;
		/* Timeouts of zero, sleeps of a microsecond. */
#ifdef SYS_select
	case SYS_select:
		a[4] = (long)&zero_tv;
		break;
	case SYS_poll:
		a[2] = 0;
		break;
	case SYS_epoll_wait:
		a[3] = 0;
		break;
#endif
	case SYS_pselect6:
		a[4] = (long)&zero_ts;
		break;
	case SYS_rt_sigtimedwait:
		a[2] = (long)&zero_ts;
		break;
	case SYS_ppoll:
		a[2] = (long)&zero_ts;
		break;
	case SYS_epoll_pwait:
		a[3] = 0;
		break;
	case SYS_epoll_pwait2:
		a[3] = (long)&zero_ts;
		break;
	case SYS_nanosleep:
		a[0] = (long)&short_ts;
		break;
	case SYS_clock_nanosleep:
		/* A CPU-time clock of a sleeping process (ours, or a pid's) never gets there. */
		if ((int)a[0] < 0 || (int)a[0] == CLOCK_PROCESS_CPUTIME_ID ||
		    (int)a[0] == CLOCK_THREAD_CPUTIME_ID)
			a[0] = CLOCK_MONOTONIC;
		a[2] = (long)&short_ts;
		break;
	/* Structures that carry pointers: prepared, with counts that stay inside them. */
	case SYS_rt_sigaction:
		ksa.handler = rnd() % 2 ? (unsigned long)SIG_IGN : (unsigned long)SIG_DFL;
		ksa.flags = pick_flags();
		ksa.restorer = 0;
		ksa.mask = rnd();
		if (rnd() % 4)
			a[1] = (long)&ksa;
		if (rnd() % 2)
			a[3] = 8;
		break;
	case SYS_sigaltstack:
		altstack = (stack_t){.ss_sp = play, .ss_size = play_end - play, .ss_flags = 0};
		if (rnd() % 2)
			a[0] = (long)&altstack;
		break;
	case SYS_readv:
	case SYS_writev:
	case SYS_preadv:
	case SYS_pwritev:
	case SYS_preadv2:
	case SYS_pwritev2:
	case SYS_vmsplice:
		fill_iovs(iov_a);
		if (rnd() % 4)
			a[1] = (long)iov_a;
		a[2] = iov_count(a[2]);
		if (*nr == SYS_vmsplice)
			a[3] |= SPLICE_F_NONBLOCK;
		break;
	case SYS_process_vm_readv:
		fill_iovs(iov_a);
		fill_iovs(iov_b);
		a[1] = (long)iov_a;
		a[2] = iov_count(a[2]);
		a[3] = (long)iov_b;
		a[4] = iov_count(a[4]);
		break;
	case SYS_recvmsg:
	case SYS_sendmsg:
		fill_msg(&msg);
		if (rnd() % 4)
			a[1] = (long)&msg;
		break;
	case SYS_recvmmsg:
	case SYS_sendmmsg:
		for (int i = 0; i < MMSGS; i++)
			fill_msg(&mmsg[i].msg_hdr);
		a[1] = (long)mmsg;
		a[2] = (unsigned long)a[2] > MMSGS ? MMSGS : a[2];
		if (*nr == SYS_recvmmsg)
			a[4] = (long)&zero_ts;
		break;
	/* Bytes moved or allocated: bounded, and never waiting on a pipe. */
	case SYS_sendfile:
		a[3] = cap_move(a[3]);
		break;
	case SYS_splice:
		a[4] = cap_move(a[4]);
		a[5] |= SPLICE_F_NONBLOCK;
		break;
	case SYS_tee:
		a[2] = cap_move(a[2]);
		a[3] |= SPLICE_F_NONBLOCK;
		break;
	case SYS_copy_file_range:
		a[4] = cap_move(a[4]);
		break;
	case SYS_fallocate:
		a[3] = cap_move(a[3]);
		break;
	case SYS_close_range:
		if ((unsigned)a[0] <= MEMORY_NULL_FD && (unsigned)a[1] >= REPORT_FD)
			a[1] = REPORT_FD - 1;
		break;
	}
	/* No argument may name the report pipe or the memory thread's descriptors. */
	for (int i = 0; i < 6; i++)
		if ((unsigned)a[i] >= REPORT_FD && (unsigned)a[i] <= MEMORY_NULL_FD)
			a[i] = MEMORY_NULL_FD + 1;
}

/* Random bytes, never '/': a path made of them stays in the child's directory. */
static void refill_scratch(void)
{
	for (char *p = scratch; p < scratch_end; p += 8) {
		uint64_t v = rnd();
		for (int i = 0; i < 8; i++, v >>= 8)
			p[i] = (char)v == '/' ? 'x' : (char)v;
	}
	memcpy(scratch_copy, scratch, sizeof(scratch_copy));
}

/* After a call of varying[]: the scratch buffer as it was, if the call was given it. */
static void undo_varying(long nr, const long a[6])
{
	if (!varies[nr])
		return;
	for (int i = 0; i < 6; i++) {
		if ((char *)a[i] >= scratch && (char *)a[i] < scratch_end) {
			memcpy(scratch, scratch_copy, sizeof(scratch_copy));
			return;
		}
	}
}

static void die(const char *what)
{
	printf("fuzz: %s: %s\n", what, strerrorname_np(errno));
	exit(1);
}

/*
 * One mapping, carved with mprotect: a PROT_NONE page, the scratch buffer, a PROT_NONE
 * page, the read-only pages (the paths; a string at their end runs into the next page),
 * a PROT_NONE page, the playground, a PROT_NONE page. A copy into the scratch buffer of
 * any size stops at its guards, and a mapping call's length cannot leave the playground.
 */
static void make_regions(const char *dir)
{
	size_t pages = 1 + SCRATCH_PAGES + 1 + RO_PAGES + 1 + PLAY_PAGES + 1;
	char *base =
	    mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		die("mmap");
	scratch = base + PAGE;
	scratch_end = scratch + SCRATCH_PAGES * PAGE;
	guard = scratch_end;
	ro = guard + PAGE;
	ro_end = ro + RO_PAGES * PAGE;
	play = ro_end + PAGE;
	play_end = play + PLAY_PAGES * PAGE;

	memset(path_long_name, 'n', sizeof(path_long_name) - 1);
	for (size_t i = 0; i + 1 < sizeof(path_too_long); i++)
		path_too_long[i] = i % 2 ? '/' : 'd';
	const char *names[] = {"f0", "f1",	  "d0",	 "d0/f",	 "l0",
			       "l1", "l2",	  "new", "d0/new",	 "",
			       ".",  "missing/x", NULL,	 path_long_name, path_too_long};
	char absolute[128];
	snprintf(absolute, sizeof(absolute), "%s/f0", dir);
	char *p = ro;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *s = names[i] ? names[i] : absolute;
		size_t n = strlen(s) + 1;
		memcpy(p, s, n);
		paths[nr_paths++] = p;
		p += n;
	}
	memset(ro_end - 16, 'a', 16);
	if (mprotect(base, PAGE, PROT_NONE) || mprotect(guard, PAGE, PROT_NONE) ||
	    mprotect(ro, RO_PAGES * PAGE, PROT_READ) || mprotect(ro_end, PAGE, PROT_NONE) ||
	    mprotect(play_end, PAGE, PROT_NONE))
		die("mprotect");
	refill_scratch();
}

/* The child's directory: files, a directory, symbolic links good, dangling and to a directory. */
static void make_dir(const char *dir)
{
	static char data[10000];
	memset(data, 'z', sizeof(data));
	if (mkdir(dir, 0755) < 0 || chdir(dir) < 0)
		die(dir);
	int fd = open("f0", O_CREAT | O_RDWR, 0644);
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data))
		die("f0");
	fds[nr_fds++] = fd;
	if ((fd = open("f1", O_CREAT | O_WRONLY, 0644)) < 0)
		die("f1");
	fds[nr_fds++] = fd;
	if (mkdir("d0", 0755) < 0 || close(open("d0/f", O_CREAT | O_WRONLY, 0644)) < 0)
		die("d0");
	if ((fd = open("d0", O_RDONLY | O_DIRECTORY)) < 0)
		die("d0");
	fds[nr_fds++] = fd;
	if (symlink("f0", "l0") || symlink("nowhere", "l1") || symlink("d0", "l2"))
		die("symlink");
	if ((fd = open("/dev/zero", O_RDWR)) < 0)
		die("/dev/zero");
	fds[nr_fds++] = fd;
	int pipefd[2];
	if (pipe2(pipefd, O_NONBLOCK) < 0)
		die("pipe2");
	fds[nr_fds++] = pipefd[0];
	fds[nr_fds++] = pipefd[1];
	fds[nr_fds++] = 0; /* /dev/null, below */
}

/* ---- the memory thread ---- */

struct memory_thread {
	uint64_t rng; /* its own sequence: the same calls every run */
	long calls;
	char *region;
};

static uint64_t memory_rnd(struct memory_thread *m)
{
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 2685821657736338717ULL;
}

static void *memory_thread(void *arg)
{
	struct memory_thread *m = arg;
	const long pages = MEMORY_REGION / PAGE;
	for (long i = 0; i < m->calls; i++) {
		long first = memory_rnd(m) % pages;
		long len = (1 + memory_rnd(m) % (pages - first)) * PAGE;
		char *at = m->region + first * PAGE;
		long prot = memory_rnd(m) % 4 == 0
				? PROT_NONE
				: PROT_READ | (memory_rnd(m) % 2 ? PROT_WRITE : 0);
		static const long advice[] = {MADV_DONTNEED, MADV_NOHUGEPAGE, MADV_HUGEPAGE,
					      MADV_NORMAL};
		long a[6] = {(long)at, len, 0, 0, 0, 0}, nr;
		switch (memory_rnd(m) % 8) {
		case 0:
			nr = SYS_mmap;
			a[2] = prot;
			a[3] = MAP_PRIVATE | MAP_ANONYMOUS |
			       (memory_rnd(m) % 2 ? MAP_FIXED : MAP_FIXED_NOREPLACE);
			a[4] = -1;
			break;
		case 1:
			nr = SYS_munmap;
			break;
		case 2:
			nr = SYS_mprotect;
			a[2] = prot;
			break;
		case 3:
			nr = SYS_madvise;
			a[2] = advice[memory_rnd(m) % 4];
			break;
		case 4: /* the kernel writes it: faults in, or EFAULT where nothing may be written
			 */
			nr = SYS_read;
			a[0] = MEMORY_ZERO_FD;
			a[1] = (long)at;
			a[2] = len;
			break;
		case 5: /* the kernel reads it */
			nr = SYS_write;
			a[0] = MEMORY_NULL_FD;
			a[1] = (long)at;
			a[2] = len;
			break;
		case 6: /* a wake, or a wait that cannot sleep: the value is never 1, or no time */
			nr = SYS_futex;
			a[1] = memory_rnd(m) % 2 ? FUTEX_WAKE_PRIVATE : FUTEX_WAIT_PRIVATE;
			a[2] = 1;
			a[3] = (long)&zero_ts_memory;
			break;
		default:
			nr = SYS_sched_yield;
			break;
		}
		raw_syscall(nr, a);
	}
	return NULL;
}

/* A child's life: set up, make `calls` calls, report each thousand, exit. Never returns. */
static void child(uint64_t seed, long calls, int report_fd)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/fuzz-%llu", (unsigned long long)seed);
	rng = seed * 0x9e3779b97f4a7c15ULL | 1;
	if (dup2(report_fd, REPORT_FD) < 0)
		die("dup2");
	/* Nothing else of the parent's: a blocking pipe end would block a read for good. */
	for (int fd = 3; fd < REPORT_FD; fd++)
		close(fd);
	/* When there are signals, a write to a pipe no one reads returns EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	make_dir(dir);
	make_regions(dir);
	/* Last, so that a failure above is printed: no fuzzed call may reach the console. */
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		die("/dev/null");
	close(null);
	first_brk = (unsigned long)sbrk(0);
	/* The memory thread's region and descriptors, out of the fuzzed calls' reach. */
	char *region = mmap(NULL, MEMORY_REGION * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	static struct memory_thread memory;
	memory = (struct memory_thread){
	    .rng = seed * 0x2545f4914f6cdd1dULL | 1,
	    .calls = calls / MEMORY_CALL_EVERY,
	    .region = (char *)(((unsigned long)region + MEMORY_REGION - 1) & ~(MEMORY_REGION - 1))};
	if (dup2(open("/dev/zero", O_RDONLY), MEMORY_ZERO_FD) < 0 ||
	    dup2(open("/dev/null", O_WRONLY), MEMORY_NULL_FD) < 0)
		die("/dev/zero");
	pthread_t memory_tid;
	if (pthread_create(&memory_tid, NULL, memory_thread, &memory))
		die("pthread_create");
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (never[i] >= 0 && never[i] <= FUZZ_NR_MAX)
			never_called[never[i]] = true;
	for (size_t i = 0; i < sizeof(varying) / sizeof(varying[0]); i++)
		if (varying[i] >= 0 && varying[i] <= FUZZ_NR_MAX)
			varies[varying[i]] = true;

	long done = 0;
	while (done < calls) {
		long nr = rnd() % (FUZZ_NR_MAX + 1);
		if (never_called[nr])
			continue;
		long a[6];
		for (int i = 0; i < 6; i++)
			a[i] = pick_arg();
		fix_args(&nr, a);
		raw_syscall(nr, a);
		undo_varying(nr, a);
		if (++done % REPORT_EVERY == 0) {
			long one[6] = {REPORT_FD, (long)"", 1};
			raw_syscall(SYS_write, one);
		}
		if (done % REFILL_EVERY == 0)
			refill_scratch();
	}
	pthread_join(memory_tid, NULL);
	long status[6] = {0};
	raw_syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* Remove a tree by its path, a link not followed; false (and a line said) if anything stays. */
static bool remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) == 0)
			return true;
		printf("fuzz: unlink %s: %s\n", path, strerrorname_np(errno));
		return false;
	}
	chmod(path, 0700); /* a child may have taken the permissions away */
	DIR *d = opendir(path);
	if (!d) {
		printf("fuzz: opendir %s: %s\n", path, strerrorname_np(errno));
		return false;
	}
	bool ok = true;
	struct dirent *e;
	char sub[4096];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub)) {
			printf("fuzz: a name under %s is too long to remove\n", path);
			ok = false;
			continue;
		}
		ok &= remove_tree(sub);
	}
	closedir(d);
	if (ok && rmdir(path) < 0) {
		printf("fuzz: rmdir %s: %s\n", path, strerrorname_np(errno));
		ok = false;
	}
	return ok;
}

struct slot {
	pid_t pid;
	uint64_t seed;
	long calls; /* asked of this child */
	int report; /* the parent's end of its report pipe */
};

static bool start(struct slot *s, uint64_t seed, long calls)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/fuzz-%llu", (unsigned long long)seed);
	if (!remove_tree(dir)) /* left by a run that did not finish */
		return false;
	int p[2];
	if (pipe(p) < 0) {
		printf("fuzz: pipe: %s\n", strerrorname_np(errno));
		return false;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		printf("fuzz: fork: %s\n", strerrorname_np(errno));
		return false;
	}
	if (pid == 0) {
		close(p[0]);
		child(seed, calls, p[1]);
	}
	close(p[1]);
	*s = (struct slot){pid, seed, calls, p[0]};
	return true;
}

/* The calls a finished child reported: a byte for each thousand. */
static long reported(int fd)
{
	char buf[256];
	long n, bytes = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		bytes += n;
	close(fd);
	return bytes * REPORT_EVERY;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	long total = argc > 2 ? strtol(argv[2], NULL, 0) : FUZZ_CALLS_DEFAULT;
	long per_child = total / FUZZ_CHILDREN / REPORT_EVERY * REPORT_EVERY;
	if (argc > 3 || per_child <= 0) {
		printf("usage: fuzz [SEED [CALLS]] (CALLS at least %d)\n",
		       FUZZ_CHILDREN * REPORT_EVERY);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		die("mkdir /tmp");

	struct slot slots[FUZZ_CHILDREN];
	uint64_t next_seed = seed;
	int running = 0, replaced = 0;
	long made = 0;
	bool ok = true;
	char dir[64];
	for (int i = 0; i < FUZZ_CHILDREN && ok; i++, running++)
		ok = start(&slots[i], next_seed++, per_child);
	while (running > 0) {
		int status;
		pid_t pid = wait(&status);
		if (pid < 0)
			die("wait");
		int i = 0;
		while (i < FUZZ_CHILDREN && slots[i].pid != pid)
			i++;
		if (i == FUZZ_CHILDREN)
			continue;
		struct slot *s = &slots[i];
		long calls = reported(s->report);
		made += calls;
		snprintf(dir, sizeof(dir), "/tmp/fuzz-%llu", (unsigned long long)s->seed);
		ok &= remove_tree(dir);
		s->pid = 0;
		running--;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE && calls < s->calls && ok &&
		    replaced < MAX_REPLACEMENTS) {
			replaced++;
			if (start(s, next_seed++, s->calls - calls))
				running++;
			else
				ok = false;
			continue;
		}
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0 && calls == s->calls)) {
			printf("fuzz: the child with seed %llu made %ld of its %ld calls and ",
			       (unsigned long long)s->seed, calls, s->calls);
			if (WIFSIGNALED(status))
				printf("was killed by signal %d (%s)\n", WTERMSIG(status),
				       sigabbrev_np(WTERMSIG(status)) ?: "?");
			else
				printf("exited with status %d\n", WEXITSTATUS(status));
			ok = false;
		}
	}
	if (!ok)
		return 1;
	printf("fuzz: %ld system calls with random numbers and arguments, %d processes of 2 "
	       "threads\n",
	       made, FUZZ_CHILDREN);
	return 0;
}
