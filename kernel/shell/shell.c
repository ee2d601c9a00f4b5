/*
 * The console shell (see grace/shell.h): one kernel thread, bound to the boot
 * CPU because the selftests it can run assume they start there. It prints the
 * prompt, reads a line (line.c), splits it into words at spaces and runs the
 * command the first word names. The commands are in the .shell_cmds section,
 * put there by SHELL_CMD() in the files of the subsystems they belong to.
 */
#include <grace/arch.h>
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>
#include "shell_internal.h"

#define SHELL_MAX_ARGS 16
#define SHELL_PROMPT "grace> "
/* help's first column, a command and its arguments: most fit; a wider one is printed whole. */
#define HELP_WORDS_COLUMNS 28

extern const struct shell_cmd __shell_cmds_start[], __shell_cmds_end[];

static const struct shell_cmd *shell_find(const char *name)
{
	for (const struct shell_cmd *c = __shell_cmds_start; c < __shell_cmds_end; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

const struct shell_cmd *shell_find_duplicate(const struct shell_cmd *start,
					     const struct shell_cmd *end,
					     const struct shell_cmd **first)
{
	/* Quadratic, but over a few dozen commands, once a boot. */
	for (const struct shell_cmd *c = start; c < end; c++)
		for (const struct shell_cmd *e = start; e < c; e++)
			if (!strcmp(e->name, c->name)) {
				*first = e;
				return c;
			}
	return NULL;
}

void shell_init(void)
{
	const struct shell_cmd *first,
	    *dup = shell_find_duplicate(__shell_cmds_start, __shell_cmds_end, &first);
	if (dup)
		panic("shell: command '%s' is defined twice: in %s and in %s", dup->name,
		      first->file, dup->file);
}

bool shell_parse_on_off(const char *word, bool *on)
{
	if (!strcmp(word, "on"))
		*on = true;
	else if (!strcmp(word, "off"))
		*on = false;
	else
		return false;
	return true;
}

/* Split line in place into words; the number of words, or -E2BIG. */
static int shell_split(char *line, char **argv)
{
	int argc = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			return argc;
		if (argc == SHELL_MAX_ARGS)
			return -E2BIG;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
}

static void shell_run_line(char *line)
{
	char *argv[SHELL_MAX_ARGS + 1];
	int argc = shell_split(line, argv);
	if (argc == 0)
		return;
	if (argc < 0) {
		printk("shell: %s: more than %u words\n", argv[0], SHELL_MAX_ARGS);
		return;
	}
	argv[argc] = NULL;
	const struct shell_cmd *cmd = shell_find(argv[0]);
	if (!cmd) {
		printk("shell: %s: unknown command ('help' lists them)\n", argv[0]);
		return;
	}
	shell_command_begin();
	int ret = cmd->fn(argc, argv);
	shell_command_end();
	if (ret == SHELL_USAGE)
		printk("%s: usage: %s%s%s\n", cmd->name, cmd->name, *cmd->usage ? " " : "",
		       cmd->usage);
}

/* The shell thread's only; not on its stack, which is 16 KiB (KERNEL_STACK_SIZE). */
static char shell_line[SHELL_LINE_MAX + 1];

static int shell_thread(void *arg)
{
	(void)arg;
	for (;;) {
		console_print(SHELL_PROMPT, sizeof(SHELL_PROMPT) - 1);
		if (shell_read_line(shell_line) > 0)
			shell_run_line(shell_line);
	}
	return 0;
}

void shell_start(unsigned cpu)
{
	struct task *t = kthread_create_on_cpu(shell_thread, NULL, cpu, "shell");
	if (!t) {
		pr_err("shell: cannot create its thread: %s\n", errno_name(-ENOMEM));
		return;
	}
	t->flags |= TASK_CONSOLE; /* before it first runs: nobody else writes flags yet */
	wake_up_process(t);
	kthread_detach(t);
}

/* ---- the commands of the shell itself ---- */

SHELL_CMD(help, "[command]", "list the commands, or show one's usage")
{
	if (argc > 2)
		return SHELL_USAGE;
	if (argc == 2) {
		const struct shell_cmd *c = shell_find(argv[1]);
		if (!c) {
			printk("help: %s: unknown command\n", argv[1]);
			return -ENOENT;
		}
		printk("%s%s%s\n  %s\n", c->name, *c->usage ? " " : "", c->usage, c->help);
		return 0;
	}
	/* In name order; there are a few dozen at most. */
	const struct shell_cmd *last = NULL;
	for (;;) {
		const struct shell_cmd *next = NULL;
		for (const struct shell_cmd *c = __shell_cmds_start; c < __shell_cmds_end; c++)
			if ((!last || strcmp(c->name, last->name) > 0) &&
			    (!next || strcmp(c->name, next->name) < 0))
				next = c;
		if (!next)
			break;
		/* Name and usage in one column, the help in the next; a usage too wide for
		 * its column is printed whole, and the help goes under its column. */
		int words = (int)(strlen(next->name) + 1 + strlen(next->usage));
		if (words <= HELP_WORDS_COLUMNS)
			printk("  %s %s%*s %s\n", next->name, next->usage,
			       HELP_WORDS_COLUMNS - words, "", next->help);
		else
			printk("  %s %s\n  %*s %s\n", next->name, next->usage, HELP_WORDS_COLUMNS,
			       "", next->help);
		last = next;
	}
	printk("Line editing: arrows, Home/End (^A/^E), Backspace, Delete, ^W a word, ^U the line; "
	       "^C abandons a line or stops a command.\n");
	printk("Boot arguments are listed in README.md; 'cmdline' shows this boot's.\n");
	return 0;
}

SHELL_CMD(uptime, "", "time since boot, CPUs online, threads")
{
	if (argc != 1)
		return SHELL_USAGE;
	u64 ms = arch_clock_ns() / NSEC_PER_MSEC;
	printk("up %llu.%03llu s, %u CPUs online, %u threads\n", (unsigned long long)(ms / 1000),
	       (unsigned long long)(ms % 1000), num_online_cpus(), kthread_count());
	return 0;
}

SHELL_CMD(poweroff, "", "power the machine off (QEMU exits)")
{
	if (argc != 1)
		return SHELL_USAGE;
	printk("Powering off.\n");
	arch_shutdown(0);
}
