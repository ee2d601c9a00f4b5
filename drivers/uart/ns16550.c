/*
 * The 16550 UART as the console: output by polling the transmit-empty bit, input
 * by the receive interrupt. The registers are found in boot_info.console (from the
 * DT or the PC's COM1), with reg-shift and reg-io-width honoured for MMIO UARTs.
 * The firmware has already set the baud rate; we leave it.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/console.h>
#include <grace/irq.h>
#include <grace/printk.h>
#include <asm/cpu.h>
#include <asm/io.h>

/* 16550 register numbers (before reg-shift) and bits. */
#define UART_RBR 0 /* receive buffer (read) */
#define UART_THR 0 /* transmit holding (write) */
#define UART_IER 1 /* interrupt enable */
#define UART_FCR 2 /* FIFO control (write) */
#define UART_LSR 5 /* line status */
#define IER_RX_AVAILABLE 0x01
#define FCR_ENABLE_CLEAR 0x07 /* enable FIFOs, clear both */
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20

/* Give up on a stuck transmitter rather than hang printk forever. */
#define UART_TX_SPIN_LIMIT 100000

static struct {
	uintptr_t base; /* virtual address, or I/O port */
	bool pio;
	u32 shift, width;
} uart;

static u8 uart_read(unsigned reg)
{
#ifdef ARCH_HAS_PORT_IO
	if (uart.pio)
		return inb((u16)(uart.base + reg));
#endif
	uintptr_t addr = uart.base + ((uintptr_t)reg << uart.shift);
	return uart.width == 4 ? (u8)mmio_read32(addr) : mmio_read8(addr);
}

static void uart_write(unsigned reg, u8 v)
{
#ifdef ARCH_HAS_PORT_IO
	if (uart.pio) {
		outb((u16)(uart.base + reg), v);
		return;
	}
#endif
	uintptr_t addr = uart.base + ((uintptr_t)reg << uart.shift);
	if (uart.width == 4)
		mmio_write32(addr, v);
	else
		mmio_write8(addr, v);
}

static void uart_putc(char c)
{
	for (int i = 0; i < UART_TX_SPIN_LIMIT && !(uart_read(UART_LSR) & LSR_THR_EMPTY); i++)
		cpu_relax();
	uart_write(UART_THR, (u8)c);
}

static void uart_console_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

static void uart_rx_interrupt(void *arg)
{
	while (uart_read(UART_LSR) & LSR_DATA_READY)
		console_input((char)uart_read(UART_RBR));
}

static const struct console uart_console = {"ns16550", uart_console_write};

void console_init(void)
{
	const struct console_desc *d = &boot_info.console;

	switch (d->kind) {
	case CONSOLE_NS16550_MMIO:
		uart.base = (uintptr_t)ioremap(d->base, 8u << d->reg_shift);
		if (!uart.base)
			return;
		uart.shift = d->reg_shift;
		uart.width = d->reg_io_width == 4 ? 4 : 1;
		break;
#ifdef ARCH_HAS_PORT_IO
	case CONSOLE_NS16550_PIO:
		uart.base = d->base;
		uart.pio = true;
		break;
#endif
	default:
		return; /* no console: printk keeps logging to the ring */
	}
	uart_write(UART_FCR, FCR_ENABLE_CLEAR);
	console_register(&uart_console);
}

/* Receive interrupts need the interrupt controller, so they start later than output. */
void console_enable_input(void)
{
	if (!uart.base || !boot_info.console.irq)
		return;
	if (irq_register(boot_info.console.irq, uart_rx_interrupt, NULL) == 0)
		uart_write(UART_IER, IER_RX_AVAILABLE);
}
