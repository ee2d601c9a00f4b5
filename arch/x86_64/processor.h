/*
 * x86_64 instruction wrappers and architectural constants (MSRs, control
 * registers, CPUID bits) private to arch/x86_64: it is not on the include path.
 */
#ifndef ARCH_X86_64_PROCESSOR_H
#define ARCH_X86_64_PROCESSOR_H

#define MSR_APIC_BASE 0x1b
#define MSR_TSC_DEADLINE 0x6e0
#define MSR_EFER 0xc0000080
#define MSR_STAR 0xc0000081   /* SYSCALL's and SYSRET's code and stack selectors */
#define MSR_LSTAR 0xc0000082  /* the 64-bit SYSCALL entry point */
#define MSR_SFMASK 0xc0000084 /* RFLAGS bits SYSCALL clears */
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102 /* what SWAPGS exchanges with the GS base */

#define EFER_SCE (1 << 0)  /* SYSCALL and SYSRET enabled */
#define EFER_LME (1 << 8)  /* long mode enable */
#define EFER_NXE (1 << 11) /* no-execute bit in page tables */

#define CR0_PE (1 << 0)
#define CR0_MP (1 << 1)	 /* WAIT/FWAIT honour TS (SDM: set it with an FPU present) */
#define CR0_EM (1 << 2)	 /* x87 and SSE instructions trap to #NM / #UD */
#define CR0_TS (1 << 3)	 /* the next x87/SSE instruction traps (for lazy switching) */
#define CR0_NE (1 << 5)	 /* x87 errors as #MF, not through the legacy FERR#/IRQ 13 */
#define CR0_WP (1 << 16) /* supervisor writes honour read-only pages */
#define CR0_PG (1 << 31)
#define CR4_PAE (1 << 5)
#define CR4_PGE (1 << 7)
#define CR4_OSFXSR (1 << 9)	 /* FXSAVE/FXRSTOR cover XMM, and SSE instructions run */
#define CR4_OSXMMEXCPT (1 << 10) /* unmasked SIMD floating-point errors raise #XM */
#define CR4_SMEP (1 << 20)	 /* no kernel execution of user pages */
#define CR4_SMAP (1 << 21)	 /* no kernel access to user pages unless EFLAGS.AC */

#define RFLAGS_CF (1 << 0)
#define RFLAGS_FIXED (1 << 1) /* always reads as 1 */
#define RFLAGS_PF (1 << 2)
#define RFLAGS_AF (1 << 4)
#define RFLAGS_ZF (1 << 6)
#define RFLAGS_SF (1 << 7)
#define RFLAGS_TF (1 << 8)
#define RFLAGS_IF (1 << 9)
#define RFLAGS_DF (1 << 10)
#define RFLAGS_OF (1 << 11)
#define RFLAGS_IOPL (3 << 12)
#define RFLAGS_NT (1 << 14)
#define RFLAGS_RF (1 << 16)
#define RFLAGS_AC (1 << 18)
#define RFLAGS_ID (1 << 21)

/*
 * GDT selectors (arch/x86_64/desc.c and boot.S agree on the kernel's). The user
 * segments follow the order SYSRET dictates: from the base in STAR[63:48], SS is
 * base + 8 and 64-bit CS base + 16 (base itself would be SYSRET's 32-bit CS, which
 * Grace does not use, so that slot stays null). User selectors carry RPL 3.
 */
#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define TSS_SEL 0x18 /* two slots: a 64-bit TSS descriptor is 16 bytes */
#define USER_BASE_SEL 0x28
#define USER_DS (USER_BASE_SEL + 8 + 3)
#define USER_CS (USER_BASE_SEL + 16 + 3)

/* Offsets in struct x86_entry_percpu (desc.c), which the SYSCALL entry reads through %gs. */
#define ENTRY_KERNEL_SP 0
#define ENTRY_USER_SP 8

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

static inline u64 read_cr0(void)
{
	u64 v;
	__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline void write_cr0(u64 v)
{
	__asm__ volatile("mov %0, %%cr0" ::"r"(v) : "memory");
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
