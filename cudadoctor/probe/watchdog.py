"""Probes that may hang or crash inside a vendor library (NVML, libcuda) run in a forked child
under a deadline, and nothing this process starts outlives it.

``WatchedChild.start(work, timeout)`` forks a child that runs ``work()`` and writes its answer
(plain values, in marshal's format) back over a pipe; ``answer()`` waits for it until the
deadline, then kills the child. With ``first``, the same child runs ``first()`` before ``work()``
and answers it first (``first_answer()``), each within its own ``timeout``: two libraries probed
for the cost of one fork (a fork, and the copy-on-write faults after it, cost about as much as
the libcuda probe itself); ``first_answer(within=...)`` waits only that long (PENDING where
``first`` has not answered yet, and may be asked again). An answer that is in the pipe when
the deadline passes is still read. The child

- asks the kernel to kill it when its parent dies (``PR_SET_PDEATHSIG`` through ``prctl`` on
  Linux), and leaves at once if the parent is already gone;
- lets go of stdin, stdout and stderr (a child stuck in the driver must not hold a pipeline open).

The parent keeps the set of its live children: :func:`exit_on_signals` (installed by the
command-line entry, never by the library) turns SIGINT, SIGTERM and SIGHUP into killing every
live child, then ``SystemExit(128 + signal)`` (130, 143, 129), so that the ``finally`` blocks
that remove created containers run too.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

_MAX_REPLY_BYTES = 16 * 1024 * 1024
_LENGTH_BYTES = 8  # the length written ahead of first's answer
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

# The children started here and not yet reaped or killed.
_live: set[int] = set()

OK = "ok"
HUNG = "hung"
CRASHED = "crashed"  # killed by a signal
NO_ANSWER = "unanswered"  # ended without a (whole) answer (a state of the child, never shown)
PENDING = "pending"  # first_answer(within=...): not answered yet, still running before its deadline


class WatchedChild:
    """``work()`` running in a forked child until ``deadline`` (time.monotonic())."""

    def __init__(self, pid: int, read_end: int, timeout: float, first: bool = False) -> None:
        self.pid, self.read_end, self.timeout = pid, read_end, timeout
        self.deadline = time.monotonic() + timeout
        self.first_pending = first  # the answer of ``first`` is still in the pipe, ahead of work's
        self.read_ahead = b""  # what was read of work's answer with first's
        self._first_read = b""  # what was read of first's answer by a first_answer that returned PENDING

    @classmethod
    def start(cls, work: Callable[[], Any], timeout: float, first: Optional[Callable[[], Any]] = None) -> Optional["WatchedChild"]:
        """Fork the child and return at once; None where no child can be forked (the caller then
        runs ``work`` itself). With ``first``, the child answers ``first()`` before it runs ``work``."""
        if not hasattr(os, "fork"):
            return None
        parent = os.getpid()
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no memory or process slots for a child
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the child: answer, and leave without running the parent's clean-up
            status = 1
            try:
                os.close(read_end)
                _die_with(parent)
                _detach_stdio()
                if first is not None:
                    answer = marshal.dumps(first())
                    _write_all(write_end, len(answer).to_bytes(_LENGTH_BYTES, "big") + answer)
                _write_all(write_end, marshal.dumps(work()))
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        _live.add(pid)
        return cls(pid, read_end, timeout, first=first is not None)

    def cancel(self) -> None:
        """Stop the child: its answer is not wanted."""
        if self.read_end >= 0:
            os.close(self.read_end)
            self.read_end = -1
            kill_child(self.pid)

    def first_answer(self, within: Optional[float] = None) -> tuple[str, Any]:
        """The answer of ``first``, as :meth:`answer` gives work's; then work's own ``timeout``
        starts. Unless OK, the child is gone (killed, or it ended), and ``answer`` has nothing.
        With ``within``, waits at most that many seconds: (PENDING, None) when ``first`` is still
        running then, before its deadline (ask again to go on waiting)."""
        if not self.first_pending or self.read_end < 0:
            return NO_ANSWER, None
        until = self.deadline if within is None else min(self.deadline, time.monotonic() + within)
        payload, rest, ending = _read_frame(self.read_end, until, self._first_read)
        if ending == _LATE and until < self.deadline:
            self._first_read = rest
            return PENDING, None
        self.first_pending = False
        self._first_read = b""
        self.read_ahead = rest if ending == _READ else b""
        if ending == _LATE:
            self.cancel()
            return HUNG, None
        if payload is not None:
            try:
                value = marshal.loads(payload)
            except (ValueError, EOFError, TypeError):
                pass  # garbled: cancelled below, like an answer too long
            else:
                self.deadline = time.monotonic() + self.timeout
                return OK, value
        if ending != _ENDED:  # garbled, or too long: nothing after it is trusted either
            self.cancel()
            return NO_ANSWER, None
        os.close(self.read_end)  # the child ended (or closed its end) before it answered
        self.read_end = -1
        code = self._reaped()
        return (CRASHED, signal_name(-code)) if code is not None and code < 0 else (NO_ANSWER, code)

    def answer(self) -> tuple[str, Any]:
        """(OK, the value ``work`` returned), (HUNG, None), (CRASHED, the signal's name) or
        (NO_ANSWER, the exit status)."""
        if self.first_pending:  # first's answer comes ahead of work's: read (and drop) it
            self.first_answer()
        if self.read_end < 0:
            return NO_ANSWER, None
        try:
            reply, finished = _read_until(self.read_end, self.deadline)
            reply = self.read_ahead + reply if finished else reply
        finally:
            os.close(self.read_end)
            self.read_end = -1
        if not finished:
            kill_child(self.pid)
            return HUNG, None
        code = self._reaped()
        if code is not None and code < 0:
            return CRASHED, signal_name(-code)
        try:
            return (OK, marshal.loads(reply)) if reply else (NO_ANSWER, code)
        except (ValueError, EOFError, TypeError):  # a truncated or garbled answer
            return NO_ANSWER, code


    def _reaped(self) -> Optional[int]:
        """The exit status of the child, which has closed its end (negative: the signal that
        killed it); None when it kept running, and is killed."""
        code = _reap(self.pid, time.monotonic() + max(self.timeout, 1.0))
        if code is None:  # closed its end and kept running: not wanted any more
            kill_child(self.pid)
        return code


def kill_child(pid: int) -> None:
    """SIGKILL a child started here and reap it (a child stuck in an uninterruptible driver call
    dies when the call returns: it is waited for briefly, then left to init)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        _live.discard(pid)
        return
    _reap(pid, time.monotonic() + 0.5)


def kill_children() -> None:
    """Kill every child started here that is still running."""
    for pid in list(_live):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _live.discard(pid)


def live_children() -> frozenset[int]:
    return frozenset(_live)


_EXIT_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def exit_on_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP: kill the live children, then leave through ``SystemExit(128 +
    signal)`` so that ``finally`` blocks (a created container's removal) still run. Only from the
    main thread; a handler someone else installed is left alone."""
    for name in _EXIT_SIGNALS:
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            current = signal.getsignal(number)
            if current in (signal.SIG_DFL, signal.default_int_handler):
                signal.signal(number, _leave)
        except (ValueError, OSError):  # not the main thread, or not allowed here
            return


def _leave(signum: int, frame: Any) -> None:
    kill_children()
    # The next one of these signals ends the process at once (a second Ctrl-C during clean-up).
    for name in _EXIT_SIGNALS:
        number = getattr(signal, name, None)
        if number is not None:
            try:
                signal.signal(number, signal.SIG_DFL)
            except (ValueError, OSError):
                pass
    raise SystemExit(128 + signum)


def _die_with(parent: int) -> None:
    """In the child: be killed when the parent dies (Linux), and leave now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died between fork and prctl
        os._exit(1)
    for name in _EXIT_SIGNALS:  # the parent's handlers are not the child's
        number = getattr(signal, name, None)
        if number is not None:
            try:
                signal.signal(number, signal.SIG_DFL)
            except (ValueError, OSError):
                pass


def _detach_stdio() -> None:
    """The child's stdin, stdout and stderr become /dev/null: a child stuck in the driver (which
    even SIGKILL cannot end until the call returns) must not hold the command's pipes open, or
    `cudadoctor check | cat` would wait for it after cudadoctor has finished."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    if null > 2:
        os.close(null)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    """What the child wrote up to end of file, and whether it got there before ``deadline``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        # Past the deadline the pipe is still looked at once: an answer already there is read.
        remaining = max(deadline - time.monotonic(), 0.0)
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
        except InterruptedError:
            continue
        if not ready:
            return b"", False
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), True
        size += len(chunk)
        if size > _MAX_REPLY_BYTES:
            return b"", True
        chunks.append(chunk)


_READ, _ENDED, _LATE, _TOO_LONG = "read", "ended", "late", "too long"


def _read_frame(fd: int, deadline: float, got: bytes = b"") -> tuple[Optional[bytes], bytes, str]:
    """One answer written with its length ahead of it, ``got`` the part of it read before: (the
    answer or None, what was read past it (_READ) or of it (_LATE), and how the reading ended:
    _READ, _ENDED (end of file first), _LATE (the deadline first), _TOO_LONG)."""
    while True:
        if len(got) >= _LENGTH_BYTES:
            end = _LENGTH_BYTES + int.from_bytes(got[:_LENGTH_BYTES], "big")
            if end > _LENGTH_BYTES + _MAX_REPLY_BYTES:
                return None, b"", _TOO_LONG
            if len(got) >= end:
                return got[_LENGTH_BYTES:end], got[end:], _READ
        remaining = max(deadline - time.monotonic(), 0.0)  # past it, looked at once more (above)
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
        except InterruptedError:
            continue
        if not ready:
            return None, got, _LATE
        chunk = os.read(fd, 65536)
        if not chunk:
            return None, b"", _ENDED
        got += chunk


def _reap(pid: int, deadline: float) -> Optional[int]:
    """The child's exit status (negative: the signal that killed it), or None if it is still running."""
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            _live.discard(pid)
            return None
        if done:
            _live.discard(pid)
            return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.0002)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
