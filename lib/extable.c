/*
 * The exception table (grace/extable.h): entries between __start_ex_table and
 * __stop_ex_table (the linker scripts' read-only __ex_table output section),
 * searched linearly by the arch's fixup_exception(). The table never changes
 * after link time, so no lock.
 */
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/extable.h>

BUILD_BUG_ON(EXTABLE_EFAULT != EFAULT);

extern const struct exception_table_entry __start_ex_table[], __stop_ex_table[];

const struct exception_table_entry *search_exception_table(uintptr_t insn, u64 type)
{
	for (const struct exception_table_entry *e = __start_ex_table; e < __stop_ex_table; e++)
		if (e->insn == insn && e->type == type)
			return e;
	return NULL;
}
