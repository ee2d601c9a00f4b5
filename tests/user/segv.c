/*
 * A program killed by the fault it makes: `segv HOW` writes to a page mapped
 * read-only, to a string constant in the image's read-only segment, through
 * NULL, to a kernel address (the start of the kernel half), or runs its stack
 * past RLIMIT_STACK's 8 MiB by endless recursion. With no handler installed
 * each ends by SIGSEGV, which the shell reports as the wait status Linux
 * gives. What it printed before the fault must be out: stdout is
 * line-buffered here, and the kernel must not lose a finished write.
 *
 * userdiff: faults_kill_the_program_by_sigsegv_as_on_linux
 * run: /bin/segv readonly
 * run: /bin/segv rodata
 * run: /bin/segv null
 * run: /bin/segv kernel
 * run: /bin/segv stack
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__x86_64__)
#define KERNEL_ADDR 0xffff800000000000UL
#elif defined(__riscv) && __riscv_xlen == 64
#define KERNEL_ADDR 0xffffffc000000000UL
#else
#error "segv: x86_64 or riscv64"
#endif

static const char constant[] = "a string in the read-only segment";

/* A depth no stack reaches, which the compiler cannot see past. */
static volatile unsigned long stack_bottom = ~0UL;

/* Each call's frame holds a page, used after the call so that it is no tail call. */
static unsigned long recurse(unsigned long depth)
{
	volatile char frame[4096];
	frame[0] = (char)depth;
	if (depth == stack_bottom)
		return 0;
	return recurse(depth + 1) + frame[0];
}

int main(int argc, char **argv)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *how = argc > 1 ? argv[1] : "";
	volatile char *target;

	if (!strcmp(how, "readonly")) {
		target = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		printf("a read-only page reads %d\n", target[0]);
	} else if (!strcmp(how, "rodata")) {
		target = (volatile char *)constant;
		printf("the constant reads '%c'\n", target[0]);
	} else if (!strcmp(how, "null")) {
		target = NULL;
	} else if (!strcmp(how, "kernel")) {
		target = (volatile char *)KERNEL_ADDR;
	} else if (!strcmp(how, "stack")) {
		printf("recursing\n");
		printf("returned %lu\n", recurse(0));
		return 1;
	} else {
		printf("usage: segv readonly|rodata|null|kernel|stack\n");
		return 2;
	}
	printf("writing through the %s pointer\n", how);
	target[0] = 1;
	printf("the write went through\n");
	return 1;
}
