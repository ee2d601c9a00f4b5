/* Selftests for lib/: formatting, globs, number parsing, the command line, symbols and backtraces.
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/hash.h>
#include <grace/ksyms.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

static bool formats_as(const char *expect, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!strcmp(buf, expect))
		return true;
	return test_fail(__FILE__, __LINE__, "format '%s': expected '%s', got '%s'", fmt, expect,
			 buf);
}

TEST(lib, vsnprintf_conversions)
{
	formats_as("42 -7 ff FF", "%d %i %x %X", 42, -7, 255, 255);
	formats_as("18446744073709551615", "%llu", ~0ULL);
	formats_as("-9223372036854775808", "%lld", (long long)(1ULL << 63));
	formats_as("[  12][12  ][0012]", "[%4d][%-4d][%04d]", 12, 12, 12);
	formats_as("[-012]", "[%04d]", -12);
	formats_as("a:hello:(null)", "%c:%s:%s", 'a', "hello", (char *)NULL);
	formats_as("100%", "100%%");
	formats_as("0x00000000000000ab", "%p", (void *)0xab);
	char small[4];
	EXPECT_EQ(snprintf(small, sizeof(small), "abcdef"), 6);
	EXPECT_EQ(strcmp(small, "abc"), 0);
}

TEST(lib, glob_match)
{
	EXPECT_TRUE(glob_match("*", "spinlock.fifo"));
	EXPECT_TRUE(glob_match("spinlock.*", "spinlock.fifo"));
	EXPECT_TRUE(glob_match("*.f?fo", "spinlock.fifo"));
	EXPECT_FALSE(glob_match("spin", "spinlock"));
	EXPECT_FALSE(glob_match("*.x", "spinlock.fifo"));
	EXPECT_TRUE(glob_list_match("rcu.*,spinlock.*", "spinlock.fifo"));
	EXPECT_FALSE(glob_list_match("rcu.*,smp.*", "spinlock.fifo"));
	EXPECT_FALSE(glob_list_match("*,-spin*", "spinlock.fifo"));
	EXPECT_FALSE(glob_list_match("-spin*,*", "spinlock.fifo"));
	EXPECT_TRUE(glob_list_match("*,-spin*", "rcu.barrier"));
	EXPECT_FALSE(glob_list_match("-spin*", "rcu.barrier")); /* exclusions alone match nothing */
}

TEST(lib, parse_u64)
{
	u64 v;
	EXPECT_EQ(parse_u64("123", &v), 0);
	EXPECT_EQ(v, 123);
	EXPECT_EQ(parse_u64("0x1F", &v), 0);
	EXPECT_EQ(v, 31);
	EXPECT_EQ(parse_u64("512M", &v), 0);
	EXPECT_EQ(v, 512ULL << 20);
	EXPECT_EQ(parse_u64("", &v), -EINVAL);
	EXPECT_EQ(parse_u64("12x", &v), -EINVAL);
	EXPECT_EQ(parse_u64("0x", &v), -EINVAL);
	EXPECT_EQ(parse_u64("99999999999999999999", &v), -ERANGE);
	EXPECT_EQ(parse_u64("17179869184G", &v), -ERANGE); /* 2^34 GiB = 2^64 */
	EXPECT_EQ(parse_u64("16777216G", &v), 0);
	EXPECT_EQ(v, 1ULL << 54);
	EXPECT_EQ(parse_u64("1MB", &v), -EINVAL);
}

#define HASH_TEST_BITS 6
#define HASH_TEST_KEYS 1024

/*
 * 1024 keys into 64 buckets: 16 each if perfectly even. Fibonacci hashing of an
 * arithmetic sequence is within one or two of that; a hash that ignores the high
 * bits, or keeps only the low ones of an aligned pointer, fills a few buckets.
 */
static bool hash_spreads(const u32 *count)
{
	unsigned lo = ~0u, hi = 0;
	for (unsigned b = 0; b < (1u << HASH_TEST_BITS); b++) {
		lo = count[b] < lo ? count[b] : lo;
		hi = count[b] > hi ? count[b] : hi;
	}
	if (lo >= 8 && hi <= 24)
		return true;
	return test_fail(__FILE__, __LINE__, "buckets hold %u..%u keys, expected 8..24", lo, hi);
}

TEST(lib, hash_stays_in_range_and_spreads_consecutive_keys)
{
	u32 c32[1u << HASH_TEST_BITS] = {0}, c64[1u << HASH_TEST_BITS] = {0};
	for (u32 i = 0; i < HASH_TEST_KEYS; i++) {
		u32 a = hash_32(0x80200000u + i, HASH_TEST_BITS);
		/* Keys differing only above bit 32: a 64-bit hash must see them. */
		u32 b = hash_64(((u64)i << 32) | 7, HASH_TEST_BITS);
		ASSERT_LT(a, 1u << HASH_TEST_BITS);
		ASSERT_LT(b, 1u << HASH_TEST_BITS);
		c32[a]++;
		c64[b]++;
	}
	EXPECT_TRUE(hash_spreads(c32));
	EXPECT_TRUE(hash_spreads(c64));
	for (unsigned bits = 1; bits <= 32; bits++) {
		EXPECT_LE(hash_32(~0u, bits), (u32)((1ull << bits) - 1));
		EXPECT_LE(hash_64(~0ull, bits), (u32)((1ull << bits) - 1));
	}
}

TEST(lib, hash_ptr_spreads_aligned_objects)
{
	/* 64-byte objects side by side, as a slab lays out dentries or locks. */
	u32 count[1u << HASH_TEST_BITS] = {0};
	static char objs[HASH_TEST_KEYS][64] __attribute__((aligned(64)));
	for (unsigned i = 0; i < HASH_TEST_KEYS; i++) {
		u32 b = hash_ptr(objs[i], HASH_TEST_BITS);
		ASSERT_LT(b, 1u << HASH_TEST_BITS);
		count[b]++;
	}
	EXPECT_TRUE(hash_spreads(count));
}

TEST(lib, ksyms_lookup)
{
	uintptr_t off, size;
	const char *name = ksym_lookup((uintptr_t)kernel_main + 4, &off, &size);
	ASSERT_TRUE(name != NULL);
	EXPECT_EQ(strcmp(name, "kernel_main"), 0);
	EXPECT_EQ(off, 4);
	EXPECT_GT(size, 4);
	EXPECT_EQ(ksym_address("kernel_main"), (uintptr_t)kernel_main);
	EXPECT_TRUE(ksym_lookup(0, NULL, NULL) == NULL);
}

/* Walk our own stack through two known frames and check the unwinder names them. */
static uintptr_t unwound_pcs[4];

static void __noinline unwind_leaf(void)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0), pc = 0;
	for (int i = 0; i < 4; i++) {
		unwound_pcs[i] = arch_unwind(&fp, &pc) ? pc : 0;
		if (!unwound_pcs[i])
			break;
	}
	barrier();
}

static void __noinline unwind_middle(void)
{
	unwind_leaf();
	barrier(); /* keep the call from becoming a tail call */
}

TEST(lib, backtrace_names_callers)
{
	unwind_middle();
	barrier();
	const char *first = ksym_lookup(unwound_pcs[0] - 1, NULL, NULL);
	const char *second = ksym_lookup(unwound_pcs[1] - 1, NULL, NULL);
	ASSERT_TRUE(first && second);
	EXPECT_EQ(strcmp(first, "unwind_middle"), 0);
	EXPECT_EQ(strcmp(second, "test_lib_backtrace_names_callers"), 0);
}
