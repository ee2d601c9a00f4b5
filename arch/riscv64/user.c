/*
 * The way into user mode on riscv64: arch_enter_user() and arch_set_user_tls()
 * (grace/arch.h, "user mode").
 *
 * There is no separate path to user mode: arch_enter_user() builds, at the top of
 * the thread's kernel stack, the frame a trap from user mode would have left
 * there, and takes the ordinary trap exit (trap_entry.S), whose sret lands at pc.
 * The frame's sstatus says where and how: SPP clear (user mode), SPIE set
 * (interrupts on there), SUM clear, FS Initial (the FPU usable and all zero; the
 * registers are loaded with zeros to match), the vector unit Off. From then on
 * the thread is a user thread: its FP registers follow it across switches
 * (context.c), and its TLS pointer is tp, which the trap frame carries.
 */
#include <grace/arch.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/string.h>
#include <asm/csr.h>
#include <asm/irq.h>
#include "hart.h"
#include "riscv.h"

void __noreturn arch_enter_user(uintptr_t pc, uintptr_t sp)
{
	struct arch_context *ctx = &current->ctx;

	/* A CPU's boot or idle context has no stack top for user traps to use. */
	BUG_ON(!ctx->stack_top);
	/* Until the sret: nothing may switch this thread out with its frame half built. */
	arch_irq_disable();
	memset(&ctx->fp, 0, sizeof(ctx->fp));
	riscv_fp_restore(&ctx->fp);
	ctx->user = true;
	/* Outside any trap; the exit sets the depth to 0 for a return to user mode. */
	this_hart()->trap_regs = NULL;
	/* UXL as the hart has it: some harts let it be written, and 0 is not RV64. */
	unsigned long sstatus =
	    (csr_read(sstatus) & SSTATUS_UXL) | SSTATUS_SPIE | SSTATUS_FS_INITIAL;
	riscv_enter_user(pc, sp, sstatus, riscv_user_regs(ctx));
}

void arch_set_user_tls(struct regs *regs, uintptr_t tls)
{
	regs->tp = tls;
}
