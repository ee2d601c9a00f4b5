/*
 * What a program finds at its start: its arguments, its environment and the
 * auxiliary vector exec laid on the stack, printed through stdio, with a
 * little floating point so that the FP registers must survive the traps of
 * the writes between. tests/harness/userdiff.py runs it at Grace's prompt and on
 * Linux and compares the two outputs byte for byte, so it prints no address,
 * pid or time, only what the ABI fixes.
 *
 * userdiff: hello_prints_its_arguments_and_environment_as_on_linux
 * run: /bin/hello
 * run: /bin/hello one two three
 * run: hello found-in-bin
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

extern char _start[];

/* The PT_LOAD entries of the program header table AT_PHDR points at. */
static int loadable_segments(void)
{
	const Elf64_Phdr *phdr = (const Elf64_Phdr *)getauxval(AT_PHDR);
	int n = 0;
	for (unsigned long i = 0; i < getauxval(AT_PHNUM); i++)
		n += phdr[i].p_type == PT_LOAD;
	return n;
}

int main(int argc, char **argv, char **envp)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("hello, world\n");
	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("argv[%d]=%s (%zu bytes)\n", i, argv[i], strlen(argv[i]));
	printf("argv[argc] is %s\n", argv[argc] ? "not NULL" : "NULL");
	int envc = 0;
	for (char **e = envp; *e; e++)
		printf("envp[%d]=%s\n", envc++, *e);
	printf("envc=%d, envp right after argv's NULL: %s\n", envc,
	       envp == argv + argc + 1 ? "yes" : "no");

	printf("AT_PAGESZ=%lu\n", getauxval(AT_PAGESZ));
	printf("AT_CLKTCK=%lu\n", getauxval(AT_CLKTCK));
	printf("AT_PHENT is an ELF64 program header's size: %s\n",
	       getauxval(AT_PHENT) == sizeof(Elf64_Phdr) ? "yes" : "no");
	printf("PT_LOAD segments at AT_PHDR: %d\n", loadable_segments());
	printf("AT_ENTRY is _start: %s\n",
	       getauxval(AT_ENTRY) == (unsigned long)_start ? "yes" : "no");
	printf("AT_RANDOM given: %s\n", getauxval(AT_RANDOM) ? "yes" : "no");
	printf("AT_SECURE=%lu\n", getauxval(AT_SECURE));

	double sum = 0;
	for (int i = 1; i <= 1000; i++)
		sum += 1.0 / i;
	printf("harmonic(1000)=%.12f, %e, %g\n", sum, sum * 1e-9, sum / 3);
	printf("integers: %d %u %x %lo %lld\n", -42, 42u, 0xbeef, 0755ul, -1234567890123ll);
	return 0;
}
