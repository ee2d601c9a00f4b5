/*
 * Copy-on-write: fork's copy of an address space, and the write fault that
 * breaks a share.
 *
 * mm_fork() gives the new mm the same VMAs and, for every 4 KiB page mapped in
 * the old one, the same page, read-only on both sides with one more reference
 * (page->refcount counts the mappings of a user page). A write fault on such a
 * page in a VMA that allows writing is a copy-on-write fault: fault_cow()
 * copies the page, installs the copy writable, and drops the shared page
 * through a TLB shootdown of the faulting mm, so no CPU running it (another
 * thread) goes on reading the old page through a stale read-only entry after
 * the new one is written. When the faulting side is the page's last user (the
 * other side exited or broke its share first) the page is made writable where
 * it is, without a copy. mprotect() never makes a shared page writable
 * (pt_protect_range), and an unmap or exit frees a page only with its last
 * reference (tlb_finish, pt_free_all).
 *
 * 2 MiB pages are copied at fork, not shared: a shared 2 MiB block could not
 * be split into 4 KiB pages by a later partial unmap or mprotect of one side
 * without a reference count per 4 KiB page. (Linux shares them and splits the
 * mapping at the first write since 5.8; a fork of an address space full of huge
 * pages costs 2 MiB of copying each here.)
 *
 * Other threads of the old mm may run while it is copied. mm_fork() maps the
 * new mm's VMAs from a snapshot of the old one's, then walks the old tables
 * holding its vma_lock for reading, so no unmap frees a table under the walk,
 * and starts over if the VMAs changed in between (vma_seq). A fault of another
 * thread meanwhile may fill an entry the walk has passed, which the child then
 * does not get, as if the access had come after the fork. The share of a page
 * (its reference and its write protection) is made under its page-table lock,
 * which is where a copy-on-write fault decides whether it is the last user, so
 * the two never disagree about a page's users. Until the fork's shootdown, other
 * CPUs may still write a page it has write-protected through their old entries,
 * so a copy-on-write fault waits for the fork to end (mm->forking): a copy taken
 * meanwhile could miss such a write.
 *
 * The tables are walked with src's vma_lock held for reading, which keeps
 * preemption off: the child's page tables are allocated and its 2 MiB pages
 * copied under it, as a fault allocates under its VMA's lock.
 */
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/huge.h>
#include <grace/pagewalk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/tlb.h>
#include <grace/vma.h>
#include "address_space_internal.h"

/* The PTE table for va in dst, a new mm no CPU runs yet, made if missing. */
static pte_t *fork_pte_table(struct mm *mm, uintptr_t va, int *err)
{
	pte_t *pmd_table = pt_pmd_table(mm, va, err);
	if (!pmd_table)
		return NULL;
	pte_t *pmd = &pmd_table[pt_index(va, PT_LEVEL_PMD)];
	if (!pte_present(pt_entry_read(pmd))) {
		pte_t *table = pt_table_alloc();
		if (!table) {
			*err = -ENOMEM;
			return NULL;
		}
		pt_entry_write(pmd, pte_mk_table(virt_to_phys(table)));
	}
	return pt_table_of(pt_entry_read(pmd));
}

/* Share the 4 KiB page *e (in src's table) with dst at va, read-only on both sides. */
static int fork_share_page(struct mm *dst, struct mm *src, pte_t *table, pte_t *e, uintptr_t va,
			   struct tlb_gather *g)
{
	int err = 0;
	pte_t *dst_table = fork_pte_table(dst, va, &err);
	if (!dst_table)
		return err;
	spinlock_t *ptl = pt_lock(src, table);
	pte_t old = *e,
	      ro = pte_leaf_with_prot(old, pte_leaf_prot(old) & ~PROT_WRITE, PT_LEVEL_PTE);
	if (!pte_present(old)) {
		spin_unlock(ptl); /* unmapped since the walk read it */
		return 0;
	}
	if (ro != old)
		pt_entry_write(e, ro);
	atomic_inc(&phys_to_page(pte_phys(old))->refcount);
	spin_unlock(ptl);
	if (ro != old)
		tlb_gather_range(g, va, va + PAGE_SIZE);
	pt_entry_write(&dst_table[pt_index(va, PT_LEVEL_PTE)], ro);
	mm_rss_add(dst, PT_LEVEL_PTE, 1);
	return 0;
}

/* Give dst its own copy of the 2 MiB page *e maps at va. */
static int fork_copy_huge(struct mm *dst, pte_t e, uintptr_t va)
{
	int err = 0;
	pte_t *pmd_table = pt_pmd_table(dst, va, &err);
	if (!pmd_table)
		return err;
	void *block = huge_alloc(NUMA_NO_NODE);
	if (!block)
		return -ENOMEM;
	memcpy(block, phys_to_virt(pte_phys(e)), HUGE_SIZE);
	pt_entry_write(&pmd_table[pt_index(va, PT_LEVEL_PMD)],
		       pte_mk_leaf(virt_to_phys(block), pte_leaf_prot(e), PT_LEVEL_PMD));
	mm_rss_add(dst, PT_LEVEL_PMD, 1);
	return 0;
}

static int fork_copy_table(struct mm *dst, struct mm *src, pte_t *table, int level, uintptr_t start,
			   uintptr_t end, struct tlb_gather *g)
{
	u64 size = pt_level_size(level);
	for (uintptr_t va = start; va < end;) {
		uintptr_t next = ALIGN_DOWN(va, size) + size;
		if (next > end || next < va)
			next = end;
		pte_t *e = &table[pt_index(va, level)];
		pte_t entry = pt_entry_read(e);
		int err = 0;
		if (!pte_present(entry))
			err = 0;
		else if (!pte_is_leaf(entry))
			err = fork_copy_table(dst, src, pt_table_of(entry), level - 1, va, next, g);
		else if (level == PT_LEVEL_PTE)
			err = fork_share_page(dst, src, table, e, va, g);
		else if (level == PT_LEVEL_PMD)
			err = fork_copy_huge(dst, entry, ALIGN_DOWN(va, size));
		else
			err = -EFAULT; /* no fault makes a leaf above the PMD */
		if (err)
			return err;
		va = next;
	}
	return 0;
}

/*
 * dst, a new mm, gets src's VMAs, one at a time read under src's lock and
 * mapped with it dropped, so that nothing is allocated under it.
 */
static int fork_map_vmas(struct mm *dst, struct mm *src)
{
	for (unsigned i = 0;; i++) {
		struct vma v;
		read_lock(&src->vma_lock);
		struct vma *next = vma_next_locked(src, &i);
		if (next)
			v = *next;
		read_unlock(&src->vma_lock);
		if (!next)
			return 0;
		int err = vma_map(dst, v.start, v.end - v.start, v.prot, v.flags & ~VMA_ANON);
		if (err)
			return err;
	}
}

/* A new mm in src's modes. */
static struct mm *mm_create_like(struct mm *src)
{
	struct mm *mm = mm_create_modes(src->ptlock, src->vma_lookup);
	if (mm)
		mm_set_pt_free(mm, src->pt_free);
	return mm;
}

struct mm *mm_fork(struct mm *src, int *err)
{
	struct mm *dst = mm_create_like(src);
	if (!dst) {
		*err = -ENOMEM;
		return NULL;
	}
	struct tlb_gather g;
	tlb_gather_init(&g, src);
	/* Before any entry is write-protected: pairs with the barrier in fault_cow(). */
	atomic_inc(&src->forking);
	smp_mb();
	for (;;) {
		u32 seq = read_seqcount_begin(&src->vma_seq);
		*err = fork_map_vmas(dst, src);
		if (*err)
			break;
		read_lock(&src->vma_lock);
		if (read_seqcount_retry(&src->vma_seq, seq)) {
			/* A VMA changed since the snapshot: another thread mapped or unmapped. */
			read_unlock(&src->vma_lock);
			mm_destroy(dst);
			dst = mm_create_like(src);
			if (!dst) {
				*err = -ENOMEM;
				break;
			}
			continue;
		}
		struct vma *v;
		for (unsigned i = 0; !*err && (v = vma_next_locked(src, &i)); i++)
			*err = fork_copy_table(dst, src, src->root, PT_TOP_LEVEL, v->start, v->end,
					       &g);
		read_unlock(&src->vma_lock);
		break;
	}
	/* The write-protected entries of src: flushed from every CPU that runs it. */
	tlb_finish(&g);
	atomic_dec(&src->forking);
	if (*err) {
		if (dst)
			mm_destroy(dst);
		return NULL;
	}
	return dst;
}

int fault_cow(struct mm *mm, uintptr_t addr, unsigned prot)
{
	int err = 0;
	pte_t *pmd_table = pt_pmd_table(mm, addr, &err);
	if (!pmd_table)
		return err;
	pte_t pmd = pt_entry_read(&pmd_table[pt_index(addr, PT_LEVEL_PMD)]);
	if (!pte_present(pmd) || pte_is_leaf(pmd))
		return FAULT_COW_NONE; /* only 4 KiB pages are ever shared */
	pte_t *table = pt_table_of(pmd);
	pte_t *e = &table[pt_index(addr, PT_LEVEL_PTE)];
	pte_t pte = pt_entry_read(e);
	if (!pte_present(pte) || pte_allows(pte, PROT_WRITE))
		return FAULT_COW_NONE;
	struct page *page = phys_to_page(pte_phys(pte));
	/*
	 * A fork of this mm may have made the entry read-only and not yet flushed the
	 * CPUs that still write through the old one: wait for it (the access retries).
	 * Pairs with the barrier after mm_fork()'s count.
	 */
	smp_rmb();
	if (atomic_read(&mm->forking)) {
		cpu_relax();
		return FAULT_COW_DONE;
	}

	/*
	 * Copy before taking the lock: the page is read-only in every mm that maps it,
	 * so its bytes cannot change. The last user needs no copy; whether it is the
	 * last is read again under the lock, where a fork by another thread of this mm
	 * takes its reference.
	 */
	void *copy = NULL;
	if (atomic_read(&page->refcount) > 1) {
		copy = mm_alloc_pages(NUMA_NO_NODE, 0, ALLOC_NOZERO);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, phys_to_virt(pte_phys(pte)), PAGE_SIZE);
	}
	spinlock_t *ptl = pt_lock(mm, table);
	if (*e != pte) {
		/* Changed meanwhile (another thread's break): retry the access. */
		spin_unlock(ptl);
		if (copy)
			free_pages(copy, 0);
		return FAULT_COW_DONE;
	}
	if (!copy && atomic_read(&page->refcount) > 1) {
		spin_unlock(ptl); /* shared again by a fork meanwhile: retry, to copy */
		return FAULT_COW_DONE;
	}
	if (!copy) {
		pt_entry_write(e, pte_leaf_with_prot(pte, prot, PT_LEVEL_PTE));
		spin_unlock(ptl);
		arch_flush_tlb_page(addr); /* more rights: other CPUs' stale entries only fault */
		fault_stat_inc(cow_reused);
		return FAULT_COW_DONE;
	}
	pt_entry_write(e, pte_mk_leaf(virt_to_phys(copy), prot, PT_LEVEL_PTE));
	spin_unlock(ptl);
	struct tlb_gather g;
	tlb_gather_init(&g, mm);
	tlb_gather_leaf(&g, addr, pte,
			PT_LEVEL_PTE); /* the shared page's reference, after the flush */
	tlb_finish(&g);
	fault_stat_inc(cow_copied);
	return FAULT_COW_DONE;
}
