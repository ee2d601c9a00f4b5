/*
 * Symbol lookup over the table that scripts/gen-ksyms embeds (addresses sorted,
 * one name each), and frame-pointer backtraces printed with it.
 */
#include <grace/arch.h>
#include <grace/ksyms.h>
#include <grace/printk.h>
#include <grace/string.h>

#define BACKTRACE_MAX_FRAMES 32

extern const u64 ksyms_count;
extern const u64 ksyms_addr[];
extern const char *const ksyms_name[];
extern char _etext[];

unsigned long ksym_count(void)
{
	return ksyms_count;
}

const char *ksym_name(unsigned long index)
{
	return index < ksyms_count ? ksyms_name[index] : NULL;
}

long ksym_index(uintptr_t addr)
{
	u64 n = ksyms_count;
	if (n == 0 || addr < ksyms_addr[0] || addr >= (uintptr_t)_etext)
		return -1;
	/* The last symbol at or below addr. */
	u64 lo = 0, hi = n;
	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;
		if (ksyms_addr[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return (long)lo;
}

const char *ksym_lookup(uintptr_t addr, uintptr_t *offset, uintptr_t *size)
{
	long i = ksym_index(addr);
	if (i < 0)
		return NULL;
	u64 lo = (u64)i, hi = lo + 1;
	uintptr_t end = hi < ksyms_count ? ksyms_addr[hi] : (uintptr_t)_etext;
	if (offset)
		*offset = addr - ksyms_addr[lo];
	if (size)
		*size = end - ksyms_addr[lo];
	return ksyms_name[lo];
}

const char *ksym_format(char *buf, size_t size, uintptr_t addr)
{
	uintptr_t off = 0;
	const char *fn = ksym_lookup(addr, &off, NULL);
	if (fn)
		snprintf(buf, size, "%s+0x%lx", fn, (unsigned long)off);
	else
		snprintf(buf, size, "%lx", (unsigned long)addr);
	return buf;
}

uintptr_t ksym_address(const char *name)
{
	for (u64 i = 0; i < ksyms_count; i++)
		if (!strcmp(ksyms_name[i], name))
			return ksyms_addr[i];
	return 0;
}

/*
 * One frame as Linux prints it: "[<ffffffff80201234>] name+0x1c/0x80". A return
 * address is printed as it is, but named by the byte before it: a call that ends
 * its function (a noreturn callee) returns past the function's end, into the next.
 */
static void backtrace_print_one(uintptr_t pc, bool return_address)
{
	uintptr_t off, size;
	const char *name = ksym_lookup(return_address ? pc - 1 : pc, &off, &size);
	if (name)
		printk("  [<%016lx>] %s+0x%lx/0x%lx\n", (unsigned long)pc, name,
		       off + (return_address ? 1 : 0), size);
	else
		printk("  [<%016lx>] ?\n", (unsigned long)pc);
}

void backtrace_print(uintptr_t pc, uintptr_t fp)
{
	printk("Call trace:\n");
	backtrace_print_one(pc, false);
	for (int i = 0; i < BACKTRACE_MAX_FRAMES && arch_unwind(&fp, &pc); i++)
		backtrace_print_one(pc, true);
}

void __noinline dump_stack(void)
{
	backtrace_print((uintptr_t)dump_stack, (uintptr_t)__builtin_frame_address(0));
}
