/*
 * Exception fixups: kernel code that touches an address that may fault (user
 * memory, a probe in a test) lists each such instruction with a continuation in
 * the __ex_table section, as Linux does. When a kernel fault is not resolved by
 * the page-fault handler, the arch trap handler calls fixup_exception(): if the
 * faulting instruction has an entry, execution resumes at its continuation
 * (which typically returns -EFAULT) instead of dying.
 *
 * Entries are made in assembly with EXTABLE_ENTRY(insn, fixup) (a string for
 * inline asm, or the EXTABLE macro in .S files via <asm/extable.h>). The table is
 * unsorted and searched linearly: it holds a handful of entries, and only
 * faults, which are already slow, search it.
 */
#ifndef GRACE_EXTABLE_H
#define GRACE_EXTABLE_H

/* What insn means, and what the fixup does besides moving the pc. */
#define EX_TYPE_INSN 0 /* insn is the faulting instruction */
/*
 * insn is the return address of an indirect call whose target could not be
 * fetched (probe_exec): the fault's pc is the target, so the entry is matched
 * by the return address instead, and the fixup also undoes the call (x86_64
 * pops the return address; riscv64 has it in ra).
 */
#define EX_TYPE_CALL 1

/* EFAULT for the probes' assembly (grace/errno.h is C only; lib/extable.c checks they agree). */
#define EXTABLE_EFAULT 14

#ifdef __ASSEMBLY__
#define EXTABLE_ENTRY_ASM(insn, fixup, type)                                                       \
	.pushsection __ex_table, "a";                                                              \
	.balign 8;                                                                                 \
	.quad insn, fixup, type;                                                                   \
	.popsection
#else
#include <grace/types.h>
#include <asm/regs.h>

struct exception_table_entry {
	uintptr_t insn;
	uintptr_t fixup;
	u64 type; /* EX_TYPE_* */
};

/* For inline asm: an entry for the instruction at label insn. */
#define EXTABLE_ENTRY(insn, fixup)                                                                 \
	".pushsection __ex_table, \"a\"\n\t.balign 8\n\t.quad " #insn ", " #fixup                  \
	", 0\n\t.popsection\n"

/* The entry of the given type for address insn, or NULL. */
const struct exception_table_entry *search_exception_table(uintptr_t insn, u64 type);

/*
 * Arch trap handlers call this for a kernel fault the page-fault handler did
 * not resolve: true if regs was redirected to a fixup (return from the trap).
 */
bool fixup_exception(struct regs *regs);

/*
 * Probes for tests and diagnostics, each 0 on success or -EFAULT when the
 * access faulted (and the fault was caught through the table).
 * probe_exec() calls addr, which must hold a return instruction.
 */
int probe_read_u64(const void *addr, u64 *val);
int probe_write_u64(void *addr, u64 val);
int probe_exec(const void *addr);
/* A return instruction in kernel text, for probe_exec() tests. */
extern const char probe_ret_insn[];
#endif

#endif
