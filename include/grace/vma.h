/*
 * Virtual memory areas: the ranges of an mm's user half that may be faulted in,
 * with their protection. Kept in a sorted array under mm->vma_lock (mm/vma.c).
 */
#ifndef GRACE_VMA_H
#define GRACE_VMA_H

#include <grace/address_space.h>

/* Lowest mappable address: page 0 and its neighbours stay unmapped so NULL faults. */
#define VMA_MIN_ADDR (64 * KiB)
/* A sanity bound on the array (64 pages of VMAs); more is -ENOMEM. */
#define VMA_MAX_COUNT 8192

/*
 * Map [start, start + len) with prot (PROT_READ|PROT_WRITE|PROT_EXEC; any of them
 * also allows reads, as every mapped page is readable; 0 allows no access) and
 * flags (VMA_*; VMA_ANON is implied). Nothing is allocated until a fault. Returns 0,
 * -EINVAL (unaligned, empty, wrapping, outside [VMA_MIN_ADDR, USER_VA_END), unknown
 * bits), -EEXIST (overlaps a VMA) or -ENOMEM.
 */
int vma_map(struct mm *mm, uintptr_t start, size_t len, unsigned prot, unsigned flags);

/*
 * Unmap [start, start + len): VMAs are trimmed or split, the pages and emptied
 * tables freed after one batched TLB shootdown. Unmapping a hole is not an error.
 * A 2 MiB page an edge cuts is split into 4 KiB pages first; the part outside the
 * range stays mapped to the same memory. Returns 0, -EINVAL (bad range), -ENOMEM
 * (a VMA split needs a bigger array, or a 2 MiB split a page table; nothing changed).
 * Call with interrupts enabled: the shootdown waits for other CPUs to answer.
 */
int vma_unmap(struct mm *mm, uintptr_t start, size_t len);

/*
 * Give [start, start + len) the protection prot (as vma_map's, but not 0: a leaf
 * cannot forbid reading, see grace/pgtable.h). VMAs are split at the edges (never
 * merged again), 2 MiB pages an edge cuts are split into 4 KiB pages, the pages
 * already mapped get the new permissions, and a TLB shootdown makes every CPU drop
 * the old ones before this returns. Returns 0, -EINVAL (bad range, prot 0 or
 * unknown bits), -ENOMEM (a page of the range is in no VMA, as mprotect() says; or
 * out of memory for the VMA array or a page table; nothing changed then). Call with
 * interrupts enabled.
 */
int vma_protect(struct mm *mm, uintptr_t start, size_t len, unsigned prot);

/* The VMA containing addr, or NULL. Caller holds mm->vma_lock (either side). */
struct vma *vma_find_locked(struct mm *mm, uintptr_t addr);

/* A copy of the VMA containing addr; false if none. Takes the lock itself. */
bool vma_lookup(struct mm *mm, uintptr_t addr, struct vma *out);

/* Free the VMA array (mm teardown; no other user). */
void vma_free_all(struct mm *mm);

#endif
