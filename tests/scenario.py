"""Run `cudadoctor check --json` in a child process against a stand-in host: the stub NVML, the
stub libcuda (optional), a fixture sysroot and chosen environment variables."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from helpers import run_cli

REPO = Path(__file__).resolve().parent.parent


@dataclass
class CheckRun:
    status: int
    data: dict[str, Any]
    stderr: str

    @property
    def codes(self) -> set[str]:
        return {f["code"] for f in self.data["findings"]}

    def find(self, code: str) -> dict[str, Any]:
        matches = [f for f in self.data["findings"] if f["code"] == code]
        assert matches, f"{code} not in {sorted(self.codes)}"
        return matches[0]

    def all(self, code: str) -> list[dict[str, Any]]:
        return [f for f in self.data["findings"] if f["code"] == code]


def base_env() -> dict[str, str]:
    """A clean environment: none of the variables the probes read leak in from the test runner."""
    keep = ("PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    return {key: os.environ[key] for key in keep if key in os.environ}


def run_check(env: dict[str, str], *args: str, command: str = "check", json_flag: bool = True) -> CheckRun:
    result = run_cli(command, *(["--json"] if json_flag else []), *args, environment=env, timeout=300)
    data = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return CheckRun(result.returncode, data, result.stderr)


def compose_env(
    nvml: dict[str, str],
    sysroot: Path,
    extra: Optional[dict[str, str]] = None,
    cuda_dir: Optional[Path] = None,
    cuda_config: Optional[Path] = None,
) -> dict[str, str]:
    env = base_env()
    env.update(nvml)
    if cuda_dir is not None:
        env["LD_LIBRARY_PATH"] = ":".join(p for p in (env.get("LD_LIBRARY_PATH"), str(cuda_dir)) if p)
    if cuda_config is not None:
        env["FAKE_CUDA_CONFIG"] = str(cuda_config)
    env["CUDADOCTOR_SYSROOT"] = str(sysroot)
    for key, value in (extra or {}).items():
        if key == "LD_LIBRARY_PATH":
            env[key] = ":".join(p for p in (value, env.get(key)) if p)  # the scenario's entries first
        else:
            env[key] = value
    return env
