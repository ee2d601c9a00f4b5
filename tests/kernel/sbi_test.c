/*
 * The firmware interface itself: every SBI call Grace makes, asked directly, with the
 * answers the SBI specification gives. The same tests run under OpenSBI (the default
 * riscv64 configurations) and under Grace's own M-mode firmware (FIRMWARE=none), so
 * OpenSBI is the oracle for the second: where they disagree, the firmware is wrong.
 * tests/run says which one booted (expect_firmware=opensbi or none).
 *
 * The fence test makes each CPU's TLB stale on purpose (QEMU's software TLB keeps a
 * translation until a flush), then asks the firmware for one remote sfence.vma: each
 * CPU must then read through the new translation. The stop-and-start test stops one
 * CPU through HSM and starts it again (riscv_hart_stop(), hart_stop.S) ten thousand
 * times, to catch a start whose arguments the hart can miss.
 */
#ifdef __riscv
#include <grace/arch.h>
#include <grace/atomic.h>
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/cpumask.h>
#include <grace/extable.h>
#include <grace/kthread.h>
#include <grace/kmap.h>
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/pgtable.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/uaccess.h>
#include <asm/cpu.h>
#include <asm/csr.h>
#include <asm/irq.h>
#include <asm/memory.h>
#include <arch/riscv64/hart.h>
#include <arch/riscv64/riscv.h>
#include <arch/riscv64/sbi.h>

/* Far beyond any hart QEMU gives (512) and any OpenSBI manages (128). */
#define SBI_TEST_NO_HART 0x10000UL
#define SBI_TEST_NO_EXT 0x0a5b1c2dUL
#define SBI_TEST_NO_FID 100
/* How long a CPU waits for what another asked of the firmware; generous under TCG. */
#define SBI_TEST_WAIT_NS (5 * NSEC_PER_SEC)

extern char secondary_entry[];

static bool grace_firmware(void)
{
	const char *fw = cmdline_get("expect_firmware");
	return fw && !strcmp(fw, "none");
}

TEST(sbi, base_gives_spec_version_and_implementation)
{
	struct sbiret r = sbi_ecall(SBI_EXT_BASE, SBI_BASE_GET_SPEC_VERSION, 0, 0, 0, 0);
	EXPECT_EQ(r.error, SBI_SUCCESS);
	/* Major in bits 30:24, minor below: HSM, SRST and the rest need 0.2 or later. */
	EXPECT_GE(r.value, 2);
	r = sbi_ecall(SBI_EXT_BASE, SBI_BASE_GET_IMPL_ID, 0, 0, 0, 0);
	EXPECT_EQ(r.error, SBI_SUCCESS);
	if (cmdline_get("expect_firmware"))
		EXPECT_EQ(r.value, grace_firmware() ? SBI_IMPL_GRACE : SBI_IMPL_OPENSBI);
	r = sbi_ecall(SBI_EXT_BASE, SBI_BASE_GET_IMPL_VERSION, 0, 0, 0, 0);
	EXPECT_EQ(r.error, SBI_SUCCESS);
	EXPECT_GT(r.value, 0);
	for (unsigned long fid = SBI_BASE_GET_MVENDORID; fid <= SBI_BASE_GET_MIMPID; fid++)
		EXPECT_EQ(sbi_ecall(SBI_EXT_BASE, fid, 0, 0, 0, 0).error, SBI_SUCCESS);
}

TEST(sbi, probe_finds_every_extension_grace_uses)
{
	static const unsigned long used[] = {SBI_EXT_TIME, SBI_EXT_IPI, SBI_EXT_RFENCE, SBI_EXT_HSM,
					     SBI_EXT_SRST};
	for (unsigned i = 0; i < ARRAY_SIZE(used); i++) {
		struct sbiret r =
		    sbi_ecall(SBI_EXT_BASE, SBI_BASE_PROBE_EXTENSION, used[i], 0, 0, 0);
		EXPECT_EQ(r.error, SBI_SUCCESS);
		if (!EXPECT_NE(r.value, 0))
			printk("# sbi: extension %lx not found\n", used[i]);
	}
	struct sbiret r =
	    sbi_ecall(SBI_EXT_BASE, SBI_BASE_PROBE_EXTENSION, SBI_TEST_NO_EXT, 0, 0, 0);
	EXPECT_EQ(r.error, SBI_SUCCESS);
	EXPECT_EQ(r.value, 0);
}

TEST(sbi, unknown_extension_and_functions_are_not_supported)
{
	EXPECT_EQ(sbi_ecall(SBI_TEST_NO_EXT, 0, 0, 0, 0, 0).error, SBI_ERR_NOT_SUPPORTED);
	EXPECT_EQ(sbi_ecall(SBI_EXT_BASE, SBI_TEST_NO_FID, 0, 0, 0, 0).error,
		  SBI_ERR_NOT_SUPPORTED);
	EXPECT_EQ(sbi_ecall(SBI_EXT_HSM, SBI_TEST_NO_FID, 0, 0, 0, 0).error, SBI_ERR_NOT_SUPPORTED);
	EXPECT_EQ(sbi_ecall(SBI_EXT_TIME, SBI_TEST_NO_FID, 0, 0, 0, 0).error,
		  SBI_ERR_NOT_SUPPORTED);
}

TEST(sbi, every_online_cpu_is_started)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		struct sbiret r = sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_GET_STATUS,
					    boot_info.cpus[cpu].hwid, 0, 0, 0);
		EXPECT_EQ(r.error, SBI_SUCCESS);
		EXPECT_EQ(r.value, SBI_HSM_STATE_STARTED);
	}
}

TEST(sbi, hart_id_out_of_range_is_an_invalid_param)
{
	EXPECT_EQ(sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_GET_STATUS, SBI_TEST_NO_HART, 0, 0, 0).error,
		  SBI_ERR_INVALID_PARAM);
	EXPECT_EQ(sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_START, SBI_TEST_NO_HART,
			    virt_to_phys(secondary_entry), 0, 0)
		      .error,
		  SBI_ERR_INVALID_PARAM);
}

/* A start is refused before it can disturb the running hart: the call must not succeed. */
TEST(sbi, starting_a_started_hart_is_already_available)
{
	unsigned cpu;
	for_each_online_cpu(cpu) {
		EXPECT_EQ(sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_START, boot_info.cpus[cpu].hwid,
				    virt_to_phys(secondary_entry), 0, 0)
			      .error,
			  SBI_ERR_ALREADY_AVAILABLE);
	}
}

/*
 * The firmware's own memory, which it reserved in the tree below the kernel (OpenSBI: a
 * reserved region; Grace's firmware: a no-map one), is no place to start S-mode.
 */
TEST(sbi, starting_a_hart_inside_the_firmware_is_an_invalid_address)
{
	const struct mem_range *fw = NULL;
	for (unsigned i = 0; i < riscv_machine.nr_nomap && !fw; i++)
		if (riscv_machine.nomap[i].base < boot_info.kernel_start)
			fw = &riscv_machine.nomap[i];
	for (unsigned i = 0; i < riscv_machine.nr_reserved && !fw; i++)
		if (riscv_machine.reserved[i].base < boot_info.kernel_start)
			fw = &riscv_machine.reserved[i];
	if (!fw) {
		test_skip("the device tree reserves no firmware region below the kernel");
		return;
	}
	EXPECT_EQ(sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_START,
			    boot_info.cpus[boot_info.boot_cpu].hwid, fw->base, 0, 0)
		      .error,
		  SBI_ERR_INVALID_ADDRESS);
}

/* set_timer: the S timer interrupt is pending once the deadline passed, and not after a
 * set_timer to the far future, which answers it (SBI spec, TIME extension). */
TEST(sbi, set_timer_raises_stip_and_a_later_deadline_clears_it)
{
	unsigned long flags = arch_irq_save();
	u64 start = arch_clock_ns();
	sbi_set_timer(rdtime() + 100);
	bool raised = false;
	while (!raised && arch_clock_ns() - start < SBI_TEST_WAIT_NS)
		raised = csr_read(sip) & SIE_STIE;
	sbi_set_timer(UINT64_MAX);
	bool cleared = !(csr_read(sip) & SIE_STIE);
	/* The kernel's own deadline is lost: an interrupt now makes it arm the next one. */
	sbi_set_timer(rdtime());
	arch_irq_restore(flags);
	EXPECT_TRUE(raised);
	EXPECT_TRUE(cleared);
}

struct ipi_probe {
	u32 ready, got;
};

static void ipi_wait_ssip(void *arg)
{
	struct ipi_probe *p = arg;
	/* In IPI context, interrupts off: the SSIP stays pending for us to see. */
	csr_clear(sip, SIP_SSIP);
	smp_store_release(&p->ready, 1);
	u64 start = arch_clock_ns();
	while (!(csr_read(sip) & SIP_SSIP) && arch_clock_ns() - start < SBI_TEST_WAIT_NS)
		cpu_relax();
	/* Left pending: the kernel takes it as an IPI with nothing queued, harmless. */
	smp_store_release(&p->got, csr_read(sip) & SIP_SSIP ? 1 : 2);
}

/* send_ipi through the firmware raises the supervisor software interrupt on every CPU. */
TEST(sbi, send_ipi_raises_ssip_on_every_cpu)
{
	unsigned self = smp_processor_id();
	unsigned long flags = arch_irq_save();
	csr_clear(sip, SIP_SSIP);
	EXPECT_EQ(sbi_send_ipi(1, boot_info.cpus[self].hwid), 0);
	EXPECT_TRUE(csr_read(sip) & SIP_SSIP);
	arch_irq_restore(flags);

	unsigned cpu;
	for_each_online_cpu(cpu) {
		if (cpu == self)
			continue;
		struct ipi_probe p = {0};
		ASSERT_EQ(smp_call(cpu, ipi_wait_ssip, &p, false), 0);
		u64 start = arch_clock_ns();
		while (!smp_load_acquire(&p.ready) && arch_clock_ns() - start < SBI_TEST_WAIT_NS)
			cpu_relax();
		ASSERT_TRUE(smp_load_acquire(&p.ready));
		u32 hart = boot_info.cpus[cpu].hwid;
		EXPECT_EQ(sbi_send_ipi(1UL << (hart % 64), hart - hart % 64), 0);
		while (!smp_load_acquire(&p.got))
			cpu_relax();
		if (!EXPECT_EQ(p.got, 1))
			printk("# sbi: CPU %u (hart %u) saw no SSIP\n", cpu, hart);
	}
}

#define FENCE_TEST_VA 0x20000000UL
#define FENCE_TEST_MAX_TABLES 4

struct fence_test {
	pte_t *root;
	u64 *old_page, *new_page;
	unsigned leader;
	atomic_t ready, stale, errors;
	u32 phase; /* 1: the leader changed the mapping and asked for the fence */
};

static pte_t *fence_tables[FENCE_TEST_MAX_TABLES];
static unsigned fence_nr_tables;

static pte_t *fence_table_alloc(void)
{
	if (fence_nr_tables == FENCE_TEST_MAX_TABLES)
		return NULL;
	pte_t *t = alloc_pages(0);
	if (t)
		fence_tables[fence_nr_tables++] = t;
	return t;
}

static void fence_worker(void *arg)
{
	struct fence_test *t = arg;
	u64 v = 0;
	unsigned long flags = arch_irq_save();
	arch_switch_mm(virt_to_phys(t->root));
	arch_user_access_begin();
	/* Warm this CPU's TLB with the old page. */
	if (probe_read_u64((void *)FENCE_TEST_VA, &v) || v != t->old_page[0])
		atomic_inc(&t->errors);
	atomic_inc(&t->ready);
	if (smp_processor_id() == (unsigned)t->leader) {
		while ((unsigned)atomic_read(&t->ready) < num_online_cpus())
			cpu_relax();
		/* The new page behind the address, no local flush: only the firmware's. */
		kmap_unmap_page(t->root, FENCE_TEST_VA);
		if (kmap_range(t->root, FENCE_TEST_VA, virt_to_phys(t->new_page), PAGE_SIZE,
			       PROT_READ | PROT_USER, false, true, fence_table_alloc))
			atomic_inc(&t->errors);
		__asm__ __volatile__("fence rw, rw" : : : "memory");
		sbi_remote_sfence_vma_all();
		smp_store_release(&t->phase, 1);
	}
	while (!smp_load_acquire(&t->phase))
		cpu_relax();
	if (probe_read_u64((void *)FENCE_TEST_VA, &v))
		atomic_inc(&t->errors);
	else if (v != t->new_page[0])
		atomic_inc(&t->stale);
	arch_user_access_end();
	arch_switch_mm(0);
	arch_irq_restore(flags);
}

/* One remote sfence.vma from one CPU reaches every CPU's TLB before the call returns. */
TEST(sbi, remote_sfence_vma_reaches_every_cpu)
{
	struct fence_test t = {.leader = smp_processor_id()};
	fence_nr_tables = 0;
	t.root = fence_table_alloc();
	t.old_page = alloc_pages(0);
	t.new_page = alloc_pages(0);
	ASSERT_TRUE(t.root && t.old_page && t.new_page);
	t.old_page[0] = 0x6f6c64; /* "old" */
	t.new_page[0] = 0x6e6577; /* "new" */
	arch_mm_init_root(t.root);
	ASSERT_EQ(kmap_range(t.root, FENCE_TEST_VA, virt_to_phys(t.old_page), PAGE_SIZE,
			     PROT_READ | PROT_USER, false, true, fence_table_alloc),
		  0);
	smp_run_all(fence_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(atomic_read(&t.stale), 0);
	for (unsigned i = 0; i < fence_nr_tables; i++)
		free_pages(fence_tables[i], 0);
	free_pages(t.old_page, 0);
	free_pages(t.new_page, 0);
}

/*
 * HSM stop and start, many times on one CPU: each start names one of two structs in
 * turn, and the hart must come back through the one its start named. A firmware that
 * lets a stopped hart go before it has stored the start's address and argument sends
 * it back, now and then, with those of the start before: a token behind.
 */
#define RESTART_CYCLES 10000

static struct riscv_resume restart_slots[2];
static struct {
	u32 arrivals; /* the victim's returns from a stop */
	u64 token;    /* the token of the struct it came back through */
	bool stop_failed;
	bool done; /* the next return is the last */
} restart;

static int restart_victim(void *arg)
{
	for (u32 n = 0;; n++) {
		unsigned long flags = arch_irq_save();
		struct riscv_resume *back = riscv_hart_stop(&restart_slots[n & 1]);
		arch_irq_restore(flags);
		if (!back) {
			WRITE_ONCE(restart.stop_failed, true);
			return 0;
		}
		WRITE_ONCE(restart.token, back->token);
		smp_store_release(&restart.arrivals, READ_ONCE(restart.arrivals) + 1);
		if (READ_ONCE(restart.done))
			return 0;
		cond_resched();
	}
}

static long hart_status(u32 hart)
{
	return sbi_ecall(SBI_EXT_HSM, SBI_HSM_HART_GET_STATUS, hart, 0, 0, 0).value;
}

TEST(sbi, a_hart_started_again_and_again_comes_back_with_each_starts_argument)
{
	if (!grace_firmware()) {
		/* head.S's lottery_lost works around that race in OpenSBI 1.1 at boot only. */
		test_skip(
		    "OpenSBI 1.1 lets a started hart go before it stores the start's arguments");
		return;
	}
	unsigned self = smp_processor_id(), victim = self;
	unsigned cpu;
	for_each_online_cpu(cpu)
		if (cpu != self && victim == self)
			victim = cpu;
	if (victim == self) {
		test_skip("one CPU");
		return;
	}
	u32 hart = boot_info.cpus[victim].hwid;
	memset(&restart, 0, sizeof(restart));
	struct task *t = kthread_create_on_cpu(restart_victim, NULL, victim, "restart");
	ASSERT_TRUE(t != NULL);
	wake_up_process(t);

	u32 behind = 0, cycles = 0;
	bool last = false;
	while (!last) {
		u64 start = arch_clock_ns();
		while (hart_status(hart) != SBI_HSM_STATE_STOPPED &&
		       !READ_ONCE(restart.stop_failed) &&
		       arch_clock_ns() - start < SBI_TEST_WAIT_NS)
			cpu_relax();
		/* On failure the victim is lost to the machine: there is nothing to clean. */
		ASSERT_EQ(hart_status(hart), SBI_HSM_STATE_STOPPED);
		struct riscv_resume *r = &restart_slots[cycles & 1];
		r->token = cycles;
		last = cycles + 1 == RESTART_CYCLES || behind;
		WRITE_ONCE(restart.done, last);
		ASSERT_EQ(sbi_hart_start(hart, virt_to_phys(riscv_resume_entry), virt_to_phys(r)),
			  0);
		while (smp_load_acquire(&restart.arrivals) != cycles + 1 &&
		       arch_clock_ns() - start < 2 * SBI_TEST_WAIT_NS)
			cpu_relax();
		ASSERT_EQ(smp_load_acquire(&restart.arrivals), cycles + 1);
		if (READ_ONCE(restart.token) != cycles) {
			printk("# sbi: start %u came back with token %llu\n", cycles,
			       (unsigned long long)READ_ONCE(restart.token));
			behind++;
		}
		cycles++;
	}
	kthread_join(t);
	EXPECT_EQ(behind, 0);
	EXPECT_FALSE(READ_ONCE(restart.stop_failed));
	printk("# sbi: %u stops and starts of CPU %u\n", cycles, victim);
}
#endif
