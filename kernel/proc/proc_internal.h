/* What kernel/proc/'s files share: pids, threads, the user stack's place. */
#ifndef KERNEL_PROC_INTERNAL_H
#define KERNEL_PROC_INTERNAL_H

#include <grace/process.h>
#include <grace/pgtable.h>
#include <asm/regs.h>

/*
 * The top of a program's stack: the last page of the user half stays unmapped,
 * as on Linux x86_64 (TASK_SIZE = 2^47 - 4 KiB), so a pointer just past the
 * stack's end is never valid.
 */
#define STACK_TOP (USER_VA_END - PAGE_SIZE)
/* Between the stack and the highest mmap(): Linux's smallest gap (MIN_GAP, 128 MiB). */
#define EXEC_STACK_GAP (128 * MiB)

/*
 * exec_args.c: the argument area of an exec (its header says what it holds and
 * how it is built), at the top of the new program's stack.
 */
struct exec_args {
	struct mm *mm; /* the new address space, its stack mapped; nobody runs in it */
	unsigned argc, envc;
	uintptr_t top;	 /* just above the first string copied in */
	uintptr_t p;	 /* the lowest byte of the strings so far */
	uintptr_t floor; /* p goes no lower: Linux's bprm->argmin */
	char *bounce;	 /* one page, that user strings and the vectors go through */
};
/* Count argv and envp and size the area below STACK_TOP in mm: 0, -EFAULT, -E2BIG, -ENOMEM. */
int exec_args_init(struct exec_args *a, struct mm *mm, struct exec_vec argv, struct exec_vec envp);
/* Copy path, envp and argv in: 0, -E2BIG, -EFAULT, -ENOMEM. */
int exec_args_copy(struct exec_args *a, const char *path, struct exec_vec argv,
		   struct exec_vec envp);
/*
 * Write argc, argv's pointers, NULL, envp's, NULL at at (after init and copy);
 * *execfn the file name's address. 0 or -ENOMEM.
 */
int exec_args_vectors(struct exec_args *a, uintptr_t at, uintptr_t *execfn);
/* What init took, whether or not the rest succeeded. */
void exec_args_free(struct exec_args *a);
/* Copy len bytes to va in mm, an mm being built that nothing runs in: 0 or -ENOMEM. */
int exec_stack_write(struct mm *mm, uintptr_t va, const void *src, size_t len);

/* pid.c: the next pid or tid; the hashes that find them under RCU. */
int pid_alloc(void);
void pid_hash_process(struct process *p);
void pid_unhash_process(struct process *p);
void pid_hash_thread(struct thread *t);
void pid_unhash_thread(struct thread *t);
/* Under rcu_read_lock(): the process with pid (a zombie too), the live thread with tid; or NULL. */
struct process *pid_find_process(int pid);
struct thread *pid_find_thread(int tid);

/* thread.c */
/* A new thread of p with tid (not yet on p's list): NULL on ENOMEM. */
struct thread *thread_alloc(struct process *p, int tid);
/*
 * Put t, made by thread_alloc() for task, on p's list: false if p is exiting or
 * the calling thread of p has been told to exit.
 */
bool thread_attach(struct thread *t, struct task *task);
/* Free t, never attached. */
void thread_free(struct thread *t);
/* The calling thread makes itself current's user thread (its first act). */
void thread_start(struct thread *t);
/*
 * What a thread made by fork or clone needs until it runs, freed by it: its
 * thread (NULL: the call failed after the task was made, so it only ends), its
 * first user registers, its TLS pointer and where to write its tid.
 */
struct thread_start {
	struct thread *thread;
	struct regs regs;
	uintptr_t tls, set_ctid; /* set_ctid 0: none */
	bool settls;
};
/* The function of such a thread's task, arg a struct thread_start. */
int thread_user_start(void *arg);

/* process.c: the last thread's end of the process, wait status status. */
void __noreturn proc_teardown(int status);
/*
 * p, a vfork child, is done with its parent's address space (it exec'd, or is
 * exiting): it forgets it and wakes the parent. Nothing for any other process.
 */
void proc_vfork_release(struct process *p);

#endif
