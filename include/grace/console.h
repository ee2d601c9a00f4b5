/* The console: where printk's lines go. One at a time; the UART driver registers it. */
#ifndef GRACE_CONSOLE_H
#define GRACE_CONSOLE_H

#include <grace/types.h>

struct console {
	const char *name;
	void (*write)(const char *s, size_t n); /* called with printk's lock held, irqs off */
};

/* Make con the console and replay the log written so far. */
void console_register(const struct console *con);
/* Called by the console driver for each received character (interrupt context). */
void console_input(char c);
/*
 * Is input held back (the ring is full, and the driver's rx_enable(false) was called)?
 * The driver asks before it takes each byte from the UART, and leaves it there while so:
 * an interrupt already on its way when the driver masked it finds this true.
 */
bool console_input_held(void);
/*
 * The driver's switch for its receive interrupt, for flow control (console_input.c);
 * rx_enable is called with interrupts off, from any CPU.
 */
void console_input_flow_control(void (*rx_enable)(bool on));
/* Called by the console driver when the UART says it lost input (a FIFO overrun). */
void console_input_overrun(void);
/* The next received character; sleeps until there is one. One reader: the shell. */
char console_getc(void);
/* The same for a user program's read: 0 and *c, or -ERESTARTSYS if a signal came first. */
int console_getc_interruptible(char *c);
/* Has input arrived that no one has taken yet? */
bool console_input_pending(void);
/* Log and print n bytes as they are, with no newline added (echo, prompts). */
void console_print(const char *s, size_t n);
/* Start receive interrupts once the interrupt controller is up. */
void console_enable_input(void);

extern int console_loglevel;
extern bool printk_panic_mode;

#endif
