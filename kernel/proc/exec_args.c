/*
 * exec's argument area: the strings of argv and envp and the file name, copied
 * into the top of the new program's stack before anything of the calling
 * process is changed, under Linux's rules (fs/exec.c: count(),
 * bprm_stack_limits(), copy_strings()), so a program that sizes a command line
 * from sysconf(_SC_ARG_MAX) gets what it asked for:
 *
 *  - each vector is counted first, up to its NULL: a pointer that cannot be
 *    read is -EFAULT, more than MAX_ARG_STRINGS of them -E2BIG;
 *  - the area is EXEC_ARGS_MAX bytes (a quarter of the stack limit), less a
 *    pointer for each string of argv (at least one: an empty argv gets "") and
 *    envp, which the program's vectors will take; none left is -E2BIG;
 *  - the file name, then envp, then argv are copied in, each vector last
 *    string first, down from a word below the stack's top, so that from the
 *    lowest byte up they read argv[0], ..., envp[0], ..., the file name. A
 *    string longer than MAX_ARG_STRLEN with its NUL, or one that does not fit
 *    above the area's floor, is -E2BIG; one that cannot be read -EFAULT.
 *
 * The new mm is nobody's yet: nothing runs in it, so its pages are written
 * through the kernel's direct map, each faulted in first, as fs/binfmt_elf.c
 * fills a segment; a user string passes through one bounce page on its way
 * from the caller's memory. The same walk reads the strings back to point the
 * vectors at them (exec_args_vectors), as Linux's create_elf_tables() does.
 *
 * Deviation from Linux: each string's last byte is written as a NUL whatever
 * the caller's memory holds by then, so another thread that lengthens a
 * string during the copy cannot make it run into the next one.
 */
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/page_alloc.h>
#include <grace/pagewalk.h>
#include <grace/process.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include "proc_internal.h"

/* The kernel address of va in mm, faulted in for writing; valid to va's page end, or NULL. */
static u8 *exec_stack_page(struct mm *mm, uintptr_t va)
{
	pte_t pte;
	int level;

	if (mm_fault(mm, va, FAULT_WRITE))
		return NULL;
	/* Nothing else runs in mm while exec builds it, so the leaf stays. */
	if (pt_lookup(mm, va, &pte, &level))
		return NULL;
	return phys_to_virt(pte_phys(pte) + (va & (pt_level_size(level) - 1)));
}

int exec_stack_write(struct mm *mm, uintptr_t va, const void *src, size_t len)
{
	const u8 *s = src;
	while (len) {
		size_t n = MIN(len, ALIGN_DOWN(va, PAGE_SIZE) + PAGE_SIZE - va);
		u8 *dst = exec_stack_page(mm, va);
		if (!dst)
			return -ENOMEM;
		memcpy(dst, s, n);
		s += n;
		va += n;
		len -= n;
	}
	return 0;
}

/* The i-th string of v, kernel or user (its pointer in *us); -EFAULT if it cannot be read. */
static int exec_vec_get(struct exec_vec v, unsigned long i, const char **ks, const char __user **us)
{
	*ks = NULL;
	*us = NULL;
	if (v.kernel) {
		*ks = v.kernel[i];
		return 0;
	}
	if (v.user && copy_from_user(us, &v.user[i], sizeof(*us)))
		return -EFAULT;
	return 0;
}

/* Linux's count(): the strings of v, or -EFAULT or -E2BIG. */
static long exec_vec_count(struct exec_vec v)
{
	for (long n = 0;; n++) {
		const char *ks;
		const char __user *us;
		if (n >= MAX_ARG_STRINGS)
			return -E2BIG;
		int err = exec_vec_get(v, n, &ks, &us);
		if (err)
			return err;
		if (!ks && !us)
			return n;
	}
}

int exec_args_init(struct exec_args *a, struct mm *mm, struct exec_vec argv, struct exec_vec envp)
{
	long argc = exec_vec_count(argv);
	if (argc < 0)
		return (int)argc;
	long envc = exec_vec_count(envp);
	if (envc < 0)
		return (int)envc;
	/* Both below 2^31: the sum and the product cannot wrap. */
	size_t ptrs = (size_t)(MAX(argc, 1) + envc) * sizeof(void *);
	if (ptrs >= EXEC_ARGS_MAX)
		return -E2BIG;
	a->mm = mm;
	a->argc = (unsigned)argc;
	a->envc = (unsigned)envc;
	a->top = STACK_TOP - sizeof(void *);
	a->p = a->top;
	a->floor = a->top - (EXEC_ARGS_MAX - ptrs);
	a->bounce = alloc_pages(0);
	return a->bounce ? 0 : -ENOMEM;
}

void exec_args_free(struct exec_args *a)
{
	if (a->bounce)
		free_pages(a->bounce, 0);
	a->bounce = NULL;
}

/* Room for a string of len bytes with its NUL, below a->p: 0 and a->p moved, or -E2BIG. */
static int exec_args_take(struct exec_args *a, size_t len)
{
	if (len > MAX_ARG_STRLEN || a->p - a->floor < len)
		return -E2BIG;
	a->p -= len;
	return 0;
}

static int exec_copy_kernel_string(struct exec_args *a, const char *s)
{
	size_t len = strlen(s) + 1;
	int err = exec_args_take(a, len);
	return err ? err : exec_stack_write(a->mm, a->p, s, len);
}

/*
 * strnlen_user(): the length of us with its NUL, if it is at most max; max + 1
 * if it is longer; -EFAULT. Read through the bounce page.
 */
static long exec_user_strlen(struct exec_args *a, const char __user *us, size_t max)
{
	size_t len = 0;
	while (len <= max) {
		long n = strncpy_from_user(a->bounce, us + len, PAGE_SIZE);
		if (n < 0)
			return n;
		if (n < (long)PAGE_SIZE)
			return MIN(len + n + 1, max + 1);
		len += PAGE_SIZE;
	}
	return max + 1;
}

static int exec_copy_user_string(struct exec_args *a, const char __user *us)
{
	long len = exec_user_strlen(a, us, MAX_ARG_STRLEN);
	if (len < 0)
		return (int)len;
	int err = exec_args_take(a, len);
	for (size_t off = 0; !err && off < (size_t)len; off += PAGE_SIZE) {
		size_t n = MIN((size_t)len - off, PAGE_SIZE);
		if (copy_from_user(a->bounce, us + off, n))
			return -EFAULT;
		if (off + n == (size_t)len)
			a->bounce[n - 1] = '\0';
		err = exec_stack_write(a->mm, a->p + off, a->bounce, n);
	}
	return err;
}

/* Linux's copy_strings(): v's n strings, the last first. */
static int exec_copy_strings(struct exec_args *a, struct exec_vec v, unsigned n)
{
	while (n--) {
		const char *ks;
		const char __user *us;
		int err = exec_vec_get(v, n, &ks, &us);
		if (!err && !ks && !us)
			err = -EFAULT; /* the vector changed since it was counted */
		if (!err)
			err = ks ? exec_copy_kernel_string(a, ks) : exec_copy_user_string(a, us);
		if (err)
			return err;
	}
	return 0;
}

int exec_args_copy(struct exec_args *a, const char *path, struct exec_vec argv,
		   struct exec_vec envp)
{
	int err = exec_copy_kernel_string(a, path);
	if (!err)
		err = exec_copy_strings(a, envp, a->envc);
	if (!err)
		err = exec_copy_strings(a, argv, a->argc);
	/* Never argc 0: a program would take envp[0] for argv[1] (Linux 5.18+). */
	if (!err && a->argc == 0) {
		err = exec_copy_kernel_string(a, "");
		a->argc = 1;
	}
	return err;
}

/* Words written one after another into the new stack, a page of them at a time. */
struct exec_words {
	struct mm *mm;
	uintptr_t at;	    /* where the next flush writes */
	unsigned long *buf; /* a page */
	size_t n;	    /* words in buf */
	int err;
};

static void exec_words_flush(struct exec_words *w)
{
	if (!w->err && w->n)
		w->err = exec_stack_write(w->mm, w->at, w->buf, w->n * sizeof(*w->buf));
	w->at += w->n * sizeof(*w->buf);
	w->n = 0;
}

static void exec_word(struct exec_words *w, unsigned long v)
{
	w->buf[w->n++] = v;
	if (w->n == PAGE_SIZE / sizeof(*w->buf))
		exec_words_flush(w);
}

/* Reading the strings back: the last page looked up, so a page costs one fault-in. */
struct exec_reader {
	uintptr_t va; /* page-aligned; 0: none yet */
	const u8 *k;  /* its kernel address */
};

/* Just past the NUL of the string at s, never past a->top; 0 if a page is gone. */
static uintptr_t exec_string_end(struct exec_args *a, struct exec_reader *r, uintptr_t s)
{
	while (s < a->top) {
		uintptr_t page = ALIGN_DOWN(s, PAGE_SIZE);
		if (r->va != page) {
			r->k = exec_stack_page(a->mm, page);
			if (!r->k)
				return 0;
			r->va = page;
		}
		size_t n = MIN(a->top, page + PAGE_SIZE) - s;
		size_t len = strnlen((const char *)r->k + (s - page), n);
		if (len < n)
			return s + len + 1;
		s += n;
	}
	return a->top;
}

int exec_args_vectors(struct exec_args *a, uintptr_t at, uintptr_t *execfn)
{
	struct exec_words w = {.mm = a->mm, .at = at, .buf = (unsigned long *)a->bounce};
	struct exec_reader r = {0};
	uintptr_t s = a->p;

	exec_word(&w, a->argc);
	for (unsigned i = 0; i < a->argc + a->envc && s; i++) {
		exec_word(&w, s);
		if (i + 1 == a->argc)
			exec_word(&w, 0);
		s = exec_string_end(a, &r, s);
	}
	exec_word(&w, 0);
	exec_words_flush(&w);
	*execfn = s;
	return s ? w.err : -ENOMEM;
}
