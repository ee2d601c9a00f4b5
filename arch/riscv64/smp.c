/*
 * Starting secondary harts through SBI HSM, and the per-hart state they find
 * through sscratch (struct riscv_hart, hart.h).
 *
 * arch_cpu_start() fills the hart's struct with the page tables, stack and
 * per-CPU base, and asks the firmware to start the hart at secondary_entry
 * (head.S) with the struct's physical address as the opaque argument. The hart
 * turns its MMU on, loads sp, tp and sscratch from the struct, and arrives in
 * riscv_secondary_main().
 */
#include <grace/arch.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/timer.h>
#include "hart.h"
#include "kernel_pgtable.h"
#include "riscv.h"
#include "sbi.h"

BUILD_BUG_ON(offsetof(struct riscv_hart, percpu) != HART_PERCPU);
BUILD_BUG_ON(offsetof(struct riscv_hart, scratch_sp) != HART_SCRATCH_SP);
BUILD_BUG_ON(offsetof(struct riscv_hart, scratch_t0) != HART_SCRATCH_T0);
BUILD_BUG_ON(offsetof(struct riscv_hart, scratch_tp) != HART_SCRATCH_TP);
BUILD_BUG_ON(offsetof(struct riscv_hart, trap_depth) != HART_TRAP_DEPTH);
BUILD_BUG_ON(offsetof(struct riscv_hart, emergency_sp) != HART_EMERGENCY_SP);
BUILD_BUG_ON(offsetof(struct riscv_hart, satp) != HART_SATP);
BUILD_BUG_ON(offsetof(struct riscv_hart, boot_sp) != HART_BOOT_SP);
BUILD_BUG_ON(offsetof(struct riscv_hart, trap_regs) != HART_TRAP_REGS);
BUILD_BUG_ON(offsetof(struct riscv_hart, hartid) != HART_HARTID);
BUILD_BUG_ON(offsetof(struct riscv_hart, kstack_top) != HART_KSTACK_TOP);
BUILD_BUG_ON(sizeof(struct riscv_hart) != HART_SIZE);
BUILD_BUG_ON(offsetof(struct riscv_resume, satp) != RESUME_SATP);
BUILD_BUG_ON(offsetof(struct riscv_resume, stvec) != RESUME_STVEC);
BUILD_BUG_ON(offsetof(struct riscv_resume, sscratch) != RESUME_SSCRATCH);
BUILD_BUG_ON(offsetof(struct riscv_resume, sie) != RESUME_SIE);
BUILD_BUG_ON(offsetof(struct riscv_resume, sstatus) != RESUME_SSTATUS);
BUILD_BUG_ON(offsetof(struct riscv_resume, ra) != RESUME_RA);
BUILD_BUG_ON(offsetof(struct riscv_resume, sp) != RESUME_SP);
BUILD_BUG_ON(offsetof(struct riscv_resume, gp) != RESUME_GP);
BUILD_BUG_ON(offsetof(struct riscv_resume, tp) != RESUME_TP);
BUILD_BUG_ON(offsetof(struct riscv_resume, s[11]) != RESUME_S(11));
BUILD_BUG_ON(sizeof(struct riscv_resume) != RESUME_SIZE);

struct riscv_hart riscv_harts[MAX_CPUS];
const u32 riscv_hart_slots = MAX_CPUS;
struct riscv_hart riscv_early_hart;

extern char secondary_entry[];

void arch_set_percpu_base(uintptr_t base)
{
	/* The trap entry reloads tp from here, so both change together. */
	this_hart()->percpu = base;
	__asm__ __volatile__("mv tp, %0" : : "r"(base) : "memory");
}

int arch_cpu_start(unsigned cpu, uintptr_t stack_top)
{
	if (cpu >= boot_info.nr_cpus)
		return -EINVAL;
	void *emergency = alloc_pages(0);
	if (!emergency)
		return -ENOMEM;

	struct riscv_hart *h = &riscv_harts[cpu];
	*h = (struct riscv_hart){
	    .percpu = percpu_base(cpu),
	    .emergency_sp = (uintptr_t)emergency + PAGE_SIZE,
	    .satp = mmu_kernel_satp(),
	    .boot_sp = stack_top,
	    .hartid = boot_info.cpus[cpu].hwid,
	};
	/*
	 * The hart reads *h with its MMU off once the firmware starts it, at
	 * secondary_entry or, if the firmware sent it to the image entry, in
	 * lottery_lost (head.S, whose fence r,r pairs with this): publish first.
	 */
	smp_mb();
	int err = sbi_hart_start(h->hartid, virt_to_phys(secondary_entry), virt_to_phys(h));
	if (err) {
		/* Withdrawn before its stack goes: a hart arriving late must not use it. */
		WRITE_ONCE(h->satp, 0);
		smp_mb();
		free_pages(emergency, 0);
	}
	return err;
}

void __noreturn riscv_secondary_main(struct riscv_hart *h)
{
	riscv_hart_irqs_init();
	secondary_main();
}

struct riscv_resume *riscv_hart_stop_resumable(struct riscv_resume *r);

struct riscv_resume *riscv_hart_stop(struct riscv_resume *r)
{
	struct riscv_resume *back = riscv_hart_stop_resumable(r);
	if (back) {
		/*
		 * What was pending is gone: the firmware sends no IPI to a stopped hart
		 * and clears SSIP and STIP at the start, and without Sstc it disarmed the
		 * timer. One spurious IPI makes this CPU look at its queues again.
		 */
		csr_set(sip, SIP_SSIP);
		timer_rearm_this_cpu();
	}
	return back;
}
