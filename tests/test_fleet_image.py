"""`fleet --image`: the image inspected once by a real (private) Docker daemon, its
NVIDIA_REQUIRE_* judged on every node as `check --image` judges one host."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import docker_daemon
from fleet_nodes import gfd_labels, node, node_list
from helpers import core_check, invoke

IMAGES = json.loads((Path(__file__).parent / "data" / "cuda_image_requirements.json").read_text())["images"]
TAG = "cdfleet/cuda:12.8.1"


@pytest.fixture(scope="module")
def image_host(docker_host):
    """The module's Docker daemon (conftest.py), holding the CUDA image the nodes are judged for."""
    docker_daemon.build_image(docker_host, TAG, IMAGES["12.8.1"])
    return docker_host


def test_image_requirements_judged_per_node(image_host, tmp_path):
    docker_host = image_host
    cluster = node_list([
        node("h100-580", gfd_labels("H100", "580.95.05", 8)),
        node("a100-550", gfd_labels("A100", "550.127.05", 8)),
        node("t4-525", gfd_labels("T4", "525.147.05", 1)),
        node("cpu-0"),
    ])
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(cluster))
    run = invoke("fleet", str(path), "--image", TAG, "--json", env={"DOCKER_HOST": docker_host})
    doc = run.json()
    assert doc["target"]["image"] == TAG
    assert doc["fleet_recommendation"]["image"] == TAG and doc["fleet_recommendation"]["variant"] == "cu128"
    groups = {g["hosts"][0]: g for g in doc["groups"]}
    assert groups["cpu-0"]["verdict"] == "unknown"
    assert all(g["target"]["variant"] == "cu128" for n, g in groups.items() if n != "cpu-0")

    # Each group's verdict is what the pure check says for that node with the same image facts.
    from cudadoctor.fleet.sources import hosts_in
    from cudadoctor.model.imageref import parse_image_ref
    from cudadoctor.probe.containers import probe_containers

    os.environ["DOCKER_HOST"] = docker_host
    try:
        _, image = probe_containers(parse_image_ref(TAG), False, False, False, 10.0)
    finally:
        del os.environ["DOCKER_HOST"]
    assert image.state == "ok" and image.env_value("NVIDIA_REQUIRE_CUDA")
    for host in hosts_in(cluster, "nodes.json", "nodes"):
        if host.facts is None:
            continue
        alone = core_check(host.facts, image_facts=image, image=TAG)
        assert groups[host.name]["verdict"] == alone.verdict, host.name
        codes = {f.code for f in alone.findings}
        assert {c for c in groups[host.name]["findings"]} <= codes
        assert codes & {"image-requirements-ok", "image-requirement-unsatisfied", "image-requirements-unchecked"}, codes
