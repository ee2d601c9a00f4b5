/*
 * Readers of per-CPU event counters (grace/percpu_counter.h). Each field is read
 * with READ_ONCE (it is written concurrently by its CPU), so a sum is exact for
 * every add that finished before it started.
 */
#include <grace/boot_info.h>
#include <grace/compiler.h>
#include <grace/percpu_counter.h>

void pcpu_counters_read_cpu(void *out, const void *var, size_t size, unsigned cpu)
{
	const u64 *src = per_cpu_ptr((const u64 *)var, cpu);
	u64 *dst = out;
	for (size_t i = 0; i < size / sizeof(u64); i++)
		dst[i] = READ_ONCE(src[i]);
}

void pcpu_counters_sum(void *out, const void *var, size_t size)
{
	u64 *dst = out;
	for (size_t i = 0; i < size / sizeof(u64); i++)
		dst[i] = 0;
	/* Possible CPUs, not online ones: an offline CPU's counts still happened. */
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		const u64 *src = per_cpu_ptr((const u64 *)var, cpu);
		for (size_t i = 0; i < size / sizeof(u64); i++)
			dst[i] += READ_ONCE(src[i]);
	}
}

void pcpu_counters_delta(void *out, const void *after, const void *before, size_t size)
{
	const u64 *a = after, *b = before;
	u64 *dst = out;
	for (size_t i = 0; i < size / sizeof(u64); i++)
		dst[i] = a[i] - b[i];
}
