/*
 * Kernel page tables (Sv39; why Sv39 is in asm/memory.h).
 *
 * head.S starts on boot_pgd: the image at KERNEL_VIRT_BASE in read/write/execute
 * 2 MiB pages, plus gigapages over the GiBs holding the image and the DTB.
 * mmu_init() then builds kernel_pgd, which every hart uses, with W^X:
 *   - the image, section by section (linker/riscv64.ld): text read-only and
 *     executable, rodata read-only, data and bss read-write, each with 4 KiB
 *     pages in the 2 MiB regions sections share and 2 MiB pages elsewhere; the
 *     page below the boot stack is left out as its guard page;
 *   - the direct map of exactly the RAM the device tree describes (1 GiB leaves
 *     where a whole aligned GiB is RAM, 2 MiB leaves at the edges), read-write,
 *     never executable;
 *   - the ioremap window (device registers, never executable) and the vmap area
 *     (kernel stacks, mm/vmap.c), each with its root entry made here, so that the
 *     kernel half of the root never changes after boot and the copies in every
 *     address space (arch_mm_init_root) stay valid.
 * Page-table pages come from a small static pool, because this runs before the
 * page allocator exists (and the allocator hands out direct-map addresses).
 */
#include <grace/boot_info.h>
#include <grace/cpumask.h>
#include <grace/errno.h>
#include <grace/kmap.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <asm/csr.h>
#include <asm/memory.h>
#include "kernel_pgtable.h"
#include "sbi.h"

/*
 * Page-table pages for the direct map's partial GiBs (at most two per RAM range),
 * the ioremap window's 4 KiB mappings (one per 2 MiB of small mappings) and the
 * image (one level-1 table, plus a 4 KiB table for each 2 MiB region where two
 * sections meet: about five). A QEMU virt machine uses about 10; a board with
 * many RAM ranges a few more.
 */
#define PT_POOL_PAGES 32

#define PGD_INDEX(va) (((va) >> PGD_SHIFT) & (PTES_PER_TABLE - 1))
#define PMD_INDEX(va) (((va) >> PMD_SHIFT) & (PTES_PER_TABLE - 1))
#define PTE_INDEX(va) (((va) >> PAGE_SHIFT) & (PTES_PER_TABLE - 1))

pte_t boot_pgd[PTES_PER_TABLE] __aligned(PAGE_SIZE);
pte_t boot_kernel_pmd[PTES_PER_TABLE] __aligned(PAGE_SIZE);
static pte_t kernel_pgd[PTES_PER_TABLE] __aligned(PAGE_SIZE);
static pte_t ioremap_pmd[PTES_PER_TABLE] __aligned(PAGE_SIZE);
static pte_t vmap_pmd[PTES_PER_TABLE] __aligned(PAGE_SIZE);
static pte_t pt_pool[PT_POOL_PAGES][PTES_PER_TABLE] __aligned(PAGE_SIZE);

static DEFINE_SPINLOCK(mmu_lock); /* protects pt_pool_used, ioremap_next, the tables */
static unsigned pt_pool_used;
static uintptr_t ioremap_next = IOREMAP_BASE;

/* Every table lives in the image, so its virtual address follows from the image offset. */
static pte_t *table_of(pte_t pte)
{
	return (pte_t *)(uintptr_t)(pte_phys(pte) + kernel_va_pa_offset);
}

static pte_t *pt_alloc_locked(void)
{
	lockdep_assert_held(&mmu_lock);
	if (pt_pool_used == PT_POOL_PAGES)
		return NULL;
	return pt_pool[pt_pool_used++]; /* bss: already zero */
}

/* The level-1 table under root entry e, made if absent; NULL if the pool is empty. */
static pte_t *pmd_get_locked(pte_t *e)
{
	lockdep_assert_held(&mmu_lock);
	if (!(*e & PTE_V)) {
		pte_t *t = pt_alloc_locked();
		if (!t)
			return NULL;
		*e = pte_make(virt_to_phys(t), PTE_TABLE);
	}
	return table_of(*e);
}

/* Map physical [pa, pa + size), rounded out to 2 MiB, at PAGE_OFFSET + pa. mmu_lock held. */
static int direct_map_range(phys_addr_t pa, u64 size)
{
	lockdep_assert_held(&mmu_lock);
	phys_addr_t p = ALIGN_DOWN(pa, PMD_SIZE), end = ALIGN_UP(pa + size, PMD_SIZE);
	if (end > DIRECT_MAP_SIZE || end < p)
		return -ERANGE;
	while (p < end) {
		pte_t *e = &kernel_pgd[PGD_INDEX(PAGE_OFFSET + p)];
		if (IS_ALIGNED(p, PGD_SIZE) && end - p >= PGD_SIZE && !(*e & PTE_V)) {
			*e = pte_make(p, PTE_KERNEL_DATA);
			p += PGD_SIZE;
			continue;
		}
		if ((*e & PTE_V) && pte_is_leaf(*e)) { /* this GiB is mapped whole already */
			p = ALIGN_DOWN(p, PGD_SIZE) + PGD_SIZE;
			continue;
		}
		pte_t *pmd = pmd_get_locked(e);
		if (!pmd)
			return -ENOMEM;
		pmd[PMD_INDEX(PAGE_OFFSET + p)] = pte_make(p, PTE_KERNEL_DATA);
		p += PMD_SIZE;
	}
	return 0;
}

u64 mmu_kernel_satp(void)
{
	return SATP_MODE_SV39 | virt_to_phys(kernel_pgd) >> PAGE_SHIFT;
}

pte_t *arch_kernel_root(void)
{
	return kernel_pgd;
}

void arch_mm_init_root(pte_t *root)
{
	/* The kernel half: root entries for USER_VA_END's sign-extended mirror and up. */
	for (unsigned i = PTES_PER_TABLE / 2; i < PTES_PER_TABLE; i++)
		root[i] = kernel_pgd[i];
}

void arch_switch_mm(phys_addr_t root)
{
	u64 satp = root ? SATP_MODE_SV39 | root >> PAGE_SHIFT : mmu_kernel_satp();
	/* No ASIDs: every switch drops the old user translations. */
	csr_write(satp, satp);
	local_flush_tlb_all();
}

int mmu_init(phys_addr_t dtb_pa, u32 dtb_size)
{
	/*
	 * Runs on the boot hart alone, before any other user of the lock; takes it for
	 * the _locked helpers all the same, which the validator holds to their name.
	 */
	unsigned long flags = spin_lock_irqsave(&mmu_lock);
	kernel_pgd[PGD_INDEX(IOREMAP_BASE)] = pte_make(virt_to_phys(ioremap_pmd), PTE_TABLE);
	kernel_pgd[PGD_INDEX(VMAP_BASE)] = pte_make(virt_to_phys(vmap_pmd), PTE_TABLE);
	int err = kmap_image(kernel_pgd, pt_alloc_locked);
	if (err) {
		pr_err("mm: cannot map the kernel image: %s\n", errno_name(err));
		goto out;
	}

	for (unsigned i = 0; i < boot_info.nr_mem;) {
		struct mem_range *r = &boot_info.mem[i];
		/*
		 * The direct map's finest leaf is 2 MiB: only whole 2 MiB blocks of RAM are
		 * used, so that a block's other bytes (a no-map region, a hole) stay unmapped.
		 */
		phys_addr_t lo = ALIGN_UP(r->base, PMD_SIZE);
		phys_addr_t hi = ALIGN_DOWN(r->base + r->size, PMD_SIZE);
		if (lo != r->base || hi != r->base + r->size)
			pr_warn(
			    "mm: RAM [%llx, %llx) used from %llx to %llx, in whole 2 MiB blocks\n",
			    (unsigned long long)r->base, (unsigned long long)(r->base + r->size),
			    (unsigned long long)lo, (unsigned long long)MAX(lo, hi));
		if (hi <= lo) {
			boot_info.mem[i] = boot_info.mem[--boot_info.nr_mem];
			continue;
		}
		r->base = lo;
		r->size = hi - lo;
		err = direct_map_range(r->base, r->size);
		if (!err) {
			i++;
			continue;
		}
		/* Memory we cannot map must not reach the page allocator. */
		pr_err("mm: cannot map RAM [%llx, +%llx) (%s), not using it\n",
		       (unsigned long long)r->base, (unsigned long long)r->size, errno_name(err));
		boot_info.mem[i] = boot_info.mem[--boot_info.nr_mem];
	}
	/* The DTB is normally in RAM, hence mapped already; a loader may have put it elsewhere. */
	err = direct_map_range(dtb_pa, dtb_size);
	if (err)
		goto out;

	csr_write(satp, mmu_kernel_satp());
	local_flush_tlb_all();
out:
	spin_unlock_irqrestore(&mmu_lock, flags);
	return err;
}

void *ioremap(phys_addr_t pa, size_t size)
{
	phys_addr_t start = ALIGN_DOWN(pa, PAGE_SIZE), end = ALIGN_UP(pa + size, PAGE_SIZE);
	if (size == 0 || end <= start)
		return NULL;
	u64 len = end - start;

	unsigned long flags = spin_lock_irqsave(&mmu_lock);
	/* Large regions (a PLIC spans megabytes) get 2 MiB pages: keep va and pa congruent. */
	uintptr_t va = ioremap_next;
	if (len >= PMD_SIZE)
		va = ALIGN_UP(va, PMD_SIZE) + (start & (PMD_SIZE - 1));
	if (va + len > IOREMAP_BASE + IOREMAP_SIZE || va + len < va) {
		spin_unlock_irqrestore(&mmu_lock, flags);
		pr_err("ioremap: window full, cannot map %llx +%zx\n", (unsigned long long)pa,
		       size);
		return NULL;
	}
	for (u64 off = 0; off < len;) {
		uintptr_t v = va + off;
		phys_addr_t p = start + off;
		pte_t *e = &ioremap_pmd[PMD_INDEX(v)];
		if (IS_ALIGNED(p, PMD_SIZE) && len - off >= PMD_SIZE && !(*e & PTE_V)) {
			*e = pte_make(p, PTE_KERNEL_DATA);
			off += PMD_SIZE;
			continue;
		}
		/* Window addresses are never reused, so *e is empty or a table here. */
		pte_t *pt = pmd_get_locked(e);
		if (!pt) {
			spin_unlock_irqrestore(&mmu_lock, flags);
			pr_err("ioremap: out of page-table pages mapping %llx\n",
			       (unsigned long long)pa);
			return NULL;
		}
		pt[PTE_INDEX(v)] = pte_make(p, PTE_KERNEL_DATA);
		off += PAGE_SIZE;
	}
	ioremap_next = va + len;
	spin_unlock_irqrestore(&mmu_lock, flags);

	/* Harts may cache that these addresses were unmapped; tell them all if others run. */
	local_flush_tlb_all();
	if (num_online_cpus() > 1)
		sbi_remote_sfence_vma_all();
	return (void *)(va + (uintptr_t)(pa - start));
}

/*
 * Walks the tables this hart is using (the kernel half is the same in all), so
 * it also works on boot_pgd before mmu_init() and on an mm's tables.
 */
bool mmu_kernel_range_ok(uintptr_t va, size_t len)
{
	uintptr_t end = va + len;
	if (end < va || va < PAGE_OFFSET)
		return false;
	/* Device registers: reading them may have side effects. */
	if (va < IOREMAP_BASE + IOREMAP_SIZE && end > IOREMAP_BASE)
		return false;
	const pte_t *root = phys_to_virt((csr_read(satp) & ((1ULL << 44) - 1)) << PAGE_SHIFT);
	for (uintptr_t p = ALIGN_DOWN(va, PAGE_SIZE); p < end; p += PAGE_SIZE)
		if (!kmap_lookup(root, p, NULL))
			return false;
	return true;
}
