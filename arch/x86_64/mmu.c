/*
 * Kernel page tables for x86_64 (4-level paging).
 *
 * The boot tables (boot.S) map the first 4 GiB everywhere, MMIO holes included,
 * read/write/execute, and keep an identity map. mmu_init() replaces them with W^X
 * tables:
 *   - the kernel image at KERNEL_VMA + physical, section by section
 *     (linker/x86_64.ld): text read-only and executable, rodata read-only, data
 *     and bss read-write and not executable, with 4 KiB pages in the 2 MiB
 *     regions sections share and 2 MiB pages elsewhere; the page below the boot
 *     stack (boot_stack_guard) is left out as its guard page;
 *   - the direct map at PAGE_OFFSET: every RAM and ACPI range of the memory map,
 *     rounded out to 2 MiB, including RAM above 4 GiB, not executable;
 *   - the vmap area (kernel stacks, mm/vmap.c), whose PML4 entry is made here so
 *     that the kernel half of the PML4 never changes after boot and the copies in
 *     every address space (arch_mm_init_root) stay valid;
 *   - nothing at virtual 0, so a NULL dereference faults.
 * ioremap() and the ACPI table mapper add 2 MiB pages to the direct map on demand
 * (uncached for devices, never executable). Device memory beyond the direct map's
 * reach goes to the ioremap window instead (see ioremap_window()).
 *
 * The boot tables stay in use as the AP trampoline's page tables: their identity
 * map lets the trampoline turn paging on, and their kernel entries are pointed at
 * the tables built here. mmu_lock serialises changes after boot.
 */
#include <grace/boot_info.h>
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/kmap.h>
#include <grace/pgtable.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <asm/memory.h>
#include "processor.h"
#include "x86_64.h"

#define PML4_INDEX(va) (((va) >> 39) & 511)
#define PDPT_INDEX(va) (((va) >> 30) & 511)
#define PD_INDEX(va) (((va) >> 21) & 511)

/*
 * One page directory maps 1 GiB; the pool bounds the direct map at 64 GiB of
 * physical address space (256 KiB of tables), far above what QEMU runs get.
 */
#define PD_POOL_PAGES 64
#define DIRECT_MAP_MAX (PD_POOL_PAGES * GiB)

/*
 * The image's tables: a PDPT and a page directory for its GiB, plus a page table
 * for each 2 MiB region where two sections (or the boot stack's guard) meet,
 * about five for a kernel of a few MiB.
 */
#define IMAGE_POOL_PAGES 16

/*
 * The ioremap window: device memory above DIRECT_MAP_MAX. UEFI firmware puts 64-bit
 * PCI BARs near the top of the physical address space (OVMF under QEMU at 896 GiB
 * and up), past anything a direct map sized for RAM covers. The window has its own
 * PML4 entry, below the vmap area's, with 2 MiB pages handed out from its bottom and
 * never taken back (ioremap() has no inverse).
 */
#define IOREMAP_BASE 0xffffc88000000000UL
#define IOREMAP_SIZE (512 * GiB) /* one PML4 entry */
#define IOREMAP_MAX_RANGES 16	 /* mappings remembered, so a second ioremap() reuses one */

typedef u64 pt_page[PT_ENTRIES] __aligned(PAGE_SIZE);

static pt_page kernel_pml4, dm_pdpt, vmap_pdpt, io_pdpt;
static pt_page image_pool[IMAGE_POOL_PAGES];
static unsigned image_pool_used;
static pt_page pd_pool[PD_POOL_PAGES];
static unsigned pd_pool_used;
static u64 *dm_pd[PD_POOL_PAGES]; /* the page directory of each GiB, or NULL */
static DEFINE_SPINLOCK(mmu_lock); /* dm_pd[], pd_pool_used, direct-map and window entries */

/* The window's mappings, under mmu_lock: physical [pa, pa + len) at va, 2 MiB-aligned. */
struct io_range {
	phys_addr_t pa;
	u64 len;
	uintptr_t va;
};
static struct io_range io_ranges[IOREMAP_MAX_RANGES];
static unsigned nr_io_ranges;
static uintptr_t io_next = IOREMAP_BASE; /* the lowest window address not yet used */

u64 x86_kernel_cr3, x86_trampoline_cr3;

extern u64 boot_pml4[]; /* boot.S, identity-mapped physical address */
extern char _end[];

static u64 table_entry(const void *table)
{
	return virt_to_phys(table) | PTE_PRESENT | PTE_WRITE;
}

/* Boot only (one CPU): bss is zero, so the tables start empty. */
static pte_t *image_pt_alloc(void)
{
	if (image_pool_used == IMAGE_POOL_PAGES)
		return NULL;
	return image_pool[image_pool_used++];
}

/* Map the 2 MiB page at pa into the direct map; false when out of table space. */
static bool dm_map_large_locked(phys_addr_t pa, u64 flags)
{
	lockdep_assert_held(&mmu_lock);
	unsigned gib = pa >> 30;
	if (pa >= DIRECT_MAP_MAX)
		return false;
	if (!dm_pd[gib]) {
		if (pd_pool_used == PD_POOL_PAGES)
			return false;
		dm_pd[gib] = pd_pool[pd_pool_used++];
		dm_pdpt[gib] = table_entry(dm_pd[gib]);
	}
	u64 *pde = &dm_pd[gib][PD_INDEX(pa)];
	if (!(*pde & PTE_PRESENT))
		*pde = (pa & ~(LARGE_PAGE_SIZE - 1)) | flags | PTE_LARGE;
	else if ((*pde ^ flags) & (PTE_PCD | PTE_PWT))
		/* Changing a live mapping's attributes would need a TLB shootdown: keep them. */
		pr_warn("mmu: %llx is already mapped with other cache attributes; keeping them\n",
			(unsigned long long)pa);
	return true;
}

static bool dm_map_range_locked(phys_addr_t pa, u64 len, u64 flags)
{
	lockdep_assert_held(&mmu_lock);
	phys_addr_t start = ALIGN_DOWN(pa, LARGE_PAGE_SIZE);
	phys_addr_t end = ALIGN_UP(pa + len, LARGE_PAGE_SIZE);
	for (phys_addr_t p = start; p < end; p += LARGE_PAGE_SIZE)
		if (!dm_map_large_locked(p, flags))
			return false;
	return true;
}

#define DM_FLAGS_RAM (PTE_PRESENT | PTE_WRITE | PTE_GLOBAL | PTE_NX)
#define DM_FLAGS_DEVICE (DM_FLAGS_RAM | PTE_PCD | PTE_PWT)

void *mmu_map_phys(phys_addr_t pa, u64 len, bool uncached)
{
	if (len == 0 || pa + len < pa || pa + len > DIRECT_MAP_MAX)
		return NULL;
	unsigned long flags = spin_lock_irqsave(&mmu_lock);
	bool ok = dm_map_range_locked(pa, len, uncached ? DM_FLAGS_DEVICE : DM_FLAGS_RAM);
	spin_unlock_irqrestore(&mmu_lock, flags);
	/* Only not-present entries became present: no TLB holds them, nothing to flush. */
	return ok ? phys_to_virt(pa) : NULL;
}

/* Map the 2 MiB page at pa at window address va; false when out of page directories. */
static bool io_map_large_locked(uintptr_t va, phys_addr_t pa)
{
	lockdep_assert_held(&mmu_lock);
	u64 *pdpte = &io_pdpt[PDPT_INDEX(va)];
	if (!(*pdpte & PTE_PRESENT)) {
		if (pd_pool_used == PD_POOL_PAGES)
			return false;
		*pdpte = table_entry(pd_pool[pd_pool_used++]);
	}
	u64 *pd = phys_to_virt(*pdpte & PTE_ADDR_MASK);
	pd[PD_INDEX(va)] = pa | DM_FLAGS_DEVICE | PTE_LARGE;
	return true;
}

static void *ioremap_window(phys_addr_t pa, size_t size)
{
	void *va = NULL;
	unsigned long flags = spin_lock_irqsave(&mmu_lock);
	for (unsigned i = 0; i < nr_io_ranges && !va; i++) {
		const struct io_range *r = &io_ranges[i];
		if (r->pa <= pa && pa + size <= r->pa + r->len)
			va = (void *)(r->va + (pa - r->pa));
	}
	phys_addr_t start = ALIGN_DOWN(pa, LARGE_PAGE_SIZE);
	u64 len = ALIGN_UP(pa + size, LARGE_PAGE_SIZE) - start;
	if (!va && nr_io_ranges < IOREMAP_MAX_RANGES &&
	    len <= IOREMAP_BASE + IOREMAP_SIZE - io_next) {
		u64 done = 0;
		while (done < len && io_map_large_locked(io_next + done, start + done))
			done += LARGE_PAGE_SIZE;
		/* A partial mapping stays (unused); the window's next range starts past it. */
		if (done == len) {
			io_ranges[nr_io_ranges++] = (struct io_range){start, len, io_next};
			va = (void *)(io_next + (pa - start));
		}
		io_next += done;
	}
	spin_unlock_irqrestore(&mmu_lock, flags);
	/* Only not-present entries became present: no TLB holds them, nothing to flush. */
	if (!va)
		pr_err("mmu: no room in the ioremap window for %llx+%zx\n", (unsigned long long)pa,
		       size);
	return va;
}

void *ioremap(phys_addr_t pa, size_t size)
{
	if (size == 0 || pa + size < pa)
		return NULL;
	if (pa + size <= DIRECT_MAP_MAX)
		return mmu_map_phys(pa, size, true);
	return ioremap_window(pa, size);
}

pte_t *arch_kernel_root(void)
{
	return kernel_pml4;
}

void arch_mm_init_root(pte_t *root)
{
	/* The kernel half: PML4 entries 256-511 (addresses with bit 47 set). */
	for (unsigned i = PT_ENTRIES / 2; i < PT_ENTRIES; i++)
		root[i] = kernel_pml4[i];
}

void arch_switch_mm(phys_addr_t root)
{
	/* Loading CR3 also flushes every non-global translation: the old user half. */
	write_cr3(root ? root : x86_kernel_cr3);
}

void mmu_init(void)
{
	if (virt_to_phys(_end) > GiB)
		x86_fatal("mmu: the kernel image does not fit in its 1 GiB window");
	int err = kmap_image(kernel_pml4, image_pt_alloc);
	if (err) {
		pr_err("mmu: cannot map the kernel image: %s\n", errno_name(err));
		x86_fatal("mmu: cannot map the kernel image");
	}

	/*
	 * The direct map: RAM, and RAM-like ACPI areas, from boot_info and the reserved
	 * list. The boot CPU is alone, but the _locked helpers want the lock held.
	 */
	unsigned long flags = spin_lock_irqsave(&mmu_lock);
	for (unsigned i = 0; i < boot_info.nr_mem; i++) {
		struct mem_range *r = &boot_info.mem[i];
		if (r->base + r->size > DIRECT_MAP_MAX) {
			/* Unmapped RAM must not reach the page allocator: clip it. */
			u64 keep = r->base < DIRECT_MAP_MAX ? DIRECT_MAP_MAX - r->base : 0;
			pr_warn(
			    "mmu: RAM above %llu GiB is not mapped; dropping %llu MiB at %llx\n",
			    DIRECT_MAP_MAX / GiB, (unsigned long long)((r->size - keep) >> 20),
			    (unsigned long long)(r->base + keep));
			r->size = keep;
		}
		if (r->size && !dm_map_range_locked(r->base, r->size, DM_FLAGS_RAM))
			x86_fatal("mmu: out of page directories for the direct map");
	}
	for (unsigned i = 0; i < boot_info.nr_reserved; i++) {
		const struct mem_range *r = &boot_info.reserved[i];
		dm_map_range_locked(r->base, r->size, DM_FLAGS_RAM);
	}
	spin_unlock_irqrestore(&mmu_lock, flags);

	kernel_pml4[PML4_INDEX(PAGE_OFFSET)] = table_entry(dm_pdpt);
	kernel_pml4[PML4_INDEX(VMAP_BASE)] = table_entry(vmap_pdpt);
	kernel_pml4[PML4_INDEX(IOREMAP_BASE)] = table_entry(io_pdpt);
	x86_kernel_cr3 = virt_to_phys(kernel_pml4);
	write_cr3(x86_kernel_cr3);

	/*
	 * Now off the boot tables: point their kernel halves at the new tables and keep
	 * their identity map (entry 0) for the AP trampoline.
	 */
	u64 *boot = phys_to_virt((phys_addr_t)(uintptr_t)boot_pml4);
	for (unsigned i = PT_ENTRIES / 2; i < PT_ENTRIES; i++)
		boot[i] = kernel_pml4[i];
	x86_trampoline_cr3 = (uintptr_t)boot_pml4;
}

static bool mmu_addr_readable(uintptr_t va)
{
	const u64 *table = kernel_pml4;
	static const unsigned shifts[] = {39, 30, 21, 12};

	/* Non-canonical addresses would fault with #GP, not #PF. */
	if ((u64)((s64)(va << 16) >> 16) != va)
		return false;
	for (unsigned level = 0; level < 4; level++) {
		u64 e = table[(va >> shifts[level]) & 511];
		if (!(e & PTE_PRESENT))
			return false;
		if (level == 3 || (level > 0 && (e & PTE_LARGE)))
			return !(e & PTE_PCD); /* device memory: reading may have side effects */
		table = phys_to_virt(e & PTE_ADDR_MASK);
	}
	return false;
}

bool mmu_range_readable(uintptr_t va, size_t len)
{
	if (len == 0 || va + len < va)
		return false;
	/* Leaves are at least 4 KiB: checking each page the range touches is enough. */
	for (uintptr_t p = ALIGN_DOWN(va, PAGE_SIZE); p < va + len; p += PAGE_SIZE)
		if (!mmu_addr_readable(p))
			return false;
	return true;
}
