/*
 * The kernel command line: space-separated `key=value` or `flag` words. Parsed once
 * at boot into a table; unknown words are reported, not silently ignored.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/string.h>

#define CMDLINE_MAX_ARGS 32

static char cmdline_buf[CMDLINE_MAX];
static struct {
	const char *key, *value; /* value is "" for a bare flag */
} args[CMDLINE_MAX_ARGS];
static unsigned nr_args;

/* The parameters some part of Grace reads; anything else gets a warning. */
static const char *const known_keys[] = {
    "test",
    "bench",
    "spinlock",
    "spinlock_pv",
    "spinlock_delay",
    "quiet",
    "bench_ms",
    "profile",
    "ptlock",
    "pcp_huge",
    "vma_lookup",
    "rcu_fanout_leaf",
    "rcu_fanout",
    "rcu_cpu_stall_timeout",
    "rcu_torture_broken",
    "torture_s",
    "failslab",
    "vfs",
    "inode_free",
    "vfs_rows",
    "sink_cost_ns",
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
    /* What the test runner knows of the machine from outside (tests/kernel/host_expect.h). */
    "expect_cpus",
    "expect_hwids",
    "expect_mem_mib",
    "expect_nodes",
    "expect_virtio_mmio",
    "expect_loader",
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

void cmdline_parse(const char *cmdline)
{
	strlcpy(cmdline_buf, cmdline, sizeof(cmdline_buf));
	char *p = cmdline_buf;
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
		if (nr_args == CMDLINE_MAX_ARGS) {
			pr_warn("cmdline: more than %u arguments, ignoring '%s' and the rest\n",
				CMDLINE_MAX_ARGS, word);
			return;
		}
		char *eq = strchr(word, '=');
		args[nr_args].key = word;
		args[nr_args].value = "";
		if (eq) {
			*eq = '\0';
			args[nr_args].value = eq + 1;
		}
		if (!cmdline_known(word))
			pr_warn("cmdline: unknown argument '%s' ignored\n", word);
		nr_args++;
	}
}

const char *cmdline_get(const char *key)
{
	/* The last occurrence wins, so appended ARGS override defaults. */
	const char *value = NULL;
	for (unsigned i = 0; i < nr_args; i++)
		if (!strcmp(args[i].key, key))
			value = args[i].value;
	return value;
}

SHELL_CMD(cmdline, "", "this boot's command line, and the arguments Grace reads")
{
	char known[256];
	size_t len = 0;
	if (argc != 1)
		return SHELL_USAGE;
	printk("cmdline: '%s'\n", boot_info.cmdline);
	for (unsigned i = 0; i < ARRAY_SIZE(known_keys); i++)
		len += scnprintf(known + len, sizeof(known) - len, " %s", known_keys[i]);
	printk("known:%s (README.md says what each does)\n", known);
	return 0;
}
