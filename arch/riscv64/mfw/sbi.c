/*
 * The SBI calls Grace's S-mode kernel makes, answered in M-mode, and the traps that
 * bring them here. M-mode takes three traps, each for a reason S-mode cannot serve:
 *  - ecall from S: the SBI calls themselves;
 *  - the M software interrupt (this hart's MSIP, which only M-mode can write): how one
 *    hart asks another for an S software interrupt (IPI), a fence (RFENCE), or to
 *    leave the stopped state (HSM);
 *  - the M timer interrupt, on a hart without Sstc: mtimecmp reached, passed on to
 *    S-mode as mip.STIP, which only M-mode can set.
 * Anything else reaching M-mode is a firmware bug: it prints and halts.
 *
 * Cross-hart requests live in the target's struct mfw_hart: the sender writes the
 * request, then the doorbell (MSIP); the target clears its doorbell before reading the
 * requests, so one made after that read rings again. A sender waiting for a fence
 * serves its own requests while it waits: two harts fencing each other do not deadlock.
 */
#include <grace/atomic.h>
#include <grace/compiler.h>
#include "../sbi.h"
#include "mfw.h"

#define MFW_IMPL_VERSION 1
/* SBI 1.0: the version of the spec whose calls and error codes these follow. */
#define MFW_SPEC_VERSION (1UL << 24)
#define TEST_POWEROFF 0x5555
#define TEST_RESET 0x7777
#define TEST_FAIL(code) (((code) << 16) | 0x3333)

extern char _start[];

BUILD_BUG_ON(sizeof(struct mfw_hart) != 128);
BUILD_BUG_ON(offsetof(struct mfw_hart, stack_top) != MFW_HART_STACK_TOP);
BUILD_BUG_ON(offsetof(struct mfw_hart, scratch) != MFW_HART_SCRATCH);
BUILD_BUG_ON(offsetof(struct mfw_hart, sstc) != 17);

/* The trap frame entry.S builds: x0..x31 at 8 * n (x0's slot unused). */
struct mfw_frame {
	unsigned long x[32];
};
#define REG_A0 10
#define REG_A1 11
#define REG_A2 12
#define REG_A3 13
#define REG_A6 16
#define REG_A7 17

#define csr_read(csr)                                                                              \
	({                                                                                         \
		unsigned long __v;                                                                 \
		__asm__ __volatile__("csrr %0, " #csr : "=r"(__v) : : "memory");                   \
		__v;                                                                               \
	})
#define csr_write(csr, v) __asm__ __volatile__("csrw " #csr ", %0" : : "r"(v) : "memory")
#define csr_set(csr, v) __asm__ __volatile__("csrs " #csr ", %0" : : "r"(v) : "memory")
#define csr_clear(csr, v) __asm__ __volatile__("csrc " #csr ", %0" : : "r"(v) : "memory")

static struct mfw_hart *this_hart(void)
{
	return (struct mfw_hart *)csr_read(mscratch);
}

static struct mfw_hart *hart_of(unsigned long hartid)
{
	return hartid < MFW_MAX_HARTS && mfw_harts[hartid].present ? &mfw_harts[hartid] : NULL;
}

static void doorbell(struct mfw_hart *h)
{
	/* Requests written before the doorbell; pairs with the fence after its clear. */
	__asm__ __volatile__("fence rw, ow" : : : "memory");
	*h->msip = 1;
}

/* What other harts asked of this one: S software interrupt, fences. */
static void ipi_process(struct mfw_hart *h)
{
	*h->msip = 0;
	__asm__ __volatile__("fence ow, rw" : : : "memory");
	if (READ_ONCE(h->ipi_ssip) && xchg(&h->ipi_ssip, 0))
		csr_set(mip, MIP_SSIP);
	u64 req = smp_load_acquire(&h->fence_req);
	if (req != READ_ONCE(h->fence_done)) {
		/* Every request up to req was made before these: all are served. */
		__asm__ __volatile__("fence.i\n\tsfence.vma" : : : "memory");
		smp_store_release(&h->fence_done, req);
	}
}

/*
 * The harts a (mask, base) pair names that can take a request now (started ones, as
 * OpenSBI); fn(target) for each. base -1: every hart. Invalid base: SBI_ERR_INVALID_PARAM.
 */
static long for_each_target(unsigned long mask, unsigned long base,
			    void (*fn)(struct mfw_hart *, void *), void *arg)
{
	unsigned long first = base == SBI_ALL_HARTS ? 0 : base;
	unsigned long last = base == SBI_ALL_HARTS ? MFW_MAX_HARTS : first + 64;
	if (base != SBI_ALL_HARTS && base >= MFW_MAX_HARTS)
		return SBI_ERR_INVALID_PARAM;
	for (unsigned long id = first; id < last && id < MFW_MAX_HARTS; id++) {
		struct mfw_hart *t = hart_of(id);
		if (base != SBI_ALL_HARTS && !(mask >> (id - first) & 1))
			continue;
		if (t && READ_ONCE(t->hsm_state) == HSM_STARTED)
			fn(t, arg);
	}
	return SBI_SUCCESS;
}

static void send_ssip(struct mfw_hart *t, void *arg)
{
	if (t == this_hart()) {
		csr_set(mip, MIP_SSIP);
		return;
	}
	WRITE_ONCE(t->ipi_ssip, 1);
	doorbell(t);
}

/* A fence asked of t: posted to every target first, then waited for, so they run at once. */
static void fence_post(struct mfw_hart *t, void *arg)
{
	if (t == this_hart()) {
		__asm__ __volatile__("fence.i\n\tsfence.vma" : : : "memory");
		return;
	}
	__atomic_add_fetch(&t->fence_req, 1, __ATOMIC_RELEASE);
	doorbell(t);
}

static void fence_wait(struct mfw_hart *t, void *arg)
{
	struct mfw_hart *self = this_hart();
	if (t == self)
		return;
	/* Ours is at or below what t has been asked by now: once that is done, ours is. */
	u64 asked = READ_ONCE(t->fence_req);
	/*
	 * The fence is done when the call returns (SBI spec); serve our own meanwhile. A
	 * hart that stopped since has nothing to fence: its start flushes everything.
	 */
	while ((s64)(smp_load_acquire(&t->fence_done) - asked) < 0 &&
	       READ_ONCE(t->hsm_state) == HSM_STARTED)
		if (csr_read(mip) & MIP_MSIP)
			ipi_process(self);
}

static long sbi_rfence(unsigned long fid, unsigned long mask, unsigned long base)
{
	if (fid != SBI_RFENCE_FENCE_I && fid != SBI_RFENCE_SFENCE_VMA &&
	    fid != SBI_RFENCE_SFENCE_VMA_ASID)
		return SBI_ERR_NOT_SUPPORTED;
	/* fence.i and a whole sfence.vma on each: more than a range asks, never less. */
	long err = for_each_target(mask, base, fence_post, NULL);
	if (err == SBI_SUCCESS)
		for_each_target(mask, base, fence_wait, NULL);
	return err;
}

static void set_timer(struct mfw_hart *h, u64 when)
{
	if (h->sstc) {
		__asm__ __volatile__("csrw 0x14d, %0" : : "r"(when) : "memory"); /* stimecmp */
		return;
	}
	*h->mtimecmp = when;
	/* The S timer interrupt the last deadline raised is answered by this call. */
	csr_clear(mip, MIP_STIP);
	csr_set(mie, MIP_MTIP);
}

static long hsm_start(unsigned long hartid, unsigned long addr, unsigned long arg)
{
	struct mfw_hart *t = hart_of(hartid);
	if (!t)
		return SBI_ERR_INVALID_PARAM;
	/* S-mode cannot run from the firmware's region: PMP keeps it out. */
	if (addr - (uintptr_t)_start < MFW_REGION_SIZE)
		return SBI_ERR_INVALID_ADDRESS;
	u32 state = HSM_STOPPED;
	if (!try_cmpxchg(&t->hsm_state, &state, HSM_START_PENDING))
		return state == HSM_STARTED ? SBI_ERR_ALREADY_AVAILABLE : SBI_ERR_INVALID_PARAM;
	t->start_addr = addr;
	t->start_arg = arg;
	/* The arguments before the release: pairs with the acquire in mfw_stopped_wait(). */
	smp_store_release(&t->start_go, 1);
	doorbell(t);
	return SBI_SUCCESS;
}

void __attribute__((noreturn)) mfw_stopped_wait(struct mfw_hart *h, unsigned long hartid)
{
	csr_clear(mie, MIP_MTIP);
	csr_write(mie, MIP_MSIP);
	for (;;) {
		*h->msip = 0;
		__asm__ __volatile__("fence ow, rw" : : : "memory");
		if (smp_load_acquire(&h->start_go))
			break;
		/* wfi ends once MSIP is pending, even with mstatus.MIE clear as here. */
		__asm__ __volatile__("wfi");
	}
	WRITE_ONCE(h->start_go, 0);
	WRITE_ONCE(h->ipi_ssip, 0);
	/* Fences asked of a stopped hart: mfw_enter_smode() flushes everything anyway. */
	WRITE_ONCE(h->fence_done, READ_ONCE(h->fence_req));
	csr_clear(mip, MIP_SSIP | MIP_STIP);
	unsigned long addr = h->start_addr, arg = h->start_arg;
	smp_store_release(&h->hsm_state, HSM_STARTED);
	mfw_enter_smode(addr, hartid, arg);
}

static long hsm_stop(struct mfw_hart *h)
{
	u32 state = HSM_STARTED;
	if (!try_cmpxchg(&h->hsm_state, &state, HSM_STOPPED))
		return SBI_ERR_FAILED;
	mfw_stopped_wait(h, csr_read(mhartid));
}

static long srst(unsigned long type, unsigned long reason)
{
	if (type > SBI_SRST_WARM_REBOOT || reason > SBI_SRST_REASON_FAILURE)
		return SBI_ERR_INVALID_PARAM;
	if (!mfw_test_dev)
		return SBI_ERR_NOT_SUPPORTED;
	if (type == SBI_SRST_SHUTDOWN)
		*mfw_test_dev = reason == SBI_SRST_REASON_FAILURE ? TEST_FAIL(1) : TEST_POWEROFF;
	else
		*mfw_test_dev = TEST_RESET;
	return SBI_ERR_FAILED; /* the device did not act */
}

static bool probe(unsigned long ext)
{
	switch (ext) {
	case SBI_EXT_BASE:
	case SBI_EXT_TIME:
	case SBI_EXT_IPI:
	case SBI_EXT_RFENCE:
	case SBI_EXT_HSM:
		return true;
	case SBI_EXT_SRST:
		return mfw_test_dev != NULL;
	default:
		return false;
	}
}

static long sbi_base(unsigned long fid, unsigned long a0, unsigned long *value)
{
	switch (fid) {
	case SBI_BASE_GET_SPEC_VERSION:
		*value = MFW_SPEC_VERSION;
		return SBI_SUCCESS;
	case SBI_BASE_GET_IMPL_ID:
		*value = SBI_IMPL_GRACE;
		return SBI_SUCCESS;
	case SBI_BASE_GET_IMPL_VERSION:
		*value = MFW_IMPL_VERSION;
		return SBI_SUCCESS;
	case SBI_BASE_PROBE_EXTENSION:
		*value = probe(a0);
		return SBI_SUCCESS;
	case SBI_BASE_GET_MVENDORID:
		*value = csr_read(mvendorid);
		return SBI_SUCCESS;
	case SBI_BASE_GET_MARCHID:
		*value = csr_read(marchid);
		return SBI_SUCCESS;
	case SBI_BASE_GET_MIMPID:
		*value = csr_read(mimpid);
		return SBI_SUCCESS;
	default:
		return SBI_ERR_NOT_SUPPORTED;
	}
}

static void sbi_call(struct mfw_frame *f)
{
	struct mfw_hart *h = this_hart();
	unsigned long ext = f->x[REG_A7], fid = f->x[REG_A6];
	unsigned long a0 = f->x[REG_A0], a1 = f->x[REG_A1], a2 = f->x[REG_A2];
	unsigned long value = f->x[REG_A1];
	long err;

	switch (ext) {
	case SBI_EXT_LEGACY_PUTCHAR:
		/* Legacy calls answer in a0 alone. */
		mfw_putc((char)a0);
		f->x[REG_A0] = 0;
		return;
	case SBI_EXT_LEGACY_SHUTDOWN:
		f->x[REG_A0] = (unsigned long)srst(SBI_SRST_SHUTDOWN, SBI_SRST_REASON_NONE);
		return;
	case SBI_EXT_BASE:
		err = sbi_base(fid, a0, &value);
		break;
	case SBI_EXT_TIME:
		err = fid == SBI_TIME_SET_TIMER ? (set_timer(h, a0), SBI_SUCCESS)
						: SBI_ERR_NOT_SUPPORTED;
		break;
	case SBI_EXT_IPI:
		err = fid == SBI_IPI_SEND_IPI ? for_each_target(a0, a1, send_ssip, NULL)
					      : SBI_ERR_NOT_SUPPORTED;
		break;
	case SBI_EXT_RFENCE:
		err = sbi_rfence(fid, a0, a1);
		break;
	case SBI_EXT_HSM:
		if (fid == SBI_HSM_HART_START) {
			err = hsm_start(a0, a1, a2);
		} else if (fid == SBI_HSM_HART_STOP) {
			err = hsm_stop(h);
		} else if (fid == SBI_HSM_HART_GET_STATUS) {
			struct mfw_hart *t = hart_of(a0);
			err = t ? SBI_SUCCESS : SBI_ERR_INVALID_PARAM;
			if (t)
				value = READ_ONCE(t->hsm_state);
		} else {
			err = SBI_ERR_NOT_SUPPORTED;
		}
		break;
	case SBI_EXT_SRST:
		err = fid == 0 ? srst(a0, a1) : SBI_ERR_NOT_SUPPORTED;
		break;
	default:
		err = SBI_ERR_NOT_SUPPORTED;
		break;
	}
	f->x[REG_A0] = (unsigned long)err;
	f->x[REG_A1] = value;
}

void mfw_trap(struct mfw_frame *f)
{
	unsigned long cause = csr_read(mcause);
	if (cause == (MCAUSE_INTERRUPT | MCAUSE_M_SOFT)) {
		ipi_process(this_hart());
	} else if (cause == (MCAUSE_INTERRUPT | MCAUSE_M_TIMER)) {
		/* mtimecmp passed: S-mode's turn. MTIP stays up until set_timer moves it. */
		csr_clear(mie, MIP_MTIP);
		csr_set(mip, MIP_STIP);
	} else if (cause == MCAUSE_ECALL_S) {
		sbi_call(f);
		csr_write(mepc, csr_read(mepc) + 4);
	} else {
		mfw_puts("grace-fw: unexpected trap, mcause ");
		mfw_put_hex(cause);
		mfw_puts(" mepc ");
		mfw_put_hex(csr_read(mepc));
		mfw_puts(" mtval ");
		mfw_put_hex(csr_read(mtval));
		mfw_halt("a firmware bug");
	}
}
