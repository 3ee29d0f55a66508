"""Launch lint on real `docker run` lines from the public docs of vLLM, TGI, Ollama, Triton and NGC,
each run through `check --run` against a private dockerd that does NOT have the image (a user's
first run: `docker run` would pull it). No line may FAIL on the image not being pulled yet, the
shared-memory advice follows what the image runs, and no fix repeats what the line already has.

Each line is quoted as its page prints it (line continuations joined); where the page writes a
placeholder for the release (``xx.xx``, ``<xx.yy>``) a real release of that image stands in, and the
comment says so."""

from __future__ import annotations

from typing import Iterator

import pytest

import docker_daemon
from helpers import host, run_cli

# (where the line is printed, the line, the /dev/shm finding's severity or None when there is none)
LINES = [
    # vLLM, "Deploying with Docker": with --ipc=host, and the shorter form without it.
    ("https://docs.vllm.ai/en/latest/serving/deploying_with_docker.html",
     'docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface '
     '--env "HUGGING_FACE_HUB_TOKEN=<secret>" -p 8000:8000 --ipc=host vllm/vllm-openai:latest '
     '--model mistralai/Mistral-7B-v0.1', None),
    ("https://docs.vllm.ai/en/latest/serving/deploying_with_docker.html",
     'docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface -p 8000:8000 '
     '--env "HUGGING_FACE_HUB_TOKEN=<secret>" vllm/vllm-openai <args...>', "info"),
    # NGC vLLM ("xx.xx is the container version. For example, 25.08"): 25.08 stands in.
    ("https://docs.nvidia.com/deeplearning/frameworks/vllm-release-notes/running.html",
     "docker run --gpus all -it --rm nvcr.io/nvidia/vllm:25.08-py3", "info"),
    # TGI: the quick tour (3.3.5 and an older 1.4 page) and "Using TGI with Nvidia GPUs".
    ("https://huggingface.co/docs/text-generation-inference/quicktour",
     "docker run --gpus all --shm-size 1g -p 8080:80 -v $volume:/data "
     "ghcr.io/huggingface/text-generation-inference:3.3.5 --model-id $model", None),
    ("https://www.huggingface.co/docs/text-generation-inference/quicktour",
     "docker run --gpus all --shm-size 1g -p 8080:80 -v $volume:/data "
     "ghcr.io/huggingface/text-generation-inference:1.4 --model-id $model", None),
    ("https://huggingface.co/docs/text-generation-inference/en/installation_nvidia.md",
     "docker run --gpus all --shm-size 64g -p 8080:80 -v $volume:/data "
     "ghcr.io/huggingface/text-generation-inference:3.3.5 --model-id $model", None),
    # Ollama's Docker page and run-ollama-docker.sh: GPU, and CPU only (a true run-no-gpus).
    ("https://github.com/ollama/ollama/blob/main/run-ollama-docker.sh",
     "docker run -d --gpus=all -v ollama:/root/.ollama -p 11434:11434 --name ollama ollama/ollama", None),
    ("https://github.com/ollama/ollama/blob/main/run-ollama-docker.sh",
     "docker run -d -v ollama:/root/.ollama -p 11434:11434 --name ollama ollama/ollama", None),
    # Triton's quickstart (its <xx.yy> placeholder: 24.01 stands in), a project's launch line, and the
    # quickstart's "Run on CPU-Only System" (a true run-no-gpus).
    ("https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/getting_started/quickstart.html",
     "docker run --gpus=1 --rm -p8000:8000 -p8001:8001 -p8002:8002 -v/full/path/to/docs/examples/model_repository:/models "
     "nvcr.io/nvidia/tritonserver:24.01-py3 tritonserver --model-repository=/models", "info"),
    ("https://github.com/hoang-quoc-trung/sumen-triton",
     "docker run --gpus=all -it --shm-size=256m -p8000:8000 -p8001:8001 -p8002:8002 -v ${PWD}:/workspace/ "
     "-v ${PWD}/model_repository:/models nvcr.io/nvidia/tritonserver:22.12-py3", "info"),
    ("https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/getting_started/quickstart.html",
     "docker run --rm -p8000:8000 -p8001:8001 -p8002:8002 -v/full/path/to/docs/examples/model_repository:/models "
     "nvcr.io/nvidia/tritonserver:24.01-py3 tritonserver --model-repository=/models", "info"),
    # NGC PyTorch: Transformer Engine's README, and a course's setup with ulimits and --shm-size.
    ("https://github.com/NVIDIA/TransformerEngine/pull/1756.diff",
     "docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:25.04-py3", "warn"),
    ("https://gist.github.com/IAmSuyogJadhav/abe9aebbb5d4d7bac9fd186c7828b62d",
     "docker run -p 8888:9989 --ulimit memlock=-1 --ulimit stack=67108864 --shm-size=8g --gpus all -it "
     "-v <local_dir>:/workspace/ nvcr.io/nvidia/pytorch:23.05-py3", None),
    # PyTorch's README, "Using pre-built images".
    ("https://github.com/pytorch/pytorch#using-pre-built-images",
     "docker run --gpus all --rm -ti --ipc=host pytorch/pytorch:latest", None),
    # The classic toolkit check, and NGC's CUDA DL base (YY.MM-cuda<xx.y>: 25.01 with CUDA 12.8 stands in).
    ("https://oneuptime.com/blog/post/2026-02-08-how-to-run-llm-inference-with-vllm-in-docker/view",
     "docker run --rm --gpus all nvidia/cuda:12.4.0-base-ubuntu22.04 nvidia-smi", "info"),
    ("https://docs.nvidia.com/deeplearning/frameworks/cuda-dl-release-notes/running.html",
     "docker run --gpus all -it --rm nvcr.io/nvidia/cuda-dl-base:25.01-cuda12.8-devel-ubuntu24.04", "info"),
    # NGC TensorFlow, as a setup gist quotes NVIDIA's command.
    ("https://gist.github.com/Marinell0/342e57c20fa7adbcfc7f5a5a0ee5ffae",
     "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=87108864 -it --rm "
     "nvcr.io/nvidia/tensorflow:22.04-tf2-py3", None),
]  # fmt: skip
CPU_ONLY = {line for _, line, _ in LINES if "--gpus" not in line}
HOST = "v100-h100-550"  # two GPUs (a V100 and an H100) on driver 550: multi-GPU advice shows


def _ids() -> list[str]:
    from cudadoctor.model.runline import parse_run_line

    return [f"{i:02d}-{parse_run_line(line).image}" for i, (_, line, _) in enumerate(LINES)]


@pytest.fixture(scope="module")
def toolkit_daemon() -> Iterator[str]:
    """A private dockerd with a runtime named nvidia registered (as on a host with the toolkit)."""
    yield from docker_daemon.started(docker_daemon.nvidia_runtime_args())


def _check(line: str, daemon: str, tmp_path) -> tuple[int, dict]:
    root = tmp_path / "no-toolkit"  # the toolkit's files are read under it: none, whatever this machine has
    root.mkdir(exist_ok=True)
    run = run_cli("check", "--json", "--snapshot", host(HOST), "--run", line,
                  env={"DOCKER_HOST": daemon, "CUDADOCTOR_SYSROOT": str(root)})
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, {f["code"]: f for f in run.json()["findings"]}


def _no_hint_repeats_the_line(line: str, findings: dict) -> None:
    has = {
        "--gpus": "--gpus" in line,
        "--ipc=host": "--ipc=host" in line,
        "--shm-size": "--shm-size" in line,
    }
    for code, finding in findings.items():
        hint = finding["hint"]
        for option, present in has.items():
            if present:
                assert f"add `{option}" not in hint and f"Add `{option}" not in hint, (code, hint)
        assert not hint.startswith(("Start it", "Add `")), (code, hint)  # a fix names what it changes


@pytest.mark.parametrize("source, line, shm", LINES, ids=_ids())
def test_a_public_line_gets_a_sensible_verdict_when_its_image_is_not_pulled(source, line, shm, docker_host, toolkit_daemon, tmp_path):
    expected_fail = {"run-no-gpus"} if line in CPU_ONLY else set()
    for daemon, runtime_fail in ((toolkit_daemon, set()), (docker_host, {"nvidia-runtime-missing"})):
        status, findings = _check(line, daemon, tmp_path)
        failing = {code for code, f in findings.items() if f["severity"] == "fail"}
        assert failing == expected_fail | runtime_fail, (source, failing)
        assert status == (1 if failing else 0)
        assert findings["image-not-found"]["severity"] == "info"  # docker run pulls it: not a failure
        assert "`docker run` pulls it" in findings["image-not-found"]["title"]
        shm_finding = findings.get("run-shm-too-small")
        assert (shm_finding["severity"] if shm_finding else None) == shm, source
        if shm_finding and "DataLoader" in shm_finding["title"]:
            assert shm == "warn" or "if it runs PyTorch" in shm_finding["title"]
        _no_hint_repeats_the_line(line, findings)


def _line(fragment: str) -> str:
    return next(line for _, line, _ in LINES if fragment in line)


def test_what_is_judged_of_an_image_not_pulled_is_said(docker_host, tmp_path):
    known = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"  # a tag of a family the table knows
    _, table = _check(f"docker run --gpus all --ipc=host -v a:/a {known}", docker_host, tmp_path)
    assert "judged from the table as PyTorch 2.5, CUDA 12.4 (cu124)" in table["image-not-found"]["detail"]
    assert f"`docker pull {known}`, or check with --pull" in table["image-not-found"]["hint"]
    assert table["gpu-arch-ok"]["severity"] == "ok"  # the table's facts are judged as for a pulled image
    _, ollama = _check(_line("--gpus=all -v ollama"), docker_host, tmp_path)
    assert "names no PyTorch release or CUDA version" in ollama["image-not-found"]["detail"]
    _, base = _check(_line("cuda-dl-base"), docker_host, tmp_path)
    assert "Judged from its tag as CUDA 12.8" in base["image-not-found"]["detail"]


def test_shm_advice_names_the_workload(docker_host, tmp_path):
    _, pytorch = _check(_line("nvcr.io/nvidia/pytorch:25.04-py3"), docker_host, tmp_path)
    assert "PyTorch DataLoader workers" in pytorch["run-shm-too-small"]["title"]
    _, vllm = _check(_line("vllm/vllm-openai <args"), docker_host, tmp_path)
    assert "split across GPUs" in vllm["run-shm-too-small"]["title"] and "DataLoader" not in vllm["run-shm-too-small"]["detail"]
    _, triton = _check(_line("--shm-size=256m"), docker_host, tmp_path)
    shm = triton["run-shm-too-small"]
    assert "Python backend" in shm["title"] and "raise `--shm-size` from 256 MiB to `--shm-size=1g`" in shm["hint"]
    _, ollama = _check(_line("--gpus=all -v ollama"), docker_host, tmp_path)
    assert "run-shm-too-small" not in ollama  # llama.cpp in one process: nothing to say


def test_fixes_name_what_they_change_in_the_line(docker_host, tmp_path):
    _, cpu = _check(_line("docker run -d -v ollama"), docker_host, tmp_path)
    assert "add `--gpus all` to the run line (`docker run --gpus all ... ollama/ollama`)" in cpu["run-no-gpus"]["hint"]
    _, two = _check(_line("nvcr.io/nvidia/pytorch:25.04-py3"), docker_host, tmp_path)
    assert "replace `--gpus all` with" in two["run-gpus-unpinned"]["hint"]
