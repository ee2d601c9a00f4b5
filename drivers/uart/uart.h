/*
 * The UART drivers behind the console (console.c picks one by boot_info.console's
 * kind). Each is told where its registers are and, where the firmware description
 * gave them, its input clock and the baud rate to program.
 */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

#include <grace/boot_info.h>

struct uart_driver {
	/* Map the registers, make the UART ready to send, register the console. */
	bool (*init)(const struct console_desc *d);
	/* Turn on receive interrupts on line d->irq (the interrupt controller is up). */
	void (*enable_input)(const struct console_desc *d);
};

/* Send n bytes through putc, a carriage return before each newline: terminals want both. */
static inline void uart_write_crlf(const char *s, size_t n, void (*putc)(char c))
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			putc('\r');
		putc(s[i]);
	}
}

/* The 16550's divisor for baud from clock_hz (it divides by 16 x the divisor), nearest; 0 if none
 * fits. */
u32 ns16550_divisor(u32 clock_hz, u32 baud);

extern const struct uart_driver ns16550_driver;
extern const struct uart_driver sifive_uart_driver;

#endif
