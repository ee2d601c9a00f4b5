/*
 * Starting the secondary CPUs: each gets a stack in its own node and is started
 * through the arch (arch_cpu_start); it reports in from secondary_main(). A CPU
 * that does not come online in time is abandoned, and a late one then parks
 * itself. Also the cpus shell command.
 */
#include <grace/arch.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/irq.h>
#include <grace/numa.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/timer.h>
#include <grace/vmap.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define CPU_START_TIMEOUT_NS                                                                       \
	(20ULL * 1000 * 1000 * 1000) /* 64 vCPUs on 2 host cores are slow to start */

struct cpumask cpu_online_mask;

/* Secondary start handshake: BOOTING -> ONLINE by the CPU, BOOTING -> ABANDONED by the boot CPU. */
enum { CPU_OFF, CPU_BOOTING, CPU_ONLINE, CPU_ABANDONED };
static u32 cpu_state[MAX_CPUS];

void __noreturn secondary_main(void)
{
	unsigned cpu = smp_processor_id();
	u32 expected = CPU_BOOTING;
	/* Fully ordered, as the boot CPU's cmpxchg in smp_boot() that it races with. */
	if (!try_cmpxchg(&cpu_state[cpu], &expected, CPU_ONLINE)) {
		/*
		 * The boot CPU gave up on us: stay out of the way. Not online, so no work
		 * or IPI is sent here; arch_idle() may still take a stray interrupt.
		 */
		arch_irq_disable();
		for (;;)
			arch_idle();
	}
	this_cpu(idle_task).last_switch_ns = arch_clock_ns();
	cpumask_set_cpu(&cpu_online_mask, cpu);
	arch_irq_enable();
	cpu_idle_loop();
}

void smp_boot(void)
{
	unsigned self = smp_processor_id();
	unsigned started = 0;

	cpu_state[self] = CPU_ONLINE;
	smp_call_init();
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		if (cpu == self)
			continue;
		/* A stack with a guard page below it (mm/vmap.c), in the CPU's own node. */
		char *stack = stack_alloc_node(cpu_to_node(cpu));
		if (!stack) {
			pr_err("smp: no memory for CPU %u's stack\n", cpu);
			continue;
		}
		WRITE_ONCE(cpu_state[cpu], CPU_BOOTING);
		int err = arch_cpu_start(cpu, (uintptr_t)stack + KERNEL_STACK_SIZE);
		if (err) {
			pr_err("smp: CPU %u (hwid %u) failed to start: %s\n", cpu,
			       boot_info.cpus[cpu].hwid, errno_name(err));
			WRITE_ONCE(cpu_state[cpu], CPU_ABANDONED);
			/* The stack stays: a start that reported an error may still have begun. */
			continue;
		}
		started++;
	}

	u64 deadline = arch_clock_ns() + CPU_START_TIMEOUT_NS;
	while (num_online_cpus() < started + 1 && arch_clock_ns() < deadline)
		cpu_relax();

	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		u32 expected = CPU_BOOTING;
		/* Races with the cmpxchg in secondary_main(): one of the two wins. */
		if (try_cmpxchg(&cpu_state[cpu], &expected, CPU_ABANDONED))
			pr_err("smp: CPU %u (hwid %u) did not come online within %llu s\n", cpu,
			       boot_info.cpus[cpu].hwid, CPU_START_TIMEOUT_NS / 1000000000ULL);
	}
	if (boot_info.nr_cpus_found > boot_info.nr_cpus)
		pr_warn("smp: the firmware describes %u CPUs; Grace supports %u\n",
			boot_info.nr_cpus_found, MAX_CPUS);
	printk("smp: %u CPUs online\n", num_online_cpus());
}

SHELL_CMD(cpus, "", "online CPUs: hardware id, node, interrupts, IPIs, timer interrupts")
{
	unsigned cpu;
	if (argc != 1)
		return SHELL_USAGE;
	printk("%u CPUs online of %u described; boot CPU %u\n", num_online_cpus(),
	       boot_info.nr_cpus, boot_info.boot_cpu);
	printk("  %-5s %5s %4s %12s %12s %12s %12s\n", "cpu", arch_hwid_name, "node", "interrupts",
	       "ipis", "timer", "switches");
	for_each_online_cpu(cpu)
		printk("  cpu%-2u %5u %4d %12llu %12llu %12llu %12llu\n", cpu,
		       boot_info.cpus[cpu].hwid, boot_info.cpus[cpu].node,
		       (unsigned long long)irq_count(cpu),
		       (unsigned long long)smp_ipis_received(cpu),
		       (unsigned long long)timer_interrupts(cpu),
		       (unsigned long long)sched_nr_switches(cpu));
	return 0;
}
