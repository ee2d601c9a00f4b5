/*
 * ^C for the shell's own commands. While a command runs, the shell reads no
 * input, so a ^C typed then would wait in the console's ring behind it;
 * console_input() offers each byte here first, from the receive interrupt, and
 * a ^C that comes while a command runs is taken out of band. The command sees it
 * when it next asks shell_interrupted(), between the steps of whatever it
 * repeats or waits for, and stops. A user program in the foreground (`run`) has
 * the key instead: SIGINT through tty_input_signal(), or a byte it reads in raw
 * mode. At the prompt, ^C reaches the line editor in order with the keys typed
 * before it; behind a paste held back by flow control it waits its turn.
 *
 * One word holds the state, so that a ^C that comes as a command ends is either
 * the command's or the next line's, never neither: the interrupt moves it from
 * RUNNING to INTERRUPTED with a compare-and-swap, the shell thread swaps in IDLE
 * when the command returns and sees what it was.
 */
#include <grace/atomic.h>
#include <grace/chrdev.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include "shell_internal.h"

enum shell_cmd_state { SHELL_IDLE, SHELL_RUNNING, SHELL_INTERRUPTED };

static int cmd_state = SHELL_IDLE;
static bool announced; /* "^C" printed for this command; the shell thread's only */

bool shell_input_interrupt(char c)
{
	if (c != KEY_CTRL_C || tty_foreground() > 0)
		return false;
	int old = SHELL_RUNNING;
	/* A second ^C while the first waits to be seen is taken too: one is enough. */
	return try_cmpxchg(&cmd_state, &old, SHELL_INTERRUPTED) || old == SHELL_INTERRUPTED;
}

bool shell_interrupted(void)
{
	if (READ_ONCE(cmd_state) != SHELL_INTERRUPTED)
		return false;
	if (!announced) {
		announced = true;
		printk("^C\n");
	}
	return true;
}

void shell_command_begin(void)
{
	announced = false;
	WRITE_ONCE(cmd_state, SHELL_RUNNING);
}

void shell_command_end(void)
{
	/* A command that never asked still shows that its ^C came (and was spent on it). */
	if (xchg(&cmd_state, SHELL_IDLE) == SHELL_INTERRUPTED && !announced)
		printk("^C\n");
}
