/*
 * The PC's legacy 8259 interrupt controller pair. Grace routes every line through
 * the I/O APICs, so the 8259s are only remapped out of the exception vectors (a
 * spurious IRQ 7 or 15 would otherwise look like an exception) and masked for good.
 */
#include <grace/ioapic.h>
#include <asm/io.h>

/* Command and data ports, and the initialisation words. */
#define PIC1_CMD 0x20
#define PIC1_DATA 0x21
#define PIC2_CMD 0xa0
#define PIC2_DATA 0xa1
#define PIC_ICW1_INIT_ICW4 0x11 /* edge, cascade, ICW4 follows */
#define PIC_ICW4_8086 0x01
#define PIC_CASCADE_IRQ 2
#define IO_DELAY_PORT 0x80 /* POST port: a write takes about 1 us on real PCs */

static void io_delay(void)
{
	outb(IO_DELAY_PORT, 0);
}

void i8259_disable(unsigned vector_base)
{
	outb(PIC1_CMD, PIC_ICW1_INIT_ICW4), io_delay();
	outb(PIC2_CMD, PIC_ICW1_INIT_ICW4), io_delay();
	outb(PIC1_DATA, vector_base), io_delay();
	outb(PIC2_DATA, vector_base + 8), io_delay();
	outb(PIC1_DATA, 1 << PIC_CASCADE_IRQ), io_delay();
	outb(PIC2_DATA, PIC_CASCADE_IRQ), io_delay();
	outb(PIC1_DATA, PIC_ICW4_8086), io_delay();
	outb(PIC2_DATA, PIC_ICW4_8086), io_delay();
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);
}
