/* Selftests for the command line's typed getters, on lines of their own (not the boot's). */
#include <grace/test.h>
#include "../../kernel/cmdline_internal.h"

static struct cmdline_table t;

static const char *const modes[] = {"batch", "single", "off"};

TEST(cmdline, uint_in_range_is_returned_and_missing_is_the_default)
{
	cmdline_table_parse(&t, "a=7 b=0x10 c=2K", false);
	EXPECT_EQ(cmdline_table_get_uint(&t, "a", 3, 1, 100), 7);
	EXPECT_EQ(cmdline_table_get_uint(&t, "b", 3, 1, 100), 16);
	EXPECT_EQ(cmdline_table_get_uint(&t, "c", 3, 1, 4096), 2048);
	EXPECT_EQ(cmdline_table_get_uint(&t, "missing", 3, 1, 100), 3);
	/* The bounds are inclusive. */
	EXPECT_EQ(cmdline_table_get_uint(&t, "a", 3, 7, 7), 7);
}

TEST(cmdline, uint_bad_or_out_of_range_is_the_default)
{
	cmdline_table_parse(&t, "bad=12x empty= neg=-1 low=1 high=101 flag", false);
	EXPECT_EQ(cmdline_table_get_uint(&t, "bad", 5, 1, 100), 5);
	EXPECT_EQ(cmdline_table_get_uint(&t, "empty", 5, 1, 100), 5);
	EXPECT_EQ(cmdline_table_get_uint(&t, "neg", 5, 1, 100), 5);
	EXPECT_EQ(cmdline_table_get_uint(&t, "low", 5, 2, 100), 5);
	EXPECT_EQ(cmdline_table_get_uint(&t, "high", 5, 1, 100), 5);
	EXPECT_EQ(cmdline_table_get_uint(&t, "flag", 5, 1, 100), 5);
}

TEST(cmdline, last_occurrence_wins)
{
	cmdline_table_parse(&t, "n=1 mode=single n=9 mode=off n=4", false);
	EXPECT_EQ(cmdline_table_get_uint(&t, "n", 0, 0, 10), 4);
	EXPECT_EQ(cmdline_table_get_choice(&t, "mode", modes, 3, 0), 2);
	/* A bad last value is not replaced by an earlier good one. */
	cmdline_table_parse(&t, "n=1 n=zz", false);
	EXPECT_EQ(cmdline_table_get_uint(&t, "n", 6, 0, 10), 6);
}

TEST(cmdline, choice_matches_whole_words_else_the_default)
{
	cmdline_table_parse(&t, "a=single b=sing c=singles d=BATCH e", false);
	EXPECT_EQ(cmdline_table_get_choice(&t, "a", modes, 3, 0), 1);
	EXPECT_EQ(cmdline_table_get_choice(&t, "b", modes, 3, 0), 0);
	EXPECT_EQ(cmdline_table_get_choice(&t, "c", modes, 3, 2), 2);
	EXPECT_EQ(cmdline_table_get_choice(&t, "d", modes, 3, 1), 1);
	EXPECT_EQ(cmdline_table_get_choice(&t, "e", modes, 3, 1), 1);
	EXPECT_EQ(cmdline_table_get_choice(&t, "missing", modes, 3, 2), 2);
}

TEST(cmdline, bool_words_a_bare_flag_and_bad_values)
{
	cmdline_table_parse(&t, "f y=yes o=on one=1 t=true n=no z=0 off=off fa=false bad=2", false);
	EXPECT_TRUE(cmdline_table_get_bool(&t, "f", false));
	EXPECT_TRUE(cmdline_table_get_bool(&t, "y", false));
	EXPECT_TRUE(cmdline_table_get_bool(&t, "o", false));
	EXPECT_TRUE(cmdline_table_get_bool(&t, "one", false));
	EXPECT_TRUE(cmdline_table_get_bool(&t, "t", false));
	EXPECT_FALSE(cmdline_table_get_bool(&t, "n", true));
	EXPECT_FALSE(cmdline_table_get_bool(&t, "z", true));
	EXPECT_FALSE(cmdline_table_get_bool(&t, "off", true));
	EXPECT_FALSE(cmdline_table_get_bool(&t, "fa", true));
	EXPECT_TRUE(cmdline_table_get_bool(&t, "bad", true));
	EXPECT_FALSE(cmdline_table_get_bool(&t, "bad", false));
	EXPECT_TRUE(cmdline_table_get_bool(&t, "missing", true));
}
