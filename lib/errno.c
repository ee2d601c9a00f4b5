/* Names and messages for error numbers, so output says ENOMEM rather than -12. */
#include <grace/errno.h>

const char *errno_name(int err)
{
	switch (err < 0 ? -err : err) {
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case EINTR:
		return "EINTR";
	case EIO:
		return "EIO";
	case ENXIO:
		return "ENXIO";
	case EACCES:
		return "EACCES";
	case ENOTTY:
		return "ENOTTY";
	case E2BIG:
		return "E2BIG";
	case ENOEXEC:
		return "ENOEXEC";
	case EBADF:
		return "EBADF";
	case ECHILD:
		return "ECHILD";
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EFAULT:
		return "EFAULT";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case EXDEV:
		return "EXDEV";
	case ENODEV:
		return "ENODEV";
	case ENOTDIR:
		return "ENOTDIR";
	case EISDIR:
		return "EISDIR";
	case EINVAL:
		return "EINVAL";
	case EMFILE:
		return "EMFILE";
	case EFBIG:
		return "EFBIG";
	case ENOSPC:
		return "ENOSPC";
	case ESPIPE:
		return "ESPIPE";
	case EMLINK:
		return "EMLINK";
	case EPIPE:
		return "EPIPE";
	case ERANGE:
		return "ERANGE";
	case ENAMETOOLONG:
		return "ENAMETOOLONG";
	case ENOSYS:
		return "ENOSYS";
	case ENOTEMPTY:
		return "ENOTEMPTY";
	case ELOOP:
		return "ELOOP";
	case ENODATA:
		return "ENODATA";
	case EOVERFLOW:
		return "EOVERFLOW";
	case EMSGSIZE:
		return "EMSGSIZE";
	case EADDRINUSE:
		return "EADDRINUSE";
	case ENETUNREACH:
		return "ENETUNREACH";
	case ENOBUFS:
		return "ENOBUFS";
	case EILSEQ:
		return "EILSEQ";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case ENOTSOCK:
		return "ENOTSOCK";
	case EDESTADDRREQ:
		return "EDESTADDRREQ";
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT";
	case ESOCKTNOSUPPORT:
		return "ESOCKTNOSUPPORT";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case EADDRNOTAVAIL:
		return "EADDRNOTAVAIL";
	case ENOTCONN:
		return "ENOTCONN";
	default:
		return "E?";
	}
}

const char *strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case EPERM:
		return "Operation not permitted";
	case ENOENT:
		return "No such file or directory";
	case ESRCH:
		return "No such process";
	case EINTR:
		return "Interrupted system call";
	case EIO:
		return "Input/output error";
	case ENXIO:
		return "No such device or address";
	case EACCES:
		return "Permission denied";
	case ENOTTY:
		return "Inappropriate ioctl for device";
	case E2BIG:
		return "Argument list too long";
	case ENOEXEC:
		return "Exec format error";
	case EBADF:
		return "Bad file descriptor";
	case ECHILD:
		return "No child processes";
	case EAGAIN:
		return "Resource temporarily unavailable";
	case ENOMEM:
		return "Cannot allocate memory";
	case EFAULT:
		return "Bad address";
	case EBUSY:
		return "Device or resource busy";
	case EEXIST:
		return "File exists";
	case EXDEV:
		return "Invalid cross-device link";
	case ENODEV:
		return "No such device";
	case ENOTDIR:
		return "Not a directory";
	case EISDIR:
		return "Is a directory";
	case EINVAL:
		return "Invalid argument";
	case EMFILE:
		return "Too many open files";
	case EFBIG:
		return "File too large";
	case ENOSPC:
		return "No space left on device";
	case ESPIPE:
		return "Illegal seek";
	case EMLINK:
		return "Too many links";
	case EPIPE:
		return "Broken pipe";
	case ERANGE:
		return "Numerical result out of range";
	case ENAMETOOLONG:
		return "File name too long";
	case ENOSYS:
		return "Function not implemented";
	case ENOTEMPTY:
		return "Directory not empty";
	case ELOOP:
		return "Too many levels of symbolic links";
	case ENODATA:
		return "No data available";
	case EOVERFLOW:
		return "Value too large for defined data type";
	case EMSGSIZE:
		return "Message too long";
	case EADDRINUSE:
		return "Address already in use";
	case ENETUNREACH:
		return "Network is unreachable";
	case ENOBUFS:
		return "No buffer space available";
	case EILSEQ:
		return "Invalid or incomplete multibyte or wide character";
	case ETIMEDOUT:
		return "Connection timed out";
	case ENOTSOCK:
		return "Socket operation on non-socket";
	case EDESTADDRREQ:
		return "Destination address required";
	case EPROTONOSUPPORT:
		return "Protocol not supported";
	case ESOCKTNOSUPPORT:
		return "Socket type not supported";
	case EOPNOTSUPP:
		return "Operation not supported";
	case EAFNOSUPPORT:
		return "Address family not supported by protocol";
	case EADDRNOTAVAIL:
		return "Cannot assign requested address";
	case ENOTCONN:
		return "Transport endpoint is not connected";
	default:
		return "Unknown error";
	}
}
