/*
 * The in-kernel sampling profiler. With profile=on on the command line, every
 * benchmark runs with each CPU sampling the interrupted PC from its timer
 * interrupt into its own histogram (one counter per kernel symbol, in that CPU's
 * memory only), and the merged table is printed after the benchmark in the same
 * form as the QEMU plugin's: count symbol share%, count being timer ticks.
 */
#ifndef GRACE_PROFILE_H
#define GRACE_PROFILE_H

#include <grace/types.h>
#include <asm/regs.h>

/* Is profile=on set? */
bool profile_enabled(void);
/* Start sampling on the CPUs smp_pick_cpus(ncpus) picks (this one first); -ENOMEM without memory.
 */
int profile_start(unsigned ncpus);
void profile_stop(void);
/* Between profile_start() and profile_stop()? */
bool profile_active(void);
/* Print the merged table of the last run: at most top rows. */
void profile_print(const char *title, unsigned top);
/* Samples recorded for the symbol called name in the last run (for the selftest). */
u64 profile_samples_of(const char *name, u64 *total);

/* Called from the timer interrupt. */
void profile_sample(struct regs *regs);

#endif
