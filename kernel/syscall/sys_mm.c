/*
 * The memory calls of the user ABI over the VMA layer (grace/vma.h): anonymous
 * mmap, munmap, mprotect, brk and madvise (MADV_DONTNEED, MADV_HUGEPAGE,
 * MADV_NOHUGEPAGE). Every mapping is anonymous and private to the process (its
 * threads share it by sharing the mm), so MAP_SHARED and MAP_PRIVATE map alike. A file mapping is
 * -ENODEV, as Linux answers for a file that cannot be mapped.
 */
#include <grace/errno.h>
#include <grace/process.h>
#include <grace/vma.h>
#include <grace/uapi/mman.h>
#include <asm/memory.h>
#include "syscall_internal.h"

#define MAP_FAILED_TRIES 8 /* a gap taken by another thread between search and map */

static unsigned user_prot(unsigned long prot)
{
	return prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
}

SYSCALL_DEFINE6(mmap, unsigned long, addr, unsigned long, len_in, unsigned long, prot,
		unsigned long, flags, int, fd, unsigned long, off)
{
	size_t len = ALIGN_UP(len_in, PAGE_SIZE);
	struct process *p = current_process();

	if (!len_in)
		return -EINVAL;
	if (len < len_in || len > USER_VA_END)
		return -ENOMEM; /* as Linux: more than the user half can hold */
	if ((flags & MAP_TYPE) != MAP_SHARED && (flags & MAP_TYPE) != MAP_PRIVATE &&
	    (flags & MAP_TYPE) != MAP_SHARED_VALIDATE)
		return -EINVAL;
	if (prot & ~(unsigned long)(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	if (!(flags & MAP_ANONYMOUS))
		return fd < 0 ? -EBADF : -ENODEV;
	if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && !IS_ALIGNED(addr, PAGE_SIZE))
		return -EINVAL;

	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (flags & MAP_FIXED_NOREPLACE && !(flags & MAP_FIXED)) {
			int err = vma_map(p->mm, addr, len, user_prot(prot), 0);
			return err ? err : (long)addr;
		}
		/* MAP_FIXED replaces whatever was there, in one step. */
		int err = vma_map_replace(p->mm, addr, len, user_prot(prot), 0);
		return err ? err : (long)addr;
	}
	/* A hint is taken if the range is free, as Linux does; else the highest gap below the base.
	 */
	if (addr && IS_ALIGNED(addr, PAGE_SIZE) && !vma_map(p->mm, addr, len, user_prot(prot), 0))
		return addr;
	for (int tries = 0; tries < MAP_FAILED_TRIES; tries++) {
		uintptr_t start = vma_find_gap(p->mm, len, p->mmap_base);
		if (!start)
			return -ENOMEM;
		int err = vma_map(p->mm, start, len, user_prot(prot), 0);
		if (err != -EEXIST)
			return err ? err : (long)start;
	}
	return -ENOMEM;
}

SYSCALL_DEFINE2(munmap, unsigned long, start, size_t, len)
{
	uintptr_t end;
	if (!IS_ALIGNED(start, PAGE_SIZE) || !len || start > USER_VA_END ||
	    len > USER_VA_END - start)
		return -EINVAL;
	end = ALIGN_UP(start + len, PAGE_SIZE);
	/* Nothing is ever mapped below VMA_MIN_ADDR: unmapping there is unmapping a hole. */
	start = MAX(start, (uintptr_t)VMA_MIN_ADDR);
	return start < end ? vma_unmap(current_process()->mm, start, end - start) : 0;
}

SYSCALL_DEFINE3(mprotect, unsigned long, start, size_t, len_in, unsigned long, prot)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) ||
	    (prot & ~(unsigned long)(PROT_READ | PROT_WRITE | PROT_EXEC)))
		return -EINVAL;
	if (!len_in)
		return 0;
	size_t len = ALIGN_UP(len_in, PAGE_SIZE);
	/* A range that wraps, leaves the user half or starts where nothing maps: no VMA there. */
	if (len < len_in || start + len < start || start + len > USER_VA_END ||
	    start < VMA_MIN_ADDR)
		return -ENOMEM;
	return vma_protect(current_process()->mm, start, len, user_prot(prot));
}

SYSCALL_DEFINE3(madvise, unsigned long, start, size_t, len_in, int, behavior)
{
	struct mm *mm = current_process()->mm;
	uintptr_t end = ALIGN_UP(start + len_in, PAGE_SIZE);

	if (!IS_ALIGNED(start, PAGE_SIZE) || end < start)
		return -EINVAL;
	if (behavior == MADV_HUGEPAGE || behavior == MADV_NOHUGEPAGE)
		return start < end
			   ? vma_set_nohuge(mm, start, end - start, behavior == MADV_NOHUGEPAGE)
			   : 0;
	if (behavior != MADV_DONTNEED)
		return 0; /* advice the kernel may ignore */
	if (start == end)
		return 0;
	/*
	 * Drop the pages, keep the mappings, so that the next touch faults in zeros
	 * and no other thread's mmap can take the range meanwhile. Addresses where no
	 * VMA may lie are a hole: -ENOMEM, as Linux says for one, after the VMAs in
	 * the rest of the range lost their pages.
	 */
	uintptr_t lo = MAX(start, VMA_MIN_ADDR), hi = MIN(end, USER_VA_END);
	if (lo >= hi)
		return -ENOMEM;
	int err = vma_discard(mm, lo, hi - lo);
	return err ? err : lo != start || hi != end ? -ENOMEM : 0;
}

/* The break moved to want, or where it stays for anything Linux would not do. brk_lock held. */
static uintptr_t brk_move_locked(struct process *p, uintptr_t want)
{
	uintptr_t old_end = ALIGN_UP(p->brk, PAGE_SIZE);
	if (want < p->brk_start)
		return p->brk;
	uintptr_t new_end = ALIGN_UP(want, PAGE_SIZE);
	if (new_end > old_end) {
		if (new_end > p->mmap_base ||
		    vma_map(p->mm, old_end, new_end - old_end, PROT_READ | PROT_WRITE, 0))
			return p->brk;
	} else if (new_end < old_end) {
		vma_unmap(p->mm, new_end, old_end - new_end);
	}
	p->brk = want;
	return want;
}

SYSCALL_DEFINE1(brk, unsigned long, want)
{
	struct process *p = current_process();
	mutex_lock(&p->brk_lock); /* threads of one process move one break */
	uintptr_t brk = brk_move_locked(p, want);
	mutex_unlock(&p->brk_lock);
	return brk;
}
