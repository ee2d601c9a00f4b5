/*
 * x86_64 platform bring-up after memory and per-CPU areas exist (the PICs, the
 * boot CPU's LAPIC and timer, the I/O APICs, the AP trampoline), and the CPU's
 * idle and power-off primitives.
 *
 * Power-off: QEMU's isa-debug-exit device (-device isa-debug-exit,iobase=0xf4,
 * iosize=0x04, added by arch/x86_64/qemu.sh) makes QEMU exit with status
 * (v << 1) | 1 when v is written to port 0xf4:
 *   EXIT_SUCCESS_VALUE 0x10 -> QEMU exit status 33: success
 *   EXIT_FAILURE_VALUE 0x11 -> QEMU exit status 35: failure (a test failed, a panic)
 * Any other status (0 after a triple fault with -no-reboot, 1 for a QEMU error)
 * means the kernel did not reach arch_shutdown(). Without the device (real
 * hardware) the write does nothing and the CPU halts with interrupts off.
 */
#include <grace/arch.h>
#include <grace/printk.h>
#include <asm/io.h>
#include <asm/irq.h>
#include <asm/x86.h>
#include "x86_64.h"

#define DEBUG_EXIT_PORT 0xf4
#define EXIT_SUCCESS_VALUE 0x10
#define EXIT_FAILURE_VALUE 0x11

const char arch_name[] = "x86_64";
const char arch_hwid_name[] = "apic";

void arch_platform_init(void)
{
	pic_disable();
	lapic_init_bsp();
	ioapic_init();
	smpboot_prepare();
}

void arch_idle(void)
{
	/* sti's one-instruction shadow: no interrupt is taken between sti and hlt. */
	__asm__ volatile("sti; hlt; cli" ::: "memory");
}

void arch_shutdown(int status)
{
	arch_irq_disable();
	outl(DEBUG_EXIT_PORT, status == 0 ? EXIT_SUCCESS_VALUE : EXIT_FAILURE_VALUE);
	printk("shutdown: no isa-debug-exit device; halting (status %d)\n", status);
	halt_forever();
	__builtin_unreachable();
}
