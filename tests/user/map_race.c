/*
 * MADV_DONTNEED drops a range's pages but keeps its mapping, and mmap(MAP_FIXED)
 * replaces a mapping with a new one: at no moment may the range look free. One
 * thread advises a region again and again, then maps over it again and again,
 * while another maps and unmaps regions of the same size. The region is the
 * lowest mapping, so if it were ever unmapped, even for a moment, the other
 * thread's next mapping would land in it: the advice or the fixed mapping would
 * then fail, or drop the other thread's page. glibc advises a finished thread's
 * stack this way while other threads create and free stacks.
 *
 * userdiff: advice_and_fixed_maps_keep_the_range_while_other_threads_map
 * run: /bin/map_race
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define PAGE 4096UL
#define REGION (16 * PAGE)
#define ROUNDS 2000

static atomic_int started, done;
static unsigned char *region;
static atomic_int inside; /* the mapper's mappings that overlapped the region */

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
			atomic_fetch_add(&inside, 1);
		q[0] = 1; /* a page of the mapper's own, which the region's calls must not drop */
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
	printf("%d rounds of MADV_DONTNEED beside a mapping thread: %d failed, %d kept the byte, "
	       "%d of its mappings overlapped the region\n",
	       ROUNDS, failed, kept, atomic_exchange(&inside, 0));
	failed = kept = 0;
	for (int i = 0; i < ROUNDS; i++) {
		region[0] = 0x5a;
		if (mmap(region, REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != region)
			failed++;
		kept += region[0] != 0;
	}
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	printf("%d rounds of mmap MAP_FIXED over it: %d failed, %d kept the byte, "
	       "%d of its mappings overlapped the region\n",
	       ROUNDS, failed, kept, atomic_load(&inside));
	return 0;
}
