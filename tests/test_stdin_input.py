"""Standard input (`fleet -`) is capped like a named file and read as UTF-8: past the cap, or not
UTF-8, it is one line on stderr and exit 2."""

from __future__ import annotations

import io
import subprocess
import threading

import pytest

from helpers import run_cli, start_cli


def test_stdin_beyond_the_cap_is_refused_without_reading_to_its_end() -> None:
    from cudadoctor.app.loader import MAX_FILE_BYTES

    proc = start_cli("fleet", "-", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None

    def feed() -> None:  # more than the cap, then the pipe is held open: no end of input ever comes
        chunk = b" " * (1 << 20)
        try:
            for _ in range(MAX_FILE_BYTES // len(chunk) + 2):
                proc.stdin.write(chunk)
            proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("fleet - kept reading standard input past the cap")
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
    assert proc.returncode == 2
    assert proc.stderr is not None
    lines = proc.stderr.read().decode().strip().splitlines()
    assert len(lines) == 1 and "standard input" in lines[0] and "too large" in lines[0], lines


def test_stdin_that_is_not_utf8_is_one_line_exit_2() -> None:
    run = run_cli("fleet", "-", input=b'{"kind": "\xff"}', binary=True, timeout=60)
    assert run.returncode == 2
    lines = run.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "standard input" in lines[0] and "UTF-8" in lines[0], lines


def test_read_stdin_reads_at_most_one_byte_past_the_cap() -> None:
    from cudadoctor.app.loader import MAX_FILE_BYTES, read_stdin

    class Counting(io.BytesIO):
        asked: list[int] = []

        def read(self, size: int | None = -1) -> bytes:
            self.asked.append(-1 if size is None else size)
            return super().read(size)

    stream = Counting(b"x" * (MAX_FILE_BYTES + 10))
    with pytest.raises(ValueError, match="too large"):
        read_stdin(ValueError, stream)
    assert stream.asked == [MAX_FILE_BYTES + 1]
    assert read_stdin(ValueError, io.BytesIO('{"a": "é"}'.encode())) == '{"a": "é"}'
