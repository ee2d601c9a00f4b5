/* What the shell's files share: the line editor's limits and entry point. */
#ifndef SHELL_INTERNAL_H
#define SHELL_INTERNAL_H

#define SHELL_LINE_MAX 128 /* characters in a line, the NUL included */
#define SHELL_HISTORY 16   /* lines the up arrow can recall */

/*
 * Read a line into buf (SHELL_LINE_MAX bytes) with echo and editing (line.c);
 * its length, or -1 when ^C abandoned it.
 */
int shell_read_line(char *buf);

#endif
