"""Inspect a local image (and pull it only when asked) through an open docker client.

The reference has been validated (cudadoctor.imageref) before it gets here. Nothing raises:
a missing image is state "not-found", a failed pull "pull-failed", anything else "error".
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from ..model.facts import ImageFacts
from ..model.nvidia_require import env_mapping
from .docker import DeadlineExceeded, error_text, run_bounded, scalar_text

# Pulling moves gigabytes; it gets its own, longer bound than the inspection calls.
PULL_TIMEOUT_S = 1800.0


Progress = Optional[Callable[[str], None]]


def inspect_image(
    client: Any,
    reference: str,
    pull: bool = False,
    timeout: float = 5.0,
    pull_timeout: float = PULL_TIMEOUT_S,
    progress: Progress = None,
) -> ImageFacts:
    """Inspect (bounded by ``timeout`` for the whole call), and pull first when asked and missing
    (bounded by ``pull_timeout``; ``progress`` gets a line of layers and bytes as it goes)."""
    base = ImageFacts(reference=reference)
    try:
        import docker.errors as errors
    except Exception as exc:
        return ImageFacts(reference, state="error", error=f"cannot import the docker SDK: {exc}")

    def inspect() -> Any:
        return client.api.inspect_image(reference)

    pulled = False
    try:
        data = run_bounded(inspect, timeout)
    except errors.ImageNotFound as exc:
        if not pull:
            return ImageFacts(reference, state="not-found", error=_explanation(exc))
        try:
            failure = run_bounded(lambda: _pull(client, reference, progress), pull_timeout)
            if failure:
                return ImageFacts(reference, state="pull-failed", error=failure)
            data = run_bounded(inspect, timeout)
            pulled = True
        except DeadlineExceeded:
            return ImageFacts(reference, state="pull-failed", error=f"the pull did not finish within {pull_timeout:g} s (--pull-timeout)")
        except Exception as pull_exc:
            return ImageFacts(reference, state="pull-failed", error=_explanation(pull_exc))
        finally:
            if progress is not None:
                progress("")
    except DeadlineExceeded:
        return ImageFacts(reference, state="error", error=f"the Docker daemon did not answer within {timeout:g} s")
    except Exception as exc:
        return ImageFacts(reference, state="error", error=_explanation(exc))
    return read_inspect(base, data, pulled)


def _pull(client: Any, reference: str, progress: Progress) -> Optional[str]:
    """Pull, reading the daemon's progress stream; the error the stream reports, or None."""
    layers: dict[str, tuple[int, int]] = {}  # layer id -> (bytes so far, total)
    done: set[str] = set()
    for event in _events(client.api.pull(reference, stream=True)):
        if event.get("error"):
            return error_text(Exception(str(event.get("error"))))
        layer, status, detail = event.get("id"), event.get("status"), event.get("progressDetail")
        if not isinstance(layer, str):
            continue
        if isinstance(detail, dict) and isinstance(detail.get("current"), int) and isinstance(detail.get("total"), int):
            layers[layer] = (detail["current"], detail["total"])
        if status in ("Pull complete", "Already exists", "Download complete"):
            done.add(layer)
        if progress is not None:
            current = sum(c for c, _ in layers.values())
            total = sum(t for _, t in layers.values())
            progress(f"pulling {reference}: {len(done)} of {max(len(layers), len(done))} layers, "
                     f"{_size(current)} of {_size(total)}")  # fmt: skip
    return None


def _events(chunks: Any) -> Any:
    """The JSON objects of the daemon's pull stream, one a line (read here rather than by the
    SDK's decoder, which fails on a chunk holding two objects); lines that are not objects are skipped."""
    pending = b""
    for chunk in chunks:
        pending += chunk if isinstance(chunk, bytes) else str(chunk).encode("utf-8", "replace")
        *lines, pending = pending.split(b"\n")
        if len(pending) > 1_000_000:  # no progress line is this long
            pending = b""
        for line in lines:
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(event, dict):
                yield event
    try:
        event = json.loads(pending) if pending.strip() else None
    except (ValueError, RecursionError):
        event = None
    if isinstance(event, dict):
        yield event


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _explanation(exc: BaseException) -> str:
    explanation = getattr(exc, "explanation", None)
    return str(explanation) if explanation else error_text(exc)


def read_inspect(base: ImageFacts, data: Any, pulled: bool = False) -> ImageFacts:
    """ImageFacts from the daemon's ``/images/{name}/json`` answer."""
    if not isinstance(data, dict):
        return ImageFacts(base.reference, state="error", error="the daemon's image description is not an object")
    config: dict[str, Any] = data["Config"] if isinstance(data.get("Config"), dict) else {}
    env_list: list[Any] = config["Env"] if isinstance(config.get("Env"), list) else []
    labels: dict[str, Any] = config["Labels"] if isinstance(config.get("Labels"), dict) else {}
    env = env_mapping(str(e) for e in env_list)
    return ImageFacts(
        reference=base.reference,
        state="ok",
        pulled=pulled,
        id=_text(data.get("Id")),
        os=_text(data.get("Os")),
        architecture=_text(data.get("Architecture")),
        variant=_text(data.get("Variant")),
        env=tuple(env.items()),
        labels=tuple((str(k), str(v)) for k, v in sorted(labels.items())),
        facts_from="image-env",
    )


def _text(value: Any) -> Optional[str]:
    return scalar_text(value)
