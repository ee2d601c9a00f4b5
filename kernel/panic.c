/*
 * panic() and die(): stop the other CPUs, print once (the first CPU to panic wins;
 * the others stop), show what we know, and power off with a failure status so the
 * test runner and the user see it at once.
 */
#include <grace/arch.h>
#include <grace/console.h>
#include <grace/ksyms.h>
#include <grace/lockdep.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#define PANIC_EXIT_STATUS 3
#define NO_CPU 0xffffffffu

static u32 panic_cpu = NO_CPU;

/* Become the one CPU that reports the panic, or park if another CPU already is. */
static void panic_begin(void)
{
	arch_irq_disable();
	u32 self = smp_processor_id(), expected = NO_CPU;
	/* Fully ordered; the loser's acquire sees the winner's panic_cpu (and self if nested). */
	if (!try_cmpxchg(&panic_cpu, &expected, self)) {
		if (expected == self)
			arch_shutdown(PANIC_EXIT_STATUS); /* panicked while panicking */
		smp_park_self();
	}
	WRITE_ONCE(printk_panic_mode, true);
	lockdep_off(); /* the stopped CPUs hold what they hold; report the panic, nothing else */
	smp_stop_others();
}

static void __noreturn panic_end(void)
{
	printk_raw("---[ end Kernel panic ]---");
	arch_shutdown(PANIC_EXIT_STATUS);
}

void panic(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	panic_begin();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printk_raw("Kernel panic on CPU %u: %s", smp_processor_id(), msg);
	dump_stack();
	panic_end();
}

void die(const char *what, struct regs *regs)
{
	panic_begin();
	printk_raw("Kernel panic on CPU %u: %s", smp_processor_id(), what);
	arch_dump_regs(regs);
	backtrace_print(regs_pc(regs), regs_fp(regs));
	panic_end();
}
