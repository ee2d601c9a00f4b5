/*
 * The memory thread: beside each child's fuzzing thread, random mmap, munmap,
 * mprotect and madvise calls in a region of its own, reads of /dev/zero into it
 * and writes of it to /dev/null, futex calls on its words, so that faults, unmaps
 * and protections race with the fuzzed calls in one mm.
 *
 * A part of fuzz.c, included by it once where this code belongs: it uses the
 * constants, headers and definitions above the #include there.
 */
#ifndef TESTS_USER_FUZZ_MEMORY_THREAD_H
#define TESTS_USER_FUZZ_MEMORY_THREAD_H

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

#endif
