/*
 * Virtual memory areas: the ranges of an mm's user half that may be faulted in,
 * with their protection. A sorted table of VMA pointers, changed under
 * mm->vma_lock and looked up by faults under RCU: the table mm/vma_table.c, the
 * per-VMA lock and the lookup mm/vma_lock.c, the edits mm/vma.c, the freeing
 * mm/vma_free.c.
 */
#ifndef GRACE_VMA_H
#define GRACE_VMA_H

#include <grace/address_space.h>

/* Lowest mappable address: page 0 and its neighbours stay unmapped so NULL faults. */
#define VMA_MIN_ADDR (64 * KiB)
/* A sanity bound on the table (16 pages of pointers); more is -ENOMEM. */
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
 * (no memory for the VMAs a split makes, a bigger table, or the page table a 2 MiB
 * split needs; nothing changed).
 * Call with interrupts enabled: the shootdown waits for other CPUs to answer.
 */
int vma_unmap(struct mm *mm, uintptr_t start, size_t len);

/*
 * mmap(MAP_FIXED): what vma_unmap() and then vma_map() would do, in one step, so
 * that no other thread's mapping can take the range in between. The old pages
 * are freed after the TLB shootdown; the new VMA takes no fault until they are
 * gone from the page tables. Returns 0 or vma_unmap()'s and vma_map()'s errors,
 * with nothing changed.
 */
int vma_map_replace(struct mm *mm, uintptr_t start, size_t len, unsigned prot, unsigned flags);

/*
 * madvise(MADV_DONTNEED): drop the pages of [start, start + len) and keep its
 * VMAs, so the next touch faults in zeros and no other mapping can take the
 * range meanwhile. 2 MiB pages the edges cut are split first; the pages go after
 * the TLB shootdown. Returns 0, -EINVAL (bad range), or -ENOMEM: out of memory
 * for a split (nothing changed), or a page of the range in no VMA (the VMAs in
 * it lost their pages all the same, as on Linux). Call with interrupts enabled.
 */
int vma_discard(struct mm *mm, uintptr_t start, size_t len);

/*
 * Give [start, start + len) the protection prot (as vma_map's; 0, PROT_NONE, keeps
 * the pages mapped for the kernel only, since a leaf cannot forbid reading, see
 * grace/pgtable.h: every user access faults and the VMA refuses it, and a later
 * prot finds the bytes where they were). VMAs are split at the edges (never
 * merged again), 2 MiB pages an edge cuts are split into 4 KiB pages, the pages
 * already mapped get the new permissions, and a TLB shootdown makes every CPU drop
 * the old ones before this returns. Returns 0, -EINVAL (bad range or unknown
 * bits), -ENOMEM (a page of the range is in no VMA, as mprotect() says; or
 * out of memory for the VMAs, the table or a page table; nothing changed then). Call with
 * interrupts enabled.
 */
int vma_protect(struct mm *mm, uintptr_t start, size_t len, unsigned prot);

/*
 * madvise(MADV_NOHUGEPAGE) (nohuge) and MADV_HUGEPAGE: later faults in [start,
 * start + len) map 4 KiB pages only, or 2 MiB ones again where an aligned 2 MiB
 * fits the VMA. Split and locked as vma_protect(); pages already mapped stay as
 * they are, as on Linux. The same returns.
 */
int vma_set_nohuge(struct mm *mm, uintptr_t start, size_t len, bool nohuge);

/* The VMA containing addr, or NULL. Caller holds mm->vma_lock (either side). */
struct vma *vma_find_locked(struct mm *mm, uintptr_t addr);

/*
 * mm's first VMA at table index *i or above, with *i moved to its index, or NULL:
 * for (i = 0; (v = vma_next_locked(mm, &i)); i++) visits them in address order.
 * Caller holds mm->vma_lock (either side).
 */
struct vma *vma_next_locked(struct mm *mm, unsigned *i);

/*
 * The fault path's lookup: the VMA containing addr, found under RCU and returned
 * with its lock held for reading (vma_read_unlock() when done), so no writer can
 * change or remove it meanwhile. It writes only the VMA's lock, which no fault in
 * another VMA touches. NULL when there is
 * none, when the table changed during the lookup, or when a writer holds the
 * VMA: the caller then looks again under mm->vma_lock.
 */
struct vma *vma_read_lock_rcu(struct mm *mm, uintptr_t addr);
void vma_read_unlock(struct vma *v);

/* A copy of the VMA containing addr; false if none. Takes the lock itself. */
bool vma_lookup(struct mm *mm, uintptr_t addr, struct vma *out);

/*
 * The highest free range of len bytes (page aligned) that ends at or below
 * below: its start, or 0 if there is none above VMA_MIN_ADDR. Only a hint: the
 * caller maps it with vma_map(), which fails -EEXIST if another thread took it
 * meanwhile, and then looks again.
 */
uintptr_t vma_find_gap(struct mm *mm, size_t len, uintptr_t below);

/* VMAs in mm now (takes mm->vma_lock for reading). */
unsigned vma_count(struct mm *mm);

/* Does any VMA of mm overlap [start, end)? Caller holds mm->vma_lock for writing. */
bool vma_overlaps_locked(struct mm *mm, uintptr_t start, uintptr_t end);

/* Free the VMA table and every VMA (mm teardown; no other user). */
void vma_free_all(struct mm *mm);

/* The VMA slab cache; once at boot, after the slab allocator. */
void vma_init(void);

/*
 * How a VMA that leaves its table is freed (vma_free= on the command line;
 * mm/vma_free.c says why): at once into a SLAB_TYPESAFE_BY_RCU cache, lookups
 * revalidating what they find, or after a grace period (call_rcu), as before
 * Linux 6.15. A VMA goes the way of the mode in force when it was made.
 */
enum vma_free_mode {
	VMA_FREE_TYPESAFE,
	VMA_FREE_RCU,
};
void vma_set_free_mode(enum vma_free_mode mode);
enum vma_free_mode vma_get_free_mode(void);
const char *vma_free_mode_name(enum vma_free_mode mode);

/*
 * Wait until the VMAs and tables unmap retired are freed, and give the VMA
 * cache's empty slabs back: for tests that count free pages before and after.
 */
void vma_quiesce(void);

#endif
