/*
 * Selftests for what printk puts in front of a message, read back from the log: the
 * time since boot (unless the shell's thread prints, or printk.time=0), "expected: "
 * on an error line the running test announced, and backtraces in Linux's form.
 */
#include <grace/atomic.h>
#include <grace/cmdline.h>
#include <grace/compiler.h>
#include <grace/ksyms.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/selftest.h>
#include <grace/string.h>
#include <grace/test.h>
#include "log_capture.h"

static struct log_capture capture; /* 32 KiB: not on a thread's stack */

/* What printk puts first on this thread's lines: the time, unless it is the shell's. */
static bool printk_test_timed(void)
{
	return cmdline_get_bool("printk.time", true) && !(current->flags & TASK_CONSOLE);
}

TEST(printk, lines_start_with_the_seconds_since_boot)
{
	const char *from = NULL, *line;
	log_capture_start(&capture);
	printk("printk test: a line with the time in front\n");
	log_capture_stop(&capture);
	line = log_capture_find(&capture, &from, "printk test: a line with the time in front");
	ASSERT_TRUE(line != NULL);
	/* The line as logged: back up to its start, before the prefix log_line_text() skipped. */
	const char *start = line;
	while (start > capture.text && start[-1] != '\n')
		start--;
	if (!printk_test_timed()) {
		EXPECT_TRUE(start == line);
		return;
	}
	/* "[%5llu.%06llu] ": at least 5 digits of seconds, 6 of microseconds. */
	EXPECT_GE(line - start, (long)strlen("[    0.000000] "));
	EXPECT_TRUE(start[0] == '[' && line[-2] == ']' && line[-1] == ' ');
	EXPECT_TRUE(line[-9] == '.');
}

TEST(printk, an_announced_error_line_is_marked_expected)
{
	test_expect_message("printk test: announced");
	EXPECT_TRUE(selftest_expects("xx printk test: announced yy"));
	EXPECT_FALSE(selftest_expects("printk test: not announced"));
	log_capture_start(&capture);
	pr_err("printk test: announced error line\n");
	log_capture_stop(&capture);
	EXPECT_TRUE(log_capture_has(&capture, "expected: printk test: announced error line"));
}

static uintptr_t printk_test_return; /* where printk_test_dump_here() returns to */

static void __noinline printk_test_dump_here(void)
{
	printk_test_return = (uintptr_t)__builtin_return_address(0);
	dump_stack();
	barrier(); /* a call, not a tail jump: this function is on the stack */
}

static void __noinline printk_test_dump(void)
{
	printk_test_dump_here();
	barrier();
}

TEST(printk, backtrace_lines_are_linux_form_and_name_the_callers)
{
	char want[64];
	const char *from = NULL, *line;

	if (!ksym_address("dump_stack")) {
		test_skip("this image has no symbol table");
		return;
	}
	log_capture_start(&capture);
	printk_test_dump();
	log_capture_stop(&capture);
	ASSERT_TRUE(log_capture_find(&capture, &from, "Call trace:") != NULL);
	/* The first frame is dump_stack itself, its address in 16 hex digits, no 0x. */
	snprintf(want, sizeof(want), "  [<%016lx>] dump_stack+0x0/0x",
		 (unsigned long)ksym_address("dump_stack"));
	ASSERT_TRUE(log_capture_find(&capture, &from, want) != NULL);
	ASSERT_TRUE(log_capture_find(&capture, &from, "  [<") != NULL);
	/* A return address is printed as it is, and named by the call before it. */
	snprintf(want, sizeof(want), "  [<%016lx>] printk_test_dump+0x",
		 (unsigned long)printk_test_return);
	line = log_capture_find(&capture, &from, "  [<");
	ASSERT_TRUE(line != NULL);
	if (strncmp(line, want, strlen(want))) {
		char shown[80];
		size_t n = strchr(line, '\n') ? (size_t)(strchr(line, '\n') - line) : strlen(line);
		strlcpy(shown, line, n + 1 < sizeof(shown) ? n + 1 : sizeof(shown));
		test_fail(__FILE__, __LINE__, "expected '%s...', got '%s'", want, shown);
	}
}
