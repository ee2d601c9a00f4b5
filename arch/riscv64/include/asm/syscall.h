/*
 * The RISC-V Linux system-call convention, read from and written to a trap frame:
 * the number in a7, the arguments in a0-a5, the result in a0 (ecall from U-mode).
 */
#ifndef ASM_SYSCALL_H
#define ASM_SYSCALL_H

#include <asm/csr.h>
#include <asm/regs.h>

/* Did the trap come from user mode (sstatus.SPP clear)? */
static inline bool regs_user_mode(const struct regs *r)
{
	return !(r->sstatus & SSTATUS_SPP);
}

static inline unsigned long syscall_nr(const struct regs *r)
{
	return r->a7;
}

/* Argument n, 0 to 5. */
static inline unsigned long syscall_arg(const struct regs *r, unsigned n)
{
	return (&r->a0)[n];
}

/* The result register as it is now (after a return was set, or a frame restored). */
static inline long syscall_get_return(const struct regs *r)
{
	return (long)r->a0;
}

static inline void syscall_set_return(struct regs *r, long v)
{
	r->a0 = (unsigned long)v;
}

static inline void regs_set_user_sp(struct regs *r, uintptr_t sp)
{
	r->sp = sp;
}

static inline uintptr_t regs_user_sp(const struct regs *r)
{
	return r->sp;
}
#endif
