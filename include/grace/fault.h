/*
 * Page faults on user addresses (mm/fault.c).
 *
 * The arch trap path calls handle_page_fault() for every page fault. It resolves
 * faults in the current CPU's mm: demand-zero 4 KiB pages, or 2 MiB pages where an
 * anonymous VMA covers the whole aligned 2 MiB. A nonzero return means the access
 * is not allowed or could not be backed; the trap path then tries the exception
 * fixup table and dies only if there is no fixup.
 */
#ifndef GRACE_FAULT_H
#define GRACE_FAULT_H

#include <grace/address_space.h>
#include <asm/regs.h>

#define FAULT_READ 1
#define FAULT_WRITE 2
#define FAULT_EXEC 4

/*
 * 0: the mapping now exists (installed here or by a racing CPU), retry the access.
 * -EFAULT: no VMA, or the VMA forbids the access (reported on the console with the
 * address and the VMA), or a kernel address. -ENOMEM: out of memory.
 */
int handle_page_fault(struct regs *regs, uintptr_t addr, unsigned access);

/* The same for an explicit mm, without touching memory; for tests and prefaulting. */
int mm_fault(struct mm *mm, uintptr_t addr, unsigned access);

/* Per-CPU counts, summed over all CPUs by fault_stats_sum(); for tests and the benchmark. */
struct fault_stats {
	u64 faults;	   /* calls to mm_fault */
	u64 mapped_4k;	   /* 4 KiB pages this CPU installed */
	u64 mapped_huge;   /* 2 MiB pages this CPU installed */
	u64 lost_race;	   /* found another CPU's mapping after allocating; freed ours */
	u64 huge_fallback; /* huge-eligible faults that got 4 KiB pages (no 2 MiB block) */
	u64 spurious;	   /* mapping already present and sufficient */
	u64 split_huge;	   /* 2 MiB leaves this CPU split into 4 KiB ones (unmap, protect) */
	u64 efault, enomem;
	u64 lookup_rcu;	   /* attempts that held their VMA by its own lock, found under RCU */
	u64 lookup_locked; /* attempts under mm->vma_lock (the fallback, or VMA_LOOKUP_LOCKED) */
	u64 cow_copied;	   /* copy-on-write faults that copied a shared page */
	u64 cow_reused;	   /* copy-on-write faults on a page no longer shared: made writable */
};
void fault_stats_sum(struct fault_stats *out);
/*
 * One CPU's counts. Reading another CPU's moves its lines to the reader, so a
 * benchmark that must not disturb the CPUs it measures reads only its own.
 */
void fault_stats_cpu(unsigned cpu, struct fault_stats *out);

/*
 * For the arch trap handlers (mm/fault_entry.c). The generic half of a kernel page
 * fault: handle_page_fault() with interrupts back on if the faulting code had them
 * on (so a fault waiting for a page-table lock still takes the TLB-shootdown IPI
 * its holder may wait for), then the fixup table. True if the fault is dealt with; false means the
 * arch should die().
 */
bool kernel_fault_resolved(struct regs *regs, uintptr_t addr, unsigned access, bool irqs_were_on);

/* Is va a guard page: below a vmap stack, or below the boot stack? */
bool kernel_stack_guard(uintptr_t va);

/*
 * A hint for a fault report naming what va is (" (kernel text: read-only)", a stack
 * guard, NULL...), or "". direct_map_end: where the arch's direct map ends.
 */
const char *kernel_fault_hint(uintptr_t va, uintptr_t direct_map_end);

/*
 * Fault injection for the -ENOMEM paths: after `skip` more page or page-table
 * allocations by the address-space code, fail the next `count` (0: stop injecting).
 */
void mm_inject_alloc_failures(unsigned skip, unsigned count);

#endif
