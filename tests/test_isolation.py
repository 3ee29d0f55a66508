"""Tests never see the caller's CUDADOCTOR_*, CUDA_*, NVIDIA_* or DOCKER_* variables
(the autouse fixture in conftest.py): a shell with CUDADOCTOR_FAMILIES=/nonexistent.toml used to
make 87 tests fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIXES = ("CUDADOCTOR_", "CUDA_", "NVIDIA_", "DOCKER_")
HARNESS_PREFIX = "CUDADOCTOR_TEST_"  # the harness's own settings (CUDADOCTOR_TEST_DOCKER_HOST) stay
PINNED = ("CUDADOCTOR_CACHE", "CUDADOCTOR_TODAY", "DOCKER_HOST")  # set by conftest to fixed, per-test values

# Read when pytest imports this module, before any fixture has run: what the caller's shell passed.
INHERITED = frozenset(os.environ)
INHERITED_VALUES = dict(os.environ)

# Names the outer test below asks the inner run to check (these names carry no isolated prefix,
# so they reach the test themselves).
EXPECT_REMOVED = "ISOLATION_EXPECT_REMOVED"
EXPECT_KEPT = "ISOLATION_EXPECT_KEPT"

# A few fast tests that read the table and the families file (in-process and as a subprocess).
CLI_TESTS = " or ".join(
    ("test_recommend_tag_prints_only_the_reference", "test_check_json_is_exactly_one_object", "test_what_if_equals_snapshot")
)


def test_no_isolated_variable_reaches_a_test():
    leaked = sorted(
        name for name in os.environ
        if name.startswith(PREFIXES) and not name.startswith(HARNESS_PREFIX) and name not in PINNED
    )
    assert leaked == [], f"inherited from the caller's environment: {leaked}"
    # conftest pins these itself: an empty overlay cache of the test's own, and the table's clock
    assert os.environ["CUDADOCTOR_TODAY"] == "2026-12-01"
    assert "cudadoctor-cache" in os.environ["CUDADOCTOR_CACHE"]
    # no test reads this machine's Docker daemon by chance: one that needs a daemon names its own
    assert os.environ["DOCKER_HOST"].startswith("unix:///nonexistent/")
    for name in filter(None, os.environ.get(EXPECT_REMOVED, "").split(",")):
        assert name in INHERITED, f"{name} was not in the environment pytest started with"
        assert name not in os.environ or (name in PINNED and os.environ[name] != INHERITED_VALUES[name]), f"{name} reached the test"
    for name in filter(None, os.environ.get(EXPECT_KEPT, "").split(",")):
        assert name in os.environ, f"harness setting {name} was removed"


def test_a_hostile_shell_does_not_break_the_tests():
    hostile = {
        "CUDADOCTOR_FAMILIES": "/nonexistent.toml",
        "CUDADOCTOR_TABLE": "/nonexistent.json",
        "CUDADOCTOR_SYSROOT": "/nonexistent",
        "CUDA_VISIBLE_DEVICES": "7",
        "NVIDIA_VISIBLE_DEVICES": "void",
        "DOCKER_HOST": "unix:///nonexistent/the-callers-daemon.sock",
    }
    env = {
        **os.environ,
        **hostile,
        "CUDADOCTOR_TEST_ISOLATION_KEEP": "1",
        EXPECT_REMOVED: ",".join(hostile),
        EXPECT_KEPT: "CUDADOCTOR_TEST_ISOLATION_KEEP",
    }
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/test_isolation.py::test_no_isolated_variable_reaches_a_test", "tests/test_cli.py", "-k",
        f"test_no_isolated_variable_reaches_a_test or {CLI_TESTS}",
    ]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "4 passed" in out.stdout, out.stdout[-2000:]  # the -k really selected them all
