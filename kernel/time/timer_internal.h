/* Shared by the files of kernel/time only. */
#ifndef KERNEL_TIME_TIMER_INTERNAL_H
#define KERNEL_TIME_TIMER_INTERNAL_H

#include <asm/regs.h>

/* The context the running timer interrupt interrupted (for the profiler's samples). */
struct regs *timer_irq_regs(void);

#endif
