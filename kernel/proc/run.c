/*
 * Running programs from the kernel: the shell's `run PROGRAM [ARGS]`, which
 * waits for the program in the foreground, and init=PATH on the command line,
 * which runs a program as the first process instead of the shell and powers
 * off when it ends (Linux panics when init exits; a kernel for experiments ends
 * the run cleanly and says how init ended). `syscalls` lists the system calls
 * programs have made, by number, and which of them got -ENOSYS.
 */
#include <grace/arch.h>
#include <grace/chrdev.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/process.h>
#include <grace/shell.h>
#include <grace/signal.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/syscall.h>
#include <asm/unistd.h>

/* The environment a program started from the kernel gets, as Linux gives init. */
static char *const proc_default_envp[] = {"HOME=/", "TERM=linux", "PATH=/bin:/sbin:/usr/bin", NULL};

/* Describe a wait status as the shell and the init line print it. */
static void proc_print_status(const char *who, int status)
{
	if (status & 0x7f)
		printk("%s: killed by signal %d (%s)\n", who, status & 0x7f,
		       signal_name(status & 0x7f));
	else
		printk("%s: exited with status %d\n", who, (status >> 8) & 0xff);
}

/*
 * Start argv[0] and wait for it: its wait status, or -errno if it did not start.
 * init: it is the first process, which collects orphans.
 */
static int proc_run(char *const argv[], bool init)
{
	int err;
	char *path = kmalloc(PATH_MAX);
	if (!path)
		return -ENOMEM;
	/* A bare name is looked for in /bin, the one directory of the default PATH that exists. */
	if (strchr(argv[0], '/'))
		strlcpy(path, argv[0], PATH_MAX);
	else
		snprintf(path, PATH_MAX, "/bin/%s", argv[0]);
	struct process *p = proc_spawn(path, argv, proc_default_envp, &err);
	kfree(path);
	if (!p)
		return err;
	if (init)
		proc_make_init(p);
	/* In the foreground: Ctrl-C at the console is its SIGINT, until it ends. */
	tty_set_foreground(p->pgid);
	int status = proc_wait(p);
	tty_set_foreground(0);
	return status;
}

SHELL_CMD(run, "PROGRAM [ARGS...]",
	  "run a static Linux program in the foreground, on the console, and wait for it")
{
	if (argc < 2) {
		printk("run: usage: run PROGRAM [ARGS...]\n");
		return 1;
	}
	int status = proc_run(argv + 1, false);
	if (status < 0) {
		printk("run: %s: %s\n", argv[1], strerror(status));
		return 1;
	}
	proc_print_status("run", status);
	return status ? 1 : 0;
}

SHELL_CMD(syscalls, "", "system calls made by programs, by number; ENOSYS: no handler")
{
	printk("%6s %12s\n", "nr", "calls");
	for (unsigned nr = 0; nr <= NR_SYSCALLS; nr++) {
		u64 n = syscall_count(nr);
		if (!n)
			continue;
		if (nr == NR_SYSCALLS)
			printk("%6s %12llu ENOSYS\n", ">=max", (unsigned long long)n);
		else
			printk("%6u %12llu%s\n", nr, (unsigned long long)n,
			       syscall_implemented(nr) ? "" : " ENOSYS");
	}
	return 0;
}

static int proc_init_main(void *arg)
{
	char *argv[] = {(char *)arg, NULL};
	int status = proc_run(argv, true); /* in the terminal's foreground, as a shell expects */
	if (status < 0)
		printk("init: %s: %s\n", argv[0], strerror(status));
	else
		proc_print_status("init", status);
	arch_shutdown(status == 0 ? 0 : 1);
}

bool proc_start_init(void)
{
	const char *path = cmdline_get("init");
	if (!path)
		return false;
	struct task *t = kthread_create(proc_init_main, (void *)path, "init");
	if (!t)
		panic("cannot create the thread that runs init=%s", path);
	/* How init ended is the run's last word: printed even under quiet, as the shell's are. */
	t->flags |= TASK_CONSOLE; /* before it first runs: nobody else writes flags yet */
	wake_up_process(t);
	kthread_detach(t);
	return true;
}
