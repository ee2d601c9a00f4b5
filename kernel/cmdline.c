/*
 * The kernel command line: space-separated `key=value` or `flag` words. Parsed once
 * at boot into a table; unknown words are reported, not silently ignored.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/string.h>
#include "cmdline_internal.h"

/* Written once at boot, before any other CPU runs; read-only after. */
static struct cmdline_table boot_args;

/* The parameters some part of Grace reads; anything else gets a warning. */
static const char *const known_keys[] = {
    "test",
    "bench",
    "init",
    "spinlock",
    "spinlock_pv",
    "spinlock_delay",
    "quiet",
    "bench_ms",
    "profile",
    "ptlock",
    "pt_free",
    "sched_domains",
    "pcp_huge",
    "pcp_high",
    "vma_lookup",
    "vma_free",
    "rcu_fanout_leaf",
    "rcu_fanout",
    "rcu_qs_points",
    "rcu_cpu_stall_timeout",
    "rcu_torture_broken",
    "torture_s",
    "failslab",
    "vfs",
    "inode_free",
    "file_free",
    "vfs_rows",
    "sink_cost_ns",
    "eth1",
    "rtcache",
    "rt_gc_interval",
    "rt_gc_timeout",
    "rt_gc_thresh",
    "rt_gc_elasticity",
    "neigh_gc_interval",
    "neigh_gc_thresh",
    "rtcache_rows",
    "thp_rows",
    "poweroff",
    "printk.time",
    /* What the test runner knows of the machine from outside (tests/kernel/host_expect.h). */
    "expect_cpus",
    "expect_hwids",
    "expect_mem_mib",
    "expect_nodes",
    "expect_virtio_mmio",
    "expect_loader",
    "expect_firmware",
    /* The host runner's UDP listener at the slirp gateway (tests/kernel/virtio_net_test.c). */
    "net_host_port",
};

static bool cmdline_known(const char *key)
{
	for (unsigned i = 0; i < ARRAY_SIZE(known_keys); i++)
		if (!strcmp(key, known_keys[i]))
			return true;
	return false;
}

void cmdline_table_parse(struct cmdline_table *t, const char *line, bool warn_unknown)
{
	strlcpy(t->buf, line, sizeof(t->buf));
	t->nr_args = 0;
	char *p = t->buf;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		char *word = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
		if (t->nr_args == CMDLINE_MAX_ARGS) {
			pr_warn("cmdline: more than %u arguments, ignoring '%s' and the rest\n",
				CMDLINE_MAX_ARGS, word);
			return;
		}
		char *eq = strchr(word, '=');
		t->args[t->nr_args].key = word;
		t->args[t->nr_args].value = "";
		if (eq) {
			*eq = '\0';
			t->args[t->nr_args].value = eq + 1;
		}
		if (warn_unknown && !cmdline_known(word))
			pr_warn("cmdline: unknown argument '%s' ignored\n", word);
		t->nr_args++;
	}
}

const char *cmdline_table_get(const struct cmdline_table *t, const char *key)
{
	/* The last occurrence wins, so appended ARGS override defaults. */
	const char *value = NULL;
	for (unsigned i = 0; i < t->nr_args; i++)
		if (!strcmp(t->args[i].key, key))
			value = t->args[i].value;
	return value;
}

u64 cmdline_table_get_uint(const struct cmdline_table *t, const char *key, u64 def, u64 min,
			   u64 max)
{
	const char *v = cmdline_table_get(t, key);
	u64 x;
	if (!v)
		return def;
	if (parse_u64(v, &x) || x < min || x > max) {
		pr_warn("cmdline: %s=%s: expected %llu..%llu, using %llu\n", key, v, min, max, def);
		return def;
	}
	return x;
}

unsigned cmdline_table_get_choice(const struct cmdline_table *t, const char *key,
				  const char *const *choices, unsigned nr_choices, unsigned def)
{
	const char *v = cmdline_table_get(t, key);
	char expected[128];
	size_t len = 0;
	if (!v)
		return def;
	for (unsigned i = 0; i < nr_choices; i++) {
		if (!strcmp(v, choices[i]))
			return i;
		len += scnprintf(expected + len, sizeof(expected) - len, "%s%s", i ? "|" : "",
				 choices[i]);
	}
	pr_warn("cmdline: %s=%s: expected %s, using %s\n", key, v, expected, choices[def]);
	return def;
}

bool cmdline_table_get_bool(const struct cmdline_table *t, const char *key, bool def)
{
	/* "" is a bare flag: `quiet` means quiet=1. */
	static const char *const yes[] = {"", "1", "on", "yes", "true"};
	static const char *const no[] = {"0", "off", "no", "false"};
	const char *v = cmdline_table_get(t, key);
	if (!v)
		return def;
	for (unsigned i = 0; i < ARRAY_SIZE(yes); i++)
		if (!strcmp(v, yes[i]))
			return true;
	for (unsigned i = 0; i < ARRAY_SIZE(no); i++)
		if (!strcmp(v, no[i]))
			return false;
	pr_warn("cmdline: %s=%s: expected 1|on|yes|true or 0|off|no|false, using %s\n", key, v,
		def ? "true" : "false");
	return def;
}

void cmdline_parse(const char *cmdline)
{
	cmdline_table_parse(&boot_args, cmdline, true);
}

const char *cmdline_get(const char *key)
{
	return cmdline_table_get(&boot_args, key);
}

u64 cmdline_get_uint(const char *key, u64 def, u64 min, u64 max)
{
	return cmdline_table_get_uint(&boot_args, key, def, min, max);
}

unsigned cmdline_get_choice(const char *key, const char *const *choices, unsigned nr_choices,
			    unsigned def)
{
	return cmdline_table_get_choice(&boot_args, key, choices, nr_choices, def);
}

bool cmdline_get_bool(const char *key, bool def)
{
	return cmdline_table_get_bool(&boot_args, key, def);
}

const char *cmdline_known_key(unsigned i)
{
	return i < ARRAY_SIZE(known_keys) ? known_keys[i] : NULL;
}

/* Wide enough for a terminal; a list longer than one line goes on under an indent. */
#define CMDLINE_SHOW_COLUMNS 100

SHELL_CMD(cmdline, "", "this boot's command line, and the arguments Grace reads")
{
	/* One line of the list; a key is added only where it fits whole, so none is cut. */
	char line[CMDLINE_SHOW_COLUMNS + 1];
	size_t len;
	if (argc != 1)
		return SHELL_USAGE;
	printk("cmdline: '%s'\n", boot_info.cmdline);
	len = strlcpy(line, "known:", sizeof(line));
	for (unsigned i = 0; i < ARRAY_SIZE(known_keys); i++) {
		size_t key = strlen(known_keys[i]);
		if (len + 1 + key >= sizeof(line)) {
			printk("%s\n", line);
			len = strlcpy(line, " ", sizeof(line));
		}
		if (len + 1 + key >= sizeof(line)) {
			printk("  %s\n", known_keys[i]); /* longer than a line: alone, whole */
			continue;
		}
		line[len++] = ' ';
		len += strlcpy(line + len, known_keys[i], sizeof(line) - len);
	}
	printk("%s\n", line);
	printk("README.md says what each does.\n");
	return 0;
}
