"""The --smoke probe's script and how its output becomes findings.

The daemon-side run is covered in test_docker.py (on a host without a GPU runtime it must fail
with Docker's own error). Here: the very script that runs inside the image, run by this
machine's real CPU torch, and the reading of what a GPU host's container prints.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import core_check

from cudadoctor.model.facts import HostFacts, ImageFacts
from cudadoctor.probe.smoke import MARKER, PROBE, read_smoke_output
from cudadoctor.model.record import replace


def check_smoke(smoke):
    """The smoke check alone, through the pure entry point, on an image that ran with ``smoke``."""
    image = replace(ImageFacts("pytorch-cuda:v2.5-cu124", state="ok"), smoke=smoke)
    return list(core_check(HostFacts(), image_facts=image, only=["smoke"], image="pytorch-cuda:v2.5-cu124").findings)


def test_a_working_gpu_container_is_image_smoke_ok():
    logs = "some start-up noise\n" + MARKER + '{"torch": "2.5.1+cu124", "cuda": "12.4", "available": true, "count": 8, "op": true}\n'
    smoke = read_smoke_output({"StatusCode": 0}, logs)
    assert (smoke.torch_version, smoke.device_count, smoke.cuda_op_ok) == ("2.5.1+cu124", 8, True)
    [finding] = check_smoke(smoke)
    assert finding.code == "image-smoke-ok" and finding.severity == "ok"
    assert "8 GPU(s)" in finding.title


def test_the_probe_script_under_a_real_cpu_torch():
    pytest.importorskip("torch")
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    smoke = read_smoke_output({"StatusCode": run.returncode}, run.stdout)
    import torch

    assert smoke.torch_version == torch.__version__
    assert smoke.cuda_available is False and smoke.cuda_op_ok is None
    [finding] = check_smoke(smoke)
    assert finding.code == "image-smoke-failed"
    assert "torch.cuda.is_available() is False" in finding.detail


def test_garbled_output_is_a_failed_smoke_not_a_crash():
    smoke = read_smoke_output({"StatusCode": 137}, MARKER + "{not json\nKilled\n")
    [finding] = check_smoke(smoke)
    assert finding.code == "image-smoke-failed" and "exit status 137" in finding.detail
