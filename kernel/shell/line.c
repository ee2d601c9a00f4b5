/*
 * The shell's line editor: reads console characters into a line, echoing them,
 * with the keys a serial terminal sends:
 *
 *   Backspace (DEL or ^H)  erase the last character
 *   ^U                     erase the whole line
 *   ^C                     abandon the line (a new prompt follows)
 *   Up / Down (ESC [ A/B)  step back and forth through the last lines entered
 *   Enter (CR, LF or CRLF) end the line
 *
 * Editing happens at the end of the line only; other escape sequences (the
 * left and right arrows, function keys) are read and ignored, so they cannot
 * leave stray characters in a command. One reader, so the state is static.
 */
#include <grace/console.h>
#include <grace/string.h>
#include "shell_internal.h"

#define KEY_CTRL_C 0x03
#define KEY_CTRL_H 0x08
#define KEY_CTRL_U 0x15
#define KEY_ESC 0x1b
#define KEY_DEL 0x7f

static struct {
	char lines[SHELL_HISTORY][SHELL_LINE_MAX];
	unsigned count; /* lines ever entered; the newest is lines[(count - 1) % SHELL_HISTORY] */
} history;

static bool after_cr;	/* the last key ended a line with CR: a LF next is its CRLF's */
static int unread = -1; /* a key read ahead (after an ESC) and given back */

static char next_key(void)
{
	if (unread >= 0) {
		char c = (char)unread;
		unread = -1;
		return c;
	}
	return console_getc();
}

static void echo(const char *s)
{
	console_print(s, strlen(s));
}

static void erase_chars(unsigned n)
{
	while (n--)
		echo("\b \b");
}

static void history_add(const char *line)
{
	if (!*line)
		return;
	if (history.count && !strcmp(history.lines[(history.count - 1) % SHELL_HISTORY], line))
		return;
	strlcpy(history.lines[history.count % SHELL_HISTORY], line, SHELL_LINE_MAX);
	history.count++;
}

/* Replace what is on the line with `with`, on screen too. */
static void line_replace(char *buf, unsigned *len, const char *with)
{
	erase_chars(*len);
	*len = (unsigned)strlcpy(buf, with, SHELL_LINE_MAX);
	if (*len >= SHELL_LINE_MAX)
		*len = SHELL_LINE_MAX - 1;
	echo(buf);
}

/*
 * Read one escape sequence after ESC: '[' or 'O', parameter bytes, a final byte.
 * Returns the final byte ('A' up, 'B' down, ...), or 0 if it was not a sequence.
 */
static char read_escape(void)
{
	char c = next_key();
	if (c != '[' && c != 'O') {
		unread = (unsigned char)c; /* a lone ESC: the key after it counts */
		return 0;
	}
	do
		c = next_key();
	while (c >= 0x20 && c < 0x40); /* parameters and intermediates: digits, ';' ... */
	return c;
}

int shell_read_line(char *buf)
{
	unsigned len = 0;
	unsigned back = 0; /* how many lines up the history we are; 0: none (Down to 0 clears) */

	buf[0] = '\0';
	for (;;) {
		char c = next_key();
		bool was_cr = after_cr;
		after_cr = false;

		switch (c) {
		case '\r':
			after_cr = true;
			/* fall through */
		case '\n':
			if (c == '\n' && was_cr)
				continue; /* the LF of a CRLF: the line already ended */
			echo("\n");
			buf[len] = '\0';
			history_add(buf);
			return (int)len;
		case KEY_CTRL_C:
			echo("^C\n");
			return -1;
		case KEY_CTRL_U:
			erase_chars(len);
			len = 0;
			break;
		case KEY_DEL:
		case KEY_CTRL_H:
			if (len) {
				len--;
				erase_chars(1);
			}
			break;
		case KEY_ESC:
			switch (read_escape()) {
			case 'A':
				if (back < history.count && back < SHELL_HISTORY) {
					back++;
					line_replace(
					    buf, &len,
					    history.lines[(history.count - back) % SHELL_HISTORY]);
				}
				break;
			case 'B':
				if (back > 0) {
					back--;
					line_replace(buf, &len,
						     back ? history.lines[(history.count - back) %
									  SHELL_HISTORY]
							  : "");
				}
				break;
			default:
				break;
			}
			break;
		default:
			if (c < 0x20 || c > 0x7e)
				break; /* other control characters and 8-bit bytes */
			if (len == SHELL_LINE_MAX - 1) {
				echo("\a"); /* full: ring the bell, keep the line */
				break;
			}
			buf[len++] = c;
			buf[len] = '\0';
			console_print(&c, 1);
			break;
		}
	}
}
