"""The command line as scripts use it: formats, exit statuses, one-line errors, no tracebacks."""

from __future__ import annotations

import json

import pytest

from helpers import host, invoke, run_cli


# --- recommend ---------------------------------------------------------------------------------


def test_recommend_tag_prints_only_the_reference():
    run = invoke("recommend", "--image", "--format", "tag", "--snapshot", host("h100-550"), "--torch", "2.5")
    assert run.exit_code == 0
    assert run.stdout == "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime\n"  # PyTorch's own image: pullable as printed


def test_recommend_wheel_index_url():
    run = invoke("recommend", "--wheel", "--format", "index-url", "--driver", "535.104.05", "--gpu", "A100", "--torch", "2.1")
    assert run.exit_code == 0
    assert run.stdout.strip().endswith("/whl/cu121")


def test_recommend_json_has_image_variant_and_reasons():
    run = invoke("recommend", "--image", "--format", "json", "--snapshot", host("a100-525"), "--torch", "2.5")
    data = run.json()
    assert data["schema"] == 1
    rec = data["recommendation"]
    assert (rec["image"], rec["variant"], rec["support"]) == ("pytorch/pytorch:2.5.1-cuda11.8-cudnn9-runtime", "cu118", "full")
    assert {r["variant"] for r in rec["rejected"]} == {"cu121", "cu124"}


def test_recommend_nothing_fits_exit_1_reason_on_stderr():
    run = invoke("recommend", "--image", "--format", "tag", "--snapshot", host("t4-470"), "--torch", "2.8")
    assert run.exit_code == 1
    assert run.stdout == ""
    assert "no fit" in run.stderr and "525.60.13" in run.stderr


def test_recommend_text_for_people():
    run = invoke("recommend", "--image", "--snapshot", host("rtx5090-570"), "--torch", "2.8")
    assert run.exit_code == 0
    assert "pytorch/pytorch:2.8.0-cuda12.8-cudnn9-runtime" in run.stdout and "cu126" in run.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["recommend", "--image", "--wheel"], "not both"),
        (["recommend", "--image", "--format", "index-url"], "--format index-url needs --wheel"),
        (["recommend", "--wheel", "--format", "tag"], "--format tag needs --image"),
    ],
)
def test_recommend_flag_conflicts_are_usage_errors(args, needle):
    run = invoke(*args, "--driver", "550.54.15")
    assert run.exit_code == 2 and needle in run.stderr


# --- what-if flags -----------------------------------------------------------------------------


def test_what_if_equals_snapshot():
    a = invoke("check", "--json", "--torch", "2.5", "--driver", "550.54.15", "--gpu", "H100").json()
    b = invoke("check", "--json", "--torch", "2.5", "--snapshot", host("h100-550")).json()
    assert a["recommendation"]["variant"] == b["recommendation"]["variant"] == "cu124"
    assert a["verdict"] == b["verdict"] == "ok"


@pytest.mark.parametrize("spec,cc", [("8.0", "8.0"), ("sm_86", "8.6"), ("A100", "8.0"), ("RTX 4090", "8.9"), ("NVIDIA H100 80GB HBM3", "9.0"), ("tesla v100-sxm2-16gb", "7.0")])
def test_gpu_spec_forms(spec, cc):
    data = invoke("check", "--json", "--driver", "580.95.05", "--gpu", spec).json()
    assert data["host"]["gpus"][0]["compute_capability"] == cc


def test_driver_only_skips_gpu_checks_with_info():
    data = invoke("check", "--json", "--torch", "2.8", "--driver", "580.95.05", "--snapshot", host("no-driver")).json()
    assert "gpu-not-specified" in [f["code"] for f in data["findings"]]
    assert data["verdict"] == "ok"


# --- bad input: exit 2, one line, no traceback -------------------------------------------------


def _bad(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["check", "--driver", "latest"], "invalid driver version 'latest'"),
        (["check", "--driver", "535.104.05.1.2"], "invalid driver version"),
        (["check", "--gpu", "Voodoo 5"], "unknown GPU 'Voodoo 5'"),
        (["check", "--gpu", "9.9"], "compute capability 9.9 is not one the table knows"),
        (["check", "--torch", "banana"], "invalid --torch 'banana'"),
        (["check", "--torch", "0.4"], "unknown PyTorch release '0.4'"),
        (["check", "--torch", "2.8", "--variant", "cu118"], "PyTorch 2.8 has no variant 'cu118'"),
        (["check", "--family", "nope"], "unknown image family 'nope'"),
        (["check", "--snapshot", "/nonexistent/host.json"], "no such file"),
        (["check", "--table", "/nonexistent/table.json"], "no such file"),
        (["check", "--no-such-flag"], "No such option"),
        (["recommend", "--format", "yaml"], "'yaml' is not one of"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, needle):
    run = run_cli(*args)
    assert run.exit_code == 2, run.stderr
    assert needle in run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cudadoctor: error: ")
    assert "Traceback" not in run.stderr and run.stdout == ""


@pytest.mark.parametrize(
    "content,needle",
    [
        ("{not json", "not valid JSON"),
        ('{"hello": "world"}', "not a cudadoctor host snapshot"),
        ('{"schema": 99, "kind": "cudadoctor-host-snapshot", "host": {}}', "schema 99 is not supported"),
        ('{"schema": 1, "kind": "cudadoctor-host-snapshot", "host": {"gpus": [{"index": "zero"}]}}', "$.host.gpus[0].index: expected an integer"),
        ('{"schema": 1, "kind": "cudadoctor-host-snapshot", "host": {"driver": {"nvml_state": "happy"}}}', "nvml_state: 'happy'"),
        ('[1, 2, 3]', "not a cudadoctor host snapshot"),
        # Bytes, written as they are: a UTF-16 byte-order mark, then invalid UTF-8 (a str here
        # would be written encoded as valid UTF-8 and never reach the decode error).
        (b"\xff\xfe{\x00}\x00", "snapshot {path}: not UTF-8 text"),
    ],
)
def test_malformed_snapshot(tmp_path, content, needle):
    if isinstance(content, bytes):
        path = tmp_path / "snap.json"
        path.write_bytes(content)
        path = str(path)
    else:
        path = _bad(tmp_path, "snap.json", content)
    run = run_cli("check", "--snapshot", path)
    assert run.exit_code == 2, run.stderr
    assert needle.format(path=path) in run.stderr, run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cudadoctor: error: ")
    assert "Traceback" not in run.stderr


def test_malformed_table_names_the_entry(tmp_path):
    from helpers import REPO_ROOT

    table = json.loads((REPO_ROOT / "data" / "compat_table.json").read_text())
    table["pytorch_releases"][0]["variants"][0]["arch_list"].append("4.2")
    run = run_cli("check", "--table", _bad(tmp_path, "t.json", json.dumps(table)), "--driver", "550.54.15")
    assert run.exit_code == 2
    assert "arch_list: unknown compute capability 4.2" in run.stderr
    assert run.stderr.count("\n") == 1


def test_table_from_environment_variable(tmp_path):
    run = run_cli("check", "--driver", "550.54.15", env={"CUDADOCTOR_TABLE": _bad(tmp_path, "t.json", "[]")})
    assert run.exit_code == 2 and "expected an object" in run.stderr


# --- probe and snapshots -----------------------------------------------------------------------


def test_probe_output_round_trips_through_check(tmp_path, fake_nvml_env):
    env = fake_nvml_env({"driver": "550.54.15", "cuda": 12040, "count": 1, "gpu0.name": "NVIDIA H100 80GB HBM3", "gpu0.cc": "9.0"})
    out = tmp_path / "snap.json"
    assert run_cli("probe", "--output", str(out), env=env).exit_code == 0
    # Checked here, on a machine without that GPU: the snapshot carries everything.
    data = run_cli("check", "--snapshot", str(out), "--torch", "2.5", "--json").json()
    assert data["host"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert data["recommendation"]["variant"] == "cu124"


def test_probe_output_to_unwritable_path_is_usage_error(tmp_path):
    run = run_cli("probe", "--output", str(tmp_path / "missing-dir" / "snap.json"))
    assert run.exit_code == 2 and "cannot write" in run.stderr


# --- human output --------------------------------------------------------------------------------


def test_text_report_without_colour_when_piped(fake_nvml_env):
    env = fake_nvml_env({"driver": "470.82.01", "cuda": 11040, "count": 1, "gpu0.name": "Tesla T4", "gpu0.cc": "7.5", "gpu0.brand": 2})
    run = run_cli("check", "--torch", "2.8", env=env)
    assert run.exit_code == 1
    assert "\x1b[" not in run.stdout  # not a TTY: no escape codes
    assert "driver-too-old" in run.stdout and run.stdout.startswith("FAIL")  # the answer first
    assert "Upgrade the NVIDIA driver to >= 525.60.13" in run.stdout


def test_check_json_is_exactly_one_object(fake_nvml_env):
    env = fake_nvml_env({"driver": "550.54.15", "cuda": 12040, "count": 2})
    run = run_cli("check", "--json", env=env)
    data = json.loads(run.stdout)  # the whole stdout is one JSON document
    assert set(data) >= {"schema", "verdict", "host", "target", "findings", "recommendation"}
    assert data["host"]["driver"]["driver_version"] == "550.54.15"
    assert len(data["host"]["gpus"]) == 2


def test_version_and_help():
    assert run_cli("--version").stdout.startswith("cudadoctor, version ")
    run = run_cli("check", "--help")
    assert run.exit_code == 0 and "--snapshot" in run.stdout


def _run_on_terminal(args, env):
    """Run the CLI with stdout on a pseudo-terminal, as in an interactive shell."""
    import os
    import pty
    import subprocess

    from helpers import start_cli

    leader, follower = pty.openpty()
    proc = start_cli(*args, env=env, unset=("NO_COLOR", "FORCE_COLOR", "TERM"), stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO once the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_and_off_under_no_color():
    args = ["check", "--snapshot", host("t4-470"), "--torch", "2.8"]
    base = {"TERM": "xterm-256color", "COLUMNS": "120"}
    coloured = _run_on_terminal(args, base)
    assert "\x1b[" in coloured and "driver-too-old" in coloured
    plain = _run_on_terminal(args, {**base, "NO_COLOR": "1"})
    assert "driver-too-old" in plain
    assert "\x1b[3" not in plain and "\x1b[1;31m" not in plain  # no colour codes (bold/dim may remain)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--driver", ""],
        ["check", "--torch", " "],
        ["check", "--snapshot", ""],
        ["check", "--table", ""],
        ["check", "--family", ""],
        ["check", "--variant", ""],
        ["check", "--families", ""],
        ["recommend", "--image", "--driver", ""],
        ["table", "--gpu", ""],
        ["table", "--validate", ""],
        ["check", "--require", ""],
        ["check", "--require", " , "],
    ],
)
def test_an_empty_value_is_a_usage_error_not_the_default(args):
    # `--driver "$DRIVER"` with DRIVER unset must not silently probe this host instead.
    run = run_cli(*args)
    assert run.exit_code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cudadoctor: error: ")
    assert "empty" in run.stderr or "no condition" in run.stderr


def test_a_closed_pipe_is_not_a_traceback():
    # `cudadoctor table | head -1`: the reader leaves early; the command must not print a traceback.
    import subprocess

    from helpers import start_cli

    proc = start_cli("table", "--gpus", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err and proc.returncode in (0, 1)


def test_large_output_is_flushed_completely_before_exit(tmp_path):
    # The entry point skips the interpreter's teardown; everything written must still arrive.
    out = tmp_path / "table.json"
    from helpers import start_cli

    with out.open("w") as handle:
        status = start_cli("table", "--json", stdout=handle).wait(timeout=120)
    assert status == 0
    assert json.loads(out.read_text())["schema"] == 1
