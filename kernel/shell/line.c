/*
 * The shell's line editor: reads console characters into a line, echoing them,
 * with the keys a serial terminal (VT100, xterm, screen, minicom) sends:
 *
 *   Left / Right (ESC [ D/C)                  move the cursor one character
 *   Home (ESC [ H, ESC O H, ESC [ 1~, ^A)     move it to the start of the line
 *   End (ESC [ F, ESC O F, ESC [ 4~, ^E)      move it to the end
 *   Backspace (DEL or ^H)                     erase the character before the cursor
 *   Delete (ESC [ 3~)                         erase the character under the cursor
 *   ^W                                        erase the word before the cursor
 *   ^U                                        erase the whole line
 *   ^C                                        abandon the line (a new prompt follows)
 *   Up / Down (ESC [ A/B)                     step back and forth through the last lines
 *   Enter (CR, LF or CRLF)                    end the line, wherever the cursor is
 *
 * A character typed goes in at the cursor. The screen is kept in step with
 * relative moves only: after a change at the cursor the rest of the line is
 * written again, blanks cover what it no longer reaches, and the cursor goes
 * back (a backspace, or CSI n D for more than one), so the editor needs to know
 * neither the terminal's width nor where the prompt ended. Moves do not cross a
 * terminal's line wrap, so a line wider than the terminal is drawn right only
 * while the cursor stays on its last screen row. Other escape sequences
 * (function keys) are read whole and ignored, so they cannot leave stray
 * characters in a command.
 *
 * A line holds SHELL_LINE_MAX characters. What is typed beyond that is not
 * stored (the bell rings once), and the line is refused when it ends rather than
 * run cut short: a pasted command cut in the middle could do something else
 * entirely. ^U, ^C or a line recalled from the history start afresh. One reader,
 * so the state is static.
 */
#include <grace/console.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "shell_internal.h"

/* The lines entered, newest last; each a kmalloc'd copy of its text, without a NUL. */
static struct {
	char *text[SHELL_HISTORY];
	unsigned len[SHELL_HISTORY];
	unsigned count; /* lines ever entered; the newest is [(count - 1) % SHELL_HISTORY] */
} history;

struct line {
	char *buf;     /* SHELL_LINE_MAX + 1 bytes; NUL-terminated when returned */
	unsigned len;  /* characters in buf */
	unsigned pos;  /* the cursor: the index the next character typed goes to, 0..len */
	bool too_long; /* characters were typed past SHELL_LINE_MAX: refuse the line */
};

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

static void echo(const char *s, size_t n)
{
	console_print(s, n);
}

static void cursor_left(unsigned n)
{
	char seq[16];
	if (n == 1)
		echo("\b", 1);
	else if (n > 1)
		echo(seq, (size_t)snprintf(seq, sizeof(seq), "\x1b[%uD", n));
}

static void cursor_right(unsigned n)
{
	char seq[16];
	if (n)
		echo(seq, (size_t)snprintf(seq, sizeof(seq), "\x1b[%uC", n));
}

/*
 * The screen shows l's first `from` characters and the cursor after them: write the
 * rest, blank `stale` characters left over past the line's new end, and move the
 * cursor back to l->pos.
 */
static void redraw_from(const struct line *l, unsigned from, unsigned stale)
{
	static const char blanks[] = "                ";
	echo(l->buf + from, l->len - from);
	for (unsigned n = stale; n;) {
		unsigned k = n < sizeof(blanks) - 1 ? n : sizeof(blanks) - 1;
		echo(blanks, k);
		n -= k;
	}
	cursor_left(l->len + stale - l->pos);
}

static void line_insert(struct line *l, char c)
{
	if (l->len == SHELL_LINE_MAX) {
		if (!l->too_long)
			echo("\a", 1); /* once: a paste would ring it thousands of times */
		l->too_long = true;
		return;
	}
	memmove(l->buf + l->pos + 1, l->buf + l->pos, l->len - l->pos);
	l->buf[l->pos] = c;
	l->len++;
	l->pos++;
	redraw_from(l, l->pos - 1, 0);
}

/* Erase the n characters from the cursor on, on screen too. */
static void line_erase_at(struct line *l, unsigned n)
{
	memmove(l->buf + l->pos, l->buf + l->pos + n, l->len - l->pos - n);
	l->len -= n;
	redraw_from(l, l->pos, n);
}

/* Erase the n characters before the cursor. */
static void line_erase_before(struct line *l, unsigned n)
{
	if (!n)
		return;
	cursor_left(n);
	l->pos -= n;
	line_erase_at(l, n);
}

/* ^W: the spaces before the cursor, then the word before them. */
static unsigned word_before(const struct line *l)
{
	unsigned start = l->pos;
	while (start && l->buf[start - 1] == ' ')
		start--;
	while (start && l->buf[start - 1] != ' ')
		start--;
	return l->pos - start;
}

static void line_move_to(struct line *l, unsigned pos)
{
	if (pos < l->pos)
		cursor_left(l->pos - pos);
	else
		cursor_right(pos - l->pos);
	l->pos = pos;
}

/* Replace the line with text (len characters), on screen too; the cursor goes to its end. */
static void line_replace(struct line *l, const char *text, unsigned len)
{
	unsigned old = l->len;
	line_move_to(l, 0);
	memcpy(l->buf, text, len);
	l->len = l->pos = len;
	l->too_long = false;
	redraw_from(l, 0, old > len ? old - len : 0);
}

static void history_add(const char *line, unsigned len)
{
	unsigned newest = (history.count - 1) % SHELL_HISTORY;
	if (!len)
		return;
	if (history.count && history.len[newest] == len && !memcmp(history.text[newest], line, len))
		return;
	/* Without memory the line is not remembered; the shell goes on. */
	char *copy = kmalloc(len);
	if (!copy)
		return;
	memcpy(copy, line, len);
	unsigned slot = history.count % SHELL_HISTORY;
	kfree(history.text[slot]);
	history.text[slot] = copy;
	history.len[slot] = len;
	history.count++;
}

/* The line `back` entries up the history (1: the newest). */
static void line_recall(struct line *l, unsigned back)
{
	unsigned slot = (history.count - back) % SHELL_HISTORY;
	if (back)
		line_replace(l, history.text[slot], history.len[slot]);
	else
		line_replace(l, "", 0);
}

/*
 * Read one escape sequence after ESC: '[' or 'O', parameter bytes, a final byte.
 * Returns the final byte ('A' up, 'D' left, '~' for ESC [ n ~ ...) and sets *param
 * to its first number (0 if none), or returns 0 if it was not a sequence.
 */
static char read_escape(unsigned *param)
{
	bool first = true; /* still in the first parameter */
	char c = next_key();
	*param = 0;
	if (c != '[' && c != 'O') {
		unread = (unsigned char)c; /* a lone ESC: the key after it counts */
		return 0;
	}
	for (;;) {
		c = next_key();
		if (c < 0x20 || c >= 0x40)
			return c; /* the final byte */
		if (c >= '0' && c <= '9' && first && *param < 1000)
			*param = *param * 10 + (unsigned)(c - '0');
		else
			first = false; /* ';' and what follows: modifiers, ignored */
	}
}

/* Act on the escape sequence after an ESC; one the editor does not know does nothing. */
static void line_escape(struct line *l, unsigned *back)
{
	unsigned param;
	switch (read_escape(&param)) {
	case 'A':
		if (*back < history.count && *back < SHELL_HISTORY)
			line_recall(l, ++*back);
		break;
	case 'B':
		if (*back > 0)
			line_recall(l, --*back);
		break;
	case 'C':
		if (l->pos < l->len)
			line_move_to(l, l->pos + 1);
		break;
	case 'D':
		if (l->pos > 0)
			line_move_to(l, l->pos - 1);
		break;
	case 'H':
		line_move_to(l, 0);
		break;
	case 'F':
		line_move_to(l, l->len);
		break;
	case '~':
		if (param == 1 || param == 7) /* Home: VT220 and rxvt */
			line_move_to(l, 0);
		else if (param == 4 || param == 8) /* End */
			line_move_to(l, l->len);
		else if (param == 3 && l->pos < l->len) /* Delete */
			line_erase_at(l, 1);
		break;
	default:
		break;
	}
}

int shell_read_line(char *buf)
{
	struct line l = {.buf = buf};
	unsigned back = 0; /* how many lines up the history we are; 0: none (Down to 0 clears) */

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
			echo("\n", 1);
			if (l.too_long) {
				printk("shell: line longer than %u bytes, not run\n",
				       SHELL_LINE_MAX);
				return -1;
			}
			buf[l.len] = '\0';
			history_add(buf, l.len);
			return (int)l.len;
		case KEY_CTRL_C:
			echo("^C\n", 3);
			return -1;
		case KEY_CTRL_U:
			line_replace(&l, "", 0);
			break;
		case KEY_CTRL_W:
			line_erase_before(&l, word_before(&l));
			break;
		case KEY_DEL:
		case KEY_CTRL_H:
			if (l.pos)
				line_erase_before(&l, 1);
			break;
		case KEY_CTRL_A:
			line_move_to(&l, 0);
			break;
		case KEY_CTRL_E:
			line_move_to(&l, l.len);
			break;
		case KEY_ESC:
			line_escape(&l, &back);
			break;
		default:
			if (c >= 0x20 && c <= 0x7e)
				line_insert(&l, c);
			break; /* other control characters and 8-bit bytes are ignored */
		}
	}
}
