/*
 * Grace's M-mode firmware (FIRMWARE=none): the layer between QEMU's reset vector and
 * Grace's S-mode kernel, in place of OpenSBI. A blob of its own, linked at RAM start
 * (mfw.ld), that every hart enters in M-mode; it answers the SBI calls the kernel makes.
 *
 * struct mfw_hart is one hart's state, indexed by hart id; mscratch holds the running
 * hart's. Fields written by other harts say so; the rest belong to the hart itself.
 * MFW_* offsets are for entry.S; sbi.c checks them at compile time.
 */
#ifndef MFW_H
#define MFW_H

/* QEMU 7.2's virt machine gives at most 512 harts; ids are 0..N-1. */
#define MFW_MAX_HARTS 512
/*
 * One hart's M-mode stack: a trap frame (32 registers) and the SBI handlers' C frames,
 * which are shallow. 512 of them fit the 2 MiB below the kernel with room to spare.
 */
#define MFW_STACK_SIZE 2048
/* The boot hart's stack while it reads the device tree, before its own is set. */
#define MFW_BOOT_STACK_SIZE 16384
/* Where the firmware ends and the kernel's Image starts: its header's text_offset. */
#define MFW_REGION_SIZE 0x200000
#define MFW_KERNEL_OFFSET MFW_REGION_SIZE

#define MFW_HART_STACK_TOP 0 /* offset of stack_top in struct mfw_hart */
#define MFW_HART_SCRATCH 8   /* the trapped sp, saved by the vector */
#define MFW_FRAME_SIZE (32 * 8)

/* mstatus, mie/mip bits (privileged spec, "Machine-Level CSRs"). */
#define MSTATUS_MPP_MASK (3UL << 11)
#define MSTATUS_MPP_S (1UL << 11)
#define MSTATUS_MPIE (1UL << 7)
#define MIP_SSIP (1UL << 1)
#define MIP_MSIP (1UL << 3)
#define MIP_STIP (1UL << 5)
#define MIP_MTIP (1UL << 7)
#define MIP_SEIP (1UL << 9)
#define MENVCFG_STCE (1UL << 63)
#define CSR_MENVCFG 0x30a
#define CSR_STIMECMP 0x14d
#define MCAUSE_INTERRUPT (1UL << 63)
#define MCAUSE_M_SOFT 3
#define MCAUSE_M_TIMER 7
#define MCAUSE_ECALL_S 9

#ifndef __ASSEMBLY__
#include <grace/types.h>

/* SBI HSM states (SBI spec, "Hart State Management Extension"). */
#define HSM_STARTED 0
#define HSM_STOPPED 1
#define HSM_START_PENDING 2

struct mfw_hart {
	uintptr_t stack_top; /* MFW_HART_STACK_TOP: entry.S's trap stack */
	uintptr_t scratch;   /* MFW_HART_SCRATCH: the trapped sp */
	bool present;	     /* described by the tree, with an MSIP and an mtimecmp */
	bool sstc;	     /* the hart has stimecmp (Sstc), given to S-mode */
	u32 hsm_state;	     /* HSM_*; any hart moves it by CAS (sbi.c) */
	volatile u32 *msip;  /* this hart's ACLINT MSWI (or CLINT) doorbell */
	volatile u64 *mtimecmp;
	/* hart_start's arguments: written by the starter before it releases the hart. */
	unsigned long start_addr, start_arg;
	u32 start_go; /* the release: set by the starter after the arguments, cleared here */
	u32 ipi_ssip; /* set by senders: raise SSIP on the next M software interrupt */
	/* Remote fences: senders take a ticket, the hart stores the last one it served. */
	u64 fence_req, fence_done;
} __attribute__((aligned(64)));

extern struct mfw_hart mfw_harts[MFW_MAX_HARTS];
/* The devices QEMU's tree describes that the SBI calls drive (0 where absent). */
extern volatile u32 *mfw_test_dev;
extern uintptr_t mfw_uart;
extern unsigned mfw_uart_shift;

/* entry.S */
void __attribute__((noreturn))
mfw_enter_smode(unsigned long addr, unsigned long a0, unsigned long a1);
/* boot.c */
void mfw_putc(char c);
void mfw_puts(const char *s);
void mfw_put_hex(unsigned long v);
void __attribute__((noreturn)) mfw_halt(const char *why);
/* sbi.c */
void __attribute__((noreturn)) mfw_stopped_wait(struct mfw_hart *h, unsigned long hartid);
#endif

#endif
