/*
 * The user-copy calls (grace/uaccess.h) in a thread that has switched to a test
 * mm: copies both ways through demand faults, short copies that stop at the
 * exact first byte that cannot be reached (an unmapped page, a read-only VMA),
 * strings at a page boundary, kernel addresses refused by access_ok(), and the
 * window: outside the routines a kernel access to a user page faults (riscv64:
 * sstatus.SUM clear; x86_64: SMAP, where the CPU has it).
 */
#include <grace/string.h>
#include <grace/uaccess.h>
#include "as_test.h"

#define UA_PAGES 3
#define UA_BUF (2 * PAGE_SIZE)

static u8 ua_kbuf[UA_BUF], ua_pattern[UA_BUF];

/* A fresh mm with [va, va + pages * PAGE_SIZE) mapped prot, entered by this thread. */
static struct mm *ua_enter(uintptr_t va, unsigned pages, unsigned prot)
{
	struct mm *mm = mm_create();
	if (!mm)
		return NULL;
	mm_switch(mm);
	if (vma_map(mm, va, (size_t)pages * PAGE_SIZE, prot, VMA_NOHUGE)) {
		mm_switch(NULL);
		mm_destroy(mm);
		return NULL;
	}
	for (size_t i = 0; i < UA_BUF; i++)
		ua_pattern[i] = (u8)(i * 7 + 3);
	return mm;
}

static void ua_leave(struct mm *mm)
{
	mm_switch(NULL);
	mm_destroy(mm);
}

static bool ua_bytes_are(const u8 *p, size_t n, u8 v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* Nothing mapped yet: the copies demand-fault every page they touch, at any alignment. */
TEST(uaccess, copies_both_ways_through_demand_faults)
{
	uintptr_t va = as_slot(0);
	struct mm *mm = ua_enter(va, UA_PAGES, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(mm != NULL);
	static const size_t offs[] = {0, 1, 8, 13, PAGE_SIZE - 3};
	for (unsigned i = 0; i < ARRAY_SIZE(offs); i++) {
		void __user *u = (void __user *)(va + offs[i]);
		size_t n = UA_BUF - (i % 2); /* odd lengths too */
		EXPECT_EQ(copy_to_user(u, ua_pattern + (i % 3), n), 0);
		memset(ua_kbuf, 0xaa, sizeof(ua_kbuf));
		EXPECT_EQ(copy_from_user(ua_kbuf, u, n), 0);
		EXPECT_EQ(memcmp(ua_kbuf, ua_pattern + (i % 3), n), 0);
	}
	/* The copies went to the user pages, not somewhere else: read one back by probe. */
	u64 v = 0;
	EXPECT_EQ(user_read_u64(va + 8, &v), 0);
	EXPECT_EQ(copy_from_user(ua_kbuf, (const void __user *)(va + 8), 8), 0);
	EXPECT_EQ(memcmp(&v, ua_kbuf, 8), 0);
	/* clear_user zeroes exactly its range. */
	EXPECT_EQ(copy_to_user((void __user *)va, ua_pattern, UA_BUF), 0);
	EXPECT_EQ(clear_user((void __user *)(va + 5), 100), 0);
	EXPECT_EQ(copy_from_user(ua_kbuf, (const void __user *)va, 110), 0);
	EXPECT_EQ(memcmp(ua_kbuf, ua_pattern, 5), 0);
	EXPECT_TRUE(ua_bytes_are(ua_kbuf + 5, 100, 0));
	EXPECT_EQ(memcmp(ua_kbuf + 105, ua_pattern + 105, 5), 0);
	ua_leave(mm);
}

/*
 * Two pages mapped, the third not: a copy across the end copies every byte up to
 * it and reports the rest, whatever the two pointers' alignment (the word loops'
 * faults must fall back to bytes, not give up a word early).
 */
TEST(uaccess, short_copy_stops_exactly_at_the_first_unmapped_page)
{
	uintptr_t va = as_slot(0), end = va + 2 * PAGE_SIZE;
	struct mm *mm = ua_enter(va, 2, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(mm != NULL);
	static const size_t before[] = {1, 7, 8, 13, 64, 100, PAGE_SIZE};
	for (unsigned i = 0; i < ARRAY_SIZE(before); i++) {
		for (size_t kmis = 0; kmis < 2; kmis++) {
			size_t n = before[i] + 300;
			uintptr_t u = end - before[i];
			EXPECT_EQ(copy_to_user((void __user *)u, ua_pattern + kmis, n),
				  n - before[i]);
			memset(ua_kbuf, 0xaa, sizeof(ua_kbuf));
			size_t left = copy_from_user(ua_kbuf + kmis, (const void __user *)u, n);
			EXPECT_EQ(left, n - before[i]);
			EXPECT_EQ(memcmp(ua_kbuf + kmis, ua_pattern + kmis, before[i]), 0);
			/* Linux zeroes what copy_from_user could not copy. */
			EXPECT_TRUE(ua_bytes_are(ua_kbuf + kmis + before[i], n - before[i], 0));
			EXPECT_EQ(clear_user((void __user *)u, n), n - before[i]);
		}
	}
	/* Starting on the unmapped page: nothing at all. */
	EXPECT_EQ(copy_from_user(ua_kbuf, (const void __user *)end, 64), 64);
	EXPECT_EQ(copy_to_user((void __user *)(end + 8), ua_pattern, 64), 64);
	ua_leave(mm);
}

/* A read-only VMA reads (as zeros) but takes no write, faulted in or not. */
TEST(uaccess, copy_to_user_refused_by_a_read_only_vma)
{
	uintptr_t va = as_slot(0);
	struct mm *mm = ua_enter(va, 2, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(mm != NULL);
	ASSERT_EQ(vma_protect(mm, va + PAGE_SIZE, PAGE_SIZE, PROT_READ), 0);
	uintptr_t ro = va + PAGE_SIZE;
	EXPECT_EQ(copy_to_user((void __user *)ro, ua_pattern, 16), 16); /* not faulted in yet */
	memset(ua_kbuf, 0xaa, 16);
	EXPECT_EQ(copy_from_user(ua_kbuf, (const void __user *)ro, 16), 0);
	EXPECT_TRUE(ua_bytes_are(ua_kbuf, 16, 0));
	EXPECT_EQ(copy_to_user((void __user *)ro, ua_pattern, 16), 16); /* mapped read-only now */
	/* Across the boundary from the writable page: exactly the writable bytes. */
	EXPECT_EQ(copy_to_user((void __user *)(ro - 20), ua_pattern, 50), 30);
	EXPECT_EQ(clear_user((void __user *)(ro - 3), 10), 7);
	EXPECT_EQ(copy_from_user(ua_kbuf, (const void __user *)(ro - 20), 40), 0);
	EXPECT_EQ(memcmp(ua_kbuf, ua_pattern, 17), 0);
	EXPECT_TRUE(ua_bytes_are(ua_kbuf + 17, 23, 0));
	ua_leave(mm);
}

/* Strings: the length, count without a NUL, -EFAULT at a page that cannot be read. */
TEST(uaccess, strncpy_from_user_at_a_page_boundary)
{
	uintptr_t va = as_slot(0), end = va + PAGE_SIZE;
	struct mm *mm = ua_enter(va, 1, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(mm != NULL);
	char s[16];

	/* "hello" whose NUL is the page's last byte. */
	EXPECT_EQ(copy_to_user((void __user *)(end - 6), "hello", 6), 0);
	memset(s, 'x', sizeof(s));
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(end - 6), sizeof(s)), 5);
	EXPECT_EQ(memcmp(s, "hello", 6), 0);
	/* No NUL within count: count, and dst not terminated. */
	memset(s, 'x', sizeof(s));
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(end - 6), 5), 5);
	EXPECT_EQ(memcmp(s, "hellox", 6), 0);
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(end - 6), 6), 5);
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(end - 6), 0), 0);
	/* The string runs into the unmapped page: -EFAULT. */
	EXPECT_EQ(copy_to_user((void __user *)(end - 4), "abcd", 4), 0);
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(end - 4), sizeof(s)), -EFAULT);
	/* ...unless count ends before it. */
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(end - 4), 4), 4);
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)end, 1), -EFAULT);
	ua_leave(mm);
}

static const char ua_kernel_string[] = "kernel";

/* Kernel addresses passed as user pointers, and ranges that leave the user half or wrap. */
TEST(uaccess, kernel_addresses_fail_access_ok)
{
	static u64 kernel_word = 0x1122334455667788;
	u64 v = 0x99;

	EXPECT_TRUE(access_ok((const void __user *)0x1000, PAGE_SIZE));
	EXPECT_TRUE(access_ok((const void __user *)(USER_VA_END - 8), 8));
	EXPECT_TRUE(access_ok((const void __user *)USER_VA_END, 0));
	EXPECT_FALSE(access_ok((const void __user *)(USER_VA_END - 8), 9));
	EXPECT_FALSE(access_ok((const void __user *)USER_VA_END, 1));
	EXPECT_FALSE(access_ok((const void __user *)&kernel_word, 8));
	EXPECT_FALSE(access_ok((const void __user *)0x1000, (size_t)-0x1000)); /* wraps to 0 */
	EXPECT_FALSE(access_ok((const void __user *)0x1000, USER_VA_END));
	EXPECT_FALSE(access_ok((const void __user *)~(uintptr_t)7, 16)); /* wraps to 8 */

	/* Nothing read, nothing written, whatever is mapped there. */
	EXPECT_EQ(copy_from_user(&v, (const void __user *)&kernel_word, 8), 8);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(copy_to_user((void __user *)&kernel_word, &v, 8), 8);
	EXPECT_EQ(kernel_word, 0x1122334455667788);
	EXPECT_EQ(clear_user((void __user *)&kernel_word, 8), 8);
	EXPECT_EQ(kernel_word, 0x1122334455667788);
	char s[8];
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)ua_kernel_string, sizeof(s)), -EFAULT);
	/* A range that starts below the end but runs past it is refused whole. */
	EXPECT_EQ(copy_from_user(&v, (const void __user *)(USER_VA_END - 4), 8), 8);
}

/*
 * The window is open only inside the routines, and closed again after a copy
 * that faulted: a plain kernel access to a user page must fault (caught by the
 * probe's fixup). riscv64: sstatus.SUM; x86_64: SMAP, skipped where the CPU
 * lacks it.
 */
TEST(uaccess, kernel_access_outside_the_copies_faults)
{
#ifdef __x86_64__
	if (!x86_smap_enabled) {
		test_skip("no SMAP in this CPU");
		return;
	}
#endif
	uintptr_t va = as_slot(0);
	struct mm *mm = ua_enter(va, 1, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(mm != NULL);
	u64 v = 0x1234, got = 0;

	EXPECT_EQ(copy_to_user((void __user *)va, &v, sizeof(v)), 0);
	EXPECT_EQ(probe_read_u64((const void *)va, &got), -EFAULT);
	EXPECT_EQ(probe_write_u64((void *)va, 1), -EFAULT);
	EXPECT_EQ(copy_from_user(&got, (const void __user *)va, sizeof(got)), 0);
	EXPECT_EQ(got, 0x1234);
	EXPECT_EQ(probe_read_u64((const void *)va, &got), -EFAULT);
	/* After each routine's fault fixup too. */
	EXPECT_EQ(copy_from_user(&got, (const void __user *)(va + PAGE_SIZE - 4), 8), 4);
	EXPECT_EQ(probe_read_u64((const void *)va, &got), -EFAULT);
	EXPECT_EQ(copy_to_user((void __user *)(va + PAGE_SIZE - 4), &v, 8), 4);
	EXPECT_EQ(probe_read_u64((const void *)va, &got), -EFAULT);
	EXPECT_EQ(clear_user((void __user *)(va + PAGE_SIZE - 4), 8), 4);
	EXPECT_EQ(probe_read_u64((const void *)va, &got), -EFAULT);
	char s[8];
	EXPECT_EQ(copy_to_user((void __user *)(va + PAGE_SIZE - 2), "ab", 2), 0);
	EXPECT_EQ(strncpy_from_user(s, (const char __user *)(va + PAGE_SIZE - 2), 8), -EFAULT);
	EXPECT_EQ(probe_read_u64((const void *)va, &got), -EFAULT);
	/* The window itself still works. */
	EXPECT_EQ(user_read_u64(va, &got), 0);
	ua_leave(mm);
}

/* ---- every CPU at once, each in its own region of one mm ---- */

struct ua_smp {
	struct mm *mm;
	atomic_t errors;
};

static void ua_smp_worker(void *arg)
{
	struct ua_smp *t = arg;
	uintptr_t base = as_slot(smp_processor_id());
	u8 out[300], in[300];

	mm_switch(t->mm);
	if (vma_map(t->mm, base, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE, VMA_NOHUGE)) {
		atomic_inc(&t->errors);
		mm_switch(NULL);
		return;
	}
	for (unsigned i = 0; i < sizeof(out); i++)
		out[i] = (u8)(smp_processor_id() * 31 + i);
	for (uintptr_t off = 0; off + sizeof(out) <= 4 * PAGE_SIZE; off += 997) {
		memset(in, 0, sizeof(in));
		if (copy_to_user((void __user *)(base + off), out, sizeof(out)) ||
		    copy_from_user(in, (const void __user *)(base + off), sizeof(in)) ||
		    memcmp(in, out, sizeof(in)))
			atomic_inc(&t->errors);
	}
	/* Past the region's end: the exact short count, on every CPU. */
	if (copy_to_user((void __user *)(base + 4 * PAGE_SIZE - 10), out, 100) != 90)
		atomic_inc(&t->errors);
	mm_switch(NULL);
}

TEST(uaccess, copies_on_every_cpu_in_one_mm)
{
	static struct ua_smp t;
	u64 before = as_free_bytes();
	t.mm = mm_create();
	ASSERT_TRUE(t.mm != NULL);
	atomic_set(&t.errors, 0);
	smp_run_all(ua_smp_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	mm_destroy(t.mm);
	EXPECT_EQ(as_free_bytes(), before);
}
