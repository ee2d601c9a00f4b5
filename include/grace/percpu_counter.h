/*
 * Per-CPU event counters: a DEFINE_PER_CPU struct whose fields are all u64, each
 * CPU adding only to its own copy, and readers summing the copies. An add is one
 * relaxed atomic add to this CPU's copy with preemption off: no lock, no shared
 * cache line, and an interrupt handler on the same CPU that counts into the same
 * field cannot lose the interrupted add's update (a plain ++ is a load and a
 * store, and the handler's add between them would be overwritten).
 *
 * Sums run over every possible CPU (0..boot_info.nr_cpus-1), not the online
 * ones: a CPU that went offline keeps what it counted, and a sum never goes
 * backwards. Sums are not snapshots of one instant; each field is read once.
 */
#ifndef GRACE_PERCPU_COUNTER_H
#define GRACE_PERCPU_COUNTER_H

#include <grace/atomic.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/types.h>

/* Add n to this CPU's var.field; callable from any context. */
#define pcpu_counter_add(var, field, n)                                                            \
	do {                                                                                       \
		preempt_disable();                                                                 \
		fetch_add_relaxed(&this_cpu(var).field, (u64)(n));                                 \
		preempt_enable();                                                                  \
	} while (0)
#define pcpu_counter_inc(var, field) pcpu_counter_add(var, field, 1)

/*
 * The struct-of-u64 helpers take the per-CPU variable's address and the struct's
 * size; out is a struct of the same type.
 */
/* One CPU's counts. Reading another CPU's moves its lines to the reader. */
void pcpu_counters_read_cpu(void *out, const void *var, size_t size, unsigned cpu);
/* The sum over all possible CPUs. */
void pcpu_counters_sum(void *out, const void *var, size_t size);
/* out = after - before, field by field: the events between two sums. */
void pcpu_counters_delta(void *out, const void *after, const void *before, size_t size);

#endif
