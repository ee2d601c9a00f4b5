/*
 * What a key press on the console does. Runs in the UART's receive interrupt, so
 * each command only reads counters and prints.
 */
#include <grace/console.h>
#include <grace/cpumask.h>
#include <grace/irq.h>
#include <grace/mm.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/time.h>

static void console_show_cpus(void)
{
	unsigned cpu;
	printk("uptime %llu ms; %u CPUs online\n", (unsigned long long)(arch_clock_ns() / NSEC_PER_MSEC),
	       num_online_cpus());
	for_each_online_cpu(cpu)
		printk("  cpu%-2u hwid %-3u interrupts %-8llu ipis %-8llu timer %llu\n", cpu,
		       boot_info.cpus[cpu].hwid, (unsigned long long)irq_count(cpu),
		       (unsigned long long)smp_ipis_received(cpu), (unsigned long long)timer_interrupts(cpu));
}

void console_input(char c)
{
	switch (c) {
	case 'c':
		console_show_cpus();
		break;
	case 'm':
		printk("memory: %llu KiB free\n", (unsigned long long)(mm_free_bytes() >> 10));
		break;
	case 't':
		sched_show_toggle();
		break;
	case 'h':
	case '?':
		printk("keys: c = CPUs and their interrupt counts, m = free memory, "
		       "t = periodic thread report on/off, h = this help; "
		       "Ctrl-A X quits QEMU\n");
		break;
	default:
		break;
	}
}
