/*
 * MADV_DONTNEED drops a range's pages but keeps its mapping: at no moment may
 * the range look free. One thread advises a region again and again while
 * another maps and unmaps regions of the same size. The region is the lowest
 * mapping, so if the advised range were ever unmapped, even for a moment, the
 * other thread's next mapping would land in it, and the advice would then fail
 * or drop the other thread's pages. glibc advises a finished thread's stack
 * this way while other threads create and free stacks.
 *
 * userdiff: madvise_keeps_the_mapping_while_other_threads_map
 * run: /bin/madvise_race
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define PAGE 4096UL
#define REGION (16 * PAGE)
#define ROUNDS 3000

static atomic_int started, done;
static unsigned char *region;
static int inside; /* the mapper's mappings that overlapped the region */

static void *mapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&started))
		;
	while (!atomic_load(&done)) {
		unsigned char *q =
		    mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			continue;
		if (q < region + REGION && q + REGION > region)
			inside++;
		q[0] = 1; /* a page of the mapper's own, which an advice must not drop */
		munmap(q, REGION);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, mapper, NULL);
	/* Mapped after the thread's stack, so below every mapping there is. */
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	int failed = 0, kept = 0;
	atomic_store(&started, 1);
	for (int i = 0; i < ROUNDS; i++) {
		region[0] = 0x5a;
		if (madvise(region, REGION, MADV_DONTNEED))
			failed++;
		kept += region[0] != 0;
	}
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	printf("%d rounds of MADV_DONTNEED beside a mapping thread: %d failed, "
	       "%d kept the byte, %d of its mappings overlapped the region\n",
	       ROUNDS, failed, kept, inside);
	return 0;
}
