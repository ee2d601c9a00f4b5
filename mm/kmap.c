/*
 * The generic walker behind grace/kmap.h: map and unmap ranges in the kernel's
 * page tables with the arch's entry helpers. Used once per image section at boot
 * and for each kernel stack afterwards, so it favours plainness over speed: one
 * walk from the root per page.
 *
 * Tables are reached through the direct map (phys_to_virt of the entry), which
 * covers every table: boot's come from the image, which lies in RAM, and later
 * ones from the page allocator.
 */
#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/kmap.h>
#include <asm/memory.h>

static pte_t *table_at(pte_t e)
{
	return phys_to_virt(pte_phys(e));
}

/*
 * The entry of the level-`level` table that maps va, making the tables on the
 * way; NULL with *err set when a table cannot be made or a leaf is in the way.
 */
static pte_t *kmap_walk(pte_t *root, uintptr_t va, int level, bool allow_top, kmap_alloc_fn alloc,
			int *err)
{
	pte_t *table = root;
	for (int l = PT_TOP_LEVEL; l > level; l--) {
		pte_t *e = &table[pt_index(va, l)];
		pte_t v = READ_ONCE(*e);
		if (!pte_present(v)) {
			if (l == PT_TOP_LEVEL && !allow_top) {
				*err = -EINVAL; /* the arch did not reserve this part of the kernel
						   half */
				return NULL;
			}
			pte_t *t = alloc ? alloc() : NULL;
			if (!t) {
				*err = -ENOMEM;
				return NULL;
			}
			v = pte_mk_table(virt_to_phys(t));
			/*
			 * The zeroed table must be visible before a walker can reach it. Pairs
			 * with the walkers' dependent reads: the MMU's, and kmap_walk()'s own
			 * READ_ONCE() of the entry and then the table through it.
			 */
			smp_wmb();
			WRITE_ONCE(*e, v);
		} else if (pte_is_leaf(v)) {
			*err = -EEXIST; /* a large page already maps this: no splitting */
			return NULL;
		}
		table = table_at(v);
	}
	return &table[pt_index(va, level)];
}

int kmap_range(pte_t *root, uintptr_t va, phys_addr_t pa, u64 size, unsigned prot, bool large,
	       bool allow_top, kmap_alloc_fn alloc)
{
	const u64 huge = pt_level_size(PT_LEVEL_PMD);
	if (!IS_ALIGNED(va, PAGE_SIZE) || !IS_ALIGNED(pa, PAGE_SIZE) ||
	    !IS_ALIGNED(size, PAGE_SIZE) || va + size < va)
		return -EINVAL;
	for (u64 off = 0; off < size;) {
		uintptr_t v = va + off;
		phys_addr_t p = pa + off;
		int level = PT_LEVEL_PTE;
		if (large && IS_ALIGNED(v, huge) && IS_ALIGNED(p, huge) && size - off >= huge)
			level = PT_LEVEL_PMD;
		int err = 0;
		pte_t *e = kmap_walk(root, v, level, allow_top, alloc, &err);
		if (!e)
			return err;
		if (pte_present(READ_ONCE(*e)))
			return -EEXIST;
		WRITE_ONCE(*e, pte_mk_leaf(p, prot, level));
		off += pt_level_size(level);
	}
	return 0;
}

pte_t kmap_lookup(const pte_t *root, uintptr_t va, int *level)
{
	const pte_t *table = root;
	for (int l = PT_TOP_LEVEL; l >= PT_LEVEL_PTE; l--) {
		pte_t e = READ_ONCE(table[pt_index(va, l)]);
		if (!pte_present(e))
			return 0;
		if (pte_is_leaf(e)) {
			if (level)
				*level = l;
			return e;
		}
		if (l == PT_LEVEL_PTE)
			return 0; /* a table pointer at the last level: not something we made */
		table = table_at(e);
	}
	return 0;
}

pte_t kmap_unmap_page(pte_t *root, uintptr_t va)
{
	pte_t *table = root;
	for (int l = PT_TOP_LEVEL; l > PT_LEVEL_PTE; l--) {
		pte_t e = READ_ONCE(table[pt_index(va, l)]);
		if (!pte_present(e) || pte_is_leaf(e))
			return 0; /* nothing mapped with 4 KiB here */
		table = table_at(e);
	}
	pte_t *e = &table[pt_index(va, PT_LEVEL_PTE)];
	pte_t old = READ_ONCE(*e);
	WRITE_ONCE(*e, 0);
	return old;
}

extern char _text[], __start_rodata[], __end_rodata[], _end[];
extern char boot_stack_guard[];

/* [from, to) of the image with prot; 2 MiB pages where a whole aligned 2 MiB allows. */
static int kmap_image_range(pte_t *root, const char *from, const char *to, unsigned prot,
			    kmap_alloc_fn alloc)
{
	if (to <= from)
		return 0;
	return kmap_range(root, (uintptr_t)from, virt_to_phys(from), (u64)(to - from), prot, true,
			  true, alloc);
}

int kmap_image(pte_t *root, kmap_alloc_fn alloc)
{
	int err = kmap_image_range(root, _text, __start_rodata, PROT_READ | PROT_EXEC, alloc);
	if (!err)
		err = kmap_image_range(root, __start_rodata, __end_rodata, PROT_READ, alloc);
	if (!err)
		err = kmap_image_range(root, __end_rodata, boot_stack_guard, PROT_READ | PROT_WRITE,
				       alloc);
	if (!err)
		err = kmap_image_range(root, boot_stack_guard + PAGE_SIZE, _end,
				       PROT_READ | PROT_WRITE, alloc);
	return err;
}
