"""Shared pytest fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ helpers, whatever the import mode

import cuda_stub  # noqa: E402
import nvml_stub  # noqa: E402


# ---- isolation from the caller's shell ----------------------------------------------------------

# Variables the product (or CUDA, the NVIDIA container toolkit, Docker) reads: a test must never
# inherit them from whoever runs pytest (a CUDADOCTOR_FAMILIES set in the shell used to fail 87 tests).
ISOLATED_PREFIXES = ("CUDADOCTOR_", "CUDA_", "NVIDIA_", "DOCKER_", "NCCL_")
# Settings of the test harness itself, read from the shell on purpose (tests/docker_daemon.py:
# CUDADOCTOR_TEST_DOCKER_HOST names a daemon to reuse); the product never reads these.
HARNESS_PREFIX = "CUDADOCTOR_TEST_"
# Where a test that starts no daemon of its own finds Docker: nowhere. Without it the product reads
# the default socket, so a test's findings would follow whatever daemon this machine runs (none, one
# without the NVIDIA runtime, one with it). A test that needs a daemon passes its own DOCKER_HOST.
NO_DOCKER_DAEMON = "unix:///nonexistent/docker.sock"


def isolated_names(environ) -> list[str]:
    return sorted(
        name for name in environ if name.startswith(ISOLATED_PREFIXES) and not name.startswith(HARNESS_PREFIX)
    )


@pytest.fixture(autouse=True)
def _isolate_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the caller's CUDADOCTOR_*, CUDA_*, NVIDIA_* and DOCKER_* variables,
    and with DOCKER_HOST naming no daemon (NO_DOCKER_DAEMON); monkeypatch puts them back afterwards. A test that needs one sets it itself (monkeypatch.setenv,
    or a subprocess's env=). Higher-scoped fixtures run before this one, but none of them sets
    such a variable in os.environ, so nothing they set is lost."""
    for name in isolated_names(os.environ):
        monkeypatch.delenv(name)
    monkeypatch.setenv("DOCKER_HOST", NO_DOCKER_DAEMON)


@pytest.fixture(autouse=True)
def _isolate_table_overlay(
    _isolate_environment: None, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test reads the caller's table overlay (`cudadoctor table update` in ~/.cache): each test gets an
    empty cache directory of its own ($CUDADOCTOR_CACHE, inherited by the subprocesses it starts)."""
    monkeypatch.setenv("CUDADOCTOR_CACHE", str(tmp_path_factory.mktemp("cudadoctor-cache")))
    # The table's age is judged at a fixed date, so no test's findings change as the calendar moves on.
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-12-01")


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reads the config.toml of whoever runs pytest: XDG_CONFIG_HOME points at an empty
    directory (children inherit it). A test that wants a config writes one and passes --config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "no-user-config"))


# ---- the stand-in libnvidia-ml.so.1 (tests/nvml_stub.py, tests/fake_nvml/fake_nvml.c) ----------


class FakeNvmlBuilds:
    """Builds of the stub, compiled once per session (and once per set of omitted symbols)."""

    def __init__(self, root: Path):
        self.root = root
        self._built: dict[tuple[str, ...], Path] = {}

    def library_dir(self, omit: tuple[str, ...] = ()) -> Path:
        key = tuple(sorted(set(omit)))
        if key not in self._built:
            name = "default" if not key else "omit-" + "-".join(key)
            self._built[key] = nvml_stub.build_fake_nvml(self.root / name, omit=key)
        return self._built[key]


@pytest.fixture(scope="session")
def fake_nvml_builds(tmp_path_factory: pytest.TempPathFactory) -> FakeNvmlBuilds:
    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found: cannot build the stand-in libnvidia-ml.so.1")
    builds = FakeNvmlBuilds(tmp_path_factory.mktemp("fake_nvml"))
    builds.library_dir()  # fail early, and once, if the stub does not compile
    return builds


@pytest.fixture(scope="session")
def fake_nvml_lib(fake_nvml_builds: FakeNvmlBuilds) -> Path:
    """The directory holding the default build of libnvidia-ml.so.1."""
    return fake_nvml_builds.library_dir()


@pytest.fixture
def fake_nvml_env(fake_nvml_builds: FakeNvmlBuilds, tmp_path: Path):
    """``make(config, omit=()) -> dict``: the variables (LD_LIBRARY_PATH, FAKE_NVML_CONFIG) to add
    to a subprocess's environment so it sees the host ``config`` describes (text or a mapping of
    key=value lines). ``omit`` leaves NVML symbols out of the library (FUNCTION_NOT_FOUND)."""
    counter = iter(range(1_000_000))

    def make(config: nvml_stub.Config = "", omit: tuple[str, ...] = ()) -> dict[str, str]:
        path = nvml_stub.write_config(tmp_path / f"fake_nvml_{next(counter)}.conf", config)
        return nvml_stub.nvml_env(fake_nvml_builds.library_dir(tuple(omit)), path)

    return make


@pytest.fixture
def nvml_missing_env(tmp_path: Path) -> dict[str, str]:
    """Variables for a subprocess in which no libnvidia-ml.so.1 can be loaded."""
    if nvml_stub.system_nvml_visible():
        pytest.skip("a real libnvidia-ml.so.1 is installed here; an empty LD_LIBRARY_PATH cannot hide it")
    empty = tmp_path / "no_nvml"
    empty.mkdir()
    return {"LD_LIBRARY_PATH": str(empty)}


# ---- the stand-in libcuda.so.1 (tests/cuda_stub.py, tests/fake_cuda/fake_cuda.c) ---------------


@pytest.fixture(scope="session")
def fake_cuda_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory holding the stand-in libcuda.so.1."""
    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found: cannot build the stand-in libcuda.so.1")
    return cuda_stub.build_fake_cuda(tmp_path_factory.mktemp("fake_cuda"))


# ---- a real Docker daemon (tests/docker_daemon.py) ----------------------------------------------


@pytest.fixture(scope="module")
def docker_host() -> Iterator[str]:
    """A Docker daemon for one test module: the one $CUDADOCTOR_TEST_DOCKER_HOST names when it
    answers, else a private dockerd started for the module and stopped after it (skips, saying
    why, where none can be started)."""
    import docker_daemon

    reuse = os.environ.get(docker_daemon.REUSE_ENV)
    if reuse and docker_daemon.answers(reuse):
        yield reuse
        return
    yield from docker_daemon.started()


# ---- every JSON the CLI prints is validated against its schema (tests/schema_check.py) ----------


@pytest.fixture(autouse=True)
def _validate_cli_json(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import subprocess

    import schema_check
    from cudadoctor.cli import COMMANDS

    for command, (module_name, _) in COMMANDS.items():
        module = importlib.import_module(f"cudadoctor.cli.{module_name}")
        if hasattr(module, "emit_json"):
            monkeypatch.setattr(module, "emit_json", schema_check.wrap_emit(command, module.emit_json))
    # Subcommands that live in modules of their own.
    for command, module_name in (("table", "table_update"), ("check", "check_run"), ("recommend", "recommend_run")):
        module = importlib.import_module(f"cudadoctor.cli.{module_name}")
        monkeypatch.setattr(module, "emit_json", schema_check.wrap_emit(command, module.emit_json))
    monkeypatch.setattr(subprocess, "run", schema_check.wrap_run(subprocess.run))


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """How many CLI JSON documents the run validated against their schemas (tests/schema_check.py)."""
    import schema_check

    if schema_check.Counter.validated:
        terminalreporter.write_line(f"schema check: {schema_check.Counter.validated} JSON documents printed by the CLI matched their schemas")
