/*
 * The riscv64 half of paravirtual spinlock waits (include/grace/arch.h,
 * kernel/locking/spinlock_pv.c). The kick is the ordinary IPI: sip.SSIP. A waiter
 * halts with sstatus.SIE clear, and wfi still wakes: the privileged spec (WFI) has
 * it resume when an interrupt enabled in sie is pending, whatever sstatus.SIE
 * says, and with SIE clear no trap is taken: execution goes on after the wfi.
 * SSIP is a level, not an edge: a kick that came before the wfi leaves it pending
 * and the wfi returns at once, so a kick between the waiter's last look at the
 * lock and its wfi is not lost, and prepare has nothing to do.
 *
 * Two things follow. A pending SSIP would end every later wfi at once, so
 * arch_spin_halt() clears it after waking. But one SSIP may also carry an ordinary
 * IPI (a cross-call, a timer or reschedule kick: IPIs to one hart merge into one
 * pending bit, and call_queue_push() sends one only when the queue was empty), so
 * the clearing is remembered and arch_spin_halt_end() sets SSIP again, to be taken
 * by the trap handler once interrupts are on: ipi_interrupt() sees what it would
 * have seen, plus at most one spurious IPI per wait. And a pending timer or
 * external interrupt would also end every wfi at once: during the wfi sie keeps
 * only SSIE, and the others stay pending until interrupts are on again, as they
 * would while a waiter spun with interrupts off.
 */
#include <grace/arch.h>
#include <grace/cpumask.h>
#include <grace/percpu.h>
#include <asm/csr.h>

/* An SSIP that a halt took away, to set again at the end of the wait; this CPU's only. */
static DEFINE_PER_CPU(bool, ssip_held);

void arch_spin_halt_prepare(void) {}

void arch_spin_halt(void)
{
	unsigned long others, was;

	__asm__ __volatile__("csrrc %0, sie, %1"
			     : "=r"(others)
			     : "r"(SIE_STIE | SIE_SEIE)
			     : "memory");
	__asm__ __volatile__("wfi" : : : "memory");
	csr_set(sie, others & (SIE_STIE | SIE_SEIE));
	/* Read and clear in one: an IPI landing in between is not cleared unseen. */
	__asm__ __volatile__("csrrc %0, sip, %1" : "=r"(was) : "r"(SIP_SSIP) : "memory");
	if (was & SIP_SSIP)
		this_cpu(ssip_held) = true;
}

void arch_spin_halt_end(void)
{
	if (this_cpu(ssip_held)) {
		this_cpu(ssip_held) = false;
		csr_set(sip, SIP_SSIP);
	}
}

void arch_spin_kick(unsigned cpu)
{
	struct cpumask target;

	cpumask_clear(&target);
	cpumask_set_cpu(&target, cpu);
	/* Its fence (SBI) or the MMIO write's (ACLINT) puts our stores before the IPI. */
	arch_send_ipi(&target);
}
