/*
 * The x86_64 Linux system-call convention, read from and written to a trap frame:
 * the number in rax, the arguments in rdi, rsi, rdx, r10, r8, r9 (r10, not rcx:
 * the syscall instruction puts the return address in rcx and RFLAGS in r11), the
 * result in rax.
 */
#ifndef ASM_SYSCALL_H
#define ASM_SYSCALL_H

#include <asm/regs.h>

/* Did the trap come from ring 3 (the saved CS's privilege level)? */
static inline bool regs_user_mode(const struct regs *r)
{
	return (r->cs & 3) == 3;
}

static inline unsigned long syscall_nr(const struct regs *r)
{
	return r->orig_rax;
}

/* Argument n, 0 to 5. */
static inline unsigned long syscall_arg(const struct regs *r, unsigned n)
{
	switch (n) {
	case 0:
		return r->rdi;
	case 1:
		return r->rsi;
	case 2:
		return r->rdx;
	case 3:
		return r->r10;
	case 4:
		return r->r8;
	default:
		return r->r9;
	}
}

/* The result register as it is now (after a return was set, or a frame restored). */
static inline long syscall_get_return(const struct regs *r)
{
	return (long)r->rax;
}

static inline void syscall_set_return(struct regs *r, long v)
{
	r->rax = (unsigned long)v;
}

static inline void regs_set_user_sp(struct regs *r, uintptr_t sp)
{
	r->rsp = sp;
}

static inline uintptr_t regs_user_sp(const struct regs *r)
{
	return r->rsp;
}
#endif
