"""The text report leads with the answer, states each fact once, and -q/-v change how much follows.
Asserted on codes, commands and references (which the layout must keep), not on the wording. The
release is pinned (2.11) so the references named below stay those of one release as the table grows."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import host, invoke

CODE = re.compile(r"  ([a-z0-9]+(?:-[a-z0-9]+)+)$")


def codes_in(text: str) -> list[str]:
    return [m.group(1) for line in text.splitlines() if (m := CODE.search(line))]


def test_a_passing_host_leads_with_the_image_and_the_wheel() -> None:
    lines = invoke("check", "--torch", "2.11", "--snapshot", host("h100-550")).stdout.splitlines()
    assert lines[0].startswith("OK") and "pytorch-cuda:v2.11-cu129" in lines[0]
    assert lines[1].strip().startswith("pip install 'torch==2.11.*' --index-url ")


def test_the_t4_on_470_leads_with_the_release_that_fits() -> None:
    lines = invoke("check", "--torch", "2.11", "--snapshot", host("t4-470")).stdout.splitlines()
    assert lines[0].startswith("FAIL") and lines[0].endswith("driver-too-old")
    assert "PyTorch 2.7" in lines[1] and "pytorch-cuda:v2.7-cu118" in lines[1]
    assert lines[2].strip().startswith("pip install 'torch==2.7.*' --index-url ")
    assert "525.60.13" in lines[3]  # the other way: the driver upgrade for the asked release


def test_each_fact_once() -> None:
    text = invoke("check", "--torch", "2.11", "--snapshot", host("h100-550")).stdout
    assert text.count("pytorch-cuda:v2.11-cu129") == 1
    assert text.count("pip install") == 1
    assert codes_in(text).count("driver-minor-compat") == 1
    assert text.count("runs under CUDA minor-version compatibility") <= 1
    failing = invoke("check", "--torch", "2.11", "--snapshot", host("t4-470")).stdout
    assert failing.count("pytorch-cuda:v2.7-cu118") == 1 and failing.count("pytorch-cuda:v2.11-cu130") == 1
    assert failing.count("naming convention") == 1


def test_quiet_prints_the_answer_only() -> None:
    quiet = invoke("check", "--quiet", "--torch", "2.11", "--snapshot", host("t4-470"))
    full = invoke("check", "--torch", "2.11", "--snapshot", host("t4-470"))
    assert quiet.exit_code == full.exit_code == 1
    assert full.stdout.startswith(quiet.stdout)
    assert len(quiet.stdout.splitlines()) <= 4 and "Driver vs target CUDA" not in quiet.stdout


def test_the_default_hides_ok_and_info_and_verbose_shows_them() -> None:
    default = codes_in(invoke("check", "--torch", "2.11", "--snapshot", host("h100-550")).stdout)
    verbose = codes_in(invoke("check", "--verbose", "--torch", "2.11", "--snapshot", host("h100-550")).stdout)
    data = invoke("check", "--json", "--torch", "2.11", "--snapshot", host("h100-550")).json()
    by_severity = {f["code"]: f["severity"] for f in data["findings"]}
    assert all(by_severity[c] in ("warn", "fail") for c in default)
    assert {"nvml-ok", "gpu-ok", "gpu-arch-ok"} <= set(verbose)
    assert set(verbose) == set(by_severity)
    verbose_text = invoke("check", "-v", "--torch", "2.11", "--snapshot", host("h100-550")).stdout
    assert "cu126: older CUDA than cu129" in verbose_text  # every variant, with its reason


def test_quiet_and_verbose_together_is_a_usage_error() -> None:
    run = invoke("check", "-q", "-v", "--torch", "2.11", "--snapshot", host("h100-550"))
    assert run.exit_code == 2


def test_recommend_wheel_leads_with_the_pip_command_and_the_index_url() -> None:
    lines = invoke("recommend", "--wheel", "--torch", "2.11", "--snapshot", host("h100-550")).stdout.splitlines()
    assert lines[0].startswith("pip install 'torch==2.11.*' --index-url http")
    assert lines[1].startswith("index URL: http") and lines[0].endswith(lines[1].split(": ", 1)[1])
    assert "pytorch-cuda:" not in "\n".join(lines[:2])
    image = invoke("recommend", "--image", "--torch", "2.11", "--snapshot", host("h100-550")).stdout.splitlines()
    assert image[0].startswith("pytorch-cuda:v2.11-cu129")


def test_recommend_with_nothing_fitting_leads_with_the_release_that_fits() -> None:
    run = invoke("recommend", "--snapshot", host("t4-470"))
    assert run.exit_code == 1 and run.stdout == ""
    first = run.stderr.splitlines()[0]
    assert "PyTorch 2.7 fits: pytorch-cuda:v2.7-cu118" in first and "--torch 2.7" in first


def test_a_failure_no_build_avoids_is_the_thing_to_fix_first() -> None:
    for name, code in (("no-driver", "nvml-library-missing"), ("no-gpu-550", "no-gpu")):
        lines = invoke("check", "--quiet", "--torch", "2.11", "--snapshot", host(name)).stdout.splitlines()
        assert lines[0].startswith("FAIL") and lines[0].endswith(code), lines
        assert lines[1].startswith("Fix: "), lines


def test_a_fix_that_points_elsewhere_is_replaced_by_the_fix_it_points_at() -> None:
    """In a container started without GPUs (a real probe of such a container, tests/data), NVML's
    hint only points at the diagnosis: the answer prints the diagnosis's own fix instead."""
    snapshot = str(Path(__file__).parent / "data" / "container-without-gpus.json")
    lines = invoke("check", "-q", "--snapshot", snapshot).stdout.splitlines()
    assert lines[0].startswith("FAIL") and lines[0].endswith("nvml-library-missing")
    assert lines[1].startswith("Fix: ") and "--gpus all" in lines[1] and lines[1].endswith("container-no-gpus")
