/*
 * The fuzzer's arguments: the child's memory they point into, the structures a
 * call may be given, the pickers that draw them from the pools, and fix_args(),
 * which bends those of the calls that could end the child, block it, or write
 * where the fuzzer keeps its state; then the scratch buffer's refills.
 *
 * A part of fuzz.c, included by it once where this code belongs: it uses the
 * constants, headers and definitions above the #include there.
 */
#ifndef TESTS_USER_FUZZ_ARGS_H
#define TESTS_USER_FUZZ_ARGS_H

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

#endif
