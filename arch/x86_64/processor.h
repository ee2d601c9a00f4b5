/*
 * x86_64 instruction wrappers and architectural constants (MSRs, control
 * registers, CPUID bits) private to arch/x86_64: it is not on the include path.
 */
#ifndef ARCH_X86_64_PROCESSOR_H
#define ARCH_X86_64_PROCESSOR_H

#define MSR_APIC_BASE 0x1b
#define MSR_TSC_DEADLINE 0x6e0
#define MSR_EFER 0xc0000080
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101

#define EFER_LME (1 << 8)  /* long mode enable */
#define EFER_NXE (1 << 11) /* no-execute bit in page tables */

#define CR0_PE (1 << 0)
#define CR0_WP (1 << 16) /* supervisor writes honour read-only pages */
#define CR0_PG (1 << 31)
#define CR4_PAE (1 << 5)
#define CR4_PGE (1 << 7)
#define CR4_SMEP (1 << 20) /* no kernel execution of user pages */
#define CR4_SMAP (1 << 21) /* no kernel access to user pages unless EFLAGS.AC */

/* GDT selectors (arch/x86_64/desc.c and boot.S agree on these). */
#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define TSS_SEL 0x18

#ifndef __ASSEMBLY__
#include <grace/types.h>

static inline u64 rdmsr(u32 msr)
{
	u32 lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((u64)hi << 32) | lo;
}

static inline void wrmsr(u32 msr, u64 v)
{
	__asm__ volatile("wrmsr" ::"c"(msr), "a"((u32)v), "d"((u32)(v >> 32)) : "memory");
}

static inline u64 rdtsc(void)
{
	u32 lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

struct cpuid_regs {
	u32 eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(u32 leaf, u32 subleaf)
{
	struct cpuid_regs r;
	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID1_EDX_APIC (1u << 9)

static inline u64 read_cr2(void)
{
	u64 v;
	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline u64 read_cr3(void)
{
	u64 v;
	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(u64 v)
{
	__asm__ volatile("mov %0, %%cr3" ::"r"(v) : "memory");
}

static inline u64 read_cr4(void)
{
	u64 v;
	__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline void write_cr4(u64 v)
{
	__asm__ volatile("mov %0, %%cr4" ::"r"(v) : "memory");
}

static inline void halt_forever(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}
#endif

#endif
