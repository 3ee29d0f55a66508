"""The text report leads with the answer, states each fact once, and -q/-v change how much follows.
Asserted on codes, commands and references (which the layout must keep), not on the wording. The
release is pinned (2.11), and the family (pytorch-cuda, whose tags name release and variant plainly),
so the references named below stay those of one release as the table grows."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import host, invoke

PINNED = ("--torch", "2.11", "--family", "pytorch-cuda")
CODE = re.compile(r"  ([a-z0-9]+(?:-[a-z0-9]+)+)$")


def codes_in(text: str) -> list[str]:
    return [m.group(1) for line in text.splitlines() if (m := CODE.search(line))]


def test_a_passing_host_leads_with_the_image_and_the_wheel() -> None:
    lines = invoke("check", *PINNED, "--snapshot", host("h100-550")).stdout.splitlines()
    assert lines[0].startswith("OK") and "pytorch-cuda:v2.11-cu129" in lines[0]
    assert lines[1].strip().startswith("pip install 'torch==2.11.*' --index-url ")


def test_the_t4_on_470_leads_with_the_release_that_fits() -> None:
    lines = invoke("check", *PINNED, "--snapshot", host("t4-470")).stdout.splitlines()
    assert lines[0].startswith("FAIL") and lines[0].endswith("driver-too-old")
    assert "PyTorch 2.7" in lines[1] and "pytorch-cuda:v2.7-cu118" in lines[1]
    assert lines[2].strip().startswith("pip install 'torch==2.7.*' --index-url ")
    assert "minor-version compatibility" in lines[3]  # what the build relies on, said plainly
    assert lines[4].startswith("Or, for PyTorch 2.11") and "525.60.13" in lines[4]  # the other way: the driver upgrade


def test_each_fact_once() -> None:
    text = invoke("check", *PINNED, "--snapshot", host("h100-550")).stdout
    assert text.count("pytorch-cuda:v2.11-cu129") == 1
    assert text.count("pip install") == 1
    assert codes_in(text).count("driver-minor-compat") == 1
    assert text.count("every CUDA 12.x build runs on a driver") == 1
    failing = invoke("check", *PINNED, "--snapshot", host("t4-470")).stdout
    assert failing.count("pytorch-cuda:v2.7-cu118") == 1 and failing.count("pytorch-cuda:v2.11-cu130") == 1
    assert failing.count("tags are a convention") == 1


def test_quiet_prints_the_answer_only() -> None:
    quiet = invoke("check", "--quiet", *PINNED, "--snapshot", host("t4-470"))
    full = invoke("check", *PINNED, "--snapshot", host("t4-470"))
    assert quiet.exit_code == full.exit_code == 1
    assert full.stdout.startswith(quiet.stdout)
    assert len(quiet.stdout.splitlines()) <= 5 and "Driver vs target CUDA" not in quiet.stdout


def test_the_default_hides_ok_and_info_and_verbose_shows_them() -> None:
    default = codes_in(invoke("check", *PINNED, "--snapshot", host("h100-550")).stdout)
    verbose = codes_in(invoke("check", "--verbose", *PINNED, "--snapshot", host("h100-550")).stdout)
    data = invoke("check", "--json", *PINNED, "--snapshot", host("h100-550")).json()
    by_severity = {f["code"]: f["severity"] for f in data["findings"]}
    assert all(by_severity[c] in ("warn", "fail") for c in default)
    assert {"nvml-ok", "gpu-ok", "gpu-arch-ok"} <= set(verbose)
    assert set(verbose) == set(by_severity)
    verbose_text = invoke("check", "-v", *PINNED, "--snapshot", host("h100-550")).stdout
    assert "cu126: older CUDA than cu129" in verbose_text  # every variant, with its reason


def test_quiet_and_verbose_together_is_a_usage_error() -> None:
    run = invoke("check", "-q", "-v", *PINNED, "--snapshot", host("h100-550"))
    assert run.exit_code == 2


def test_recommend_wheel_leads_with_the_pip_command_and_the_index_url() -> None:
    lines = invoke("recommend", "--wheel", *PINNED, "--snapshot", host("h100-550")).stdout.splitlines()
    assert lines[0].startswith("pip install 'torch==2.11.*' --index-url http")
    assert lines[1].startswith("index URL: http") and lines[0].endswith(lines[1].split(": ", 1)[1])
    assert "pytorch-cuda:" not in "\n".join(lines[:2])
    image = invoke("recommend", "--image", *PINNED, "--snapshot", host("h100-550")).stdout.splitlines()
    assert image[0].startswith("pytorch-cuda:v2.11-cu129")


def test_recommend_with_nothing_fitting_leads_with_the_release_that_fits() -> None:
    run = invoke("recommend", "--torch", "2.15", "--family", "pytorch-cuda", "--snapshot", host("t4-470"))
    assert run.exit_code == 1 and run.stdout == ""
    first = run.stderr.splitlines()[0]
    assert "PyTorch 2.7 fits: pytorch-cuda:v2.7-cu118" in first and "--torch 2.7" in first


def test_a_failure_no_build_avoids_is_the_thing_to_fix_first() -> None:
    for name, code in (("no-driver", "nvml-library-missing"), ("no-gpu-550", "no-gpu")):
        lines = invoke("check", "--quiet", *PINNED, "--snapshot", host(name)).stdout.splitlines()
        assert lines[0].startswith("FAIL") and lines[0].endswith(code), lines
        assert lines[1].startswith("Fix: "), lines


def test_the_first_failure_carries_its_diagnosed_fix_itself() -> None:
    """In a container started without GPUs (a real probe of such a container, tests/data), NVML's
    finding carries the fix of the cause it diagnosed, so the answer's fix is that finding's own."""
    snapshot = str(Path(__file__).parent / "data" / "container-without-gpus.json")
    data = invoke("check", "--json", "--snapshot", snapshot).json()
    hints = {f["code"]: f["hint"] for f in data["findings"]}
    assert hints["nvml-library-missing"] == hints["container-no-gpus"] and "docker run --gpus all IMAGE" in hints["container-no-gpus"]
    assert not any(h.startswith("See ") for h in hints.values())
    lines = invoke("check", "-q", "--snapshot", snapshot).stdout.splitlines()
    assert lines[0].startswith("FAIL") and lines[0].endswith("nvml-library-missing")
    assert lines[1].startswith("Fix: ") and "--gpus all" in lines[1]
