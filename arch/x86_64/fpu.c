/*
 * The x87/SSE registers of user threads. The kernel is built without them
 * (-mgeneral-regs-only), so they hold user state only, and switching them at
 * every context switch of a user thread (eagerly: FXSAVE64 out, FXRSTOR64 in) is
 * all the management they need; no CR0.TS trap, no lazy ownership to track
 * across CPUs. FXSAVE rather than XSAVE: the 512-byte image covers x87, MXCSR
 * and XMM0-15, which is everything QEMU's default CPU model has (no AVX).
 *
 * Every x86_64 CPU has FXSR, SSE and SSE2 (the architecture requires them), so
 * each CPU only has to be told that the OS saves them: CR4.OSFXSR (SSE runs,
 * FXSAVE covers XMM), CR4.OSXMMEXCPT (an unmasked SIMD error is #XM, not #UD),
 * CR0.MP and CR0.NE (x87 errors are #MF exceptions), CR0.EM and TS clear.
 */
#include <grace/string.h>
#include <asm/switch.h>
#include "processor.h"
#include "x86_64.h"

/* The state FNINIT leaves, and the MXCSR the SysV ABI starts with: all exceptions masked. */
#define FCW_INIT 0x037f
#define MXCSR_INIT 0x1f80
/* What an FXSAVE image's mxcsr_mask of 0 means (Intel SDM vol. 1, 11.6.6): all but DAZ. */
#define MXCSR_MASK_DEFAULT 0xffbf

/*
 * The MXCSR bits this CPU implements, from the boot CPU's FXSAVE (every CPU of a
 * machine has the same): FXRSTOR of an image with any other bit set is a #GP.
 */
static u32 mxcsr_mask;

void x86_fpu_init_cpu(void)
{
	write_cr0((read_cr0() | CR0_MP | CR0_NE) & ~(u64)(CR0_EM | CR0_TS));
	write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
	/* The boot CPU's call, before any other CPU starts; they find it set. */
	if (!mxcsr_mask) {
		struct fxstate fx;
		memset(&fx, 0, sizeof(fx));
		x86_fpu_save(&fx);
		mxcsr_mask = fx.mxcsr_mask ? fx.mxcsr_mask : MXCSR_MASK_DEFAULT;
	}
}

void x86_fpu_save(struct fxstate *fx)
{
	__asm__ volatile("fxsave64 %0" : "=m"(*fx));
}

void x86_fpu_restore(const struct fxstate *fx)
{
	__asm__ volatile("fxrstor64 %0" ::"m"(*fx));
}

/*
 * A fresh image: FNINIT's x87 state (control word 0x37f, every register empty:
 * the abridged tag word 0), MXCSR 0x1f80, and every x87 and XMM register zero.
 * Written out, not captured with FNINIT and FXSAVE, so that nothing of the last
 * thread's registers can reach the image.
 */
void x86_fpu_init_state(struct fxstate *fx)
{
	memset(fx, 0, sizeof(*fx));
	fx->fcw = FCW_INIT;
	fx->mxcsr = MXCSR_INIT;
}

/*
 * An image that came from user memory (a signal frame), made safe to load: MXCSR
 * keeps only the bits the CPU has, as Linux's sigreturn masks it, so that the
 * FXRSTOR cannot fault in the kernel. Nothing else in the image can make it fault.
 */
void x86_fpu_sanitize(struct fxstate *fx)
{
	fx->mxcsr &= mxcsr_mask;
}
