/*
 * Per-CPU areas: one copy of the .percpu section per CPU, each in its own pages so
 * that no two CPUs' variables share a cache line (see include/grace/percpu.h).
 */
#include <grace/boot_info.h>
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/string.h>

/* First in every copy: the copy's own address, for archs that read it through a segment (x86
 * %gs:0). */
__section(".percpu.first") uintptr_t percpu_self;
/* Next in the header (the file is built with -fno-toplevel-reorder; percpu_setup checks). */
__section(".percpu.first") struct task *current_task = &boot_task;
DEFINE_PER_CPU(unsigned, cpu_number);

uintptr_t percpu_offset[MAX_CPUS];

uintptr_t percpu_base(unsigned cpu)
{
	return (uintptr_t)__percpu_start + percpu_offset[cpu];
}

void percpu_setup(unsigned nr_cpus)
{
	size_t size = (size_t)(__percpu_end - __percpu_start);

	if ((uintptr_t)&current_task - (uintptr_t)&percpu_self != PERCPU_HEAD_CURRENT)
		panic("percpu: current_task is not at offset %u of the per-CPU header",
		      PERCPU_HEAD_CURRENT);
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
		/*
		 * Each CPU's boot code runs as its idle thread, not preemptible (count 1)
		 * like the early boot thread it replaces on the boot CPU.
		 */
		per_cpu(idle_task, cpu).preempt.count = 1;
		per_cpu(current_task, cpu) = &per_cpu(idle_task, cpu);
	}
	if (boot_task.preempt.count != 1)
		panic("percpu: set up inside a preempt-disabled section (count %d)",
		      boot_task.preempt.count);
}
