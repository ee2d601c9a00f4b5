/*
 * Per-CPU variables. DEFINE_PER_CPU puts a variable in the .percpu section; at boot
 * every CPU gets its own cache-line aligned copy of that section, and the arch
 * keeps the address of the current CPU's copy in a register (tp on riscv64, the
 * GS base on x86_64). this_cpu_ptr(&var) is then one register read and an add.
 *
 * Until percpu_setup() runs, the boot CPU uses the section itself as its copy.
 */
#ifndef GRACE_PERCPU_H
#define GRACE_PERCPU_H

#include <grace/compiler.h>
#include <grace/types.h>
#include <asm/percpu.h>

#define DEFINE_PER_CPU(type, name) __section(".percpu") __typeof__(type) name
/*
 * A variable on cache lines of its own, for one that other CPUs read (a counter
 * summed over all CPUs): it starts a line, and the linker puts these after every
 * plain per-CPU variable, so the tail of its last line holds none of them either.
 * A plain variable there would be written by its CPU while the readers pull the
 * line: a transfer per read that neither variable's users asked for.
 */
#define DEFINE_PER_CPU_ALIGNED(type, name)                                                         \
	__section(".percpu.aligned") __cacheline_aligned __typeof__(type) name
#define DECLARE_PER_CPU(type, name) extern __typeof__(type) name

extern char __percpu_start[], __percpu_end[];
extern char __percpu_aligned_start[]; /* the DEFINE_PER_CPU_ALIGNED variables, to the end */
extern uintptr_t percpu_offset[];     /* copy of cpu i minus __percpu_start */
/*
 * The per-CPU header, in section .percpu.first at the start of every copy:
 * percpu_self (offset 0) is the copy's own address; current_task (offset
 * PERCPU_HEAD_CURRENT) is the thread running on this CPU. The arch reads
 * current_task in one instruction (arch_current()): a thread can be preempted and
 * move to another CPU between any two instructions, so a two-step "base, then
 * load" could return another CPU's thread.
 */
struct task;
extern uintptr_t percpu_self;
extern struct task *current_task;

#define per_cpu_ptr(ptr, cpu) ((__typeof__(ptr))((uintptr_t)(ptr) + percpu_offset[cpu]))
#define per_cpu(var, cpu) (*per_cpu_ptr(&(var), cpu))
#define this_cpu_ptr(ptr)                                                                          \
	((__typeof__(ptr))((uintptr_t)(ptr) + arch_percpu_base() - (uintptr_t)__percpu_start))
#define this_cpu(var) (*this_cpu_ptr(&(var)))

/* The logical id of this CPU. Stable only with preemption or interrupts off. */
DECLARE_PER_CPU(unsigned, cpu_number);
#define smp_processor_id() (this_cpu(cpu_number))

/* Allocate and fill every possible CPU's copy. Called once on the boot CPU. */
void percpu_setup(unsigned nr_cpus);
/* The base the arch must load into tp/GS for a CPU before it runs C code that uses per-CPU data. */
uintptr_t percpu_base(unsigned cpu);

#endif
