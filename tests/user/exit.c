/*
 * How a program's end reaches whoever waits for it: `exit N [how]` ends with
 * status N by exit() (atexit handlers run, stdio flushed), by a return from
 * main, by _exit() (exit_group, nothing flushed), or by the raw exit system
 * call, which ends a process of one thread as exit_group does. The wait status
 * keeps N's low 8 bits, so 256 reads 0 and -1 reads 255.
 *
 * userdiff: exit_status_reaches_the_shell_as_on_linux
 * run: /bin/exit 0
 * run: /bin/exit 1 exit
 * run: /bin/exit 42 return
 * run: /bin/exit 255 _exit
 * run: /bin/exit 256 exit
 * run: /bin/exit 300 _exit
 * run: /bin/exit -1 return
 * run: /bin/exit 7 sys_exit
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void at_exit_handler(void)
{
	printf("atexit handler ran\n");
}

int main(int argc, char **argv)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		printf("usage: exit N [exit|return|_exit|sys_exit]\n");
		return 2;
	}
	int status = atoi(argv[1]);
	const char *how = argc > 2 ? argv[2] : "exit";
	atexit(at_exit_handler);
	printf("ending with %d by %s\n", status, how);
	if (!strcmp(how, "return"))
		return status;
	if (!strcmp(how, "_exit"))
		_exit(status);
	if (!strcmp(how, "sys_exit"))
		syscall(SYS_exit, status);
	exit(status);
}
