/*
 * The ELF loader's address-space half: check a static ELF64 executable held in
 * a kernel buffer and map its PT_LOAD segments into an mm, as Linux's
 * load_elf_binary() does for a program without an interpreter.
 *
 * Each PT_LOAD becomes one private anonymous VMA over the pages it touches,
 * with the protection its p_flags ask for. The file bytes are copied in through
 * the kernel's direct map: each page is faulted in with a read access (so a
 * read-only or execute-only segment needs no temporary write permission), its
 * physical address read back from the page table, and the bytes written there,
 * whole file pages from the first page's start up to p_offset + p_filesz, as
 * mmap() of the file would show them. A faulted page starts zeroed, so the bss (p_memsz past
 * p_filesz) and the tail of the last file page are zero by construction: no file byte past p_filesz
 * is ever copied, which is Linux's padzero() without the need for it. Pages past the last file page
 * are left to demand-zero faults.
 *
 * Everything that can be wrong with the image is found by elf_check() before
 * the first VMA is made, so a load fails after mapping only for want of memory
 * or a clash with a VMA already there; it then unmaps what it made.
 *
 * Deviations from Linux: segments must come in ascending order and not share a
 * page (Linux maps them MAP_FIXED, a later one replacing an earlier one's
 * page); a segment past the end of the file is refused (Linux maps it and the
 * program gets SIGBUS); a segment with no permission and file bytes is refused
 * (Linux maps it PROT_NONE; a VMA of prot 0 here cannot be faulted in to be
 * filled). Each is -ENOEXEC. Takes no lock of its own: vma_map() and the fault
 * path take the mm's.
 */
#include <grace/elf.h>
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/pagewalk.h>
#include <grace/string.h>
#include <grace/vma.h>

/* The parts of one PT_LOAD elf_load needs, with the load bias applied. */
struct elf_seg {
	uintptr_t start, end; /* page-aligned span of the VMA */
	uintptr_t vaddr;      /* p_vaddr + bias */
	u64 offset, filesz;
	unsigned prot;
};

static void elf_phdr_read(const void *image, const struct elf64_hdr *eh, unsigned i,
			  struct elf64_phdr *ph)
{
	/* memcpy: e_phoff need not be aligned, and RISC-V may trap on unaligned loads. */
	memcpy(ph, (const u8 *)image + eh->e_phoff + (size_t)i * sizeof(*ph), sizeof(*ph));
}

static unsigned elf_prot(u32 p_flags)
{
	unsigned prot = 0;
	if (p_flags & PF_R)
		prot |= PROT_READ;
	if (p_flags & PF_W)
		prot |= PROT_WRITE;
	if (p_flags & PF_X)
		prot |= PROT_EXEC;
	return prot;
}

static bool is_power_of_2(u64 x)
{
	return x && !(x & (x - 1));
}

/*
 * The load bias of an ET_DYN image, as load_elf_binary() computes it without
 * randomization: ELF_ET_DYN_BASE aligned down to the largest power-of-two
 * p_align of the PT_LOADs (at least a page, maximum_alignment()), less the
 * first PT_LOAD's page.
 */
static uintptr_t elf_dyn_bias(const void *image, const struct elf64_hdr *eh)
{
	u64 align = PAGE_SIZE, first = 0;
	bool have_first = false;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		struct elf64_phdr ph;
		elf_phdr_read(image, eh, i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		if (!have_first) {
			first = ph.p_vaddr;
			have_first = true;
		}
		if (is_power_of_2(ph.p_align) && ph.p_align > align)
			align = ph.p_align;
	}
	uintptr_t base = ELF_ET_DYN_BASE & ~(uintptr_t)(align - 1);
	return ALIGN_DOWN(base - (uintptr_t)first, PAGE_SIZE);
}

/* The header checks of load_elf_binary(), elf_check_arch() and load_elf_phdrs(). */
static int elf_check_header(const struct elf64_hdr *eh, size_t len)
{
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return -ENOEXEC;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return -ENOEXEC;
	if (eh->e_machine != ELF_MACHINE)
		return -ENOEXEC;
	if (eh->e_phentsize != sizeof(struct elf64_phdr))
		return -ENOEXEC;
	size_t size = (size_t)eh->e_phnum * sizeof(struct elf64_phdr);
	if (size == 0 || size > ELF_PHDRS_MAX_BYTES)
		return -ENOEXEC;
	if (eh->e_phoff > len || len - eh->e_phoff < size)
		return -ENOEXEC; /* Linux: a short read of the table, then -ENOEXEC */
	return 0;
}

/* One PT_LOAD's checks; *seg filled. prev_end: where the previous segment's pages end. */
static int elf_check_load(const struct elf64_phdr *ph, uintptr_t bias, size_t len,
			  uintptr_t prev_end, struct elf_seg *seg)
{
	u64 file_end, vaddr, mem_end;

	/* load_elf_binary(): "set_brk can never work" is -EINVAL. */
	if (ph->p_filesz > ph->p_memsz)
		return -EINVAL;
	if (__builtin_add_overflow(ph->p_offset, ph->p_filesz, &file_end) || file_end > len)
		return -ENOEXEC;
	if (__builtin_add_overflow(ph->p_vaddr, (u64)bias, &vaddr) ||
	    __builtin_add_overflow(vaddr, ph->p_memsz, &mem_end))
		return -EINVAL;
	/* TASK_SIZE there, the mappable user half here (vma_map's own bounds). */
	if (vaddr < VMA_MIN_ADDR || mem_end > USER_VA_END)
		return -EINVAL;
	/* elf_map()'s mmap of a file offset that is not page aligned fails -EINVAL. */
	if (ph->p_filesz && !IS_ALIGNED(ph->p_vaddr - ph->p_offset, PAGE_SIZE))
		return -EINVAL;
	seg->start = ALIGN_DOWN((uintptr_t)vaddr, PAGE_SIZE);
	seg->end = ALIGN_UP((uintptr_t)mem_end, PAGE_SIZE);
	seg->vaddr = (uintptr_t)vaddr;
	seg->offset = ph->p_offset;
	seg->filesz = ph->p_filesz;
	seg->prot = elf_prot(ph->p_flags);
	if (ph->p_memsz && seg->start < prev_end)
		return -ENOEXEC;
	if (ph->p_filesz && !seg->prot)
		return -ENOEXEC;
	return 0;
}

/* The checks, and the load bias; walk() is called for each PT_LOAD with memory. */
static int elf_walk(const void *image, size_t len, uintptr_t *biasp,
		    int (*walk)(const struct elf_seg *seg, void *arg), void *arg)
{
	struct elf64_hdr eh;

	if (len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, image, sizeof(eh));
	int err = elf_check_header(&eh, len);
	if (err)
		return err;
	uintptr_t bias = eh.e_type == ET_DYN ? elf_dyn_bias(image, &eh) : 0;
	uintptr_t prev_end = 0;
	unsigned loads = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		struct elf64_phdr ph;
		struct elf_seg seg;
		elf_phdr_read(image, &eh, i, &ph);
		if (ph.p_type == PT_INTERP)
			return -ENOEXEC; /* dynamically linked: no interpreter is loaded */
		if (ph.p_type != PT_LOAD)
			continue;
		err = elf_check_load(&ph, bias, len, prev_end, &seg);
		if (err)
			return err;
		loads++;
		if (!ph.p_memsz)
			continue; /* elf_map() maps nothing for it either */
		prev_end = seg.end;
		if (walk && (err = walk(&seg, arg)))
			return err;
	}
	if (!loads)
		return -ENOEXEC;
	if (biasp)
		*biasp = bias;
	return 0;
}

int elf_check(const void *image, size_t len)
{
	return elf_walk(image, len, NULL, NULL, NULL);
}

/* Copy seg's file bytes into its pages, faulting each in. */
static int elf_fill(struct mm *mm, const struct elf_seg *seg, const u8 *image)
{
	/*
	 * From the start of the first page, as mmap() of the file maps whole pages:
	 * p_offset and p_vaddr are congruent, so the bytes before p_vaddr in its page
	 * are the file's bytes before p_offset (the ELF header and program headers,
	 * for a first segment at offset 0 that does not start on a page).
	 */
	uintptr_t va = seg->start, end = seg->vaddr + seg->filesz;
	const u8 *src = image + seg->offset - (seg->vaddr - seg->start);

	while (va < end) {
		size_t n = MIN(end, ALIGN_DOWN(va, PAGE_SIZE) + PAGE_SIZE) - va;
		pte_t pte;
		int level;
		int err = mm_fault(mm, va, FAULT_READ);
		if (err)
			return err;
		/* Nothing else runs in mm while it is being loaded, so the leaf stays. */
		if (pt_lookup(mm, va, &pte, &level))
			return -ENOMEM;
		phys_addr_t pa = pte_phys(pte) + (va & (pt_level_size(level) - 1));
		memcpy(phys_to_virt(pa), src, n);
		src += n;
		va += n;
	}
	return 0;
}

struct elf_load_ctx {
	struct mm *mm;
	const u8 *image;
	uintptr_t brk;
	unsigned mapped; /* segments mapped so far, in order */
};

static int elf_map_seg(const struct elf_seg *seg, void *arg)
{
	struct elf_load_ctx *c = arg;
	int err = vma_map(c->mm, seg->start, seg->end - seg->start, seg->prot, 0);
	if (err)
		return err;
	c->mapped++;
	if (seg->end > c->brk)
		c->brk = seg->end;
	return elf_fill(c->mm, seg, c->image);
}

struct elf_undo_ctx {
	struct mm *mm;
	unsigned left;
};

static int elf_unmap_seg(const struct elf_seg *seg, void *arg)
{
	struct elf_undo_ctx *u = arg;
	if (!u->left)
		return 1; /* stop: the rest was never mapped */
	u->left--;
	vma_unmap(u->mm, seg->start, seg->end - seg->start);
	return 0;
}

int elf_load(struct mm *mm, const void *image, size_t len, struct elf_info *info)
{
	struct elf_load_ctx c = {mm, image, 0, 0};
	struct elf64_hdr eh;
	uintptr_t bias;

	int err = elf_check(image, len);
	if (err)
		return err;
	err = elf_walk(image, len, &bias, elf_map_seg, &c);
	if (err) {
		/* The same walk again, unmapping the segments the first one mapped. */
		struct elf_undo_ctx u = {mm, c.mapped};
		elf_walk(image, len, NULL, elf_unmap_seg, &u);
		return err;
	}

	memcpy(&eh, image, sizeof(eh));
	info->load_bias = bias;
	info->entry = eh.e_entry + bias;
	info->phent = eh.e_phentsize;
	info->phnum = eh.e_phnum;
	info->brk = c.brk;
	/*
	 * AT_PHDR as Linux 5.18+ finds it: the PT_LOAD whose file bytes hold the
	 * table, else (not Linux, which gives 0 then) a PT_PHDR's address.
	 */
	info->phdr = 0;
	uintptr_t phdr_seg = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		struct elf64_phdr ph;
		elf_phdr_read(image, &eh, i, &ph);
		if (ph.p_type == PT_LOAD && ph.p_offset <= eh.e_phoff &&
		    eh.e_phoff < ph.p_offset + ph.p_filesz && !info->phdr)
			info->phdr = eh.e_phoff - ph.p_offset + ph.p_vaddr + bias;
		if (ph.p_type == PT_PHDR)
			phdr_seg = ph.p_vaddr + bias;
	}
	if (!info->phdr)
		info->phdr = phdr_seg;
	return 0;
}
