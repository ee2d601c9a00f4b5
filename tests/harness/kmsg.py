"""Console lines as the kernel prints them: printk starts every line but the console
shell's command output with the seconds since boot, as Linux does ("[    0.123456] ";
the boot argument printk.time=0 leaves it off). Whatever reads a console or a log
for the kernel's lines (KTAP, bench:, error:, init: exited) reads them through
strip_time(), so that it finds them with or without the prefix."""
import re

TIME_PREFIX = re.compile(r"^\[ *\d+\.\d{6}\] ")
TIME_PREFIX_LINES = re.compile(r"^\[ *\d+\.\d{6}\] ", re.M)


def strip_time(line):
    """line without printk's time prefix, if it has one."""
    return TIME_PREFIX.sub("", line, count=1)


def strip_times(text):
    """text with printk's time prefix taken off the start of each of its lines."""
    return TIME_PREFIX_LINES.sub("", text)
