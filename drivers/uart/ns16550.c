/*
 * The 16550 UART as the console: output by polling the transmit-empty bit, input
 * by the receive interrupt. The registers are found in boot_info.console (from the
 * DT or the PC's COM1), with reg-shift and reg-io-width honoured for MMIO UARTs.
 *
 * Where the firmware description gives both the input clock and a rate (the
 * console's stdout-path options, current-speed), the divisor is programmed for it
 * (8 data bits, no parity, one stop bit): a board whose firmware never used this
 * UART leaves the divisor unset. Otherwise the firmware's setting stays, whatever
 * rate it chose, as on the PC, where the BIOS programmed COM1.
 *
 * When the console's ring is full, the receive interrupt is masked (IER) and what
 * comes next waits in the FIFO; the reader unmasks it (console_input.c). A FIFO that
 * overflowed meanwhile says so in LSR, and the console counts it.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/console.h>
#include <grace/irq.h>
#include <grace/printk.h>
#include <asm/cpu.h>
#include <asm/io.h>
#include "uart.h"

/* 16550 register numbers (before reg-shift) and bits. */
#define UART_RBR 0	 /* receive buffer (read) */
#define UART_THR 0	 /* transmit holding (write) */
#define UART_IER 1	 /* interrupt enable */
#define UART_FCR 2	 /* FIFO control (write) */
#define UART_LCR 3	 /* line control */
#define UART_LSR 5	 /* line status */
#define LSR_TX_IDLE 0x40 /* transmitter empty: holding register and shift register */
#define UART_DLL 0	 /* divisor latch, low byte (with LCR_DLAB) */
#define UART_DLM 1	 /* divisor latch, high byte (with LCR_DLAB) */
#define IER_RX_AVAILABLE 0x01
#define FCR_ENABLE_CLEAR 0x07 /* enable FIFOs, clear both */
#define LCR_8N1 0x03	      /* 8 data bits, no parity, 1 stop bit */
#define LCR_DLAB 0x80	      /* registers 0 and 1 are the divisor latch */
#define LSR_DATA_READY 0x01
#define LSR_OVERRUN 0x02 /* input was lost: a byte came with the FIFO full; clears on read */
#define LSR_THR_EMPTY 0x20

/* Give up on a stuck transmitter rather than hang printk forever. */
#define UART_TX_SPIN_LIMIT 100000

static struct {
	uintptr_t base; /* virtual address, or I/O port */
	bool pio;
	u32 shift, width;
	u32 overrun; /* LSR said so while output polled it: the receive interrupt reports it */
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

/* LSR, noting an overrun: reading it clears the bit, so whoever reads it must. */
static u8 uart_read_lsr(void)
{
	u8 lsr = uart_read(UART_LSR);
	if (lsr & LSR_OVERRUN)
		WRITE_ONCE(uart.overrun, 1);
	return lsr;
}

static void uart_putc(char c)
{
	for (int i = 0; i < UART_TX_SPIN_LIMIT && !(uart_read_lsr() & LSR_THR_EMPTY); i++)
		cpu_relax();
	uart_write(UART_THR, (u8)c);
}

static void uart_console_write(const char *s, size_t n)
{
	uart_write_crlf(s, n, uart_putc);
}

static void uart_rx_interrupt(void *arg)
{
	/* While the ring is full the interrupt is masked and the rest waits in the FIFO. */
	while (!console_input_held() && (uart_read_lsr() & LSR_DATA_READY))
		console_input((char)uart_read(UART_RBR));
	if (READ_ONCE(uart.overrun) && xchg(&uart.overrun, 0))
		console_input_overrun();
}

/* Flow control (console_input.c): mask or unmask the receive interrupt. */
static void uart_rx_enable(bool on)
{
	uart_write(UART_IER, on ? IER_RX_AVAILABLE : 0);
}

static const struct console uart_console = {"ns16550", uart_console_write};

u32 ns16550_divisor(u32 clock_hz, u32 baud)
{
	u64 sixteen_baud = 16ull * baud;
	u64 divisor = baud ? (clock_hz + sixteen_baud / 2) / sixteen_baud : 0;
	return divisor <= 0xffff ? (u32)divisor : 0;
}

static void uart_set_baud(u32 clock_hz, u32 baud)
{
	u32 divisor = ns16550_divisor(clock_hz, baud);
	if (!divisor) {
		pr_warn("ns16550: no divisor gives %u baud from %u Hz; keeping the firmware's\n",
			baud, clock_hz);
		return;
	}
	/*
	 * A DesignWare 16550 ignores writes to LCR while it is sending: let what the
	 * firmware queued drain, and check that the divisor latch is really open
	 * before writing it (else DLL and DLM would land in THR and IER).
	 */
	for (int i = 0; i < UART_TX_SPIN_LIMIT && !(uart_read(UART_LSR) & LSR_TX_IDLE); i++)
		cpu_relax();
	uart_write(UART_LCR, LCR_DLAB);
	if (!(uart_read(UART_LCR) & LCR_DLAB)) {
		pr_warn("ns16550: the divisor latch did not open; keeping the firmware's rate\n");
		return;
	}
	uart_write(UART_DLL, (u8)divisor);
	uart_write(UART_DLM, (u8)(divisor >> 8));
	uart_write(UART_LCR, LCR_8N1);
}

static bool ns16550_init(const struct console_desc *d)
{
	if (d->kind == CONSOLE_NS16550_MMIO) {
		uart.base = (uintptr_t)ioremap(d->base, 8u << d->reg_shift);
		if (!uart.base)
			return false;
		uart.shift = d->reg_shift;
		uart.width = d->reg_io_width == 4 ? 4 : 1;
	} else {
#ifdef ARCH_HAS_PORT_IO
		uart.base = d->base;
		uart.pio = true;
#else
		return false;
#endif
	}
	if (d->clock_hz && d->baud)
		uart_set_baud(d->clock_hz, d->baud);
	uart_write(UART_FCR, FCR_ENABLE_CLEAR);
	console_register(&uart_console);
	return true;
}

static void ns16550_enable_input(const struct console_desc *d)
{
	if (irq_register(d->irq, uart_rx_interrupt, NULL) != 0)
		return;
	console_input_flow_control(uart_rx_enable);
	uart_rx_enable(true);
}

const struct uart_driver ns16550_driver = {ns16550_init, ns16550_enable_input};
