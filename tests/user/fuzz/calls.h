/*
 * The fuzzer's calls: the random sequence that draws them (the same for the same
 * seed on every kernel), the system call made with the instruction itself, and
 * the calls never made (never[]) or whose bytes written are put back (varying[]),
 * each with its reason.
 *
 * A part of fuzz.c, included by it once where this code belongs: it uses the
 * constants, headers and definitions above the #include there.
 */
#ifndef TESTS_USER_FUZZ_CALLS_H
#define TESTS_USER_FUZZ_CALLS_H

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

#endif
