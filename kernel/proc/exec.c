/*
 * Starting a program: read a static ELF executable from the VFS, map it into a
 * new address space (fs/binfmt_elf.c), and build the initial stack a Linux
 * program expects, as the System V ABI and Linux's create_elf_tables() lay it
 * out, from the stack pointer up:
 *
 *	argc, argv[0..argc-1], NULL, envp[0..], NULL, auxv pairs ending in AT_NULL,
 *	padding, the 16 AT_RANDOM bytes, then the argument and environment strings
 *	and the file name (AT_EXECFN) up to the top of the stack.
 *
 * sp is 16-byte aligned at argc on both arches. The stack is a VMA of
 * EXEC_STACK_SIZE below STACK_TOP (4 KiB pages: Linux does not back a stack with
 * huge pages either); mmap() without a hint searches below it and a gap.
 *
 * Everything that can fail is done before the point of no return, into a new
 * mm that nothing runs in yet, each step in the order Linux takes it so that
 * the first error is Linux's: the file is opened and read (-ENOENT, -EACCES),
 * the argument area copied in (exec_args.c: -E2BIG, -EFAULT), the image
 * checked and mapped (fs/binfmt_elf.c: -ENOEXEC, -EINVAL), the trampoline
 * mapped and the stack's tables written (-ENOMEM anywhere). The point of no
 * return is proc_exec_alone(), Linux's de_thread(): it ends the other threads,
 * or fails before it has touched one (the process is exiting already: the
 * caller dies of that on its way out, as a Linux thread does with its fatal
 * signal pending). What follows switches the process over, and none of it can
 * fail, so an exec never returns an error to a process whose threads are gone.
 *
 * Linux maps the segments after its point of no return (begin_new_exec()), so a
 * segment its mmap() refuses (elf_check()'s -EINVAL: p_filesz over p_memsz, an
 * address outside the user half, p_vaddr and p_offset not congruent) kills the
 * process with SIGSEGV (bprm_execve()'s force_fatal_sig()). Such an image is
 * found here before the point, but goes past it all the same and ends the same
 * way, so a program sees Linux's behaviour. Deviation from Linux: a segment
 * that cannot be mapped for want of memory is -ENOMEM with every thread as it
 * was, where Linux kills the process.
 */
#include <grace/arch.h>
#include <grace/elf.h>
#include <grace/errno.h>
#include <grace/futex.h>
#include <grace/fs.h>
#include <grace/page_alloc.h>
#include <grace/process.h>
#include <grace/random.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/vma.h>
#include <grace/fault.h>
#include <grace/pagewalk.h>
#include <grace/signal.h>
#include <grace/uapi/auxvec.h>
#include "proc_internal.h"

#define AUXV_MAX 18 /* pairs, AT_NULL included */

/* USER_HZ, what times() counts in: 100 on every Linux arch. */
#define USER_HZ 100

/* The largest image read whole into the buffer elf_load() maps from: one buddy block. */
#define EXEC_IMAGE_MAX_ORDER 10

/*
 * Read path whole into a block of pages: *order set, the buffer or an error in
 * *err; *exe the file opened, a reference for /proc/self/exe (fs_set_exe()).
 */
static void *exec_read_image(const char *path, size_t *len, unsigned *order, struct file **exe,
			     int *err)
{
	struct stat st;
	int fd = vfs_open(path, O_RDONLY, 0);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	void *image = NULL;
	*err = vfs_fstat(fd, &st);
	if (*err)
		goto out;
	/* execve() needs a regular file with an execute bit (for root: any of the three). */
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
		*err = -EACCES;
		goto out;
	}
	*order = pages_order(st.st_size ? st.st_size : 1);
	if (*order > EXEC_IMAGE_MAX_ORDER) {
		*err = -ENOMEM;
		goto out;
	}
	image = alloc_pages(*order);
	if (!image) {
		*err = -ENOMEM;
		goto out;
	}
	long n = vfs_read(fd, image, st.st_size);
	if (n != st.st_size) {
		free_pages(image, *order);
		image = NULL;
		*err = n < 0 ? (int)n : -EIO;
		goto out;
	}
	*len = st.st_size;
	*exe = file_get(fd);
out:
	vfs_close(fd);
	return image;
}

/*
 * The rest of the initial stack, below the strings exec_args_copy() put at its
 * top: AT_RANDOM's bytes, then the vectors and the auxiliary vector at *sp.
 */
static int exec_build_stack(struct exec_args *a, const struct elf_info *info, uintptr_t *sp)
{
	u8 random[16];
	get_random_bytes(random, sizeof(random));
	uintptr_t at_random = ALIGN_DOWN(a->p - sizeof(random), 16);
	int err = exec_stack_write(a->mm, at_random, random, sizeof(random));
	if (err)
		return err;

	const unsigned long auxv[][2] = {
	    {AT_HWCAP, arch_elf_hwcap()},
	    {AT_PAGESZ, PAGE_SIZE},
	    {AT_CLKTCK, USER_HZ},
	    {AT_PHDR, info->phdr},
	    {AT_PHENT, info->phent},
	    {AT_PHNUM, info->phnum},
	    {AT_BASE, 0},
	    {AT_FLAGS, 0},
	    {AT_ENTRY, info->entry},
	    {AT_UID, 0},
	    {AT_EUID, 0},
	    {AT_GID, 0},
	    {AT_EGID, 0},
	    {AT_SECURE, 0},
	    {AT_RANDOM, at_random},
	    {AT_EXECFN, 0}, /* the file name's address, once the vectors are written */
	    {AT_NULL, 0},
	};
	BUILD_BUG_ON(ARRAY_SIZE(auxv) > AUXV_MAX);
	/* argc, argv and its NULL, envp and its NULL: exec_args_vectors() writes them. */
	size_t vec_words = 1 + a->argc + 1 + a->envc + 1;
	*sp = ALIGN_DOWN(at_random - (vec_words + 2 * ARRAY_SIZE(auxv)) * sizeof(long), 16);
	uintptr_t execfn;
	err = exec_args_vectors(a, *sp, &execfn);
	uintptr_t at = *sp + vec_words * sizeof(long);
	for (unsigned i = 0; i < ARRAY_SIZE(auxv) && !err; i++) {
		unsigned long pair[2] = {auxv[i][0], auxv[i][0] == AT_EXECFN ? execfn : auxv[i][1]};
		err = exec_stack_write(a->mm, at, pair, sizeof(pair));
		at += sizeof(pair);
	}
	return err;
}

/*
 * The sigreturn trampoline, one read-only executable page just below the stack's
 * VMA (in the gap mmap leaves), where a handler returns to on arches without
 * SA_RESTORER. Written through the direct map: the user cannot write it. Its
 * address, 0 where the arch needs none, or an error.
 */
static long exec_map_trampoline(struct mm *mm)
{
	uintptr_t va = STACK_TOP - EXEC_STACK_SIZE - PAGE_SIZE;
	pte_t pte;
	int level;

	if (!arch_sigreturn_code_len)
		return 0;
	int err = vma_map(mm, va, PAGE_SIZE, PROT_READ | PROT_EXEC, VMA_NOHUGE);
	if (!err)
		err = mm_fault(mm, va, FAULT_READ);
	if (!err && pt_lookup(mm, va, &pte, &level))
		err = -ENOMEM;
	if (err)
		return err;
	memcpy(phys_to_virt(pte_phys(pte)), arch_sigreturn_code, arch_sigreturn_code_len);
	return va;
}

/*
 * A failure past the point of no return, the other threads gone: the process
 * is killed with SIGSEGV, handled, blocked or ignored or not (a handler would
 * run in the old image, whose other threads are gone), as Linux's bprm_execve()
 * does with force_fatal_sig(). It is delivered on the way back to user mode.
 */
static void exec_fail_past_no_return(void)
{
	struct ksiginfo info = {.code = SI_KERNEL};
	signal_force_fatal(SIGSEGV, &info);
}

uintptr_t proc_sigreturn_trampoline(void)
{
	return current_process()->sigreturn_tramp;
}

int exec_load(struct process *p, const char *path, struct exec_vec argv, struct exec_vec envp,
	      uintptr_t *pc, uintptr_t *sp)
{
	struct exec_args args = {0};
	size_t len = 0;
	unsigned order = 0;
	struct elf_info info;
	int err;

	/* The file first, as Linux opens it before it looks at the arguments. */
	struct file *exe = NULL;
	void *image = exec_read_image(path, &len, &order, &exe, &err);
	if (!image)
		return err;
	struct mm *mm = mm_create();
	err = mm ? vma_map(mm, STACK_TOP - EXEC_STACK_SIZE, EXEC_STACK_SIZE, PROT_READ | PROT_WRITE,
			   VMA_NOHUGE)
		 : -ENOMEM;
	if (!err)
		err = exec_args_init(&args, mm, argv, envp);
	if (!err)
		err = exec_args_copy(&args, path, argv, envp);
	/* The image only now, as Linux reads it after the arguments: -E2BIG before -ENOEXEC. */
	bool past_no_return = false;
	if (!err) {
		err = elf_load(mm, image, len, &info);
		past_no_return = err == -EINVAL; /* a segment Linux's mmap() would refuse */
	}
	free_pages(image, order);
	long tramp = err ? 0 : exec_map_trampoline(mm);
	if (tramp < 0)
		err = (int)tramp;
	if (!err)
		err = exec_build_stack(&args, &info, sp);
	exec_args_free(&args);

	/*
	 * The point of no return: the other threads go. proc_exec_alone() fails only
	 * before it has touched one of them (the process is exiting already), and
	 * nothing after it can fail. An image Linux finds bad only past its own point
	 * goes past it too, and is the process's end.
	 */
	if (!err || past_no_return) {
		int alone = proc_exec_alone();
		if (alone)
			err = alone;
		else if (err)
			exec_fail_past_no_return();
	}
	if (err) {
		if (mm)
			mm_destroy(mm);
		if (exe)
			file_put(exe);
		return err;
	}

	/*
	 * The thread-id word clone() gave this thread names memory of the old program:
	 * forgotten, as Linux's exec does, after a last write and wake where another
	 * process still uses that memory (a vfork parent).
	 */
	struct thread *self = current_thread();
	if (self->clear_child_tid && p->mm_borrowed) {
		u32 __user *word = (u32 __user *)self->clear_child_tid;
		u32 zero = 0;
		if (!copy_to_user(word, &zero, sizeof(zero)))
			futex_wake(word, 1, FUTEX_BITSET_ANY);
	}
	self->clear_child_tid = 0;

	struct mm *old = p->mm;
	mm_switch(mm);
	/* A vfork child gives its parent's address space back; any other frees its old one. */
	if (p->mm_borrowed)
		proc_vfork_release(p);
	else if (old)
		mm_destroy(old);
	p->mm = mm;
	p->brk_start = p->brk = info.brk;
	p->sigreturn_tramp = tramp;
	signal_exec_reset(p);
	p->mmap_base = STACK_TOP - EXEC_STACK_SIZE - EXEC_STACK_GAP;
	const char *name = strrchr(path, '/');
	strlcpy(p->comm, name ? name + 1 : path, sizeof(p->comm));
	fs_set_exe(exe); /* where /proc/self/exe leads now */
	*pc = info.entry;
	return 0;
}
