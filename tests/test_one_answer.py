"""One answer, said the same everywhere: for every shipped snapshot, the text report's fix, the
JSON's `answer` and the fleet's fix for that host are the same words (doctor/answer.py decides it
once; the renderers only word it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import HOSTS, host, invoke

SNAPSHOTS = sorted(p.stem for p in HOSTS.glob("*.json")) + ["container-without-gpus"]


def _path(name: str) -> str:
    data = Path(__file__).resolve().parent / "data" / f"{name}.json"
    return str(data) if data.exists() else host(name)


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_text_json_and_fleet_give_the_same_fix(name: str) -> None:
    snapshot = _path(name)
    data = invoke("check", "--json", "--snapshot", snapshot).json()
    answer = data["answer"]
    text = invoke("check", "--snapshot", snapshot).stdout
    group = invoke("fleet", "--json", snapshot).json()["groups"][0]
    assert answer["verdict"] == data["verdict"] == group["verdict"]
    assert group["answer"] == answer  # the fleet carries the same answer, passing or not
    fix = answer["fix"]
    if data["verdict"] == "fail":
        assert fix is not None and fix["text"]
        assert group["fix"] == fix["text"]  # the fleet says exactly what check says
        if answer["kind"] == "use-instead":
            assert answer["build"]["pip_command"] in text
        else:
            joined = " ".join(line.strip() for line in text.splitlines())
            assert f"Fix: {fix['text']}" in joined.replace("  ", " ")
    else:
        assert group["fix"] is None and answer["build"] is not None
        assert answer["build"]["pip_command"] in text and text.startswith("OK")


def test_a_build_asked_for_that_does_not_run_gives_the_same_answer_everywhere() -> None:
    args = ("--torch", "2.15")
    data = invoke("check", "--json", "--snapshot", host("t4-470"), *args).json()
    group = invoke("fleet", "--json", host("t4-470"), *args).json()["groups"][0]
    assert data["answer"]["kind"] == "use-instead" and data["answer"]["asked_release"] == "2.15"
    assert group["fix"] == data["answer"]["fix"]["text"] and group["fix"].startswith("use PyTorch 2.7 cu118")
    text = invoke("check", "--snapshot", host("t4-470"), *args).stdout.splitlines()
    assert text[1].startswith("Use PyTorch 2.7 instead: ")
    assert any(line.startswith("Or, for PyTorch 2.15: upgrade the NVIDIA driver to >= 580.65.06") for line in text)


def test_an_ngc_month_that_runs_is_the_build_to_use() -> None:
    answer = invoke("check", "--json", "--snapshot", host("h100-550"), "--family", "ngc-pytorch").json()["answer"]
    assert answer["kind"] == "use" and answer["build"]["image"].startswith("nvcr.io/nvidia/pytorch:")


def test_the_api_returns_the_answer_the_cli_prints() -> None:
    from cudadoctor import check

    for name in ("t4-470", "no-driver", "h100-550"):
        assert check(host(name))["answer"] == invoke("check", "--json", "--snapshot", host(name)).json()["answer"]
