/*
 * compare: run the workloads (workloads.c) and print a bench: line for each.
 *
 *   compare [-w WARMUP_MS] [-p PHASE_MS] [-c CPUS] [WORKLOAD[/VARIANT] ...]
 *
 * With no workload named, all of them, in the table's order; a name alone
 * selects every variant ("open_close"), a name and variant one of them
 * ("open_close/dir=shared"). CPUS defaults to every CPU the program may run on.
 *
 * Booted as the first process (make compare puts it at /init, for Grace's
 * init= and Linux's rdinit=), it takes its arguments from /compare.args
 * instead, one per line, so that both kernels get the same from the same
 * initramfs whatever their command lines pass on; it brings up the loopback
 * interface (Linux boots with it down), gives itself a console where the
 * kernel opened none, and powers the machine off at the end: Linux panics
 * when its first process exits, Grace powers off.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "compare.h"

#define ARGS_FILE "/compare.args"
#define MAX_ARGS 64

static void usage(void)
{
	fprintf(stderr, "usage: compare [-w WARMUP_MS] [-p PHASE_MS] [-c CPUS] "
			"[WORKLOAD[/VARIANT] ...]\nworkloads:");
	for (unsigned i = 0; i < nr_workloads; i++)
		fprintf(stderr, " %s%s%s", workloads[i].name, workloads[i].variant ? "/" : "",
			workloads[i].variant ? workloads[i].variant : "");
	fprintf(stderr, "\n");
	exit(2);
}

/* The arguments in ARGS_FILE, one per line, after argv0; their count. */
static int args_from_file(char *argv0, char **argv)
{
	static char text[4096];
	int n = 0, fd = open(ARGS_FILE, O_RDONLY);
	ssize_t len = fd < 0 ? 0 : read(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	argv[n++] = argv0;
	text[len > 0 ? len : 0] = '\0';
	for (char *line = strtok(text, "\n"); line && n < MAX_ARGS - 1; line = strtok(NULL, "\n"))
		argv[n++] = line;
	argv[n] = NULL;
	return n;
}

/* As the first process: a console on 0, 1 and 2 if the kernel opened none. */
static void init_console(void)
{
	if (fcntl(1, F_GETFD) >= 0)
		return;
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	int fd = open("/dev/console", O_RDWR);
	for (int i = 0; fd >= 0 && i < 3; i++)
		if (fd != i)
			dup2(fd, i);
}

/* As the first process: the loopback interface up, where it is not (Linux). */
static void init_loopback(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(ifr.ifr_name, "lo");
	if (fd >= 0 && !ioctl(fd, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			perror("compare: bringing lo up");
	}
	if (fd >= 0)
		close(fd);
}

static bool selected(const struct workload *wl, char **names, int n)
{
	if (!n)
		return true;
	size_t len = strlen(wl->name);
	for (int i = 0; i < n; i++)
		if (!strncmp(names[i], wl->name, len) &&
		    (!names[i][len] ||
		     (names[i][len] == '/' && wl->variant && !strcmp(names[i] + len + 1, wl->variant))))
			return true;
	return false;
}

static unsigned allowed(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof(set), &set) ? 1 : (unsigned)CPU_COUNT(&set);
}

int main(int argc, char **argv)
{
	static char *file_argv[MAX_ARGS];
	struct timing t = {200000000ULL, 1000000000ULL};
	unsigned cpus = 0;
	bool init = getpid() == 1;
	int opt, failed = 0;

	if (init) {
		init_console();
		init_loopback();
		argc = args_from_file(argv[0], file_argv);
		argv = file_argv;
	}
	while ((opt = getopt(argc, argv, "w:p:c:")) != -1) {
		unsigned long v = optarg ? strtoul(optarg, NULL, 10) : 0;
		if (opt == 'w')
			t.warmup_ns = v * 1000000ULL;
		else if (opt == 'p' && v)
			t.phase_ns = v * 1000000ULL;
		else if (opt == 'c' && v)
			cpus = (unsigned)v;
		else
			usage();
	}
	for (int i = optind; i < argc; i++) {
		unsigned w = 0;
		while (w < nr_workloads && !selected(&workloads[w], argv + i, 1))
			w++;
		if (w == nr_workloads) {
			fprintf(stderr, "compare: no workload '%s'\n", argv[i]);
			usage();
		}
	}
	struct utsname u;
	uname(&u);
	char kernel[sizeof(u.sysname)];
	for (size_t i = 0; i < sizeof(kernel); i++)
		kernel[i] = (char)tolower((unsigned char)u.sysname[i]);
	if (!cpus)
		cpus = allowed();
	printf("compare: %s %s on %u CPUs, warm-up %llu ms, phases %llu ms\n", u.sysname,
	       u.release, cpus, (unsigned long long)(t.warmup_ns / 1000000),
	       (unsigned long long)(t.phase_ns / 1000000));
	for (unsigned w = 0; w < nr_workloads; w++)
		if (selected(&workloads[w], argv + optind, argc - optind))
			failed |= run_workload(&workloads[w], cpus, &t, kernel) != 0;
	printf("compare: done%s\n", failed ? ", with errors" : "");
	fflush(stdout);
	if (init) {
		sync();
		reboot(RB_POWER_OFF); /* Linux; Grace powers off when its first process exits */
	}
	return failed;
}
