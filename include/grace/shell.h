/*
 * The console shell: a kernel thread on the boot CPU that reads lines from the
 * console (grace/console.h, filled by the UART's receive interrupt), edits them,
 * and runs the command a line names. Nothing of it runs in interrupt context.
 *
 * A subsystem adds a command where its code lives, as tests are added:
 *
 *	SHELL_CMD(uptime, "", "time since boot")
 *	{
 *		if (argc != 1)
 *			return SHELL_USAGE;
 *		...
 *		return 0;
 *	}
 *
 * The body sees argc and argv (argv[0] is the command's name). It prints its own
 * errors as one line, `name: what: why`, and returns nonzero; SHELL_USAGE makes
 * the shell print the usage line instead. Output is plain text a script can read.
 */
#ifndef GRACE_SHELL_H
#define GRACE_SHELL_H

#include <grace/compiler.h>
#include <grace/types.h>

struct shell_cmd {
	const char *name;
	const char *usage; /* the arguments, e.g. "on|off|show"; "" for none */
	const char *help;  /* one line */
	int (*fn)(int argc, char **argv);
	const char *file; /* where it is defined, to name both places of a name taken twice */
};

/* A command's return: print "name: usage: name <usage>". */
#define SHELL_USAGE (-1000)

#define SHELL_CMD(cmd, usage_, help_)                                                              \
	static int shell_cmd_##cmd(int argc, char **argv);                                         \
	static const struct shell_cmd __shell_cmd_##cmd __section(".shell_cmds")                   \
	    __used __aligned(8) = {#cmd, usage_, help_, shell_cmd_##cmd, __FILE__};                \
	static int shell_cmd_##cmd(int argc, char **argv)

/*
 * The first command in [start, end) whose name an earlier one already has, or NULL;
 * *first is set to that earlier one.
 */
const struct shell_cmd *shell_find_duplicate(const struct shell_cmd *start,
					     const struct shell_cmd *end,
					     const struct shell_cmd **first);

/*
 * Check the commands every boot: a name defined twice would leave one of them
 * unreachable (the lookup takes the first in link order), so it panics naming both.
 */
void shell_init(void);

/* Start the shell thread on cpu; it prints the first prompt. */
void shell_start(unsigned cpu);

/*
 * Has ^C been typed since the running command started? A command that can run long
 * (one that repeats or waits: ping, test, bench) asks between its steps and stops
 * early when it has; the first call that answers true prints "^C". False outside a
 * shell command (a boot's test=, a kernel thread).
 */
bool shell_interrupted(void);

/*
 * console_input()'s, from the receive interrupt: take c if it is a ^C that comes while a
 * shell command runs (kernel/shell/interrupt.c); false leaves it to the line editor.
 */
bool shell_input_interrupt(char c);

/* Parse "on" or "off" into *on; false (and nothing set) for anything else. */
bool shell_parse_on_off(const char *word, bool *on);

#endif
