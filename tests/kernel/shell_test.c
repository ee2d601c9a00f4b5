/*
 * Selftests for the shell's command table: a name taken twice is found, and the
 * table this kernel was linked with has none (the boot check would have panicked);
 * and what help and cmdline print, read back from the log, against the
 * registrations they print: every command and every known argument, whole.
 */
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/string.h>
#include <grace/test.h>
#include "../../kernel/cmdline_internal.h"
#include "log_capture.h"

extern const struct shell_cmd __shell_cmds_start[], __shell_cmds_end[];

static int shell_test_nop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

TEST(shell, a_command_name_defined_twice_is_found_with_both_places)
{
	const struct shell_cmd table[] = {
	    {"ls", "", "", shell_test_nop, "fs/shell_cmds.c"},
	    {"route", "", "", shell_test_nop, "net/shell_cmds.c"},
	    {"arp", "", "", shell_test_nop, "net/shell_cmds.c"},
	    {"route", "", "", shell_test_nop, "net/ipv4/shell_cmds.c"},
	};
	const struct shell_cmd *first = NULL, *dup;

	dup = shell_find_duplicate(table, table + 3, &first);
	EXPECT_TRUE(dup == NULL);
	dup = shell_find_duplicate(table, table + 4, &first);
	EXPECT_TRUE(dup == &table[3]);
	EXPECT_TRUE(first == &table[1]);
}

TEST(shell, every_linked_command_has_a_name_of_its_own)
{
	const struct shell_cmd *first = NULL, *dup = shell_find_duplicate(__shell_cmds_start,
									  __shell_cmds_end, &first);
	if (dup)
		test_fail(__FILE__, __LINE__, "'%s' is defined in %s and in %s", dup->name,
			  first->file, dup->file);
	EXPECT_GT(__shell_cmds_end - __shell_cmds_start, 20);
}

static struct log_capture capture; /* 32 KiB: not on a thread's stack */

static const struct shell_cmd *shell_test_find(const char *name)
{
	for (const struct shell_cmd *c = __shell_cmds_start; c < __shell_cmds_end; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* HELP_WORDS_COLUMNS in kernel/shell/shell.c: where help's second column starts, less 3. */
#define HELP_COLUMN 28

TEST(shell, help_prints_every_command_whole_and_in_its_columns)
{
	const struct shell_cmd *help = shell_test_find("help");
	char *argv[] = {"help", NULL};
	char want[512];

	ASSERT_TRUE(help != NULL);
	log_capture_start(&capture);
	EXPECT_EQ(help->fn(1, argv), 0);
	log_capture_stop(&capture);
	ASSERT_FALSE(capture.overflowed);
	for (const struct shell_cmd *c = __shell_cmds_start; c < __shell_cmds_end; c++) {
		/* "  name usage", the help at its column, or under it on the next line. */
		int words = (int)(strlen(c->name) + 1 + strlen(c->usage)), n;
		if (words <= HELP_COLUMN)
			n = snprintf(want, sizeof(want), "  %s %s%*s %s", c->name, c->usage,
				     HELP_COLUMN - words, "", c->help);
		else
			n = snprintf(want, sizeof(want), "  %s %s\n  %*s %s", c->name, c->usage,
				     HELP_COLUMN, "", c->help);
		if (!EXPECT_LT(n, (int)sizeof(want)))
			continue;
		if (!log_capture_has(&capture, want))
			test_fail(__FILE__, __LINE__, "help has no line '%s' for %s's registration",
				  want, c->file);
	}
}

/* The index of the known key that is exactly w[0..n), or -1. */
static int shell_test_known_index(const char *w, size_t n)
{
	for (unsigned i = 0; cmdline_known_key(i); i++)
		if (strlen(cmdline_known_key(i)) == n && !strncmp(cmdline_known_key(i), w, n))
			return (int)i;
	return -1;
}

#define SHELL_TEST_MAX_KEYS 128

TEST(shell, cmdline_lists_every_known_argument_whole)
{
	const struct shell_cmd *cmd = shell_test_find("cmdline");
	char *argv[] = {"cmdline", NULL};
	static bool listed[SHELL_TEST_MAX_KEYS];
	const char *from = NULL, *line;

	ASSERT_TRUE(cmd != NULL);
	memset(listed, 0, sizeof(listed));
	log_capture_start(&capture);
	EXPECT_EQ(cmd->fn(1, argv), 0);
	log_capture_stop(&capture);
	ASSERT_FALSE(capture.overflowed);
	/* The list: "known:" and keys, then lines that go on under an indent, none too wide. */
	line = log_capture_find(&capture, &from, "known:");
	ASSERT_TRUE(line != NULL);
	line += strlen("known:");
	for (;;) {
		const char *end = strchr(line, '\n');
		const char *stop = end ? end : line + strlen(line);
		EXPECT_LT(stop - line, 100);
		for (const char *w = line; w < stop;) {
			while (w < stop && *w == ' ')
				w++;
			const char *e = w;
			while (e < stop && *e != ' ')
				e++;
			if (e == w)
				break;
			int i = shell_test_known_index(w, (size_t)(e - w));
			if (i < 0 || i >= SHELL_TEST_MAX_KEYS) {
				char word[64];
				size_t n = (size_t)(e - w) + 1;
				strlcpy(word, w, n < sizeof(word) ? n : sizeof(word));
				test_fail(__FILE__, __LINE__, "cmdline lists '%s', not a known key",
					  word);
			} else {
				listed[i] = true;
			}
			w = e;
		}
		const char *next = end ? log_line_text(end + 1) : "";
		if (next[0] != ' ')
			break;
		line = next;
	}
	for (unsigned i = 0; cmdline_known_key(i); i++)
		if (i >= SHELL_TEST_MAX_KEYS || !listed[i])
			test_fail(__FILE__, __LINE__, "cmdline does not list '%s' whole",
				  cmdline_known_key(i));
}
