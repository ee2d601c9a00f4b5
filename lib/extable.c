/*
 * The exception table (grace/extable.h): entries between __start_ex_table and
 * __stop_ex_table (the linker scripts' read-only __ex_table output section),
 * searched linearly by the arch's fixup_exception(). The table never changes
 * after link time, so no lock.
 */
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/extable.h>
#include <grace/fault.h>
#include <grace/vmap.h>
#include <asm/memory.h>
#include <asm/irq.h>

BUILD_BUG_ON(EXTABLE_EFAULT != EFAULT);

extern const struct exception_table_entry __start_ex_table[], __stop_ex_table[];

const struct exception_table_entry *search_exception_table(uintptr_t insn, u64 type)
{
	for (const struct exception_table_entry *e = __start_ex_table; e < __stop_ex_table; e++)
		if (e->insn == insn && e->type == type)
			return e;
	return NULL;
}

/*
 * Until mm/fault.c resolves faults, none are: every fault is a fixup or a death.
 * mm/fault.c's strong definition replaces this one.
 */
__attribute__((weak)) int handle_page_fault(struct regs *regs, uintptr_t addr, unsigned access)
{
	return -EFAULT;
}

bool kernel_fault_resolved(struct regs *regs, uintptr_t addr, unsigned access, bool irqs_were_on)
{
	if (irqs_were_on)
		arch_irq_enable();
	int err = handle_page_fault(regs, addr, access);
	if (irqs_were_on)
		arch_irq_disable();
	return !err || fixup_exception(regs);
}

extern char _text[], __start_rodata[], __end_rodata[];
extern char boot_stack_guard[];

bool kernel_stack_guard(uintptr_t va)
{
	return vmap_is_guard(va) || va - (uintptr_t)boot_stack_guard < PAGE_SIZE;
}

const char *kernel_fault_hint(uintptr_t va, uintptr_t direct_map_end)
{
	/* The usual suspects first. */
	if (kernel_stack_guard(va))
		return " (a stack guard page: kernel stack overflow?)";
	if (va < PAGE_SIZE)
		return " (NULL pointer dereference?)";
	if (va >= (uintptr_t)_text && va < (uintptr_t)__start_rodata)
		return " (kernel text: read-only)";
	if (va >= (uintptr_t)__start_rodata && va < (uintptr_t)__end_rodata)
		return " (kernel rodata: read-only)";
	if (va >= PAGE_OFFSET && va < direct_map_end)
		return " (direct map: not executable)";
	return "";
}
