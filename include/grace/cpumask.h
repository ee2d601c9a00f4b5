/*
 * A set of logical CPUs, one bit each.
 *
 * Which operations are atomic: cpumask_set_cpu() and cpumask_clear_cpu() are atomic
 * read-modify-writes of one word (set_bit/clear_bit, unordered), so CPUs may add and
 * remove themselves concurrently without a lock; mm->cpus (grace/address_space.h)
 * relies on it. cpumask_test_cpu(), cpumask_weight(), cpumask_empty(), cpumask_next(),
 * cpumask_nth(), cpumask_index() and for_each_cpu() read each word once (READ_ONCE) but the words
 * one after another: not a snapshot of a mask that changes meanwhile. cpumask_clear() and
 * cpumask_and() write with plain stores: the destination must be the caller's alone. None of them
 * orders anything; callers that need ordering add a barrier (mm_load()'s smp_mb()).
 */
#ifndef GRACE_CPUMASK_H
#define GRACE_CPUMASK_H

#include <grace/atomic.h>
#include <grace/boot_info.h>

#define BITS_PER_LONG 64
#define CPUMASK_WORDS ((MAX_CPUS + BITS_PER_LONG - 1) / BITS_PER_LONG)

struct cpumask {
	unsigned long bits[CPUMASK_WORDS];
};

static inline void cpumask_clear(struct cpumask *m)
{
	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		m->bits[i] = 0;
}
static inline void cpumask_set_cpu(struct cpumask *m, unsigned cpu)
{
	set_bit(cpu % BITS_PER_LONG, &m->bits[cpu / BITS_PER_LONG]);
}
static inline void cpumask_clear_cpu(struct cpumask *m, unsigned cpu)
{
	clear_bit(cpu % BITS_PER_LONG, &m->bits[cpu / BITS_PER_LONG]);
}
static inline bool cpumask_test_cpu(const struct cpumask *m, unsigned cpu)
{
	return test_bit(cpu % BITS_PER_LONG, &m->bits[cpu / BITS_PER_LONG]);
}
static inline unsigned cpumask_weight(const struct cpumask *m)
{
	unsigned n = 0;
	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		n += __builtin_popcountl(READ_ONCE(m->bits[i]));
	return n;
}
static inline bool cpumask_empty(const struct cpumask *m)
{
	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		if (READ_ONCE(m->bits[i]))
			return false;
	return true;
}
/* Next set bit at or after cpu, or MAX_CPUS. A word at a time. */
static inline unsigned cpumask_next(const struct cpumask *m, unsigned cpu)
{
	for (unsigned w = cpu / BITS_PER_LONG; w < CPUMASK_WORDS; w++) {
		unsigned long bits = READ_ONCE(m->bits[w]);
		if (w == cpu / BITS_PER_LONG)
			bits &= ~0UL << (cpu % BITS_PER_LONG);
		if (bits) {
			unsigned found = w * BITS_PER_LONG + (unsigned)__builtin_ctzl(bits);
			return found < MAX_CPUS ? found : MAX_CPUS;
		}
	}
	return MAX_CPUS;
}

static inline void cpumask_and(struct cpumask *dst, const struct cpumask *a,
			       const struct cpumask *b)
{
	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		dst->bits[i] = READ_ONCE(a->bits[i]) & READ_ONCE(b->bits[i]);
}

#define for_each_cpu(cpu, mask)                                                                    \
	for ((cpu) = cpumask_next((mask), 0); (cpu) < MAX_CPUS;                                    \
	     (cpu) = cpumask_next((mask), (cpu) + 1))

/* The set bit of place n (0 for the lowest), or MAX_CPUS if fewer are set (Linux's cpumask_nth). */
static inline unsigned cpumask_nth(const struct cpumask *m, unsigned n)
{
	unsigned cpu;
	for_each_cpu(cpu, m)
		if (n-- == 0)
			return cpu;
	return MAX_CPUS;
}

/* cpu's place among the set bits (the set bits below it), or -1 if its own is clear. */
static inline int cpumask_index(const struct cpumask *m, unsigned cpu)
{
	if (cpu >= MAX_CPUS || !cpumask_test_cpu(m, cpu))
		return -1;
	int index = 0;
	for (unsigned w = 0; w <= cpu / BITS_PER_LONG; w++) {
		unsigned long bits = READ_ONCE(m->bits[w]);
		if (w == cpu / BITS_PER_LONG)
			bits &= (1UL << (cpu % BITS_PER_LONG)) - 1;
		index += __builtin_popcountl(bits);
	}
	return index;
}

extern struct cpumask cpu_online_mask;
#define for_each_online_cpu(cpu) for_each_cpu(cpu, &cpu_online_mask)
static inline unsigned num_online_cpus(void)
{
	return cpumask_weight(&cpu_online_mask);
}

#endif
