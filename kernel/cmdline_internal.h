/*
 * A parsed command line as a table, so that kernel/cmdline.c keeps the boot's and
 * its tests can parse lines of their own without touching the boot's.
 */
#ifndef GRACE_CMDLINE_INTERNAL_H
#define GRACE_CMDLINE_INTERNAL_H

#include <grace/boot_info.h>
#include <grace/types.h>

#define CMDLINE_MAX_ARGS 32

struct cmdline_table {
	char buf[CMDLINE_MAX]; /* the line, cut into words in place */
	struct {
		const char *key, *value; /* value is "" for a bare flag */
	} args[CMDLINE_MAX_ARGS];
	unsigned nr_args;
};

/* Replaces t's contents with line's words; warn_unknown: report keys no one reads. */
void cmdline_table_parse(struct cmdline_table *t, const char *line, bool warn_unknown);
const char *cmdline_table_get(const struct cmdline_table *t, const char *key);
u64 cmdline_table_get_uint(const struct cmdline_table *t, const char *key, u64 def, u64 min,
			   u64 max);
unsigned cmdline_table_get_choice(const struct cmdline_table *t, const char *key,
				  const char *const *choices, unsigned nr_choices, unsigned def);
bool cmdline_table_get_bool(const struct cmdline_table *t, const char *key, bool def);

/* The i-th of the arguments some part of Grace reads (no warning), or NULL past the end. */
const char *cmdline_known_key(unsigned i);

#endif
