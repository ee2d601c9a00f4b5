/* What the shell's files share: the line editor's limits and entry point, the keys, ^C's state. */
#ifndef SHELL_INTERNAL_H
#define SHELL_INTERNAL_H

/*
 * The longest line the shell runs, in characters (its buffers hold one more, the NUL):
 * Linux's canonical tty line (N_TTY_BUF_SIZE, TTY_LINE_MAX in tty.c), so that a line
 * that works in a terminal works here. A longer one is refused whole.
 */
#define SHELL_LINE_MAX 4096
#define SHELL_HISTORY 16 /* lines the up arrow can recall */

#define KEY_CTRL_A 0x01
#define KEY_CTRL_C 0x03
#define KEY_CTRL_E 0x05
#define KEY_CTRL_H 0x08
#define KEY_CTRL_U 0x15
#define KEY_CTRL_W 0x17
#define KEY_ESC 0x1b
#define KEY_DEL 0x7f

/*
 * Read a line into buf (SHELL_LINE_MAX + 1 bytes) with echo and editing (line.c);
 * its length, or -1 when it is not to be run (^C abandoned it, or it was too long).
 */
int shell_read_line(char *buf);

/* Around each command the shell runs (interrupt.c): from then on a ^C is the command's. */
void shell_command_begin(void);
/* ...and after it: prints "^C" if one came that the command never asked about. */
void shell_command_end(void);

#endif
