/*
 * The SiFive UART (sifive,uart0: FU540, FU740, QEMU's sifive_u) as the console.
 * Seven 32-bit registers: a word written to txdata queues a byte unless its bit 31
 * says the transmit FIFO is full; a word read from rxdata holds a byte unless its
 * bit 31 says the receive FIFO was empty. The receive watermark interrupt fires
 * while the receive FIFO holds more than rxctrl's count: with a count of 0, as
 * soon as one byte is there. The baud rate is the input clock / (div + 1).
 * When the console's ring is full, the interrupt is disabled (ie) and what comes
 * next waits in the receive FIFO until the reader enables it again
 * (console_input.c); this UART cannot tell whether its FIFO overflowed meanwhile.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/console.h>
#include <grace/irq.h>
#include <grace/printk.h>
#include <asm/cpu.h>
#include <asm/io.h>
#include "uart.h"

#define SIFIVE_TXDATA 0x00
#define SIFIVE_RXDATA 0x04
#define SIFIVE_TXCTRL 0x08
#define SIFIVE_RXCTRL 0x0c
#define SIFIVE_IE 0x10
#define SIFIVE_DIV 0x18
#define SIFIVE_REGS_SIZE 0x1c

#define DATA_FIFO_FULL_OR_EMPTY (1u << 31) /* txdata: full; rxdata: nothing read */
#define CTRL_ENABLE 0x1			   /* txctrl.txen, rxctrl.rxen; watermark count 0 */
#define IE_RX_WATERMARK 0x2

/*
 * Give up on a stuck transmitter rather than hang printk forever: far more polls
 * than a byte takes at 9600 baud (about 1 ms), as the 16550 driver does.
 */
#define SIFIVE_TX_SPIN_LIMIT 100000

static uintptr_t regs; /* set once by sifive_uart_init(), before the console is registered */

static void sifive_putc(char c)
{
	for (int i = 0; i < SIFIVE_TX_SPIN_LIMIT &&
			(mmio_read32(regs + SIFIVE_TXDATA) & DATA_FIFO_FULL_OR_EMPTY);
	     i++)
		cpu_relax();
	mmio_write32(regs + SIFIVE_TXDATA, (u8)c);
}

static void sifive_console_write(const char *s, size_t n)
{
	uart_write_crlf(s, n, sifive_putc);
}

static void sifive_rx_interrupt(void *arg)
{
	(void)arg;
	/* While the ring is full the interrupt is off and the rest waits in the FIFO. */
	while (!console_input_held()) {
		u32 v = mmio_read32(regs + SIFIVE_RXDATA);
		if (v & DATA_FIFO_FULL_OR_EMPTY)
			return;
		console_input((char)(v & 0xff));
	}
}

/* Flow control (console_input.c): turn the receive interrupt off or on. */
static void sifive_rx_enable(bool on)
{
	mmio_write32(regs + SIFIVE_IE, on ? IE_RX_WATERMARK : 0);
}

static const struct console sifive_console = {"sifive-uart", sifive_console_write};

static bool sifive_uart_init(const struct console_desc *d)
{
	regs = (uintptr_t)ioremap(d->base, SIFIVE_REGS_SIZE);
	if (!regs)
		return false;
	if (d->clock_hz && d->baud) {
		u32 div = (d->clock_hz + d->baud / 2) / d->baud;
		if (div >= 1)
			mmio_write32(regs + SIFIVE_DIV, div - 1);
	}
	mmio_write32(regs + SIFIVE_TXCTRL, CTRL_ENABLE);
	console_register(&sifive_console);
	return true;
}

static void sifive_uart_enable_input(const struct console_desc *d)
{
	if (irq_register(d->irq, sifive_rx_interrupt, NULL) != 0)
		return;
	mmio_write32(regs + SIFIVE_RXCTRL, CTRL_ENABLE);
	console_input_flow_control(sifive_rx_enable);
	sifive_rx_enable(true);
}

const struct uart_driver sifive_uart_driver = {sifive_uart_init, sifive_uart_enable_input};
