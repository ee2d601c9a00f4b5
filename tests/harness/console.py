"""Grace's serial console on pipes: lines typed into it, its output read up to a marker
(the shell's prompt, most often), and the whole of it kept in a log."""
import os
import subprocess
import threading
import time

from . import launcher

# The console shell's prompt (kernel/shell): what every command typed at it ends with.
PROMPT = "grace> "


class Console:
    """QEMU with its serial console on pipes: type into it, read until a marker."""

    def __init__(self, arch, environ, log_path):
        self.log = open(log_path, "w", errors="replace")
        self.proc = launcher.start(arch, environ, subprocess.PIPE)
        self.buf = ""
        self.cond = threading.Condition()
        self.eof = False
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        while True:
            data = os.read(self.proc.stdout.fileno(), 4096)
            with self.cond:
                if not data:
                    self.eof = True
                else:
                    text = data.decode("utf-8", "replace")
                    self.log.write(text)
                    self.log.flush()
                    self.buf += text
                self.cond.notify_all()
            if not data:
                return

    def read_until(self, marker, deadline):
        """Everything up to and including marker, or (None, what came) at EOF or the deadline."""
        with self.cond:
            while marker not in self.buf:
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return None, self.buf
                self.cond.wait(min(left, 1.0))
            i = self.buf.index(marker) + len(marker)
            chunk, self.buf = self.buf[:i], self.buf[i:]
            return chunk, chunk

    def type(self, text):
        # A QEMU that has exited (a panic powers off) takes nothing more; read_until()
        # then reports its end, and the log has its last words. The console is QEMU's
        # multiplexer, whose escape is ^A: ^A ^A sends one ^A on to the guest.
        text = text.replace("\x01", "\x01\x01")
        try:
            self.proc.stdin.write(text.encode("latin-1"))
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def command(self, line, deadline):
        """Type line at the prompt: (what it printed up to the next prompt, the echoed line
        first, the prompt left off; or None at EOF or the deadline, what came)."""
        self.type(line + "\r")
        chunk, seen = self.read_until(PROMPT, deadline)
        return (chunk[:-len(PROMPT)] if chunk is not None else None), seen

    def close(self, grace_s):
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        launcher.stop(self.proc)
        self.log.close()
        return self.proc.returncode
