/*
 * Interfaces shared between the files of arch/x86_64 (not part of the generic arch
 * boundary in include/grace/arch.h). Interrupt vector layout:
 *
 *   0x00-0x1f  CPU exceptions
 *   0x20-0x2f  the legacy 8259 PICs, remapped here and masked (only spurious ones arrive)
 *   0x30-0xaf  I/O APIC lines: vector = IRQ_VECTOR_BASE + GSI (IOAPIC_MAX_GSIS of them)
 *   0xb0-0xdf  message-signalled interrupts (msi.c), one vector per message
 *   0xec       LAPIC timer
 *   0xf0       the IPI
 *   0xfe       LAPIC error
 *   0xff       LAPIC spurious
 *
 * A higher vector has a higher priority in the LAPIC; IPIs and the timer outrank devices.
 */
#ifndef ARCH_X86_64_H
#define ARCH_X86_64_H

#include <grace/acpi.h>
#include <grace/boot_info.h>
#include <grace/ioapic.h>
#include <grace/types.h>
#include <asm/regs.h>
#include <asm/switch.h>

#define PIC_VECTOR_BASE 0x20
#define IRQ_VECTOR_BASE 0x30
#define MSI_VECTOR_BASE 0xb0
#define MSI_VECTORS 48
#define MSI_LINE_BASE IOAPIC_MAX_GSIS /* irq lines of messages follow the GSIs' */
#define TIMER_VECTOR 0xec
#define IPI_VECTOR 0xf0
#define LAPIC_ERROR_VECTOR 0xfe
#define SPURIOUS_VECTOR 0xff

/* What discovery found beyond boot_info: the interrupt controllers. */
struct x86_platform {
	u64 lapic_phys;
	struct ioapic_config ioapic; /* the I/O APICs and overrides, vectors from IRQ_VECTOR_BASE */
	phys_addr_t trampoline_phys; /* a free page below 1 MiB for the AP trampoline, 0 if none */
	phys_addr_t hpet_phys;	     /* the HPET's registers (ACPI HPET table), 0 if none */
};
extern struct x86_platform x86_platform;

/* setup.c */
void x86_fatal(const char *msg) __attribute__((noreturn));

/* mmu.c */
void mmu_init(void);

/* smap.c: turn on SMEP and SMAP on this CPU where CPUID has them; the boot CPU first. */
void x86_user_protect_init_cpu(bool boot_cpu);
/* Make [pa, pa + len) reachable through the direct map; returns its virtual address or NULL. */
void *mmu_map_phys(phys_addr_t pa, u64 len, bool uncached);
/* True if [va, va + len) is mapped as ordinary (cached) memory: safe to read from the unwinder. */
bool mmu_range_readable(uintptr_t va, size_t len);
extern u64 x86_kernel_cr3;     /* the final kernel page tables */
extern u64 x86_trampoline_cr3; /* the boot tables: kernel mappings plus an identity map */

/* desc.c */
/*
 * GDT, TSS (ist_top: the double-fault, NMI and machine-check stacks) and IDT for this CPU:
 * logical CPU slot, or MAX_CPUS for the boot CPU before it knows its id.
 */
void desc_init_cpu(unsigned slot, const uintptr_t ist_top[3]);
#define IST_STACK_SIZE (8 * 1024)
#define IST_STACKS 3
/* The stack a trap or system call from ring 3 lands on; interrupts off. */
void x86_set_kernel_stack(uintptr_t top);

/* fpu.c: the x87/SSE registers of user threads (struct fxstate, asm/switch.h). */
void x86_fpu_init_cpu(void);
void x86_fpu_init_state(struct fxstate *fx);
void x86_fpu_save(struct fxstate *fx);
void x86_fpu_restore(const struct fxstate *fx);
/* Clear what FXRSTOR would fault on in an image from user memory (MXCSR's absent bits). */
void x86_fpu_sanitize(struct fxstate *fx);

/* user.c: this CPU's SYSCALL MSRs and FPU set up; after desc_init_cpu(). */
void x86_user_init_cpu(void);
/* Every way out to ring 3 ends here, interrupts off; true if SYSRETQ may restore regs. */
bool x86_exit_to_user(struct regs *regs);

/* time.c */
#define PIT_HZ 1193182ULL
/* PIT channel 2, gated on, counting down from 0xffff (55 ms) in mode 0; no speaker. */
void pit_ch2_start(void);
/* Channel 2's count, latched. */
u16 pit_read_ch2(void);
void tsc_calibrate(void);
/* The TSC rate against the PIT (median of three runs), 0 if it did not count; boot's fallback. */
u64 tsc_calibrate_pit(void);
u64 tsc_from_ns(u64 ns);
extern u64 tsc_hz;

/* lapic.c */
void lapic_init_bsp(void);
void lapic_init_cpu(void);
u32 lapic_id(void);
void lapic_eoi(void);
/* Send ICR low word low to APIC id dest (ignored with a shorthand); -ETIMEDOUT if it stays busy. */
int lapic_send_icr(u32 dest, u32 low);
/* An NMI to APIC id dest: the spinlock kick (spin_halt.c). */
int lapic_send_nmi(u32 dest);
void lapic_timer_interrupt(struct regs *regs);

/* spin_halt.c: an NMI, which is a spinlock kick (trap.c calls it before anything else). */
void x86_spin_nmi(struct regs *regs);

/* msi.c (arch_msi_alloc() is in asm/irq.h) */
bool msi_line(unsigned line);
/* Deliver line's messages from now on: 0, or -ERANGE for a line not allocated. */
int msi_unmask(unsigned line);
/* The line of an unmasked message's vector, or -1 (not a message vector, or masked). */
int msi_vector_line(unsigned vector);

/* smpboot.c */
void smpboot_prepare(void);

#endif
