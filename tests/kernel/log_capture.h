/*
 * What the kernel printed while a selftest ran something, read back from printk's
 * log (kernel/printk_internal.h), as lines without their time prefix: the tests of
 * what commands, printk and backtraces print. The definitions are in log_capture.c.
 */
#ifndef TESTS_LOG_CAPTURE_H
#define TESTS_LOG_CAPTURE_H

#include <grace/types.h>

/* Far more than help, cmdline or a backtrace prints; other CPUs' lines share it. */
#define LOG_CAPTURE_MAX 32768

struct log_capture {
	size_t from; /* the log's head when the capture started */
	size_t len;
	bool overflowed; /* more was printed than text holds: the test cannot judge */
	char text[LOG_CAPTURE_MAX];
};

void log_capture_start(struct log_capture *c);
/* Copy what was printed since log_capture_start() into c->text, NUL-terminated. */
void log_capture_stop(struct log_capture *c);

/*
 * The text of the first captured line, at or after *from, that starts with start
 * (after its time prefix, if it has one); NULL if none. *from moves past that line.
 */
const char *log_capture_find(const struct log_capture *c, const char **from, const char *start);

/*
 * Whether some captured line, its time prefix aside, is exactly text; a text of
 * several lines ("a\nb") must be those lines in a row, the later ones unprefixed.
 */
bool log_capture_has(const struct log_capture *c, const char *text);

/* Where a line's text starts: past "[    0.123456] " if the line has the time prefix. */
const char *log_line_text(const char *line);

#endif
