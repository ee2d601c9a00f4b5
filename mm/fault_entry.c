/*
 * The generic half of a kernel page fault, between the arch trap handlers and
 * handle_page_fault() (mm/fault.c): interrupts back on while the fault is
 * resolved, then the exception fixup table (lib/extable.c), and, for a fault
 * that is neither, hints that name what the address was for the death report.
 * No state and no lock: everything here reads link-time symbols or asks vmap.
 */
#include <grace/extable.h>
#include <grace/fault.h>
#include <grace/vmap.h>
#include <asm/irq.h>
#include <asm/memory.h>

bool kernel_fault_resolved(struct regs *regs, uintptr_t addr, unsigned access, bool irqs_were_on)
{
	/*
	 * A fault waiting for a page-table lock must still take the TLB-shootdown
	 * IPI that lock's holder may be waiting for, so run it with interrupts on
	 * if the faulting code had them on.
	 */
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
