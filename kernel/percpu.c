/*
 * Per-CPU areas: one copy of the .percpu section per CPU, each in its own pages so
 * that no two CPUs' variables share a cache line (see include/grace/percpu.h).
 */
#include <grace/boot_info.h>
#include <grace/mm.h>
#include <grace/numa.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/string.h>

/* First in every copy: the copy's own address, for archs that read it through a segment (x86 %gs:0). */
__section(".percpu.first") uintptr_t percpu_self;
DEFINE_PER_CPU(unsigned, cpu_number);
DEFINE_PER_CPU(int, preempt_count);

uintptr_t percpu_offset[MAX_CPUS];

uintptr_t percpu_base(unsigned cpu)
{
	return (uintptr_t)__percpu_start + percpu_offset[cpu];
}

void percpu_setup(unsigned nr_cpus)
{
	size_t size = (size_t)(__percpu_end - __percpu_start);
	unsigned order = pages_order(size);

	for (unsigned cpu = 0; cpu < nr_cpus; cpu++) {
		/* On the CPU's own node: it is the memory that CPU touches most. */
		char *copy = alloc_pages_node(cpu_to_node(cpu), order);
		if (!copy)
			panic("percpu: no memory for CPU %u's area (%zu bytes)", cpu, size);
		/* The boot CPU has been using the template; every copy starts from it. */
		memcpy(copy, __percpu_start, size);
		percpu_offset[cpu] = (uintptr_t)copy - (uintptr_t)__percpu_start;
		per_cpu(percpu_self, cpu) = (uintptr_t)copy;
		per_cpu(cpu_number, cpu) = cpu;
		per_cpu(preempt_count, cpu) = 0;
	}
}
