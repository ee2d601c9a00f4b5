/*
 * UDP sockets over loopback as a program uses them: socket() with its flags
 * and the errors of families, types and protocols there are none of; bind to
 * port 0 and getsockname; datagrams between two sockets with their boundaries
 * and their sender; MSG_PEEK, MSG_TRUNC, MSG_DONTWAIT and O_NONBLOCK; connect,
 * which sets the default peer and filters what arrives, and its undoing with
 * AF_UNSPEC; read, write, poll and dup on a socket; a port free again once
 * its socket is closed; a recvfrom woken by a datagram from another process
 * and one interrupted by a signal; a flood from several processes to a socket
 * that does not read, where every sendto still succeeds; and every call given
 * a bad descriptor, a descriptor that is not a socket, and bad pointers and
 * lengths.
 *
 * Ports are the kernel's choice (ephemeral), so they are never printed, only
 * compared. Cases where qemu-user, the riscv64 reference, checks a pointer
 * before the descriptor (bind(fd, NULL, ...) on a bad fd), or takes flag bits
 * Linux refuses, are left out; so are the families Linux has and Grace does
 * not (AF_UNIX, AF_INET6, ...), and SOCK_STREAM, which Linux has and Grace
 * refuses (ESOCKTNOSUPPORT: there is no TCP).
 *
 * userdiff: udp_sockets_over_loopback_behave_as_on_linux
 * run: /bin/udp
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define KERNEL_ADDR 0xffff800000000000UL
#elif defined(__riscv) && __riscv_xlen == 64
#define KERNEL_ADDR 0xffffffc000000000UL
#else
#error "udp: x86_64 or riscv64"
#endif

/* Long enough for a datagram to cross loopback on a slow emulated machine. */
#define WAIT_MS 10000

static void *const kernel = (void *)KERNEL_ADDR;

/* A call's value, or -1 and the errno's name. */
static void result(const char *what, long ret)
{
	if (ret < 0)
		printf("%s = -1 %s\n", what, strerrorname_np(errno));
	else
		printf("%s = %ld\n", what, ret);
}

static struct sockaddr_in loopback(unsigned short port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

static int udp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		printf("socket: %s\n", strerrorname_np(errno));
		exit(1);
	}
	return fd;
}

/* A socket bound to 127.0.0.1 and a port the kernel picks; *port is that port. */
static int bound_socket(unsigned short *port)
{
	int fd = udp_socket();
	struct sockaddr_in sin = loopback(0);
	socklen_t len = sizeof(sin);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		printf("bind: %s\n", strerrorname_np(errno));
		exit(1);
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/* "127.0.0.1:port" or "0.0.0.0:0", and whether the port is the one expected. */
static void show_name(const char *what, int fd, int peer, unsigned short expect)
{
	struct sockaddr_in sin;
	memset(&sin, 0xaa, sizeof(sin));
	socklen_t len = sizeof(sin);
	int ret = peer ? getpeername(fd, (struct sockaddr *)&sin, &len)
		       : getsockname(fd, (struct sockaddr *)&sin, &len);
	if (ret < 0) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return;
	}
	unsigned short port = ntohs(sin.sin_port);
	printf("%s: family %d addr %s port %s len %d zero %d\n", what, sin.sin_family,
	       inet_ntoa(sin.sin_addr),
	       !port	? "0"
	       : expect ? (port == expect ? "as expected" : "other")
			: "chosen",
	       len, sin.sin_zero[0] == 0 && !memcmp(sin.sin_zero, sin.sin_zero + 1, 7));
}

/* Wait for a datagram on fd (poll, so that a lost one fails rather than hangs). */
static int wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, WAIT_MS);
}

/* Receive one datagram, waiting for it, and print it with where it came from. */
static void show_recv(const char *what, int fd, size_t size, int flags, unsigned short from_port)
{
	char buf[256];
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	memset(buf, 0, sizeof(buf));
	if (!(flags & MSG_DONTWAIT) && wait_readable(fd) != 1) {
		printf("%s: nothing arrived\n", what);
		return;
	}
	long n = recvfrom(fd, buf, size, flags, (struct sockaddr *)&from, &len);
	if (n < 0) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return;
	}
	printf("%s: %ld \"%.*s\" from %s %s len %d\n", what, n,
	       (int)(n < (long)size ? n : (long)size), buf, inet_ntoa(from.sin_addr),
	       ntohs(from.sin_port) == from_port ? "the sender's port" : "another port", len);
}

static void creating(void)
{
	printf("-- socket\n");
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	result("socket(AF_INET, SOCK_DGRAM, 0) ok", fd < 0 ? -1 : 0);
	struct stat st;
	result("fstat", fstat(fd, &st));
	printf("type socket %d mode %o\n", S_ISSOCK(st.st_mode), st.st_mode);
	printf("F_GETFL %o F_GETFD %d\n", fcntl(fd, F_GETFL), fcntl(fd, F_GETFD));
	result("lseek", lseek(fd, 0, SEEK_SET));
	close(fd);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	result("IPPROTO_UDP, SOCK_NONBLOCK | SOCK_CLOEXEC ok", fd < 0 ? -1 : 0);
	printf("F_GETFL %o F_GETFD %d\n", fcntl(fd, F_GETFL), fcntl(fd, F_GETFD));
	close(fd);

	result("SOCK_SEQPACKET", socket(AF_INET, SOCK_SEQPACKET, 0));
	result("SOCK_RDM", socket(AF_INET, SOCK_RDM, 0));
	result("type 0", socket(AF_INET, 0, 0));
	result("type 11", socket(AF_INET, 11, 0));
	result("type 15", socket(AF_INET, 15, 0));
	result("SOCK_DGRAM, IPPROTO_TCP", socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP));
	result("SOCK_DGRAM, protocol 99", socket(AF_INET, SOCK_DGRAM, 99));
	result("SOCK_DGRAM, protocol 256", socket(AF_INET, SOCK_DGRAM, 256));
	result("SOCK_DGRAM, protocol -1", socket(AF_INET, SOCK_DGRAM, -1));
	result("AF_UNSPEC", socket(AF_UNSPEC, SOCK_DGRAM, 0));
	result("family 46", socket(46, SOCK_DGRAM, 0));
	result("family 9999", socket(9999, SOCK_DGRAM, 0));
	result("family -1", socket(-1, SOCK_DGRAM, 0));
}

static void binding(void)
{
	printf("-- bind and getsockname\n");
	int a = udp_socket(), b = udp_socket();
	show_name("unbound getsockname", a, 0, 0);
	show_name("unbound getpeername", a, 1, 0);
	struct sockaddr_in sin = loopback(0);
	result("bind len 15", bind(a, (struct sockaddr *)&sin, 15));
	result("bind len 129", bind(a, (struct sockaddr *)&sin, 129));
	result("bind len -1", bind(a, (struct sockaddr *)&sin, -1));
	sin.sin_family = AF_INET6;
	result("bind AF_INET6", bind(a, (struct sockaddr *)&sin, sizeof(sin)));
	sin.sin_family = AF_UNSPEC;
	result("bind AF_UNSPEC 127.0.0.1", bind(a, (struct sockaddr *)&sin, sizeof(sin)));
	sin = loopback(0);
	sin.sin_addr.s_addr = inet_addr("1.2.3.4");
	result("bind 1.2.3.4", bind(a, (struct sockaddr *)&sin, sizeof(sin)));
	sin = loopback(0);
	result("bind 127.0.0.1:0", bind(a, (struct sockaddr *)&sin, sizeof(sin)));
	show_name("bound getsockname", a, 0, 0);
	result("bind again", bind(a, (struct sockaddr *)&sin, sizeof(sin)));

	socklen_t len = sizeof(sin);
	getsockname(a, (struct sockaddr *)&sin, &len);
	result("bind b to a's port", bind(b, (struct sockaddr *)&sin, sizeof(sin)));
	sin.sin_family = AF_UNSPEC;
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = 0;
	result("bind b AF_UNSPEC 0.0.0.0:0", bind(b, (struct sockaddr *)&sin, sizeof(sin)));
	show_name("b getsockname", b, 0, 0);

	/* A short length gets what fits, and the full length back. */
	unsigned char raw[16];
	memset(raw, 0xaa, sizeof(raw));
	len = 4;
	result("getsockname into 4 bytes", getsockname(a, (struct sockaddr *)raw, &len));
	printf("len %d family %d untouched after 4: %d\n", len, raw[0] | raw[1] << 8,
	       raw[4] == 0xaa && raw[15] == 0xaa);
	len = 0;
	result("getsockname into 0 bytes", getsockname(a, (struct sockaddr *)raw, &len));
	printf("len %d\n", len);
	len = -1;
	result("getsockname len -1", getsockname(a, (struct sockaddr *)raw, &len));
	close(a);
	close(b);
}

static void datagrams(void)
{
	printf("-- datagrams\n");
	unsigned short pa, pb;
	int a = bound_socket(&pa), b = bound_socket(&pb);
	struct sockaddr_in to_a = loopback(pa);
	struct pollfd p = {.fd = a, .events = POLLIN | POLLOUT};

	result("poll empty", poll(&p, 1, 0));
	printf("revents %#x\n", p.revents);
	result("sendto hello", sendto(b, "hello", 5, 0, (struct sockaddr *)&to_a, sizeof(to_a)));
	result("poll for it", poll(&(struct pollfd){.fd = a, .events = POLLIN}, 1, WAIT_MS));
	result("poll with it", poll(&p, 1, 0));
	printf("revents %#x\n", p.revents);
	show_recv("recvfrom", a, 64, 0, pb);

	/* Boundaries and order kept. */
	sendto(b, "one", 3, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	sendto(b, "two", 3, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	sendto(b, "three", 5, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	show_recv("first", a, 64, 0, pb);
	show_recv("second", a, 64, 0, pb);
	show_recv("third", a, 64, 0, pb);
	show_recv("none left", a, 64, MSG_DONTWAIT, pb);

	/* A short buffer takes the front; the rest of the datagram is gone. */
	sendto(b, "abcdef", 6, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	show_recv("3 bytes of 6", a, 3, 0, pb);
	show_recv("rest gone", a, 64, MSG_DONTWAIT, pb);
	sendto(b, "peekaboo", 8, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	show_recv("MSG_PEEK", a, 4, MSG_PEEK, pb);
	show_recv("after the peek", a, 64, 0, pb);
	sendto(b, "truncated", 9, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	show_recv("MSG_TRUNC into 2", a, 2, MSG_TRUNC, pb);
	result("empty datagram", sendto(b, "", 0, 0, (struct sockaddr *)&to_a, sizeof(to_a)));
	show_recv("it arrives", a, 64, 0, pb);

	/* Without an address or a sender's name. */
	sendto(b, "anonymous", 9, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	wait_readable(a);
	char buf[64];
	result("recvfrom without an address", recvfrom(a, buf, sizeof(buf), 0, NULL, NULL));
	sendto(b, "by read", 7, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	wait_readable(a);
	result("read", read(a, buf, sizeof(buf)));
	result("read of 0 bytes", read(a, buf, 0));
	result("write with no peer", write(a, "x", 1));
	result("send with no peer", send(a, "x", 1, 0));

	/* Waiting: none without O_NONBLOCK's or MSG_DONTWAIT's leave. */
	fcntl(a, F_SETFL, O_NONBLOCK);
	result("O_NONBLOCK recv", recv(a, buf, sizeof(buf), 0));
	result("O_NONBLOCK read", read(a, buf, sizeof(buf)));
	fcntl(a, F_SETFL, 0);
	result("MSG_DONTWAIT", recv(a, buf, sizeof(buf), MSG_DONTWAIT));

	/* Refused sends. */
	struct sockaddr_in sin = loopback(0);
	result("sendto port 0", sendto(b, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)));
	result("sendto addrlen 15", sendto(b, "x", 1, 0, (struct sockaddr *)&to_a, 15));
	result("sendto addrlen 129", sendto(b, "x", 1, 0, (struct sockaddr *)&to_a, 129));
	result("sendto addrlen -1", sendto(b, "x", 1, 0, (struct sockaddr *)&to_a, -1));
	sin = to_a;
	sin.sin_family = AF_INET6;
	result("sendto AF_INET6", sendto(b, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)));
	result("sendto MSG_OOB",
	       sendto(b, "x", 1, MSG_OOB, (struct sockaddr *)&to_a, sizeof(to_a)));
	sin = loopback(9);
	sin.sin_addr.s_addr = htonl(INADDR_BROADCAST);
	result("sendto 255.255.255.255",
	       sendto(b, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)));
	static char big[70000];
	result("sendto 70000 bytes",
	       sendto(b, big, sizeof(big), 0, (struct sockaddr *)&to_a, sizeof(to_a)));
	result("listen", listen(a, 1));
	result("accept", accept(a, NULL, NULL));
	result("accept4 bad flags", accept4(a, NULL, NULL, 0x100));
	/* AF_UNSPEC is taken as AF_INET by sendto. */
	sin = to_a;
	sin.sin_family = AF_UNSPEC;
	result("sendto AF_UNSPEC", sendto(b, "unspec", 6, 0, (struct sockaddr *)&sin, sizeof(sin)));
	show_recv("it arrives", a, 64, 0, pb);
	close(a);
	close(b);
}

static void connecting(void)
{
	printf("-- connect\n");
	unsigned short pa, pb;
	int a = bound_socket(&pa), b = bound_socket(&pb), c = udp_socket();
	struct sockaddr_in to_a = loopback(pa), sin;

	result("connect len 1", connect(c, (struct sockaddr *)&to_a, 1));
	result("connect len 15", connect(c, (struct sockaddr *)&to_a, 15));
	sin = to_a;
	sin.sin_family = AF_INET6;
	result("connect AF_INET6", connect(c, (struct sockaddr *)&sin, sizeof(sin)));
	sin = loopback(9);
	sin.sin_addr.s_addr = htonl(INADDR_BROADCAST);
	result("connect 255.255.255.255", connect(c, (struct sockaddr *)&sin, sizeof(sin)));
	result("connect to a", connect(c, (struct sockaddr *)&to_a, sizeof(to_a)));
	show_name("c getpeername", c, 1, pa);
	show_name("c getsockname", c, 0, 0);
	socklen_t len = sizeof(sin);
	getsockname(c, (struct sockaddr *)&sin, &len);
	unsigned short pc = ntohs(sin.sin_port);
	struct sockaddr_in to_c = loopback(pc);

	result("send", send(c, "via connect", 11, 0));
	show_recv("a gets it", a, 64, 0, pc);
	result("write", write(c, "by write", 8));
	show_recv("a gets it", a, 64, 0, pc);
	struct sockaddr_in to_b = loopback(pb);
	result("sendto another address anyway",
	       sendto(c, "to b", 4, 0, (struct sockaddr *)&to_b, sizeof(to_b)));
	show_recv("b gets it", b, 64, 0, pc);

	/* Only the peer reaches a connected socket. */
	sendto(b, "from b", 6, 0, (struct sockaddr *)&to_c, sizeof(to_c));
	sendto(a, "from a", 6, 0, (struct sockaddr *)&to_c, sizeof(to_c));
	show_recv("c gets", c, 64, 0, pa);
	show_recv("and nothing else", c, 64, MSG_DONTWAIT, pa);
	sendto(a, "read me", 7, 0, (struct sockaddr *)&to_c, sizeof(to_c));
	wait_readable(c);
	char buf[64];
	result("read", read(c, buf, sizeof(buf)));
	result("bind when connected", bind(c, (struct sockaddr *)&to_c, sizeof(to_c)));

	/* AF_UNSPEC undoes it, and gives back the port connect chose. */
	sin.sin_family = AF_UNSPEC;
	result("connect AF_UNSPEC", connect(c, (struct sockaddr *)&sin, sizeof(sin)));
	show_name("c getpeername", c, 1, 0);
	show_name("c getsockname", c, 0, 0);
	result("send", send(c, "x", 1, 0));
	/* A bound port stays. */
	result("connect b to a", connect(b, (struct sockaddr *)&to_a, sizeof(to_a)));
	result("connect b AF_UNSPEC", connect(b, (struct sockaddr *)&sin, sizeof(sin)));
	show_name("b getsockname", b, 0, pb);
	close(a);
	close(b);
	close(c);
}

static void closing(void)
{
	printf("-- close\n");
	unsigned short port;
	int a = bound_socket(&port);
	struct sockaddr_in sin = loopback(port);
	int a2 = dup(a);
	close(a);
	int b = udp_socket();
	result("bind while a dup holds it", bind(b, (struct sockaddr *)&sin, sizeof(sin)));
	sendto(b, "to the dup", 10, 0, (struct sockaddr *)&sin, sizeof(sin));
	show_recv("the dup", a2, 64, 0, 0); /* from b's port, which sendto chose */
	close(a2);
	close(b);
	int c = udp_socket();
	result("bind once closed", bind(c, (struct sockaddr *)&sin, sizeof(sin)));
	show_name("c getsockname", c, 0, port);
	close(c);
}

/*
 * More datagrams than any queue on the way holds, from processes sending at
 * once to a socket that does not read: the kernel drops what does not fit, and
 * every sendto still returns its length (UDP promises no delivery, and Linux
 * tells the sender of a full queue only with IP_RECVERR).
 */
static void flooding(void)
{
	enum { SENDERS = 4, DATAGRAMS = 5000 };
	printf("-- a flood to a socket that does not read\n");
	unsigned short port;
	int rx = bound_socket(&port);
	struct sockaddr_in sin = loopback(port);
	char payload[64] = {0};
	for (int p = 0; p < SENDERS; p++) {
		if (fork() != 0)
			continue;
		int tx = udp_socket(), short_sends = 0;
		for (int i = 0; i < DATAGRAMS; i++)
			if (sendto(tx, payload, sizeof(payload), 0, (struct sockaddr *)&sin,
				   sizeof(sin)) != (ssize_t)sizeof(payload))
				short_sends++;
		_exit(short_sends ? 1 : 0);
	}
	int failed = 0, status;
	for (int p = 0; p < SENDERS; p++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	printf("senders whose sendto returned less than the datagram: %d of %d\n", failed, SENDERS);
	int got = 0;
	while (recv(rx, payload, sizeof(payload), MSG_DONTWAIT) == (ssize_t)sizeof(payload))
		got++;
	printf("datagrams queued for the reader: %s\n",
	       got > 0 && got < SENDERS * DATAGRAMS ? "some, not all" : "all or none");
	close(rx);
}

static void on_signal(int sig __attribute__((unused))) {}

static void waiting(void)
{
	printf("-- waiting\n");
	unsigned short pa;
	int a = bound_socket(&pa);
	struct sockaddr_in to_a = loopback(pa);
	char buf[64];
	fflush(stdout);

	/* A child sends after a while: poll and recvfrom sleep until it comes. */
	pid_t child = fork();
	if (child == 0) {
		int s = udp_socket();
		for (int i = 0; i < 2; i++) {
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
			sendto(s, "woken", 5, 0, (struct sockaddr *)&to_a, sizeof(to_a));
		}
		_exit(0);
	}
	struct pollfd p = {.fd = a, .events = POLLIN};
	result("poll until the child sends", poll(&p, 1, WAIT_MS));
	printf("revents %#x\n", p.revents);
	result("recv", recv(a, buf, sizeof(buf), 0));
	result("recv waits for the second", recv(a, buf, sizeof(buf), 0));
	waitpid(child, NULL, 0);

	/* A signal with a handler but no SA_RESTART ends a waiting recvfrom with EINTR. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGUSR1, &sa, NULL);
	pid_t parent = getpid();
	fflush(stdout);
	child = fork();
	if (child == 0) {
		/* Again and again: one that lands before the parent waits is spent on nothing. */
		for (int i = 0; i < 100; i++) {
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
			kill(parent, SIGUSR1);
		}
		_exit(0);
	}
	result("recvfrom until a signal", recvfrom(a, buf, sizeof(buf), 0, NULL, NULL));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(a);
}

static void bad_descriptors(void)
{
	printf("-- bad descriptors\n");
	struct sockaddr_in sin = loopback(9);
	socklen_t len = sizeof(sin);
	char buf[16];
	int pipefd[2];
	pipe(pipefd);
	int fds[] = {999, -1, pipefd[0]};
	const char *names[] = {"fd 999", "fd -1", "a pipe"};
	for (int i = 0; i < 3; i++) {
		int fd = fds[i];
		printf("%s:\n", names[i]);
		result("  bind", bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
		result("  connect", connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
		result("  sendto", sendto(fd, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)));
		result("  send", send(fd, "x", 1, 0));
		result("  recvfrom",
		       recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&sin, &len));
		result("  getsockname", getsockname(fd, (struct sockaddr *)&sin, &len));
		result("  getpeername", getpeername(fd, (struct sockaddr *)&sin, &len));
		result("  listen", listen(fd, 1));
		result("  accept", accept(fd, NULL, NULL));
	}
	/* connect reads the address before it asks what the file is. */
	result("connect a pipe to a bad address", connect(pipefd[0], kernel, sizeof(sin)));
	close(pipefd[0]);
	close(pipefd[1]);
}

/* A fresh pair with one datagram from b waiting on a, for a call that may take it. */
static int pair_with_datagram(int *b)
{
	unsigned short pa, pb;
	int a = bound_socket(&pa);
	struct sockaddr_in to_a = loopback(pa);
	*b = bound_socket(&pb);
	sendto(*b, "waiting", 7, 0, (struct sockaddr *)&to_a, sizeof(to_a));
	wait_readable(a);
	return a;
}

static void bad_pointers(void)
{
	printf("-- bad pointers\n");
	char *readonly = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned short pa;
	int a = bound_socket(&pa), s = udp_socket(), b;
	struct sockaddr_in to_a = loopback(pa), sin;
	socklen_t len = sizeof(sin);
	char buf[64];

	result("bind NULL", bind(s, NULL, sizeof(sin)));
	result("bind kernel", bind(s, kernel, sizeof(sin)));
	result("connect NULL", connect(s, NULL, sizeof(sin)));
	result("connect kernel", connect(s, kernel, sizeof(sin)));
	result("sendto NULL data", sendto(s, NULL, 5, 0, (struct sockaddr *)&to_a, sizeof(to_a)));
	result("sendto kernel data",
	       sendto(s, kernel, 5, 0, (struct sockaddr *)&to_a, sizeof(to_a)));
	result("sendto kernel address", sendto(s, "x", 1, 0, kernel, sizeof(to_a)));
	result("recvfrom into kernel", recvfrom(a, kernel, 64, MSG_DONTWAIT, NULL, NULL));
	result("getsockname NULL length", getsockname(a, (struct sockaddr *)&sin, NULL));
	result("getsockname kernel length", getsockname(a, (struct sockaddr *)&sin, kernel));
	result("getsockname kernel address", getsockname(a, kernel, &len));
	result("getsockname read-only address", getsockname(a, (struct sockaddr *)readonly, &len));

	/* Each of these may take the datagram: a fresh pair each, closed unread. */
	int r = pair_with_datagram(&b);
	result("recvfrom into a read-only page", recvfrom(r, readonly, 64, 0, NULL, NULL));
	close(r), close(b);
#if defined(__x86_64__)
	/*
	 * qemu-user drops the error of the sender's address it cannot write and
	 * returns the datagram's length: only the native reference says EFAULT.
	 */
	r = pair_with_datagram(&b);
	result("recvfrom kernel address", recvfrom(r, buf, sizeof(buf), 0, kernel, &len));
	close(r), close(b);
	r = pair_with_datagram(&b);
	result("recvfrom read-only address",
	       recvfrom(r, buf, sizeof(buf), 0, (void *)readonly, &len));
	close(r), close(b);
#endif
	r = pair_with_datagram(&b);
	result("recvfrom kernel length",
	       recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&sin, kernel));
	close(r), close(b);
	r = pair_with_datagram(&b);
	len = -1;
	result("recvfrom length -1",
	       recvfrom(r, buf, sizeof(buf), 0, (struct sockaddr *)&sin, &len));
	close(r), close(b);
	close(a);
	close(s);
}

int main(void)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	creating();
	binding();
	datagrams();
	connecting();
	closing();
	flooding();
	waiting();
	bad_descriptors();
	bad_pointers();
	return 0;
}
