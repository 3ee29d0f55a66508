"""The option groups several commands share."""

from __future__ import annotations

from typing import Any, Callable

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def finite(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN slips through FloatRange's comparisons
        raise click.BadParameter("not a number of seconds", ctx=ctx, param=param)
    return value


class Seconds(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.2
    """A number of seconds as model/numbers.parse_seconds reads it: finite ASCII decimals within
    [low, high] (no ``٣``, ``１``, ``1_0``, ``1e3``, ``inf``)."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        from ..model.numbers import NumberError, parse_seconds

        if isinstance(value, (int, float)) and not isinstance(value, bool):  # the default
            value = repr(float(value))
        try:
            return parse_seconds(value, "", low=self.low, high=self.high)
        except NumberError as exc:
            self.fail(str(exc).strip(), param, ctx)


class Count(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.2
    """A whole number within [low, high] as model/numbers.parse_int reads it: ASCII digits only
    (click.IntRange calls int(), which takes ``٣``, ``１`` and ``1_0``)."""

    name = "integer"

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        from ..model.numbers import NumberError, parse_int

        if isinstance(value, int) and not isinstance(value, bool):  # a default
            value = str(value)
        try:
            return parse_int(value.strip() if isinstance(value, str) else value, "", max_digits=len(str(self.high)),
                             minimum=self.low, maximum=self.high)
        except NumberError as exc:
            self.fail(str(exc).strip(), param, ctx)


def seconds_option(name: str, low: float, high: float, default: float, help: str) -> Decorator:
    """A bound in seconds (--timeout, --nvml-timeout, ...): a finite number within [low, high]."""
    return click.option(
        name, type=Seconds(low, high), callback=finite, default=default, show_default=True, metavar="SECONDS", help=help
    )


def non_empty(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An option given as "" is a script's unset variable, not a request for the default."""
    if isinstance(value, str) and not value.strip():
        raise click.BadParameter("the value is empty", ctx=ctx, param=param)
    return value


def table_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--table",
        "table_path",
        metavar="FILE",
        callback=non_empty,
        help="Use this compatibility table instead of the shipped one (also $CUDADOCTOR_TABLE).",
    )(fn)


def families_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--config",
        "config_path",
        metavar="FILE",
        callback=non_empty,
        help="Team defaults (family, repository, table, families) from this TOML file "
        "(default: $XDG_CONFIG_HOME/cudadoctor/config.toml, when it exists).",
    )(fn)
    return click.option(
        "--families",
        "families_path",
        metavar="FILE",
        callback=non_empty,
        help="Add the image families defined in this TOML file (also $CUDADOCTOR_FAMILIES).",
    )(fn)


def host_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--gpu",
        "gpus",
        multiple=True,
        metavar="SPEC",
        help="What-if: a GPU (compute capability such as 8.0, or a product such as A100); repeatable.",
    )(fn)
    fn = click.option(
        "--forward-compat", "forward_compat", metavar="X.Y", callback=non_empty,
        help="What-if: a CUDA forward-compatibility libcuda (cuda-compat-X-Y) is in effect (data-center GPUs only).",
    )(fn)
    fn = click.option("--driver", metavar="VERSION", callback=non_empty, help="What-if: pretend this NVIDIA driver is installed (e.g. 535.104.05).")(fn)
    fn = click.option("--snapshot", metavar="FILE", callback=non_empty, help="Evaluate a saved host snapshot instead of probing this host.")(fn)
    return fn


def target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--family", metavar="NAME", callback=non_empty, help="Image family (default: pytorch-cuda, or the config file's family).")(fn)
    fn = click.option("--torch", "torch_release", metavar="X.Y", callback=non_empty, help="PyTorch release (default: the newest release the table knows).")(fn)
    return fn


def nvml_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    return seconds_option(
        "--nvml-timeout", 0.1, 600, 10.0,
        "Bound on reading the driver through NVML; a driver that hangs longer is reported (nvml-hung).",
    )(fn)


def container_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = seconds_option(
        "--timeout", 0.1, 600, 5.0,
        "Bound on each conversation with the Docker daemon (connecting, version, info, inspecting the image).",
    )(fn)
    fn = seconds_option("--pull-timeout", 1, 86400, 1800.0, "Bound on --pull (pulling moves gigabytes).")(fn)
    fn = seconds_option(
        "--smoke-timeout", 1, 86400, 180.0,
        "Bound on --smoke: creating, starting and waiting for the container, and reading its output.",
    )(fn)
    fn = click.option("--docker", is_flag=True, help="Check that Docker can run GPU containers (daemon, NVIDIA runtime, CDI).")(fn)
    fn = click.option("--smoke", is_flag=True, help="Run --image once with GPUs, no network, removed afterwards, and report what happened.")(fn)
    fn = click.option(
        "--require",
        "requires",
        multiple=True,
        metavar="STRING",
        help="Evaluate an NVIDIA_REQUIRE_* string (e.g. 'cuda>=12.8') as nvidia-container-cli would; repeatable.",
    )(fn)
    fn = click.option("--pull", is_flag=True, help="Pull --image when it is not present locally.")(fn)
    fn = click.option("--image", metavar="REF", help="Check a container image (inspected locally; pulled only with --pull).")(fn)
    return fn


def verbosity_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("-v", "--verbose", is_flag=True, help="Also list the checks that passed or only inform, and every variant.")(fn)
    fn = click.option("-q", "--quiet", is_flag=True, help="Print only the answer: the verdict and the one thing to do.")(fn)
    return fn
