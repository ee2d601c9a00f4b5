/*
 * The x86_64 trap frame, as arch/x86_64/entry.S builds it on the stack: the
 * general registers pushed by the entry stub, then the vector and error code, then
 * what the CPU pushed (RIP, CS, RFLAGS, RSP, SS). The SYSCALL entry (syscall.S)
 * builds the same frame by hand, so a system call, an exception and an interrupt
 * from ring 3 all leave one struct regs at the top of the thread's kernel stack.
 * cr2 and the FS and GS bases are filled in by C for exceptions only, so a
 * register dump shows them. orig_rax is the system call's number (rax, before
 * the result overwrites it), or -1 for a frame no system call built.
 */
#ifndef ASM_REGS_H
#define ASM_REGS_H

#define REGS_SIZE (26 * 8)
/* Offsets the assembly uses. */
#define REGS_ORIG_RAX (3 * 8)
#define REGS_VECTOR (19 * 8)
#define REGS_CS (22 * 8)
#define REGS_IRET_FRAME (21 * 8) /* rip, cs, rflags, rsp, ss */
/* The vector of a frame no interrupt delivered: SYSCALL's, or arch_enter_user()'s. */
#define REGS_NO_VECTOR 0x100

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct regs {
	u64 cr2, fs_base, gs_base;
	u64 orig_rax;
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error;
	u64 rip, cs, rflags, rsp, ss; /* the CPU's interrupt frame */
};

_Static_assert(sizeof(struct regs) == REGS_SIZE, "entry.S and struct regs disagree");
_Static_assert(offsetof(struct regs, orig_rax) == REGS_ORIG_RAX, "REGS_ORIG_RAX");
_Static_assert(offsetof(struct regs, vector) == REGS_VECTOR, "REGS_VECTOR");
_Static_assert(offsetof(struct regs, cs) == REGS_CS, "REGS_CS");
_Static_assert(offsetof(struct regs, rip) == REGS_IRET_FRAME, "REGS_IRET_FRAME");
/* A multiple of 16: the entry code calls C right below it, with rsp as the ABI wants it. */
_Static_assert(REGS_SIZE % 16 == 0, "struct regs breaks the call's stack alignment");

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
