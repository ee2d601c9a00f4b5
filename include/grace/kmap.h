/*
 * Filling the kernel's page tables: the arch's boot code (the image, section by
 * section) and mm/vmap.c (kernel stacks) map and unmap kernel ranges through
 * these, using only the generic entry helpers of grace/pgtable.h, so both arches
 * share one walker. Callers serialise changes to the same tables themselves
 * (boot runs alone; vmap holds its lock).
 */
#ifndef GRACE_KMAP_H
#define GRACE_KMAP_H

#include <grace/pgtable.h>
#include <grace/types.h>

/* Hands out a zeroed page for a new table (its kernel virtual address), or NULL. */
typedef pte_t *(*kmap_alloc_fn)(void);

/*
 * Map [va, va + size) to [pa, pa + size) with prot under root, 4 KiB leaves,
 * or 2 MiB leaves where large is true and an aligned 2 MiB of the range allows it.
 * Every address must be page-aligned. Makes missing tables below the top level
 * with alloc (top-level entries must exist unless allow_top is set: see
 * grace/pgtable.h on why the kernel half's are fixed after boot).
 * 0, -ENOMEM when alloc fails, -EEXIST when something is mapped there already,
 * -EINVAL for misaligned input. A failure leaves what was mapped so far in place.
 */
int kmap_range(pte_t *root, uintptr_t va, phys_addr_t pa, u64 size, unsigned prot, bool large,
	       bool allow_top, kmap_alloc_fn alloc);

/*
 * Map the kernel image at its link address, W^X section by section: text read and
 * execute, rodata read-only, data and bss read-write; the page boot_stack_guard
 * (each arch's boot stack guard, in bss) stays unmapped. 0 or kmap_range's error.
 */
int kmap_image(pte_t *root, kmap_alloc_fn alloc);

/*
 * Remove the 4 KiB leaf mapping va; returns the old entry (0 if none). Tables stay.
 * The caller flushes TLBs.
 */
pte_t kmap_unmap_page(pte_t *root, uintptr_t va);

/* The leaf entry that maps va (at any level), or 0; *level gets its level. Lock-free read. */
pte_t kmap_lookup(const pte_t *root, uintptr_t va, int *level);

#endif
