/*
 * vsnprintf: the printf subset the kernel uses. Conversions d i u x X p s c %,
 * length modifiers l ll z, flags 0 and -, a field width (or *). Always
 * NUL-terminates when size > 0 and returns the length the full output would have.
 */
#include <grace/printk.h>

struct out {
	char *buf;
	size_t size, len;
};

static void out_char(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		out_char(o, c);
}

static void out_str(struct out *o, const char *s, int width, bool left)
{
	int n = 0;
	if (!s)
		s = "(null)";
	while (s[n])
		n++;
	if (!left)
		out_pad(o, ' ', width - n);
	for (int i = 0; i < n; i++)
		out_char(o, s[i]);
	if (left)
		out_pad(o, ' ', width - n);
}

static void out_num(struct out *o, unsigned long long v, bool negative, unsigned base, bool upper,
		    int width, char pad, bool left)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	int len = n + negative;
	if (negative && pad == '0')
		out_char(o, '-');
	if (!left)
		out_pad(o, pad, width - len);
	if (negative && pad != '0')
		out_char(o, '-');
	while (n)
		out_char(o, tmp[--n]);
	if (left)
		out_pad(o, ' ', width - len);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = {buf, size, 0};

	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			out_char(&o, *fmt);
			continue;
		}
		fmt++;
		bool left = false;
		char pad = ' ';
		for (;; fmt++) {
			if (*fmt == '-')
				left = true;
			else if (*fmt == '0')
				pad = '0';
			else
				break;
		}
		int width = 0;
		if (*fmt == '*') {
			width = va_arg(ap, int);
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		int lng = 0;
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		if (left)
			pad = ' ';

		unsigned long long u;
		long long s;
		switch (*fmt) {
		case 'd':
		case 'i':
			s = lng ? va_arg(ap, long long) : va_arg(ap, int);
			u = s < 0 ? -(unsigned long long)s : (unsigned long long)s;
			out_num(&o, u, s < 0, 10, false, width, pad, left);
			break;
		case 'u':
		case 'x':
		case 'X':
			u = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
			out_num(&o, u, false, *fmt == 'u' ? 10 : 16, *fmt == 'X', width, pad, left);
			break;
		case 'p':
			out_str(&o, "0x", 0, false);
			out_num(&o, (uintptr_t)va_arg(ap, void *), false, 16, false, 16, '0',
				false);
			break;
		case 's':
			out_str(&o, va_arg(ap, const char *), width, left);
			break;
		case 'c':
			out_char(&o, (char)va_arg(ap, int));
			break;
		case '%':
			out_char(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			out_char(&o, '%');
			out_char(&o, *fmt);
			break;
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (size == 0)
		return 0;
	return (size_t)n < size ? n : (int)(size - 1);
}
