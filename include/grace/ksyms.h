/* The kernel's own symbol table, embedded at link time (scripts/gen-ksyms), and backtraces. */
#ifndef GRACE_KSYMS_H
#define GRACE_KSYMS_H

#include <grace/types.h>

/* Name of the function containing addr, and addr's offset into it; NULL if unknown. */
const char *ksym_lookup(uintptr_t addr, uintptr_t *offset, uintptr_t *size);
/* Index of the symbol containing addr in the sorted table, -1 if none; and back. */
long ksym_index(uintptr_t addr);
const char *ksym_name(unsigned long index);
unsigned long ksym_count(void);
/* Longest ksym_format() text of a symbol a report names; longer names are cut. */
#define KSYM_FORMAT_MAX 96
/* "func+0xoff" for addr, or its hex value outside every symbol; returns buf. */
const char *ksym_format(char *buf, size_t size, uintptr_t addr);
/* Address of a text symbol by exact name, 0 if absent. */
uintptr_t ksym_address(const char *name);

/*
 * Print "  [<ffffffff80201234>] func+0xoff/0xsize" (Linux's form) for pc and for each return
 * address found through the frame pointers, that one named by the call before it.
 */
void backtrace_print(uintptr_t pc, uintptr_t fp);
/* Backtrace of the caller. */
void dump_stack(void);

#endif
