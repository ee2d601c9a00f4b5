/*
 * External interrupt lines (PLIC sources, ISA IRQs/GSIs) and their handlers. The
 * arch's interrupt controller code calls irq_dispatch(line); a driver claims a line
 * with irq_register(), which unmasks it at the controller.
 */
#ifndef GRACE_IRQ_H
#define GRACE_IRQ_H

#include <grace/types.h>

#define NR_IRQ_LINES 256

typedef void (*irq_handler_t)(void *arg);

/* 0, -EINVAL for a line out of range, -EBUSY if taken, or the controller's error. */
int irq_register(unsigned irq, irq_handler_t handler, void *arg);

/* Interrupts handled by this CPU since boot (all kinds). */
u64 irq_count(unsigned cpu);

#endif
