/*
 * W^X and fixup selftests: the kernel's page protections are really enforced,
 * and each violation comes back through the exception fixup table as -EFAULT.
 *
 * Every "faults" test first shows that the same access succeeds where it is
 * allowed (or that the probe itself works), so a missing protection fails the
 * test rather than passing it by accident. Writes that should fault write back
 * the value already there, so a missing protection changes nothing.
 */
#include <grace/errno.h>
#include <grace/extable.h>
#include <grace/kmap.h>
#include <grace/page_alloc.h>
#include <grace/pgtable.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/vmap.h>
#include <asm/cpu.h>
#include <asm/irq.h>

/* Stacks allocated and freed by all CPUs together in wx.stack_storm. */
#define WX_STORM_TOTAL 64
/* A user address for the address-space test: inside the user half on both arches. */
#define WX_USER_VA 0x10000000UL
#define WX_MAX_TABLES 8

extern char _text[], __start_rodata[], __end_rodata[], _end[];

static const u64 wx_rodata_word = 0x5758726f64617461ULL; /* "WXrodata" */
static u64 wx_data_word = 1;
static u64 wx_bss_word;
/* Filled with a copy of probe_ret_insn: a return instruction in writable data. */
static u8 wx_data_code[64] __aligned(64);

/* An 8-byte-aligned word in kernel text (probe_ret_insn's, which nothing writes). */
static u64 *text_word(void)
{
	return (u64 *)ALIGN_DOWN((uintptr_t)probe_ret_insn, 8);
}

/* The direct-map alias of a kernel-image address. */
static void *direct_alias(const void *image_va)
{
	return phys_to_virt(virt_to_phys(image_va));
}

/* The leaf entry that maps va in the kernel's tables, 0 if none. */
static pte_t kernel_pte(const void *va)
{
	return kmap_lookup(arch_kernel_root(), (uintptr_t)va, NULL);
}

TEST(wx, image_layout)
{
	EXPECT_TRUE(IS_ALIGNED((uintptr_t)_text, PAGE_SIZE));
	EXPECT_TRUE(IS_ALIGNED((uintptr_t)__start_rodata, PAGE_SIZE));
	EXPECT_TRUE(IS_ALIGNED((uintptr_t)__end_rodata, PAGE_SIZE));
	EXPECT_TRUE((uintptr_t)&wx_rodata_word >= (uintptr_t)__start_rodata &&
		    (uintptr_t)&wx_rodata_word < (uintptr_t)__end_rodata);

	pte_t text = kernel_pte(probe_ret_insn);
	EXPECT_TRUE(pte_allows(text, PROT_READ | PROT_EXEC));
	EXPECT_FALSE(pte_allows(text, PROT_WRITE));
	pte_t ro = kernel_pte(&wx_rodata_word);
	EXPECT_TRUE(pte_allows(ro, PROT_READ));
	EXPECT_FALSE(pte_allows(ro, PROT_WRITE));
	EXPECT_FALSE(pte_allows(ro, PROT_EXEC));
	pte_t data = kernel_pte(&wx_data_word), bss = kernel_pte(&wx_bss_word);
	EXPECT_TRUE(pte_allows(data, PROT_READ | PROT_WRITE));
	EXPECT_FALSE(pte_allows(data, PROT_EXEC));
	EXPECT_TRUE(pte_allows(bss, PROT_READ | PROT_WRITE));
	EXPECT_FALSE(pte_allows(bss, PROT_EXEC));
	pte_t dm = kernel_pte(direct_alias(probe_ret_insn));
	EXPECT_TRUE(pte_allows(dm, PROT_READ | PROT_WRITE));
	EXPECT_FALSE(pte_allows(dm, PROT_EXEC));
	/* No kernel mapping is reachable from user mode. */
	EXPECT_FALSE(pte_allows(text, PROT_USER));
	EXPECT_FALSE(pte_allows(dm, PROT_USER));
}

TEST(wx, text_not_writable)
{
	u64 *w = text_word(), v = 0;
	ASSERT_EQ(probe_read_u64(w, &v), 0);
	EXPECT_EQ(probe_write_u64(w, v), -EFAULT);
	u64 after = 0;
	EXPECT_EQ(probe_read_u64(w, &after), 0);
	EXPECT_EQ(after, v);
	/* The same bytes through the direct map are ordinary writable memory. */
	EXPECT_EQ(probe_write_u64(direct_alias(w), v), 0);
}

TEST(wx, text_executable)
{
	EXPECT_EQ(probe_exec(probe_ret_insn), 0);
}

TEST(wx, direct_map_not_executable)
{
	const void *alias = direct_alias(probe_ret_insn);
	/* Same memory, readable through the alias: only execution is refused. */
	u64 a = 0, b = 0;
	EXPECT_EQ(probe_read_u64(direct_alias(text_word()), &a), 0);
	EXPECT_EQ(probe_read_u64(text_word(), &b), 0);
	EXPECT_EQ(a, b);
	EXPECT_EQ(probe_exec(alias), -EFAULT);
	/* The fixup left the stack as it was: the probe still works afterwards. */
	EXPECT_EQ(probe_exec(probe_ret_insn), 0);
}

TEST(wx, data_not_executable)
{
	memcpy(wx_data_code, probe_ret_insn, 4);
	EXPECT_EQ(probe_exec(wx_data_code), -EFAULT);
	u8 *page = alloc_pages(0);
	ASSERT_TRUE(page != NULL);
	memcpy(page, probe_ret_insn, 4);
	EXPECT_EQ(probe_exec(page), -EFAULT);
	free_pages(page, 0);
}

TEST(wx, rodata_not_writable)
{
	const u64 *volatile p = &wx_rodata_word;
	u64 v = 0;
	ASSERT_EQ(probe_read_u64(p, &v), 0);
	EXPECT_EQ(v, 0x5758726f64617461ULL);
	EXPECT_EQ(probe_write_u64((void *)p, v), -EFAULT);
	EXPECT_EQ(*p, 0x5758726f64617461ULL);
}

TEST(wx, data_writable)
{
	EXPECT_EQ(probe_write_u64(&wx_data_word, 42), 0);
	EXPECT_EQ(READ_ONCE(wx_data_word), 42);
	EXPECT_EQ(probe_write_u64(&wx_bss_word, 43), 0);
	EXPECT_EQ(READ_ONCE(wx_bss_word), 43);
	u64 *page = alloc_pages(0);
	ASSERT_TRUE(page != NULL);
	EXPECT_EQ(probe_write_u64(page, 44), 0);
	EXPECT_EQ(page[0], 44);
	free_pages(page, 0);
}

TEST(wx, unmapped_faults)
{
	u64 v;
	EXPECT_EQ(probe_read_u64(NULL, &v), -EFAULT);
	EXPECT_EQ(probe_write_u64((void *)8, 0), -EFAULT);
	/* Outside both halves: a #GP on x86_64, a page fault on Sv39; both fixed up. */
	EXPECT_EQ(probe_read_u64((void *)0x8000000000000000UL, &v), -EFAULT);
	EXPECT_EQ(probe_exec(NULL), -EFAULT);
}

/* The page below a stack faults; the stack itself is usable from bottom to top. */
static bool stack_check(u8 *s)
{
	u64 v;
	bool ok = EXPECT_EQ(probe_read_u64(s - sizeof(u64), &v), -EFAULT);
	ok &= EXPECT_EQ(probe_read_u64(s - STACK_GUARD_SIZE, &v), -EFAULT);
	ok &= EXPECT_EQ(probe_write_u64(s, 1), 0);
	ok &= EXPECT_EQ(probe_write_u64(s + KERNEL_STACK_SIZE - sizeof(u64), 2), 0);
	ok &= EXPECT_EQ(probe_read_u64(s, &v), 0) && EXPECT_EQ(v, 1);
	ok &= EXPECT_FALSE(pte_allows(kernel_pte(s), PROT_EXEC));
	ok &= EXPECT_TRUE(vmap_is_guard((uintptr_t)s - 1));
	ok &= EXPECT_FALSE(vmap_is_guard((uintptr_t)s));
	return ok;
}

/* Several at once, so that neighbouring stacks are checked not to cover each other's guard. */
#define WX_GUARD_STACKS 3

TEST(wx, stack_guard_page)
{
	test_expect_message("vmap: stack_free(");
	u8 *s[WX_GUARD_STACKS];
	for (unsigned i = 0; i < WX_GUARD_STACKS; i++) {
		s[i] = stack_alloc();
		ASSERT_TRUE(s[i] != NULL);
		EXPECT_TRUE(IS_ALIGNED((uintptr_t)s[i], PAGE_SIZE));
	}
	for (unsigned i = 0; i < WX_GUARD_STACKS; i++)
		stack_check(s[i]);
	for (unsigned i = 0; i < WX_GUARD_STACKS; i++)
		stack_free(s[i]);
	/* Freed: the whole slot faults now; freeing it again or NULL changes nothing. */
	u64 v;
	EXPECT_EQ(probe_read_u64(s[0], &v), -EFAULT);
	u64 before = mm_free_bytes();
	stack_free(s[0]);
	stack_free(NULL);
	stack_free(s[0] + PAGE_SIZE);
	EXPECT_EQ(mm_free_bytes(), before);
}

/*
 * Freed stacks' slots wait for a TLB purge before reuse; a purge comes at the
 * latest after this many frees (mm/vmap.c's batch, 32, with room to spare).
 */
#define WX_PURGE_FREES 40

/* A second free of a slot already purged and free changes nothing: its next owner frees it. */
TEST(wx, double_free_of_a_purged_stack_leaves_its_slot_usable)
{
	test_expect_message("vmap: stack_free(");
	static u8 *s[WX_PURGE_FREES];
	u8 *first = stack_alloc();
	ASSERT_TRUE(first != NULL);
	stack_free(first);
	/* Enough frees behind it that a purge puts first's slot back, free. */
	for (unsigned i = 0; i < WX_PURGE_FREES; i++)
		ASSERT_TRUE((s[i] = stack_alloc()) != NULL);
	for (unsigned i = 0; i < WX_PURGE_FREES; i++)
		stack_free(s[i]);
	stack_free(first); /* refused: not allocated */
	/* Lowest free slot first: these include first's slot again. */
	bool reused = false;
	for (unsigned i = 0; i < WX_PURGE_FREES; i++) {
		ASSERT_TRUE((s[i] = stack_alloc()) != NULL);
		reused |= s[i] == first;
	}
	EXPECT_TRUE(reused);
	u64 before = mm_free_bytes();
	for (unsigned i = 0; i < WX_PURGE_FREES; i++)
		stack_free(s[i]);
	/* Every one was taken back: its pages are free again. */
	EXPECT_EQ(mm_free_bytes() - before, (u64)WX_PURGE_FREES * KERNEL_STACK_SIZE);
}

struct storm {
	unsigned per_cpu;
};

static void stack_storm_worker(void *arg)
{
	struct storm *st = arg;
	for (unsigned i = 0; i < st->per_cpu; i++) {
		u8 *s = stack_alloc();
		if (!EXPECT_TRUE(s != NULL))
			return;
		stack_check(s);
		/* Tag it: another CPU handed the same slot meanwhile would overwrite the tag. */
		uintptr_t *tag = (uintptr_t *)(s + KERNEL_STACK_SIZE / 2);
		WRITE_ONCE(*tag, (uintptr_t)tag ^ i);
		for (int spin = 0; spin < 100; spin++)
			cpu_relax();
		EXPECT_EQ(READ_ONCE(*tag), (uintptr_t)tag ^ i);
		stack_free(s);
	}
}

TEST(wx, stack_storm)
{
	u64 before = mm_free_bytes();
	struct storm st = {.per_cpu = MAX(WX_STORM_TOTAL / num_online_cpus(), 1u)};
	smp_run_all(stack_storm_worker, &st);
	/* Stack pages went back; page tables of the area stay (at most a few pages). */
	EXPECT_LE(before - mm_free_bytes(), 4 * PAGE_SIZE);
}

/* The tables of a throwaway address space, to give back at the end. */
static pte_t *wx_tables[WX_MAX_TABLES];
static unsigned wx_nr_tables;

static pte_t *wx_table_alloc(void)
{
	if (wx_nr_tables == WX_MAX_TABLES)
		return NULL;
	pte_t *t = alloc_pages(0);
	if (t)
		wx_tables[wx_nr_tables++] = t;
	return t;
}

/*
 * The interface mm/ builds address spaces on: a new root shares the kernel half,
 * arch_switch_mm() loads it, and a user page is reachable from the kernel inside
 * arch_user_access_begin/end (riscv64: only there). A fault taken inside the
 * window returns with the window still open.
 */
TEST(wx, user_address_space)
{
	wx_nr_tables = 0;
	pte_t *root = wx_table_alloc();
	u64 *page = alloc_pages(0);
	ASSERT_TRUE(root != NULL && page != NULL);
	page[0] = 0x75736572; /* "user" */
	arch_mm_init_root(root);
	int err = kmap_range(root, WX_USER_VA, virt_to_phys(page), PAGE_SIZE,
			     PROT_READ | PROT_WRITE | PROT_USER, false, true, wx_table_alloc);
	EXPECT_EQ(err, 0);
	pte_t pte = kmap_lookup(root, WX_USER_VA, NULL);
	EXPECT_TRUE(pte_allows(pte, PROT_USER | PROT_WRITE));
	EXPECT_FALSE(pte_allows(pte, PROT_EXEC));

	unsigned long flags = arch_irq_save();
	arch_switch_mm(virt_to_phys(root));
	u64 v = 0, v2 = 0;
	/* The kernel half works as before on the new root. */
	int kernel_ok = probe_read_u64(&wx_data_word, &v);
	arch_user_access_begin();
	int in = probe_read_u64((void *)WX_USER_VA, &v);
	int unmapped = probe_read_u64((void *)(WX_USER_VA + PAGE_SIZE), &v2);
	int after_fault = probe_write_u64((void *)WX_USER_VA, 0x55);
	arch_user_access_end();
#ifdef __riscv
	int outside = probe_read_u64((void *)WX_USER_VA, &v2);
#endif
	arch_switch_mm(0);
	arch_irq_restore(flags);

	EXPECT_EQ(kernel_ok, 0);
	EXPECT_EQ(in, 0);
	EXPECT_EQ(v, 0x75736572);
	EXPECT_EQ(unmapped, -EFAULT);
	EXPECT_EQ(after_fault, 0);
	EXPECT_EQ(page[0], 0x55);
#ifdef __riscv
	/* sstatus.SUM is closed again: the kernel cannot touch user pages by accident. */
	EXPECT_EQ(outside, -EFAULT);
#endif
	/* Back on the kernel's tables the user address is gone. */
	EXPECT_EQ(probe_read_u64((void *)WX_USER_VA, &v2), -EFAULT);

	for (unsigned i = 0; i < wx_nr_tables; i++)
		free_pages(wx_tables[i], 0);
	free_pages(page, 0);
}
