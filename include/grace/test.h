/*
 * In-kernel selftests. TEST(suite, name) { ... } registers a test in the .testcases
 * section; the runner (kernel/selftest.c) runs the ones selected by test=<glob> on
 * the boot CPU and prints KTAP. Assertions may be used on any CPU (for example
 * inside a function given to smp_run_all): a failure is recorded for the running
 * test and printed with file:line, the expression, and the expected and actual values.
 *
 *   EXPECT_*  record a failure and continue.
 *   ASSERT_*  record a failure and return from the enclosing void function.
 *   test_skip("reason")  mark the running test skipped (call, then return).
 *   test_expect_message("text")  an error line with this text is about to be printed.
 */
#ifndef GRACE_TEST_H
#define GRACE_TEST_H

#include <grace/compiler.h>
#include <grace/types.h>

struct test_case {
	const char *suite;
	const char *name;
	void (*fn)(void);
};

#define TEST(suite, name)                                                                          \
	static void test_##suite##_##name(void);                                                   \
	static const struct test_case __test_##suite##_##name __section(".testcases")              \
	    __used __aligned(8) = {#suite, #name, test_##suite##_##name};                          \
	static void test_##suite##_##name(void)

/* Record a failure of the running test; returns false so macros can chain. */
bool test_fail(const char *file, int line, const char *fmt, ...) __printf(3, 4);
void test_skip(const char *reason);
/*
 * The running test is about to provoke an error line (printk KERN_ERR and worse,
 * an RCU stall report, a slab debug report) that contains text. Printed as the
 * KTAP comment "# expect: <text>": the host runner then excuses such lines while
 * this test runs, and fails the test if none of them appeared.
 */
void test_expect_message(const char *text);
/* True once the running test has recorded a failure. */
bool test_failed(void);

#define EXPECT_TRUE(c) ((c) ? true : test_fail(__FILE__, __LINE__, "expected %s", #c))
#define EXPECT_FALSE(c) (!(c) ? true : test_fail(__FILE__, __LINE__, "expected !(%s)", #c))
#define EXPECT_OP(a, op, b)                                                                        \
	({                                                                                         \
		long long __a = (long long)(a), __b = (long long)(b);                              \
		(__a op __b) ? true                                                                \
			     : test_fail(__FILE__, __LINE__, "expected %s %s %s: %lld vs %lld",    \
					 #a, #op, #b, __a, __b);                                   \
	})
#define EXPECT_EQ(a, b) EXPECT_OP(a, ==, b)
#define EXPECT_NE(a, b) EXPECT_OP(a, !=, b)
#define EXPECT_LT(a, b) EXPECT_OP(a, <, b)
#define EXPECT_LE(a, b) EXPECT_OP(a, <=, b)
#define EXPECT_GT(a, b) EXPECT_OP(a, >, b)
#define EXPECT_GE(a, b) EXPECT_OP(a, >=, b)

#define ASSERT_TRUE(c)                                                                             \
	do {                                                                                       \
		if (!EXPECT_TRUE(c))                                                               \
			return;                                                                    \
	} while (0)
#define ASSERT_FALSE(c)                                                                            \
	do {                                                                                       \
		if (!EXPECT_FALSE(c))                                                              \
			return;                                                                    \
	} while (0)
#define ASSERT_EQ(a, b)                                                                            \
	do {                                                                                       \
		if (!EXPECT_EQ(a, b))                                                              \
			return;                                                                    \
	} while (0)
#define ASSERT_NE(a, b)                                                                            \
	do {                                                                                       \
		if (!EXPECT_NE(a, b))                                                              \
			return;                                                                    \
	} while (0)
#define ASSERT_LT(a, b)                                                                            \
	do {                                                                                       \
		if (!EXPECT_LT(a, b))                                                              \
			return;                                                                    \
	} while (0)
#define ASSERT_LE(a, b)                                                                            \
	do {                                                                                       \
		if (!EXPECT_LE(a, b))                                                              \
			return;                                                                    \
	} while (0)
#define ASSERT_GT(a, b)                                                                            \
	do {                                                                                       \
		if (!EXPECT_GT(a, b))                                                              \
			return;                                                                    \
	} while (0)
#define ASSERT_GE(a, b)                                                                            \
	do {                                                                                       \
		if (!EXPECT_GE(a, b))                                                              \
			return;                                                                    \
	} while (0)

#endif
