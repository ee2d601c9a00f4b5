/*
 * Kernel stacks from the vmap area: each stack is KERNEL_STACK_SIZE of 4 KiB
 * pages mapped read-write, non-executable, at a virtual address with an
 * unmapped guard page below it, so running off the bottom of a stack faults
 * instead of silently overwriting the neighbouring memory (on x86_64 that fault
 * becomes a double fault on its IST stack, reported as a stack overflow).
 *
 * The area (VMAP_BASE, VMAP_SIZE in asm/pgtable.h) has its own top-level page
 * table entry made at boot by the arch, so every address space shares it.
 */
#ifndef GRACE_VMAP_H
#define GRACE_VMAP_H

#include <grace/types.h>

#define KERNEL_STACK_SIZE (16 * 1024)
#define STACK_GUARD_SIZE 4096

/* A new stack: its lowest usable address (the top is + KERNEL_STACK_SIZE); NULL on OOM. */
void *stack_alloc(void);
/* The same with its pages from node first (NUMA_NO_NODE: this CPU's node). */
void *stack_alloc_node(int node);
/*
 * Give back a stack from stack_alloc() (its lowest address); NULL is a no-op.
 * Call with interrupts on: every so many frees it flushes every CPU's TLB with
 * IPIs before the addresses are reused (with interrupts off the slot leaks).
 */
void stack_free(void *stack);

/* Is va inside some stack's guard page? For fault reports. */
bool vmap_is_guard(uintptr_t va);

#endif
