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
 * The calling thread is the program's: it switches to the new mm to write the
 * stack through copy_to_user, like any other user memory. Nothing of the old
 * state is touched until the image is known to be good and loaded.
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
 * *err; *exe the file's absolute path (kmalloc'd; NULL if it has none or no memory).
 */
static void *exec_read_image(const char *path, size_t *len, unsigned *order, char **exe, int *err)
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
	*exe = kmalloc(PATH_MAX);
	if (*exe && vfs_fd_path(fd, *exe, PATH_MAX) < 0) {
		kfree(*exe);
		*exe = NULL;
	}
out:
	vfs_close(fd);
	return image;
}

static size_t strings_size(char *const v[], unsigned *count)
{
	size_t bytes = 0;
	unsigned n = 0;
	for (; v && v[n]; n++)
		bytes += strlen(v[n]) + 1;
	*count = n;
	return bytes;
}

/* Copy the strings of v down from *top, their user addresses into out[]. */
static int push_strings(uintptr_t *top, char *const v[], unsigned n, uintptr_t *out)
{
	for (unsigned i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;
		*top -= len;
		if (copy_to_user((void __user *)*top, v[i], len))
			return -EFAULT;
		out[i] = *top;
	}
	return 0;
}

/* The initial stack, written into the current mm; *sp its final value. */
static int exec_build_stack(const struct elf_info *info, const char *path, char *const argv[],
			    char *const envp[], uintptr_t *sp)
{
	unsigned argc, envc;
	size_t bytes = strings_size(argv, &argc) + strings_size(envp, &envc) + strlen(path) + 1;
	if (bytes > EXEC_ARGS_MAX)
		return -E2BIG;
	size_t words = 1 + argc + 1 + envc + 1 + 2 * AUXV_MAX;
	unsigned long *vec = kmalloc(words * sizeof(*vec));
	uintptr_t *addrs = kmalloc((argc + envc + 1) * sizeof(*addrs));
	int err = -ENOMEM;
	if (!vec || !addrs)
		goto out;

	uintptr_t top = STACK_TOP;
	if ((err = push_strings(&top, (char *const[]){(char *)path}, 1, &addrs[argc + envc])) ||
	    (err = push_strings(&top, envp, envc, addrs + argc)) ||
	    (err = push_strings(&top, argv, argc, addrs)))
		goto out;
	u8 random[16];
	get_random_bytes(random, sizeof(random));
	top = ALIGN_DOWN(top - sizeof(random), 16);
	uintptr_t at_random = top;
	if (copy_to_user((void __user *)top, random, sizeof(random))) {
		err = -EFAULT;
		goto out;
	}

	size_t w = 0;
	vec[w++] = argc;
	for (unsigned i = 0; i < argc; i++)
		vec[w++] = addrs[i];
	vec[w++] = 0;
	for (unsigned i = 0; i < envc; i++)
		vec[w++] = addrs[argc + i];
	vec[w++] = 0;
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
	    {AT_EXECFN, addrs[argc + envc]},
	    {AT_NULL, 0},
	};
	BUILD_BUG_ON(ARRAY_SIZE(auxv) > AUXV_MAX);
	for (unsigned i = 0; i < ARRAY_SIZE(auxv); i++) {
		vec[w++] = auxv[i][0];
		vec[w++] = auxv[i][1];
	}
	top = ALIGN_DOWN(top - w * sizeof(*vec), 16);
	err = copy_to_user((void __user *)top, vec, w * sizeof(*vec)) ? -EFAULT : 0;
	*sp = top;
out:
	kfree(vec);
	kfree(addrs);
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

uintptr_t proc_sigreturn_trampoline(void)
{
	return current_process()->sigreturn_tramp;
}

int exec_load(struct process *p, const char *path, char *const argv[], char *const envp[],
	      uintptr_t *pc, uintptr_t *sp)
{
	size_t len = 0;
	unsigned order = 0;
	struct elf_info info;
	int err;

	char *exe = NULL;
	void *image = exec_read_image(path, &len, &order, &exe, &err);
	if (!image)
		return err;
	err = elf_check(image, len);
	struct mm *mm = err ? NULL : mm_create();
	if (!err && !mm)
		err = -ENOMEM;
	if (!err)
		err = elf_load(mm, image, len, &info);
	free_pages(image, order);
	if (!err)
		err = vma_map(mm, STACK_TOP - EXEC_STACK_SIZE, EXEC_STACK_SIZE,
			      PROT_READ | PROT_WRITE, VMA_NOHUGE);
	long tramp = err ? 0 : exec_map_trampoline(mm);
	if (tramp < 0)
		err = (int)tramp;
	/* The program is good: from here the other threads go, as on Linux. */
	if (!err)
		err = proc_exec_alone();
	if (err) {
		if (mm)
			mm_destroy(mm);
		kfree(exe);
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
	err = exec_build_stack(&info, path, argv, envp, sp);
	if (err) {
		mm_switch(old);
		mm_destroy(mm);
		kfree(exe);
		return err;
	}
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
	fs_set_exe(exe); /* what /proc/self/exe names now */
	*pc = info.entry;
	return 0;
}
