"""``check --smoke``: run the image once with GPUs requested, no network, removed afterwards.

Only ever runs when the user asks for it. The probe inside prints one JSON line; Docker's own
error text (e.g. ``could not select device driver "" with capabilities: [[gpu]]``) is kept verbatim.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Optional

from ..model.facts import SmokeFacts
from .docker import DeadlineExceeded, run_bounded

SMOKE_TIMEOUT_S = 180.0  # image start-up and CUDA initialisation can take a while
MARKER = "CUDADOCTOR-SMOKE "
PROBE = (
    "import json\n"
    "r = {}\n"
    "try:\n"
    "    import torch\n"
    "    r['torch'] = torch.__version__\n"
    "    r['cuda'] = torch.version.cuda\n"
    "    r['available'] = torch.cuda.is_available()\n"
    "    r['count'] = torch.cuda.device_count()\n"
    "    if r['available']:\n"
    "        x = torch.ones(8, device='cuda')\n"
    "        r['op'] = float((x * 2).sum().item()) == 16.0\n"
    "except Exception as e:\n"
    "    r['error'] = type(e).__name__ + ': ' + str(e)\n"
    f"print({MARKER!r} + json.dumps(r))\n"
)
# python3 or python, whichever the image has; the script is ours, the reference is validated.
COMMAND = ["sh", "-c", 'exec "$(command -v python3 || command -v python)" -c "$0"', PROBE]


def _explanation(exc: BaseException) -> str:
    text = getattr(exc, "explanation", None) or str(exc) or type(exc).__name__
    return str(text).strip()


def run_smoke(
    client: Any, reference: str, timeout: float = SMOKE_TIMEOUT_S, progress: Optional[Callable[[str], None]] = None
) -> SmokeFacts:
    """Create, start, wait for and read the container, all within ``timeout`` seconds together
    (--smoke-timeout); ``progress`` gets the elapsed time against that bound while it runs."""
    try:
        import docker.types
    except Exception as exc:
        return SmokeFacts(error=f"cannot import the docker SDK: {exc}")
    start = time.monotonic()
    deadline = start + timeout

    def left() -> float:
        return max(deadline - time.monotonic(), 0.0)

    def tick(_: float) -> None:
        if progress is not None:
            progress(f"smoke run of {reference}: {time.monotonic() - start:.0f} s of {timeout:g} s")

    container = None
    try:
        container = run_bounded(
            lambda: client.containers.create(
                reference,
                entrypoint=COMMAND[:1],
                command=COMMAND[1:],
                device_requests=[docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])],
                network_mode="none",
                labels={"cudadoctor": "smoke"},
            ),
            left(),
            tick,
        )
        run_bounded(container.start, left(), tick)
        status = run_bounded(lambda: container.wait(timeout=max(left(), 0.1)), left(), tick)
        raw = run_bounded(lambda: container.logs(stdout=True, stderr=True), left(), tick)
        logs = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    except DeadlineExceeded:
        return SmokeFacts(ran=container is not None, error=f"the smoke run did not finish within {timeout:g} s (--smoke-timeout)")
    except Exception as exc:
        return SmokeFacts(ran=False, error=_explanation(exc))
    finally:
        if progress is not None:
            progress("")
        if container is not None:
            try:  # removing a stopped container is quick; a wedged daemon gets a short, fixed bound
                run_bounded(lambda: container.remove(force=True), 30)
            except BaseException:
                pass
    return read_smoke_output(status, logs)


def read_smoke_output(status: Any, logs: str) -> SmokeFacts:
    """SmokeFacts from the container's exit status and output; the probe's JSON line is
    type-checked field by field (the image's Python printed it, anything may be in it)."""
    code = status.get("StatusCode") if isinstance(status, dict) else None
    code = code if isinstance(code, int) and not isinstance(code, bool) and -(2**31) <= code < 2**31 else None
    tail = "\n".join(logs.strip().splitlines()[-5:])[-1000:] or None
    result: dict[str, Any] = {}
    for line in logs.splitlines():
        if line.startswith(MARKER):
            try:
                parsed = json.loads(line[len(MARKER):])
            except (ValueError, RecursionError):
                parsed = {}
            result = parsed if isinstance(parsed, dict) else {}
    count = result.get("count")
    return SmokeFacts(
        ran=True,
        exit_code=code,
        error=_text(result.get("error")) or (None if code == 0 else "the probe failed inside the container"),
        output=tail,
        torch_version=_text(result.get("torch")),
        torch_cuda=_text(result.get("cuda")),
        cuda_available=_flag(result.get("available")),
        device_count=count if isinstance(count, int) and not isinstance(count, bool) and 0 <= count < 2**16 else None,
        cuda_op_ok=_flag(result.get("op")),
    )


def _text(value: Any) -> Optional[str]:
    return value[:1000] if isinstance(value, str) and value else None


def _flag(value: Any) -> Optional[bool]:
    return value if isinstance(value, bool) else None
