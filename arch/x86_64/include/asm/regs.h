/*
 * The x86_64 trap frame, as arch/x86_64/entry.S builds it on the stack: the
 * general registers pushed by the entry stub, then the vector and error code, then
 * what the CPU pushed (RIP, CS, RFLAGS, RSP, SS). cr2 and gs_base are filled in by
 * C for exceptions only, so a register dump shows them.
 */
#ifndef ASM_REGS_H
#define ASM_REGS_H

#define REGS_SIZE (24 * 8)

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct regs {
	u64 cr2, gs_base;
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error;
	u64 rip, cs, rflags, rsp, ss; /* the CPU's interrupt frame */
};

_Static_assert(sizeof(struct regs) == REGS_SIZE, "entry.S and struct regs disagree");

static inline uintptr_t regs_pc(const struct regs *r)
{
	return r->rip;
}
static inline uintptr_t regs_fp(const struct regs *r)
{
	return r->rbp;
}
#endif

#endif
