/*
 * The selftest runner. Tests run one at a time on the boot CPU (they fan out to
 * other CPUs themselves with smp_run_all). Output is KTAP version 1, printed raw:
 *
 *   KTAP version 1
 *   1..N
 *   # run 1 spinlock.mutual_exclusion
 *   ok 1 spinlock.mutual_exclusion
 *   # spinlock.mutual_exclusion: 120 ms
 *   ...
 *   tests: done
 *
 * The "# run" line lets the host runner name the test that was running if the
 * kernel hangs or panics.
 */
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/printk.h>
#include <grace/selftest.h>
#include <grace/shell.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>

#define TEST_MAX_FAILURE_LINES 8 /* per test; a loop of failures must not flood the log */
#define TEST_NAME_MAX 96
#define NO_TESTS_HERE "this image has no selftests (make qemu TESTS=1 boots the one that has)"

extern const struct test_case __testcases_start[], __testcases_end[];

/* What the test now running has recorded; reset before each test starts. */
static struct {
	atomic_t failures; /* failures may come from any CPU */
	char reason[128];  /* the first failure; under reason_lock */
	const char *skip;
} running_test;
static DEFINE_SPINLOCK(reason_lock); /* protects running_test.reason */

/*
 * The texts the running test announced with test_expect_message(), for printk to
 * mark the error lines it expects (selftest_expects()). The test's thread appends a
 * text, then publishes it by raising count with a release that pairs with the
 * reader's acquire; the count drops to 0 between tests. A reader on another CPU
 * that is slow across that reset may see a slot being rewritten: its line is then
 * marked as the next test's would be. Only the mark is at stake: the host runner
 * judges every such line against the "# expect:" lines it read.
 */
#define TEST_MAX_EXPECTED 8	   /* texts per test; the lockdep tests announce two */
#define TEST_EXPECTED_TEXT_MAX 128 /* a longer text is kept cut: it then matches more lines */
static struct {
	char text[TEST_MAX_EXPECTED][TEST_EXPECTED_TEXT_MAX]; /* written by the test's thread */
	unsigned count; /* slots published: store-release by the test's thread */
} expected_messages;

bool test_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	int n = atomic_fetch_add_relaxed(&running_test.failures, 1);
	if (n < TEST_MAX_FAILURE_LINES)
		printk_raw("# %s:%d: %s", file, line, msg);
	if (n == 0) {
		unsigned long flags = spin_lock_irqsave(&reason_lock);
		snprintf(running_test.reason, sizeof(running_test.reason), "%s:%d: %s", file, line,
			 msg);
		spin_unlock_irqrestore(&reason_lock, flags);
	}
	return false;
}

void test_skip(const char *reason)
{
	if (!reason || !*reason) {
		test_fail(__FILE__, __LINE__, "test_skip() needs a reason");
		return;
	}
	running_test.skip = reason;
}

void test_expect_message(const char *text)
{
	unsigned i = expected_messages.count;
	if (i < TEST_MAX_EXPECTED) {
		strlcpy(expected_messages.text[i], text, TEST_EXPECTED_TEXT_MAX);
		/* Pairs with the smp_load_acquire() in selftest_expects(). */
		smp_store_release(&expected_messages.count, i + 1);
	}
	printk_raw("# expect: %s", text);
}

bool selftest_expects(const char *message)
{
	/* Pairs with the smp_store_release() in test_expect_message(). */
	unsigned n = smp_load_acquire(&expected_messages.count);
	for (unsigned i = 0; i < n && i < TEST_MAX_EXPECTED; i++)
		if (strstr(message, expected_messages.text[i]))
			return true;
	return false;
}

bool test_failed(void)
{
	return atomic_read(&running_test.failures) != 0;
}

/* Does "suite.name" match any of the comma-separated globs? */
static bool test_selected(const struct test_case *tc, const char *globs)
{
	char name[TEST_NAME_MAX];
	snprintf(name, sizeof(name), "%s.%s", tc->suite, tc->name);
	return glob_list_match(globs, name);
}

int selftest_run(const char *globs)
{
	unsigned planned = 0, index = 0, passed = 0, failed = 0, skipped = 0;
	const struct test_case *tc;

	for (tc = __testcases_start; tc < __testcases_end; tc++)
		planned += test_selected(tc, globs);
	if (__testcases_end - __testcases_start == 0)
		pr_warn("test: " NO_TESTS_HERE "\n");
	else if (!planned)
		pr_warn("test: no test matches '%s'\n", globs);

	printk_raw("KTAP version 1");
	printk_raw("1..%u", planned);
	for (tc = __testcases_start; tc < __testcases_end; tc++) {
		if (!test_selected(tc, globs))
			continue;
		if (shell_interrupted())
			break; /* ^C at the shell: between tests, so none is left half done */
		index++;
		atomic_set(&running_test.failures, 0);
		running_test.reason[0] = '\0';
		running_test.skip = NULL;
		smp_store_release(&expected_messages.count, 0);

		printk_raw("# run %u %s.%s", index, tc->suite, tc->name);
		u64 start = arch_clock_ns();
		tc->fn();
		u64 ms = (arch_clock_ns() - start) / NSEC_PER_MSEC;
		/* What follows is not this test's. */
		smp_store_release(&expected_messages.count, 0);

		if (test_failed()) {
			printk_raw("not ok %u %s.%s # %s", index, tc->suite, tc->name,
				   running_test.reason);
			failed++;
		} else if (running_test.skip) {
			printk_raw("ok %u %s.%s # SKIP %s", index, tc->suite, tc->name,
				   running_test.skip);
			skipped++;
		} else {
			printk_raw("ok %u %s.%s", index, tc->suite, tc->name);
			passed++;
		}
		printk_raw("# %s.%s: %llu ms", tc->suite, tc->name, (unsigned long long)ms);
	}
	if (index < planned)
		printk_raw("# interrupted: %u of %u tests not run", planned - index, planned);
	printk_raw("# %u passed, %u failed, %u skipped", passed, failed, skipped);
	printk_raw("tests: done");
	return (int)failed;
}

SHELL_CMD(test, "glob[,glob...]", "run the selftests whose suite.name matches, printing KTAP")
{
	if (argc != 2)
		return SHELL_USAGE;
	if (__testcases_end - __testcases_start == 0) {
		printk("test: %s: " NO_TESTS_HERE "\n", argv[1]);
		return -ENOENT;
	}
	unsigned matches = 0;
	for (const struct test_case *tc = __testcases_start; tc < __testcases_end; tc++)
		matches += test_selected(tc, argv[1]);
	if (!matches) {
		printk("test: %s: no test matches\n", argv[1]);
		return -ENOENT;
	}
	selftest_run(argv[1]);
	return 0;
}
