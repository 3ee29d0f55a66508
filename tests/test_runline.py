"""`check --run 'docker run ...'`: the parser, table-driven against the flag forms Docker documents
(docker container run reference; pflag's grammar: --flag=value, --flag value, grouped short
booleans, a value-taking short flag last in a group), and the findings on snapshots and what-if
hosts."""

from __future__ import annotations

import pytest

from cudadoctor.app.loader import load_snapshot
from cudadoctor.model.runline import RunLineError, parse_gpus, parse_port, parse_run_line, parse_size
from helpers import core_check, host, invoke

# (command line, image, command, what the line says) -- forms from Docker's run reference.
PARSES = [
    ("docker run ubuntu", "ubuntu", (), {}),
    ("docker container run ubuntu bash", "ubuntu", ("bash",), {}),
    ("sudo docker run --rm -it ubuntu", "ubuntu", (), {"remove": True}),
    ("docker -H unix:///run/docker.sock --debug run alpine", "alpine", (), {}),
    ("sudo -E -u ops env CUDA_VISIBLE_DEVICES=0 docker --context=gpu run alpine", "alpine", (), {}),
    ("docker run -it --gpus all nvidia/cuda:12.8.1-base-ubuntu24.04 nvidia-smi", "nvidia/cuda:12.8.1-base-ubuntu24.04", ("nvidia-smi",), {"gpus": ("all",)}),
    ("docker run --gpus=2 img", "img", (), {"gpus": ("2",)}),
    ("docker run --gpus '\"device=1,2\"' img", "img", (), {"gpus": ('"device=1,2"',)}),
    ("docker run --gpus device=GPU-3a23c669-1f69-c64e-cf85-44e9b07e7a2a img", "img", (), {"gpus": ("device=GPU-3a23c669-1f69-c64e-cf85-44e9b07e7a2a",)}),
    ("docker run --gpus 'all,capabilities=utility' img", "img", (), {"gpus": ("all",)}),
    ("docker run --device nvidia.com/gpu=all img", "img", (), {"cdi": ("all",)}),
    ("docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=0 img", "img", (), {"runtime": "nvidia", "env": (("NVIDIA_VISIBLE_DEVICES", "0"),)}),
    ("docker run --ipc=host img", "img", (), {"ipc": "host"}),
    ("docker run --shm-size=8g img", "img", (), {"shm": 8 * 1024**3}),
    ("docker run --shm-size 512m img", "img", (), {"shm": 512 * 1024**2}),
    ("docker run -p 127.0.0.1:80:8080/tcp img", "img", (), {"ports": (("127.0.0.1", "80", (8080,)),)}),
    ("docker run -p 8888:8888 -p 2222:22 img", "img", (), {"ports": (("", "8888", (8888,)), ("", "2222", (22,)))}),
    ("docker run -itp 8888:8888 img", "img", (), {"ports": (("", "8888", (8888,)),)}),
    ("docker run -p8888:8888 img", "img", (), {"ports": (("", "8888", (8888,)),)}),
    ("docker run --publish=[::1]:8888:8888 img", "img", (), {"ports": (("[::1]", "8888", (8888,)),)}),
    ("docker run -p 8000-8002:8000-8002 img", "img", (), {"ports": (("", "8000-8002", (8000, 8001, 8002)),)}),
    ("docker run -v ./code:/workspace -v data:/data img", "img", (), {"volumes": ("./code:/workspace", "data:/data")}),
    ("docker run --mount type=bind,src=.,dst=/app img", "img", (), {"mounts": ("type=bind,src=.,dst=/app",)}),
    ("docker run -u 1000:1000 -w /app img", "img", (), {"user": "1000:1000"}),
    ("docker run --name x -e FOO=bar --env-file f.env -l a=b img python t.py --lr 3", "img", ("python", "t.py", "--lr", "3"), {}),
    ("docker run -d --restart unless-stopped --sig-proxy=false img", "img", (), {}),
    ("docker run --rm -- img -it", "img", ("-it",), {"remove": True}),
    ("docker run -it \\\n  --gpus all \\\n  img", "img", (), {"gpus": ("all",)}),
]


@pytest.mark.parametrize("line, image, command, says", PARSES, ids=[p[0][:60] for p in PARSES])
def test_parser_reads_the_documented_forms(line, image, command, says):
    run = parse_run_line(line)
    assert (run.image, run.command) == (image, command)
    expected_gpus = says.get("gpus", ())
    want = tuple((r.count, r.device_ids) for r in map(parse_gpus, expected_gpus))
    assert tuple((r.count, r.device_ids) for r in run.gpus) == want
    if '"device=1,2"' in line:
        assert run.gpus[0].device_ids == ("1", "2") and run.gpus[0].count is None
    assert run.cdi_gpus == says.get("cdi", ())
    assert run.runtime == says.get("runtime")
    assert run.ipc == says.get("ipc")
    assert run.shm_size_bytes == says.get("shm")
    assert tuple((p.host_ip, p.host_port, p.container_ports) for p in run.ports) == says.get("ports", ())
    assert run.volumes == says.get("volumes", ()) and run.mounts == says.get("mounts", ())
    assert run.user == says.get("user") and run.remove is says.get("remove", False)
    for name, value in says.get("env", ()):
        assert run.env_value(name) == value


MALFORMED = [
    ("", "starts with docker"),
    ("podman run img", "starts with docker"),
    ("docker ps", "expected `docker run`"),
    ("docker run", "names no image"),
    ("docker run --gpus", "needs a value"),
    ("docker run --frobnicate img", "unknown flag '--frobnicate'"),
    ("docker run -itz img", "unknown shorthand flag 'z'"),
    ("docker run --rm=maybe img", "takes true or false"),
    ("docker run --gpus device=0,1 img", "quote the list"),
    ("docker run --gpus lots img", "must be \"all\" or a number"),
    ("docker run --shm-size=huge img", "not a size"),
    ("docker run -p 8888:abc img", "not a port"),
    ("docker run 'img", "check its quotes"),
]


@pytest.mark.parametrize("line, message", MALFORMED)
def test_malformed_lines_say_what_to_fix(line, message):
    with pytest.raises(RunLineError) as caught:
        parse_run_line(line)
    assert message in str(caught.value)


def test_malformed_line_is_one_line_and_exit_2():
    run = invoke("check", "--run", "docker run --gpus device=0,1 img")
    assert run.exit_code == 2 and len(run.stderr.strip().splitlines()) == 1
    assert run.stderr.startswith("cudadoctor: error: --run:")
    both = invoke("check", "--run", "docker run img", "--image", "img")
    assert both.exit_code == 2 and "not both" in both.stderr


@pytest.mark.parametrize("text, size", [("64m", 64 * 1024**2), ("1g", 1024**3), ("1GB", 1024**3), ("1.5g", 1536 * 1024**2), ("1024", 1024)])
def test_sizes_as_docker_reads_them(text, size):
    assert parse_size(text) == size


def test_port_publication_sides():
    assert parse_port("8888").public and parse_port("0.0.0.0:8888:8888").public
    assert not parse_port("127.0.0.1:8888:8888").public and not parse_port("127.0.0.1::8888").public


def codes(line, snapshot="h100-535", **extra):
    result = core_check(load_snapshot(host(snapshot)), run=line, only=["run-line"], **extra)
    return {f.code: f for f in result.findings}, result


def test_the_issue_example_on_an_8_gpu_host():
    found, result = codes("docker run --gpus all -p 8888:8888 -v ./code:/workspace pytorch-cuda:v2.9-cu128")
    assert result.target.image == "pytorch-cuda:v2.9-cu128" and result.target.origin == "--image"
    assert set(found) == {"run-gpus-unpinned", "run-shm-too-small", "run-port-public"}
    assert "--gpus '\"device=0,1,2,3,4,5,6,7\"'" in found["run-gpus-unpinned"].hint
    assert "127.0.0.1:8888:8888" in found["run-port-public"].hint
    assert "bus error" in found["run-shm-too-small"].detail


def test_a_well_formed_line_has_nothing_to_say():
    found, _ = codes("docker run --gpus '\"device=0,1\"' --ipc=host -p 127.0.0.1:8888:8888 -v $PWD:/w pytorch-cuda:v2.9-cu128")
    assert found == {}
    found, _ = codes("docker run --gpus all --shm-size=16g --mount type=volume,src=ck,dst=/ck img", snapshot="rtx4090-550")
    assert found == {}  # one GPU: all is that one


def test_shm_shared_with_another_container_or_mounted_is_not_judged_too_small():
    for line in ("docker run --gpus all --ipc=container:trainer -v a:/a img",
                 "docker run --gpus all -v /dev/shm:/dev/shm -v a:/a img",
                 "docker run --gpus all --mount type=tmpfs,destination=/dev/shm,tmpfs-size=8g -v a:/a img"):
        found, _ = codes(line, snapshot="rtx4090-550")
        assert "run-shm-too-small" not in found, line
    small, _ = codes("docker run --gpus all --ipc=none -v a:/a img", snapshot="rtx4090-550")
    assert "no /dev/shm" in small["run-shm-too-small"].title


def test_no_gpus_and_no_volume():
    found, result = codes("docker run --rm -it --device /dev/nvidia0 -p 2222:22 img")
    assert found["run-no-gpus"].severity == "fail" and "/dev/nvidia0" in found["run-no-gpus"].detail
    assert "SSH" in found["run-port-public"].title
    assert "--rm removes it" in found["run-no-volume"].detail
    assert result.exit_status() == 1


@pytest.mark.parametrize(
    "gpus, missing",
    [
        ("'\"device=0,8\"'", "8"),
        ("device=GPU-00000000-dead-beef-0000-000000000000", "GPU-00000000-dead-beef-0000-000000000000"),
        ("9", "a count of 9"),
    ],
)
def test_gpu_requests_the_host_cannot_satisfy(gpus, missing):
    found, result = codes(f"docker run --gpus {gpus} --ipc=host -v a:/a img")
    assert set(found) == {"run-gpu-request-unsatisfiable"} and missing in found["run-gpu-request-unsatisfiable"].title
    assert result.exit_status() == 1


@pytest.mark.parametrize("line", [
    "docker run --gpus device=\u00b2 --ipc=host -v a:/a img",
    "docker run --gpus '\"device=0,\u0663\"' --ipc=host -v a:/a img",
    "docker run --gpus device=" + "9" * 5000 + " --ipc=host -v a:/a img",
    "docker run --device nvidia.com/gpu=\u00b2 --ipc=host -v a:/a img",
    "docker run --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=\u00b2 --ipc=host -v a:/a img",
], ids=["superscript", "arabic-indic", "5000-digits", "cdi", "visible-devices"])
def test_a_device_index_in_other_digits_or_thousands_of_them_is_a_device_the_host_lacks(line):
    """str.isdigit() takes ² and ٣, which int() refuses (and int() refuses 4300+ digits): the
    run-line check named them as missing devices instead of crashing (internal-error)."""
    found, result = codes(line)
    assert set(found) == {"run-gpu-request-unsatisfiable"}, found
    assert result.exit_status() == 1


def test_an_exposed_port_in_other_digits_is_no_port():
    from cudadoctor.model.facts import ImageFacts
    from cudadoctor.model.hygiene import ImageHygiene

    image = ImageFacts("img", state="ok", hygiene=ImageHygiene(state="ok", exposed_ports=("\u00b2/tcp", "9" * 5000 + "/tcp", "8888/tcp")))
    found, _ = codes("docker run -P --gpus 1 --ipc=host -v a:/a img", image_facts=image)
    assert set(found) == {"run-port-public"} and "8888" in found["run-port-public"].title


def test_uuids_and_cdi_names_the_host_has_are_fine():
    ok, _ = codes("docker run --gpus device=GPU-h100-0003-4c1e-9a77-5d0c3f2b1a03 --ipc=host -v a:/a img")
    assert ok == {}
    cdi, _ = codes("docker run --device nvidia.com/gpu=12 --ipc=host -v a:/a img")
    assert set(cdi) == {"run-gpu-request-unsatisfiable"}


def test_runtime_nvidia_reads_nvidia_visible_devices():
    found, _ = codes("docker run --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all --ipc=host -v a:/a img")
    assert set(found) == {"run-gpus-unpinned"}
    none, _ = codes("docker run --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=none --ipc=host -v a:/a img")
    assert set(none) == {"run-no-gpus"}


def test_run_works_with_what_if_flags():
    run = invoke("check", "--json", "--driver", "570.124.06", "--gpu", "A100", "--gpu", "A100",
                 "--run", "docker run --gpus '\"device=2\"' --shm-size 2g -v a:/a pytorch-cuda:v2.9-cu128")
    found = {f["code"] for f in run.json()["findings"]}
    assert "run-gpu-request-unsatisfiable" in found and "run-shm-too-small" not in found
    assert run.json()["target"]["run"]["shm_size_bytes"] == 2 * 1024**3


def test_run_line_user_overrides_the_image_user_for_the_root_finding():
    from cudadoctor.model.facts import ImageFacts
    from cudadoctor.model.hygiene import ImageHygiene

    image = ImageFacts("img", state="ok", hygiene=ImageHygiene(state="ok", user=""))
    as_root = core_check(load_snapshot(host("h100-535")), run="docker run --gpus all img", image_facts=image, only=["hygiene"])
    as_user = core_check(load_snapshot(host("h100-535")), run="docker run -u 1000 --gpus all img", image_facts=image, only=["hygiene"])
    assert [f.code for f in as_root.findings] == ["image-runs-as-root"] and as_user.findings == ()


def test_run_works_with_a_snapshot_on_the_command_line():
    run = invoke("check", "--json", "--snapshot", host("h100-535"), "--run",
                 "docker container run --gpus '\"device=0,1\"' --ipc=host -p 127.0.0.1:8888:8888 -v ./c:/c pytorch-cuda:v2.9-cu128")
    data = run.json()
    assert data["target"]["image"] == "pytorch-cuda:v2.9-cu128" and data["target"]["run"]["gpus"][0]["device_ids"] == ["0", "1"]
    assert not [f for f in data["findings"] if f["code"].startswith("run-")]


def test_in_a_container_without_gpus_the_fix_names_that_container_not_the_run_line():
    from pathlib import Path

    facts = load_snapshot(str(Path(__file__).parent / "data" / "container-without-gpus.json"))
    with_line = core_check(facts, run="docker run --gpus all --ipc=host -v a:/a img")
    hint = next(f.hint for f in with_line.findings if f.code == "container-no-gpus")
    assert hint.startswith("The --run line's GPU option is for the container it starts, not for this one.")
    assert "Start the container cudadoctor runs in again with GPUs: `docker run --gpus all IMAGE`" in hint
    plain = next(f.hint for f in core_check(facts).findings if f.code == "container-no-gpus")
    assert plain.startswith("Start the container cudadoctor runs in again with GPUs")


def test_gpus_the_image_picks_are_pinned_by_adding_to_the_line_not_replacing():
    from cudadoctor.model.facts import ImageFacts

    image = ImageFacts("img", state="ok", env=(("NVIDIA_VISIBLE_DEVICES", "all"),))
    result = core_check(load_snapshot(host("h100-535")), run="docker run --runtime nvidia --ipc=host -v a:/a img",
                        image_facts=image, only=["run-line"])
    hint = {f.code: f for f in result.findings}["run-gpus-unpinned"].hint
    assert hint.startswith("In the run line, add the GPUs the job should use: `--gpus '\"device=0,1,2,3,4,5,6,7\"'`")
    explicit, _ = codes("docker run --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all --ipc=host -v a:/a img")
    assert explicit["run-gpus-unpinned"].hint.startswith("In the run line, replace `-e NVIDIA_VISIBLE_DEVICES=all` with")
