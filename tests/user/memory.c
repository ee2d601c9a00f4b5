/*
 * Memory as a program gets it: malloc's small blocks (from the brk heap) and
 * large ones (each its own mmap), calloc and realloc; anonymous mmap, munmap,
 * mprotect and madvise with their refusals (MAP_FIXED_NOREPLACE's EEXIST among
 * them); brk grown, shrunk and grown again; and 6 MiB of stack. Memory is
 * checked to be zero wherever Linux promises it (a new anonymous mapping, a
 * page after MADV_DONTNEED, brk's new pages even after a shrink) and to keep
 * what was written everywhere else. No address is printed: only whether
 * addresses relate as Linux makes them (a hint taken, a page replaced).
 *
 * userdiff: memory_calls_map_zero_and_refuse_as_on_linux
 * run: /bin/memory
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096UL
#define SMALL_BLOCKS 1000
#define LARGE_SIZE (32UL << 20)
#define STACK_USE (6UL << 20) /* inside RLIMIT_STACK's 8 MiB */

static void ok(const char *what, long ret)
{
	printf("%s: %s\n", what, ret < 0 ? strerrorname_np(errno) : "ok");
}

/* mmap's result: "ok" or the errno's name (the address is not deterministic). */
static void *mapped(const char *what, void *p)
{
	printf("%s: %s\n", what, p == MAP_FAILED ? strerrorname_np(errno) : "ok");
	return p;
}

static int all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return 0;
	return 1;
}

static const char *yes(int cond)
{
	return cond ? "yes" : "no";
}

static void memory_malloc(void)
{
	static unsigned char *blocks[SMALL_BLOCKS];
	int intact = 1;
	for (int i = 0; i < SMALL_BLOCKS; i++) {
		size_t size = (size_t)i * 37 % 1000 + 1;
		blocks[i] = malloc(size);
		if (!blocks[i]) {
			printf("malloc(%zu): %s\n", size, strerrorname_np(errno));
			return;
		}
		memset(blocks[i], i & 0xff, size);
	}
	for (int i = 0; i < SMALL_BLOCKS; i++) {
		size_t size = (size_t)i * 37 % 1000 + 1;
		for (size_t j = 0; j < size; j++)
			intact &= blocks[i][j] == (i & 0xff);
		free(blocks[i]);
	}
	printf("%d small blocks, each kept its bytes: %s\n", SMALL_BLOCKS, yes(intact));

	unsigned char *large = malloc(LARGE_SIZE);
	if (!large) {
		printf("malloc of 32 MiB: %s\n", strerrorname_np(errno));
		return;
	}
	for (size_t off = 0; off < LARGE_SIZE; off += PAGE)
		large[off] = (unsigned char)(off / PAGE * 13);
	intact = 1;
	for (size_t off = 0; off < LARGE_SIZE; off += PAGE)
		intact &= large[off] == (unsigned char)(off / PAGE * 13);
	printf("malloc of 32 MiB, a byte in each page read back: %s\n", yes(intact));
	free(large);

	unsigned char *zeroed = calloc(1, 4UL << 20);
	printf("calloc of 4 MiB is zero: %s\n", yes(zeroed && all_zero(zeroed, 4UL << 20)));
	free(zeroed);

	unsigned char *grown = malloc(1UL << 20);
	for (size_t i = 0; grown && i < (1UL << 20); i++)
		grown[i] = (unsigned char)(i % 253);
	grown = realloc(grown, 8UL << 20);
	intact = grown != NULL;
	for (size_t i = 0; grown && i < (1UL << 20); i++)
		intact &= grown[i] == (unsigned char)(i % 253);
	printf("realloc from 1 MiB to 8 MiB kept the first MiB: %s\n", yes(intact));
	free(grown);
}

static void memory_mmap(void)
{
	unsigned char *p = mapped("mmap 3 pages", mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
						       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (p == MAP_FAILED)
		return;
	printf("new mapping is zero: %s\n", yes(all_zero(p, 3 * PAGE)));
	memset(p, 0x5a, 3 * PAGE);
	ok("mprotect the middle page read-only", mprotect(p + PAGE, PAGE, PROT_READ));
	printf("the read-only page still reads 0x5a: %s\n", yes(p[PAGE] == 0x5a));
	ok("mprotect at an unaligned address", mprotect(p + 1, PAGE, PROT_READ));
	ok("mprotect with an unknown bit", mprotect(p, PAGE, PROT_READ | 0x100));
	ok("mprotect the first page PROT_NONE", mprotect(p, PAGE, PROT_NONE));
	ok("mprotect it back to read-write", mprotect(p, PAGE, PROT_READ | PROT_WRITE));
	printf("it kept its bytes: %s\n", yes(p[0] == 0x5a && p[PAGE - 1] == 0x5a));
	ok("mprotect of the page at 4 KiB, nothing mapped",
	   mprotect((void *)PAGE, PAGE, PROT_READ));
	ok("munmap of the page at 4 KiB, nothing mapped", munmap((void *)PAGE, PAGE));

	ok("munmap the middle page", munmap(p + PAGE, PAGE));
	ok("mprotect of the hole", mprotect(p + PAGE, PAGE, PROT_READ));
	ok("mprotect across the hole", mprotect(p, 3 * PAGE, PROT_READ | PROT_WRITE));
	void *q = mapped("mmap MAP_FIXED_NOREPLACE into the hole",
			 mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	printf("it is at the hole: %s, zero: %s\n", yes(q == p + PAGE),
	       yes(q != MAP_FAILED && all_zero(q, PAGE)));
	mapped("mmap MAP_FIXED_NOREPLACE over a mapped page",
	       mmap(p, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	printf("the page under it kept its bytes: %s\n", yes(p[0] == 0x5a));
	q = mapped(
	    "mmap MAP_FIXED over a mapped page",
	    mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	printf("it replaced the page: %s, zero: %s\n", yes(q == p), yes(all_zero(p, PAGE)));
	mapped("mmap MAP_FIXED at an unaligned address",
	       mmap(p + 1, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	mapped("mmap of 0 bytes", mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	mapped("mmap neither private nor shared",
	       mmap(NULL, PAGE, PROT_READ, MAP_ANONYMOUS, -1, 0));
	mapped("mmap of 2^62 bytes",
	       mmap(NULL, 1UL << 62, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	ok("munmap at an unaligned address", munmap(p + 1, PAGE));
	ok("munmap of 0 bytes", munmap(p, 0));

	/* MADV_DONTNEED drops private anonymous pages: they read as zeros again. */
	memset(p + 2 * PAGE, 0x77, PAGE);
	ok("madvise MADV_DONTNEED", madvise(p + 2 * PAGE, PAGE, MADV_DONTNEED));
	printf("the page reads as zeros: %s\n", yes(all_zero(p + 2 * PAGE, PAGE)));
	/* Advice on huge pages: taken for a mapping, refused for a hole; the bytes stay. */
	ok("madvise MADV_NOHUGEPAGE", madvise(p, 3 * PAGE, MADV_NOHUGEPAGE));
	ok("madvise MADV_HUGEPAGE", madvise(p, 3 * PAGE, MADV_HUGEPAGE));
	p[0] = 0x55;
	ok("madvise MADV_NOHUGEPAGE of a page", madvise(p + PAGE, PAGE, MADV_NOHUGEPAGE));
	printf("the first page keeps its byte: %s\n", yes(p[0] == 0x55));

	ok("munmap the 3 pages", munmap(p, 3 * PAGE));
	ok("munmap them again", munmap(p, 3 * PAGE));
#ifdef __x86_64__ /* qemu-user, riscv64's oracle, accepts any madvise */
	ok("madvise MADV_NOHUGEPAGE of a hole", madvise(p, PAGE, MADV_NOHUGEPAGE));
#endif
#ifdef __x86_64__ /* qemu-user, riscv64's oracle, skips MADV_DONTNEED over a hole */
	/* MADV_DONTNEED across a hole: the pages on both sides go all the same. */
	unsigned char *h = mapped("mmap 3 more pages", mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
							    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (h != MAP_FAILED) {
		memset(h, 0x66, 3 * PAGE);
		ok("munmap their middle page", munmap(h + PAGE, PAGE));
		ok("madvise MADV_DONTNEED across the hole", madvise(h, 3 * PAGE, MADV_DONTNEED));
		printf("the pages before and after it read as zeros: %s, %s\n",
		       yes(all_zero(h, PAGE)), yes(all_zero(h + 2 * PAGE, PAGE)));
		munmap(h, 3 * PAGE);
	}
#endif
	/* A hint at a free, aligned address is taken. */
	q = mapped(
	    "mmap with the freed address as a hint",
	    mmap(p + PAGE, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	printf("the hint was taken: %s\n", yes(q == p + PAGE));
	if (q != MAP_FAILED)
		munmap(q, PAGE);

	/* A big mapping costs nothing until touched; a touched page reads zero. */
	unsigned char *huge = mapped("mmap 256 MiB", mmap(NULL, 256UL << 20, PROT_READ | PROT_WRITE,
							  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (huge != MAP_FAILED) {
		printf("its middle page is zero: %s\n", yes(all_zero(huge + (128UL << 20), PAGE)));
		ok("munmap 256 MiB", munmap(huge, 256UL << 20));
	}
}

static void memory_brk(void)
{
	char *start = sbrk(0);
	long now = syscall(SYS_brk, 0);
	printf("brk(0) is sbrk(0): %s\n", yes(now == (long)start));
	char *old = sbrk(64 * 1024);
	printf("sbrk(64 KiB) returned the old break: %s\n", yes(old == start));
	printf("the new break is 64 KiB higher: %s\n", yes(sbrk(0) == start + 64 * 1024));
	/* The first bytes may share the page malloc's heap ends in: check from the next page. */
	char *fresh = (char *)(((uintptr_t)start + PAGE - 1) & ~(PAGE - 1));
	printf("the new pages are zero: %s\n", yes(all_zero(fresh, start + 64 * 1024 - fresh)));
	memset(start, 0x33, 64 * 1024);
	sbrk(-64 * 1024);
	printf("sbrk(-64 KiB) gave the old break back: %s\n", yes(sbrk(0) == start));
	sbrk(64 * 1024);
	printf("grown again, the pages are zero again: %s\n",
	       yes(all_zero(fresh, start + 64 * 1024 - fresh)));
	sbrk(-64 * 1024);
	printf("brk below the program's start leaves the break: %s\n",
	       yes(syscall(SYS_brk, PAGE) == (long)start));
}

/* Use depth bytes of stack a page at a time, from the top down. */
static unsigned long memory_stack(size_t depth)
{
	volatile unsigned char frame[PAGE];
	frame[0] = (unsigned char)depth;
	frame[PAGE - 1] = (unsigned char)(depth >> 12);
	if (depth <= PAGE)
		return frame[0] + frame[PAGE - 1];
	return memory_stack(depth - PAGE) + frame[0] + frame[PAGE - 1];
}

int main(void)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	memory_malloc();
	memory_mmap();
	memory_brk();
	printf("6 MiB of stack, a page per frame: sum %lu\n", memory_stack(STACK_USE));
	return 0;
}
