/*
 * Reads and writes whose user memory runs into an unmapped page (three pages
 * mapped, the third unmapped again), or whose vector has an unmapped segment
 * in the middle: what each call returns, what came back, and what is still
 * where it was, so that no byte is lost. A pipe (a read takes a whole buffer
 * of the pipe's or leaves it; a write adds a page only once it is all copied
 * in), /dev/zero (the zeros that fitted), a UDP socket over loopback (a peek
 * that faults takes nothing), a file, and a directory (getdents64 keeps the
 * records wholly copied, and the next call starts after them: no name is
 * skipped).
 *
 * qemu-user, the riscv64 reference, checks a whole buffer before the call and
 * answers EFAULT where Linux copies up to the fault (a read of /dev/zero, of a
 * pipe, of a file or of a directory running into the hole; for the directory
 * it has read the records first, and loses them), and leaves a datagram
 * queued that Linux drops with its EFAULT: tests/harness/userdiff.py turns those five
 * lines into Linux's, as this program prints them run natively on x86_64. Each
 * such case is one line, and the cases after it start from a known state.
 *
 * userdiff: copies_that_fault_return_what_they_copied_and_lose_nothing
 * run: /bin/shortcopy
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096

static char *edge; /* the first byte of the unmapped page; the page below it is mapped */
static char big[2 * PAGE], got[2 * PAGE];

/* A call's result as a word: the count, or the errno's name. */
static const char *said(long r)
{
	static char buf[2][24];
	static int k;
	if (r < 0)
		return strerrorname_np(errno);
	k = !k;
	snprintf(buf[k], sizeof(buf[k]), "%ld", r);
	return buf[k];
}

static void result(const char *what, long r)
{
	printf("%s: %s\n", what, said(r));
}

/* The bytes in [p, p + n): printable as they are, others as '.'; long runs cut short. */
static void show(const char *what, const char *p, long n)
{
	printf("%s (%ld): ", what, n);
	for (long i = 0; i < n && i < 40; i++)
		putchar(p[i] >= 32 && p[i] < 127 ? p[i] : '.');
	printf(n > 40 ? "...\n" : "\n");
}

/* What is left in a pipe's read end (made non-blocking): read until empty. */
static void drain(const char *what, int fd)
{
	long total = 0, n;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((n = read(fd, got + total, sizeof(got) - total)) > 0)
		total += n;
	show(what, got, total);
}

static void pipe_cases(void)
{
	int p[2];

	/* One buffer of 20 bytes; a read that can copy 8 of them. */
	pipe(p);
	write(p[1], "abcdefghijklmnopqrst", 20);
	result("pipe: read 20 buffered into 8 mapped bytes",
	       syscall(SYS_read, p[0], edge - 8, 100));
	drain("  left in the pipe", p[0]);
	close(p[0]);
	close(p[1]);

	/* A full page, then 10 bytes in a second buffer; room for the page and 4 more. */
	pipe(p);
	memset(big, 'x', PAGE);
	write(p[1], big, PAGE);
	write(p[1], "0123456789", 10);
	long n = syscall(SYS_read, p[0], edge - PAGE - 4, 2 * PAGE);
	printf("pipe: read a page and 10 into a page and 4 mapped bytes: %s, ", said(n));
	drain("left in the pipe", p[0]);
	close(p[0]);
	close(p[1]);

	/* readv: the page fills the first segment, the second segment is unmapped. */
	pipe(p);
	write(p[1], big, PAGE);
	write(p[1], "0123456789", 10);
	struct iovec rv[] = {{edge - 2 * PAGE, PAGE}, {edge, 16}, {got, 16}};
	result("pipe: readv {page, unmapped, 16}", syscall(SYS_readv, p[0], rv, 3));
	drain("  left in the pipe", p[0]);

	/* writev: a page, an unmapped segment, 10 bytes. */
	memset(edge - PAGE, 'y', PAGE);
	struct iovec wv[] = {{edge - PAGE, PAGE}, {edge, 16}, {"0123456789", 10}};
	result("pipe: writev {page, unmapped, 10}", syscall(SYS_writev, p[1], wv, 3));
	drain("  in the pipe", p[0]);

	/* A write running into the hole: the page that faulted holds nothing. */
	memcpy(edge - 10, "ABCDEFGHIJ", 10);
	result("pipe: write 100 from 10 mapped bytes", syscall(SYS_write, p[1], edge - 10, 100));
	drain("  in the pipe", p[0]);
	close(p[0]);
	close(p[1]);
}

static void zero_cases(void)
{
	int fd = open("/dev/zero", O_RDONLY);

	memset(edge - 10, '-', 10);
	long n = syscall(SYS_read, fd, edge - 10, 100);
	printf("/dev/zero: read 100 into 10 mapped bytes: %s, ", said(n));
	show("the 10 bytes below the hole", edge - 10, 10);
	memset(got, '-', 32);
	struct iovec v[] = {{got, 16}, {edge, 16}, {got + 16, 16}};
	result("/dev/zero: readv {16, unmapped, 16}", syscall(SYS_readv, fd, v, 3));
	show("  the 32 bytes of the first and last", got, 32);
	close(fd);
}

static void udp_cases(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	char buf[32];

	bind(s, (struct sockaddr *)&a, sizeof(a));
	getsockname(s, (struct sockaddr *)&a, &len);
	connect(s, (struct sockaddr *)&a, sizeof(a));
	send(s, "first", 5, 0);
	result("udp: recv MSG_PEEK 5 into 2 mapped bytes",
	       syscall(SYS_recvfrom, s, edge - 2, 100, MSG_PEEK, NULL, NULL));
	long n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	show("  then recv", buf, n);

	send(s, "second", 6, 0);
	n = syscall(SYS_read, s, edge - 2, 100);
	printf("udp: read 6 into 2 mapped bytes: %s, ", said(n));
	n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		printf("then recv: %s\n", said(n));
	else
		show("then recv", buf, n);

	memcpy(edge - 2, "ab", 2);
	result("udp: send 10 from 2 mapped bytes",
	       syscall(SYS_sendto, s, edge - 2, 10, 0, NULL, 0));
	n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	result("  then recv", n);
	close(s);
}

static void file_cases(void)
{
	mkdir("/tmp", 01777); /* Grace's root has none */
	int fd = open("/tmp/shortcopy", O_RDWR | O_CREAT | O_TRUNC, 0600);

	memcpy(edge - 10, "0123456789", 10);
	struct iovec wv[] = {{edge - 10, 10}, {edge, 16}, {"abcdefghij", 10}};
	result("file: writev {10, unmapped, 10}", syscall(SYS_writev, fd, wv, 3));
	result("  the offset", lseek(fd, 0, SEEK_CUR));
	write(fd, "abcdefghij", 10);
	lseek(fd, 0, SEEK_SET);
	memset(edge - 4, '-', 4);
	long n = syscall(SYS_read, fd, edge - 4, 100);
	printf("file: read 20 into 4 mapped bytes: %s, the offset %s, ", said(n),
	       said(lseek(fd, 0, SEEK_CUR)));
	show("the 4 bytes below the hole", edge - 4, 4);
	lseek(fd, 4, SEEK_SET);
	memset(got, '-', 32);
	struct iovec rv[] = {{got, 4}, {edge, 16}, {got + 4, 16}};
	result("file: readv {4, unmapped, 16}", syscall(SYS_readv, fd, rv, 3));
	show("  the first 20 bytes", got, 20);
	result("  the offset", lseek(fd, 0, SEEK_CUR));
	close(fd);
	unlink("/tmp/shortcopy");
}

/* A directory's names, the first call's into room for two records and a half. */
static void dir_cases(void)
{
	char names[16][256], path[40];
	int seen = 0, again = 0;

	mkdir("/tmp/shortcopy.d", 0700);
	for (int i = 1; i <= 5; i++) {
		snprintf(path, sizeof(path), "/tmp/shortcopy.d/f%d", i);
		close(open(path, O_WRONLY | O_CREAT, 0600));
	}
	int fd = open("/tmp/shortcopy.d", O_RDONLY | O_DIRECTORY);
	long n = syscall(SYS_getdents64, fd, edge - 60, 4096);
	printf("getdents64: 5 files and the dots into 60 mapped bytes: %s, ", said(n));
	for (char *p = edge - 60; n > 0 || p != got;) {
		for (long off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(p + off);
			for (int k = 0; k < seen; k++)
				again += !strcmp(names[k], de->d_name);
			if (seen < 16)
				snprintf(names[seen++], sizeof(names[0]), "%s", de->d_name);
			off += de->d_reclen;
		}
		p = got; /* the rest, into a buffer that holds it */
		n = syscall(SYS_getdents64, fd, got, sizeof(got));
	}
	printf("names seen in all: %d, %d of them twice\n", seen, again);
	close(fd);
	for (int i = 1; i <= 5; i++) {
		snprintf(path, sizeof(path), "/tmp/shortcopy.d/f%d", i);
		unlink(path);
	}
	rmdir("/tmp/shortcopy.d");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	char *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || munmap(m + 2 * PAGE, PAGE)) {
		perror("mmap");
		return 1;
	}
	edge = m + 2 * PAGE;
	pipe_cases();
	zero_cases();
	udp_cases();
	file_cases();
	dir_cases();
	return 0;
}
