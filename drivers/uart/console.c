/*
 * The console's UART: the driver for the kind of UART the firmware named as the
 * console (the DT's stdout-path or first UART, the PC's COM1). Without one,
 * printk keeps logging to its ring.
 */
#include <grace/boot_info.h>
#include <grace/console.h>
#include <grace/printk.h>
#include "uart.h"

static const struct uart_driver *console_uart;

static const struct uart_driver *uart_driver_of(enum console_kind kind)
{
	switch (kind) {
	case CONSOLE_NS16550_MMIO:
	case CONSOLE_NS16550_PIO:
		return &ns16550_driver;
	case CONSOLE_SIFIVE_UART:
		return &sifive_uart_driver;
	case CONSOLE_NONE:
		break;
	}
	return NULL;
}

void console_init(void)
{
	const struct uart_driver *drv = uart_driver_of(boot_info.console.kind);
	if (drv && drv->init(&boot_info.console))
		console_uart = drv;
}

/* Receive interrupts need the interrupt controller, so they start later than output. */
void console_enable_input(void)
{
	if (console_uart && boot_info.console.irq)
		console_uart->enable_input(&boot_info.console);
}
