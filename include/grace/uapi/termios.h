/*
 * The terminal interface of Linux's ABI (asm-generic termbits.h and ioctls.h;
 * riscv64 and x86_64 share them): the struct TCGETS and TCSETS copy, the flag
 * bits the console's line discipline honours, and the ioctl numbers.
 */
#ifndef GRACE_UAPI_TERMIOS_H
#define GRACE_UAPI_TERMIOS_H

#include <grace/types.h>

#define NCCS 19

struct termios {
	u32 c_iflag, c_oflag, c_cflag, c_lflag;
	u8 c_line;
	u8 c_cc[NCCS];
};
_Static_assert(sizeof(struct termios) == 36, "the kernel's struct termios is 36 bytes");

struct winsize {
	u16 ws_row, ws_col, ws_xpixel, ws_ypixel;
};

/* c_cc indexes */
#define VINTR 0
#define VQUIT 1
#define VERASE 2
#define VKILL 3
#define VEOF 4
#define VTIME 5
#define VMIN 6
#define VSTART 8
#define VSTOP 9
#define VSUSP 10
#define VREPRINT 12
#define VDISCARD 13
#define VWERASE 14
#define VLNEXT 15

/* c_iflag, c_oflag, c_cflag, c_lflag bits used here */
#define ICRNL 0000400
#define IXON 0002000
#define OPOST 0000001
#define ONLCR 0000004
#define B38400 0000017
#define CS8 0000060
#define CREAD 0000200
#define HUPCL 0002000
#define ISIG 0000001
#define ICANON 0000002
#define ECHO 0000010
#define ECHOE 0000020
#define ECHOK 0000040
#define ECHOCTL 0001000
#define ECHOKE 0004000
#define IEXTEN 0100000

/* A new terminal's settings, as Linux's tty_std_termios. */
#define TERMIOS_DEFAULT                                                                            \
	{                                                                                          \
		.c_iflag = ICRNL | IXON, .c_oflag = OPOST | ONLCR,                                 \
		.c_cflag = B38400 | CS8 | CREAD | HUPCL,                                           \
		.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,       \
		.c_cc = {[VINTR] = 3,                                                              \
			 [VQUIT] = 034,                                                            \
			 [VERASE] = 0177,                                                          \
			 [VKILL] = 025,                                                            \
			 [VEOF] = 4,                                                               \
			 [VMIN] = 1,                                                               \
			 [VSTART] = 021,                                                           \
			 [VSTOP] = 023,                                                            \
			 [VSUSP] = 032,                                                            \
			 [VREPRINT] = 022,                                                         \
			 [VDISCARD] = 017,                                                         \
			 [VWERASE] = 027,                                                          \
			 [VLNEXT] = 026},                                                          \
	}

#define TCGETS 0x5401
#define TCSETS 0x5402
#define TCSETSW 0x5403
#define TCSETSF 0x5404
#define TIOCGPGRP 0x540F
#define TIOCSPGRP 0x5410
#define TIOCGWINSZ 0x5413
#define TIOCSWINSZ 0x5414

#endif
