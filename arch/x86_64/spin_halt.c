/*
 * The x86_64 half of paravirtual spinlock waits (include/grace/arch.h,
 * kernel/locking/spinlock_pv.c): a waiter halts with interrupts off, so the kick
 * is an NMI, the one interrupt hlt still wakes for with IF clear. The NMI handler
 * only notes the kick in this CPU's x86_spin_kicked and, if the NMI landed inside
 * x86_spin_halt()'s test-and-hlt, skips the hlt (halt_window.S). It takes no lock and
 * prints nothing: it may interrupt any code, printk's lock holder included.
 *
 * Every NMI counts as a kick (QEMU's `nmi` monitor command too): a kick that came
 * for no waiter only makes a waiter look at its lock once more. Two NMIs sent close
 * together may arrive as one (the CPU latches one while it handles another), which
 * is why the flag is a flag and not a count.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/percpu.h>
#include "x86_64.h"

extern char x86_spin_halt_window[], x86_spin_halt_resume[];
void x86_spin_halt(const u8 *kicked);

/* Set by the NMI handler, cleared by arch_spin_halt_prepare(); this CPU's only. */
static DEFINE_PER_CPU(u8, x86_spin_kicked);
void x86_spin_nmi(struct regs *regs)
{
	WRITE_ONCE(this_cpu(x86_spin_kicked), 1);
	if (regs->rip >= (uintptr_t)x86_spin_halt_window &&
	    regs->rip < (uintptr_t)x86_spin_halt_resume)
		regs->rip = (uintptr_t)x86_spin_halt_resume;
}

void arch_spin_halt_prepare(void)
{
	/*
	 * A plain byte store: the NMI that may set the flag runs on this CPU, after
	 * this store in its program order, so a kick from now on is never undone.
	 */
	WRITE_ONCE(this_cpu(x86_spin_kicked), 0);
}

void arch_spin_halt(void)
{
	x86_spin_halt(this_cpu_ptr(&x86_spin_kicked));
}

void arch_spin_halt_end(void) {}

void arch_spin_kick(unsigned cpu)
{
	/*
	 * The ICR write is to uncached memory, which x86 keeps in order after our
	 * earlier stores: the waiter sees them once the NMI has reached it.
	 */
	lapic_send_nmi(boot_info.cpus[cpu].hwid);
}
