"""Run cudadoctor on a real pseudo-terminal of a given size, as a user's terminal would show it.

COLUMNS and LINES are removed from the child's environment: the width must come from the terminal
itself (TIOCSWINSZ on the pty), as it does in a user's shell."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from pathlib import Path
from typing import Optional

REPO_ROOT = Path(__file__).resolve().parent.parent
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def run_on_terminal(args: list[str], columns: int, env: Optional[dict[str, str]] = None, timeout: float = 60.0) -> tuple[int, str]:
    """(exit status, what the terminal received, escape codes removed, \\r\\n as \\n)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes `python -m cudadoctor ARGS` on the pty
        child_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        child_env.update(env or {})
        try:
            os.chdir(REPO_ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "cudadoctor", *args], child_env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    chunks: list[bytes] = []
    raw: Optional[int] = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                done, waited = os.waitpid(pid, os.WNOHANG)
                if done:
                    raw = waited
                    break
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(fd)
    if raw is None:
        _, raw = os.waitpid(pid, 0)
    status = os.waitstatus_to_exitcode(raw)
    text = _ESCAPES.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n").replace("\r", "")
    return status, text
