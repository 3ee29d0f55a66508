"""``check --smoke``: run the image once with GPUs requested, no network, removed afterwards.

Only ever runs when the user asks for it. The probe inside prints one JSON line; Docker's own
error text (e.g. ``could not select device driver "" with capabilities: [[gpu]]``) is kept verbatim.
"""

from __future__ import annotations

import json
from typing import Any

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


def run_smoke(client: Any, reference: str, timeout: float = SMOKE_TIMEOUT_S) -> SmokeFacts:
    try:
        import docker.types
    except Exception as exc:
        return SmokeFacts(error=f"cannot import the docker SDK: {exc}")
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
            timeout,
        )
        run_bounded(container.start, timeout)
        status = run_bounded(lambda: container.wait(timeout=timeout), timeout + 5)
        logs = run_bounded(lambda: container.logs(stdout=True, stderr=True), timeout).decode("utf-8", "replace")
    except DeadlineExceeded:
        return SmokeFacts(ran=container is not None, error=f"the smoke run did not finish within {timeout:g} s")
    except Exception as exc:
        return SmokeFacts(ran=False, error=_explanation(exc))
    finally:
        if container is not None:
            try:
                run_bounded(lambda: container.remove(force=True), 30)
            except BaseException:
                pass
    return read_smoke_output(status, logs)


def read_smoke_output(status: Any, logs: str) -> SmokeFacts:
    code = status.get("StatusCode") if isinstance(status, dict) else None
    tail = "\n".join(logs.strip().splitlines()[-5:])[-1000:] or None
    result: dict[str, Any] = {}
    for line in logs.splitlines():
        if line.startswith(MARKER):
            try:
                result = json.loads(line[len(MARKER):])
            except ValueError:
                result = {}
    return SmokeFacts(
        ran=True,
        exit_code=code if isinstance(code, int) else None,
        error=result.get("error") or (None if code == 0 else "the probe failed inside the container"),
        output=tail,
        torch_version=result.get("torch"),
        torch_cuda=result.get("cuda"),
        cuda_available=result.get("available"),
        device_count=result.get("count"),
        cuda_op_ok=result.get("op"),
    )
