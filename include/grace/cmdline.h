/*
 * The kernel command line (boot_info.cmdline), parsed once at boot.
 *
 * The typed getters return def when the key is absent, and also, after one
 * warning in a single format ("cmdline: KEY=VALUE: expected WHAT, using DEF"),
 * when its value is not what they accept. The last occurrence of a key wins.
 */
#ifndef GRACE_CMDLINE_H
#define GRACE_CMDLINE_H

#include <grace/types.h>

void cmdline_parse(const char *cmdline);
/* The value of key=value, "" for a bare `key`, NULL when absent. */
const char *cmdline_get(const char *key);

/* A number parse_u64() accepts (decimal, 0x hex, K/M/G suffix) in [min, max]. */
u64 cmdline_get_uint(const char *key, u64 def, u64 min, u64 max);
/* The index of the value in choices[0..nr_choices). */
unsigned cmdline_get_choice(const char *key, const char *const *choices, unsigned nr_choices,
			    unsigned def);
/* A bare `key`, or key=1|on|yes|true: true; key=0|off|no|false: false. */
bool cmdline_get_bool(const char *key, bool def);

#endif
