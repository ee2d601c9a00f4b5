/*
 * exec's argument area selftests (suite exec_args), on a fresh mm with the
 * kernel's own vectors, on both arches (the user-mode test, tests/user/exec_args.c,
 * can run the program again only on x86_64): the strings and vectors where
 * Linux lays them, the area's bound to the byte with the pointers counted, one
 * string's bound, and an allocation failure at any page of the copy failing
 * the copy cleanly.
 */
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/process.h>
#include <grace/string.h>
#include <grace/test.h>

#include "as_test.h"
#include "../../kernel/proc/proc_internal.h"

/* A new mm with exec's stack mapped. */
static struct mm *stack_mm(void)
{
	struct mm *mm = mm_create();
	if (mm && vma_map(mm, STACK_TOP - EXEC_STACK_SIZE, EXEC_STACK_SIZE, PROT_READ | PROT_WRITE,
			  VMA_NOHUGE)) {
		mm_destroy(mm);
		return NULL;
	}
	return mm;
}

/* len bytes at va of mm (not the current one), through its page table: 0 or -EFAULT. */
static int mm_read(struct mm *mm, uintptr_t va, void *dst, size_t len)
{
	u8 *d = dst;
	while (len) {
		pte_t pte;
		int level;
		size_t n = MIN(len, ALIGN_DOWN(va, PAGE_SIZE) + PAGE_SIZE - va);
		if (pt_lookup(mm, va, &pte, &level))
			return -EFAULT;
		memcpy(d, phys_to_virt(pte_phys(pte) + (va & (pt_level_size(level) - 1))), n);
		d += n;
		va += n;
		len -= n;
	}
	return 0;
}

/* init and copy, with path, argv and envp as the kernel's vectors. */
static int args_build(struct exec_args *a, struct mm *mm, const char *path, char *const *argv,
		      char *const *envp)
{
	struct exec_vec av = {.kernel = argv}, ev = {.kernel = envp};
	int err = exec_args_init(a, mm, av, ev);
	return err ? err : exec_args_copy(a, path, av, ev);
}

TEST(exec_args, strings_and_vectors_lie_as_linux_lays_them)
{
	char *argv[] = {"prog", "a", "bc", NULL}, *envp[] = {"X=1", NULL};
	const char strings[] = "prog\0a\0bc\0X=1\0/bin/prog"; /* from the lowest byte up */
	struct mm *mm = stack_mm();
	ASSERT_TRUE(mm);
	struct exec_args a = {0};
	ASSERT_EQ(args_build(&a, mm, "/bin/prog", argv, envp), 0);
	EXPECT_EQ(a.argc, 3);
	EXPECT_EQ(a.envc, 1);
	/* The strings end a word below the stack's top, the file name last. */
	EXPECT_EQ(a.top, STACK_TOP - sizeof(void *));
	EXPECT_EQ(a.top - a.p, sizeof(strings));
	char got[sizeof(strings)];
	ASSERT_EQ(mm_read(mm, a.p, got, sizeof(got)), 0);
	EXPECT_EQ(memcmp(got, strings, sizeof(strings)), 0);

	uintptr_t at = ALIGN_DOWN(a.p - 64, 16), execfn = 0;
	ASSERT_EQ(exec_args_vectors(&a, at, &execfn), 0);
	unsigned long words[7];
	ASSERT_EQ(mm_read(mm, at, words, sizeof(words)), 0);
	const unsigned long want[] = {3, a.p, a.p + 5, a.p + 7, 0, a.p + 10, 0};
	for (unsigned i = 0; i < ARRAY_SIZE(want); i++)
		EXPECT_EQ(words[i], want[i]);
	EXPECT_EQ(execfn, a.p + 14);
	exec_args_free(&a);
	mm_destroy(mm);
}

TEST(exec_args, an_empty_argv_becomes_one_empty_string)
{
	char *none[] = {NULL};
	struct mm *mm = stack_mm();
	ASSERT_TRUE(mm);
	struct exec_args a = {0};
	ASSERT_EQ(args_build(&a, mm, "/p", none, none), 0);
	EXPECT_EQ(a.argc, 1);
	uintptr_t at = ALIGN_DOWN(a.p - 64, 16), execfn = 0;
	ASSERT_EQ(exec_args_vectors(&a, at, &execfn), 0);
	unsigned long words[4];
	char empty = 1;
	ASSERT_EQ(mm_read(mm, at, words, sizeof(words)), 0);
	EXPECT_EQ(words[0], 1);
	EXPECT_EQ(words[1], a.p);
	EXPECT_EQ(words[2], 0);
	EXPECT_EQ(words[3], 0);
	ASSERT_EQ(mm_read(mm, a.p, &empty, 1), 0);
	EXPECT_EQ(empty, 0);
	exec_args_free(&a);
	mm_destroy(mm);
}

/* A string of MAX_ARG_STRLEN bytes with its NUL (MAX_ARG_STRLEN + extra: one longer). */
static char *long_string(unsigned extra, unsigned *order)
{
	*order = pages_order(MAX_ARG_STRLEN + extra);
	char *s = alloc_pages(*order);
	if (s) {
		memset(s, 'x', MAX_ARG_STRLEN + extra - 1);
		s[MAX_ARG_STRLEN + extra - 1] = 0;
	}
	return s;
}

#define FILL_STRINGS 17

/*
 * argv of FILL_STRINGS suffixes of s (MAX_ARG_STRLEN with its NUL) whose bytes
 * with the file name "/p" and a pointer per string come to total.
 */
static void fill_argv(char **argv, char *s, size_t total)
{
	size_t left = total - sizeof("/p") - FILL_STRINGS * sizeof(void *);
	for (unsigned i = 0; i < FILL_STRINGS; i++) {
		size_t len = i + 1 < FILL_STRINGS
				 ? left / FILL_STRINGS
				 : left - (FILL_STRINGS - 1) * (left / FILL_STRINGS);
		argv[i] = s + MAX_ARG_STRLEN - len;
	}
	argv[FILL_STRINGS] = NULL;
}

TEST(exec_args, the_area_is_a_quarter_of_the_stack_limit_pointers_counted)
{
	unsigned order;
	char *s = long_string(0, &order), *argv[FILL_STRINGS + 1], *envp[] = {NULL};
	ASSERT_TRUE(s);
	EXPECT_EQ(EXEC_ARGS_MAX, 2 * MiB);
	for (int extra = 0; extra <= 1; extra++) {
		fill_argv(argv, s, EXEC_ARGS_MAX + extra);
		struct mm *mm = stack_mm();
		ASSERT_TRUE(mm);
		struct exec_args a = {0};
		EXPECT_EQ(args_build(&a, mm, "/p", argv, envp), extra ? -E2BIG : 0);
		if (!extra)
			EXPECT_EQ(a.top - a.p + FILL_STRINGS * sizeof(void *), EXEC_ARGS_MAX);
		exec_args_free(&a);
		mm_destroy(mm);
	}
	free_pages(s, order);
}

TEST(exec_args, one_string_takes_at_most_max_arg_strlen)
{
	for (unsigned extra = 0; extra <= 1; extra++) {
		unsigned order;
		char *s = long_string(extra, &order), *none[] = {NULL};
		ASSERT_TRUE(s);
		char *argv[] = {s, NULL};
		struct mm *mm = stack_mm();
		ASSERT_TRUE(mm);
		struct exec_args a = {0};
		EXPECT_EQ(args_build(&a, mm, "/p", argv, none), extra ? -E2BIG : 0);
		exec_args_free(&a);
		mm_destroy(mm);
		free_pages(s, order);
	}
}

TEST(exec_args, out_of_memory_at_any_page_fails_the_copy_cleanly)
{
	unsigned order;
	char *s = long_string(0, &order), *argv[] = {s, s, NULL}, *envp[] = {"X=1", NULL};
	ASSERT_TRUE(s);
	unsigned failed = 0;
	u64 before = as_free_bytes();
	for (unsigned skip = 0; skip < 96; skip++) {
		struct mm *mm = stack_mm();
		ASSERT_TRUE(mm);
		struct exec_args a = {0};
		uintptr_t execfn;
		mm_inject_alloc_failures(skip, 1);
		int err = args_build(&a, mm, "/p", argv, envp);
		if (!err)
			err = exec_args_vectors(&a, ALIGN_DOWN(a.p - 4096, 16), &execfn);
		mm_inject_alloc_failures(0, 0);
		if (err) {
			failed++;
			EXPECT_EQ(err, -ENOMEM);
		}
		exec_args_free(&a);
		mm_destroy(mm);
	}
	/* 256 KiB of strings take more than 64 pages and their tables: the first 64 failed. */
	EXPECT_GT(failed, 64);
	EXPECT_EQ(as_free_bytes(), before);
	free_pages(s, order);
}
