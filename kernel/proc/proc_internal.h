/* What kernel/proc/'s files share: the user stack's place. */
#ifndef KERNEL_PROC_INTERNAL_H
#define KERNEL_PROC_INTERNAL_H

#include <grace/process.h>
#include <grace/pgtable.h>

/*
 * The top of a program's stack: the last page of the user half stays unmapped,
 * as on Linux x86_64 (TASK_SIZE = 2^47 - 4 KiB), so a pointer just past the
 * stack's end is never valid.
 */
#define STACK_TOP (USER_VA_END - PAGE_SIZE)
/* The stack's VMA: RLIMIT_STACK's default, 8 MiB. */
#define EXEC_STACK_SIZE (8 * MiB)
/* Between the stack and the highest mmap(): Linux's smallest gap (MIN_GAP, 128 MiB). */
#define EXEC_STACK_GAP (128 * MiB)

#endif
