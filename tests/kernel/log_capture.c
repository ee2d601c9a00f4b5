/* Reading back what a selftest made the kernel print (log_capture.h). */
#include <grace/string.h>
#include "../../kernel/printk_internal.h"
#include "log_capture.h"

void log_capture_start(struct log_capture *c)
{
	c->from = printk_log_head();
	c->len = 0;
	c->overflowed = false;
	c->text[0] = '\0';
}

void log_capture_stop(struct log_capture *c)
{
	size_t pos = c->from, head = printk_log_head();
	c->len = printk_log_read(&pos, c->text, sizeof(c->text) - 1);
	c->overflowed = pos != head || pos - c->len != c->from;
	c->text[c->len] = '\0';
}

const char *log_line_text(const char *line)
{
	const char *p = line;
	if (*p++ != '[')
		return line;
	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return line;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p++ != '.')
		return line;
	for (int i = 0; i < 6; i++, p++)
		if (*p < '0' || *p > '9')
			return line;
	return p[0] == ']' && p[1] == ' ' ? p + 2 : line;
}

const char *log_capture_find(const struct log_capture *c, const char **from, const char *start)
{
	const char *line = *from ? *from : c->text;
	size_t n = strlen(start);
	while (*line) {
		const char *end = strchr(line, '\n');
		const char *next = end ? end + 1 : line + strlen(line);
		const char *text = log_line_text(line);
		if (!strncmp(text, start, n)) {
			*from = next;
			return text;
		}
		line = next;
	}
	*from = line;
	return NULL;
}

bool log_capture_has(const struct log_capture *c, const char *text)
{
	const char *from = NULL, *line;
	size_t n = strlen(text);
	while ((line = log_capture_find(c, &from, text)))
		if (line[n] == '\n' || line[n] == '\0')
			return true;
	return false;
}
