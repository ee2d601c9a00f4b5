/*
 * kernel_main: the generic half of boot, entered on the boot CPU once the arch has
 * the MMU on and boot_info filled. It brings up the console, memory, per-CPU areas,
 * the platform's interrupts and timers and the other CPUs, then runs what the
 * command line asks: the selftests (test=<glob>) and benchmarks (bench=<glob>)
 * from the init thread, or, without either, the console shell. The boot context
 * becomes the CPU's idle thread.
 */
#include <grace/arch.h>
#include <grace/bench.h>
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/console.h>
#include <grace/kthread.h>
#include <grace/neighbour.h>
#include <grace/netdevice.h>
#include <grace/sched.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/route.h>
#include <grace/fs.h>
#include <grace/futex.h>
#include <grace/inet.h>
#include <grace/chrdev.h>
#include <grace/initramfs.h>
#include <grace/process.h>
#include <grace/selftest.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/virtio.h>
#include <asm/irq.h>

struct boot_info boot_info;

int boot_reserve(phys_addr_t base, u64 size)
{
	if (boot_info.nr_reserved == MAX_RESERVED)
		return -ENOSPC;
	boot_info.reserved[boot_info.nr_reserved++] = (struct mem_range){base, size, 0};
	return 0;
}

static void boot_print_machine(void)
{
	u64 ram = 0;
	for (unsigned i = 0; i < boot_info.nr_mem; i++)
		ram += boot_info.mem[i].size;
	printk("Grace %s: %u CPUs described, booting on CPU %u (hwid %u), %llu MiB RAM in %u "
	       "ranges, %u NUMA node%s\n",
	       arch_name, boot_info.nr_cpus, boot_info.boot_cpu,
	       boot_info.cpus[boot_info.boot_cpu].hwid, (unsigned long long)(ram >> 20),
	       boot_info.nr_mem, boot_info.nr_nodes, boot_info.nr_nodes == 1 ? "" : "s");
	printk("cmdline: '%s'\n", boot_info.cmdline);
}

static void boot_apply_cmdline(void)
{
	static const char *const spinlock_modes[] = {"backoff", "plain"};
	static const char *const delay_modes[] = {"hashed", "single"};

	cmdline_parse(boot_info.cmdline);
	printk_setup();
	if (cmdline_get("quiet"))
		console_loglevel = 4;
	if (cmdline_get_choice("spinlock", spinlock_modes, ARRAY_SIZE(spinlock_modes), 0) == 1)
		spinlock_backoff = false;
	if (cmdline_get_choice("spinlock_delay", delay_modes, ARRAY_SIZE(delay_modes), 0) == 1)
		spin_delay_set_single(true);
	printk("spinlock: ticket locks with %s%s\n",
	       spinlock_backoff ? "proportional backoff" : "plain spinning",
	       spinlock_backoff && spinlock_delay_single ? ", one delay per CPU" : "");
	spin_pv_init(cmdline_get("spinlock_pv"));
}

/* The first thread of a test or benchmark boot: runs what the command line asks, then powers off.
 */
static int init_main(void *arg)
{
	(void)arg;
	const char *tests = cmdline_get("test");
	const char *benches = cmdline_get("bench");
	int failed = 0;
	if (tests)
		failed += selftest_run(*tests ? tests : "*");
	if (benches)
		failed += bench_run(*benches ? benches : "*");
	arch_shutdown(failed ? 1 : 0);
}

void __noreturn kernel_main(void)
{
	unsigned boot_cpu = boot_info.boot_cpu;

	this_cpu(cpu_number) = boot_cpu;
	console_init();
	boot_print_machine();
	boot_apply_cmdline();

	mm_early_init();
	percpu_setup(boot_info.nr_cpus);
	arch_set_percpu_base(percpu_base(boot_cpu));
	cpumask_set_cpu(&cpu_online_mask, boot_cpu);
	sched_init(); /* before the first tick: the tick calls into the scheduler */

	arch_platform_init();
	tty_init();
	console_enable_input();
	arch_irq_enable();
	/*
	 * Before the other CPUs start: sizing PCI BARs and turning on decoding and bus
	 * mastering change the machine's memory map, and at each change QEMU's TCG (7.2)
	 * rebuilds every vCPU's view of it; a vCPU writing MMIO meanwhile (its local
	 * APIC's ICR, sending an IPI) can crash QEMU itself: SIGSEGV in
	 * memory_region_dispatch_write() on a NULL region, one x86_64 boot in about 50
	 * at 64 CPUs. After this the map stays as it is.
	 */
	virtio_prepare();
	smp_boot();

	sched_start();
	rcu_init(); /* after sched_start: its kthread and soft interrupt */
	vfs_init();
	initramfs_init(); /* before anything else uses a path */
	chrdev_init();	  /* /dev, after the initramfs: its own nodes are kept */
	futex_init();
	proc_init(); /* procfs on /proc, after the initramfs too */
	net_core_init();
	ip_rt_init(); /* the route cache and the neighbour table: timers, so after sched_start */
	neigh_init();
	net_init();    /* the protocols: its routes need the FIB and the route cache */
	virtio_init(); /* after net_core_init: virtio-net registers its device there */
	shell_init();  /* on test boots too: a command defined twice is a boot error */

	if (cmdline_get("test") || cmdline_get("bench")) {
		/* The selftests assume the thread that runs them stays on the boot CPU. */
		struct task *init = kthread_create_on_cpu(init_main, NULL, boot_cpu, "init");
		if (!init)
			panic("cannot create the init thread");
		wake_up_process(init);
		kthread_detach(init);
	} else {
		/*
		 * No thread in between that exits: a test run from the prompt counts free
		 * pages, and a reaped stack would show up in its count.
		 */
		if (!proc_start_init()) {
			printk("Grace is up. Type help at the prompt for the commands.\n");
			shell_start(boot_cpu);
		}
	}
	cpu_idle_loop();
}
