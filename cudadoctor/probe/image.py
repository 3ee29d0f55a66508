"""Inspect a local image (and pull it only when asked) through an open docker client.

The reference has been validated (cudadoctor.imageref) before it gets here. Nothing raises:
a missing image is state "not-found", a failed pull "pull-failed", anything else "error".
"""

from __future__ import annotations

from typing import Any, Optional

from ..model.facts import ImageFacts
from ..model.nvidia_require import env_mapping
from .docker import DeadlineExceeded, error_text, run_bounded

# Pulling moves gigabytes; it gets its own, longer bound than the inspection calls.
PULL_TIMEOUT_S = 1800.0


def inspect_image(
    client: Any, reference: str, pull: bool = False, timeout: float = 5.0, pull_timeout: float = PULL_TIMEOUT_S
) -> ImageFacts:
    base = ImageFacts(reference=reference)
    try:
        import docker.errors as errors
    except Exception as exc:
        return ImageFacts(reference, state="error", error=f"cannot import the docker SDK: {exc}")

    def inspect() -> Any:
        return client.api.inspect_image(reference)

    pulled = False
    try:
        data = run_bounded(inspect, timeout * 2 + 1)
    except errors.ImageNotFound as exc:
        if not pull:
            return ImageFacts(reference, state="not-found", error=_explanation(exc))
        try:
            run_bounded(lambda: client.api.pull(reference), pull_timeout)
            data = run_bounded(inspect, timeout * 2 + 1)
            pulled = True
        except DeadlineExceeded:
            return ImageFacts(reference, state="pull-failed", error=f"the pull did not finish within {pull_timeout:g} s (--pull-timeout)")
        except Exception as pull_exc:
            return ImageFacts(reference, state="pull-failed", error=_explanation(pull_exc))
    except DeadlineExceeded:
        return ImageFacts(reference, state="error", error=f"the Docker daemon did not answer within {timeout:g} s")
    except Exception as exc:
        return ImageFacts(reference, state="error", error=_explanation(exc))
    return read_inspect(base, data, pulled)


def _explanation(exc: BaseException) -> str:
    explanation = getattr(exc, "explanation", None)
    return str(explanation) if explanation else error_text(exc)


def read_inspect(base: ImageFacts, data: Any, pulled: bool = False) -> ImageFacts:
    """ImageFacts from the daemon's ``/images/{name}/json`` answer."""
    if not isinstance(data, dict):
        return ImageFacts(base.reference, state="error", error="the daemon's image description is not an object")
    config = data.get("Config") if isinstance(data.get("Config"), dict) else {}
    env_list = config.get("Env") if isinstance(config.get("Env"), list) else []
    labels = config.get("Labels") if isinstance(config.get("Labels"), dict) else {}
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
    return str(value) if value not in (None, "") else None
