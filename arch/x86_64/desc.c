/*
 * Descriptor tables: each CPU's GDT and TSS, and the IDT all CPUs share.
 *
 * Long mode ignores segment bases and limits, but still needs a GDT for the code
 * segments' L bit and privilege level and for the TSS. The user segments sit where
 * SYSCALL and SYSRET find them (processor.h). The TSS has two jobs: RSP0, the
 * stack the CPU switches to on an interrupt or exception from ring 3 (the running
 * thread's kernel stack top, kept up to date by every context switch through
 * x86_set_kernel_stack()), and the IST: interrupt stack table entries that give
 * the double fault, NMI and machine check handlers a known-good stack even when
 * the kernel stack has overflowed. The one segment base long mode does use, GS,
 * points at the CPU's per-CPU copy (asm/percpu.h) while in the kernel.
 */
#include <grace/boot_info.h>
#include <grace/compiler.h>
#include <grace/percpu.h>
#include <grace/string.h>
#include <asm/percpu.h>
#include "processor.h"
#include "x86_64.h"

struct tss {
	u32 reserved0;
	u64 rsp[3]; /* stacks for privilege changes: rsp[0] for ring 3 -> 0 */
	u64 reserved1;
	u64 ist[7]; /* IST1..IST7 */
	u64 reserved2;
	u16 reserved3;
	u16 iomap_base; /* past the limit: no I/O permission bitmap */
} __packed;

struct gate {
	u16 offset_low;
	u16 selector;
	u8 ist;
	u8 type_attr;
	u16 offset_mid;
	u32 offset_high;
	u32 reserved;
} __packed;

#define GDT_ENTRIES 8 /* null, kernel code and data, TSS (two slots), null, user data and code */
#define GDT_KERNEL_CODE 0x00af9a000000ffffULL /* present, ring 0, code, L=1 (64-bit) */
#define GDT_KERNEL_DATA 0x00cf92000000ffffULL /* present, ring 0, data, writable */
#define GDT_USER_CODE 0x00affa000000ffffULL   /* present, ring 3, code, L=1 (64-bit) */
#define GDT_USER_DATA 0x00cff2000000ffffULL   /* present, ring 3, data, writable */
#define TSS_TYPE_AVAILABLE 0x89		      /* present, 64-bit TSS, not busy */
#define GATE_INTERRUPT 0x8e		      /* present, ring 0, interrupt gate (clears IF) */
#define GATE_INTERRUPT_USER 0xee	      /* the same, and INT n from ring 3 may raise it */

/* Which IST slot each critical exception uses (1-based; 0 = the current stack). */
#define IST_DOUBLE_FAULT 1
#define IST_NMI 2
#define IST_MACHINE_CHECK 3
#define VEC_NMI 2
#define VEC_BREAKPOINT 3
#define VEC_DOUBLE_FAULT 8
#define VEC_MACHINE_CHECK 18

#define TRAP_STUB_SIZE 16 /* entry.S aligns each vector's stub to 16 bytes */

struct x86_cpu_tables {
	u64 gdt[GDT_ENTRIES];
	struct tss tss;
} __cacheline_aligned;

/* The boot CPU's, set up before it knows its logical id (slot MAX_CPUS). */
static struct x86_cpu_tables boot_cpu_tables;
/* Each AP's, in its per-CPU area: only the CPUs present have one. */
static DEFINE_PER_CPU_ALIGNED(struct x86_cpu_tables, ap_cpu_tables);
static struct gate idt[256] __aligned(16);
static bool idt_ready;

/*
 * What the SYSCALL entry (syscall.S) reaches through %gs, at the link-time offset
 * x86_entry_percpu_offset (linker script): it has no free register to compute an
 * address with. tss points at this CPU's TSS; the boot CPU writes its own into
 * the .percpu template before the per-CPU copies are made, and each AP into its
 * copy, in desc_init_cpu().
 */
struct x86_entry_percpu {
	u64 kernel_sp; /* the running thread's kernel stack top */
	u64 user_sp;   /* the user rsp, from the entry's first store to its push */
	struct tss *tss;
};
DEFINE_PER_CPU_ALIGNED(struct x86_entry_percpu, x86_entry_percpu);
BUILD_BUG_ON(offsetof(struct x86_entry_percpu, kernel_sp) != ENTRY_KERNEL_SP);
BUILD_BUG_ON(offsetof(struct x86_entry_percpu, user_sp) != ENTRY_USER_SP);

extern char x86_trap_stubs[];

struct __packed table_register {
	u16 limit;
	u64 base;
};

static void idt_build(void)
{
	/*
	 * Ring 3 may raise one vector itself: int3, a breakpoint (SIGTRAP), as on
	 * Linux. INT n for any other vector is a #GP from ring 3 (SIGSEGV).
	 */
	for (unsigned v = 0; v < 256; v++) {
		uintptr_t stub = (uintptr_t)x86_trap_stubs + v * TRAP_STUB_SIZE;
		u8 ist = v == VEC_DOUBLE_FAULT	  ? IST_DOUBLE_FAULT
			 : v == VEC_NMI		  ? IST_NMI
			 : v == VEC_MACHINE_CHECK ? IST_MACHINE_CHECK
						  : 0;
		idt[v] = (struct gate){
		    .offset_low = (u16)stub,
		    .selector = KERNEL_CS,
		    .ist = ist,
		    .type_attr = v == VEC_BREAKPOINT ? GATE_INTERRUPT_USER : GATE_INTERRUPT,
		    .offset_mid = (u16)(stub >> 16),
		    .offset_high = (u32)(stub >> 32),
		};
	}
	idt_ready = true;
}

static void gdt_set_tss(u64 *gdt, const struct tss *tss)
{
	u64 base = (uintptr_t)tss, limit = sizeof(*tss) - 1;
	gdt[TSS_SEL / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
			   ((u64)TSS_TYPE_AVAILABLE << 40) | (((limit >> 16) & 0xf) << 48) |
			   (((base >> 24) & 0xff) << 56);
	gdt[TSS_SEL / 8 + 1] = base >> 32;
}

void desc_init_cpu(unsigned slot, const uintptr_t ist_top[IST_STACKS])
{
	struct x86_cpu_tables *t =
	    slot == MAX_CPUS ? &boot_cpu_tables : &per_cpu(ap_cpu_tables, slot);

	if (!idt_ready)
		idt_build(); /* first on the boot CPU, before any other CPU runs */

	memset(t, 0, sizeof(*t));
	t->gdt[KERNEL_CS / 8] = GDT_KERNEL_CODE;
	t->gdt[KERNEL_DS / 8] = GDT_KERNEL_DATA;
	t->gdt[USER_DS / 8] = GDT_USER_DATA;
	t->gdt[USER_CS / 8] = GDT_USER_CODE;
	for (unsigned i = 0; i < IST_STACKS; i++)
		t->tss.ist[i] = ist_top[i];
	t->tss.iomap_base = sizeof(t->tss);
	gdt_set_tss(t->gdt, &t->tss);
	this_cpu(x86_entry_percpu).tss = &t->tss;

	struct table_register gdtr = {sizeof(t->gdt) - 1, (uintptr_t)t->gdt};
	struct table_register idtr = {sizeof(idt) - 1, (uintptr_t)idt};

	/* Reload CS with a far return, then the data segments; FS/GS are left alone (GS base!). */
	__asm__ volatile("lgdt %0\n\t"
			 "pushq %1\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "movw %w2, %%ds\n\t"
			 "movw %w2, %%es\n\t"
			 "movw %w2, %%ss\n\t"
			 "ltr %w3\n\t"
			 "lidt %4"
			 :
			 : "m"(gdtr), "i"(KERNEL_CS), "r"(KERNEL_DS), "r"(TSS_SEL), "m"(idtr)
			 : "rax", "memory");
}

/*
 * The running thread's kernel stack top, where a trap (TSS.RSP0) or a system call
 * (the SYSCALL entry's slot) from ring 3 builds its frame. Interrupts off: the
 * thread must not move to another CPU between the two stores.
 */
void x86_set_kernel_stack(uintptr_t top)
{
	struct x86_entry_percpu *e = this_cpu_ptr(&x86_entry_percpu);

	e->kernel_sp = top;
	e->tss->rsp[0] = top;
}

void arch_set_percpu_base(uintptr_t base)
{
	__asm__ volatile("wrmsr" ::"c"(MSR_GS_BASE), "a"((u32)base), "d"((u32)(base >> 32))
			 : "memory");
}
