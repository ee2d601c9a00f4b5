/*
 * Selftests for the shell's command table: a name taken twice is found, and the
 * table this kernel was linked with has none (the boot check would have panicked).
 */
#include <grace/shell.h>
#include <grace/string.h>
#include <grace/test.h>

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
