"""What a present image itself says, read from a real (private) Docker daemon: images built FROM
scratch carrying the verbatim environment of a published NGC PyTorch image (its CUDA, PyTorch and
arch list), and images carrying an sshd_config, a Jupyter config and USER lines, read without
running them (created container, archive API, removed)."""

from __future__ import annotations

import pytest

import docker_daemon
import nvml_stub
from cudadoctor.app.loader import load_table
from helpers import run_cli
from sysroot import make_sysroot

REPO = load_table().ngc_families[0].repository
# nvcr PyTorch 25.10 (linux/arm64 build), as its image history is quoted publicly: the ENV lines of the final image.
NGC_25_10_ENV = {
    "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/mpi/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/ucx/bin:/opt/amazon/efa/bin",
    "LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,video",
    "CUDA_VERSION": "13.0.2.006",
    "CUDA_DRIVER_VERSION": "580.95.05",
    "_CUDA_COMPAT_PATH": "/usr/local/cuda/compat",
    "NVIDIA_REQUIRE_CUDA": "cuda>=9.0",
    "NCCL_VERSION": "2.27.7",
    "CUDNN_VERSION": "9.14.0.64",
    "NVIDIA_PRODUCT_NAME": "PyTorch",
    "PYTORCH_BUILD_VERSION": "2.9.0a0+145a3a7",
    "PYTORCH_VERSION": "2.9.0a0+145a3a7",
    "PYTORCH_BUILD_NUMBER": "0",
    "NVIDIA_PYTORCH_VERSION": "25.10",
    "JUPYTER_PORT": "8888",
    "TENSORBOARD_PORT": "6006",
    "TORCH_CUDA_ARCH_LIST": "8.0 8.6 9.0 10.0 11.0 12.0+PTX",
    "PYTORCH_HOME": "/opt/pytorch/pytorch",
    "CUDA_HOME": "/usr/local/cuda",
}
NGC_DOCKERFILE = (
    docker_daemon.dockerfile(NGC_25_10_ENV, {"com.nvidia.volumes.needed": "nvidia_driver", "com.nvidia.pytorch.version": "2.9.0a0+145a3a7"})
    + 'ENTRYPOINT ["/opt/nvidia/nvidia_entrypoint.sh"]\nEXPOSE 8888\nEXPOSE 6006\n'
)
OPEN_LAB = """FROM scratch
COPY sshd_config /etc/ssh/sshd_config
COPY 50-cloud-init.conf /etc/ssh/sshd_config.d/50-cloud-init.conf
COPY jupyter_server_config.py /etc/jupyter/jupyter_server_config.py
EXPOSE 8888 22
CMD ["jupyter", "lab", "--allow-root"]
"""
OPEN_FILES = {
    "sshd_config": b"Include /etc/ssh/sshd_config.d/*.conf\nPermitRootLogin yes\nPasswordAuthentication no\nUsePAM yes\nKbdInteractiveAuthentication no\n",
    # Included first, so it wins over the main file's PasswordAuthentication no.
    "50-cloud-init.conf": b"PasswordAuthentication yes\n",
    "jupyter_server_config.py": b"c.ServerApp.ip = '0.0.0.0'\nc.ServerApp.token = ''\n",
}
SAFE_LAB = """FROM scratch
COPY sshd_config /etc/ssh/sshd_config
COPY jupyter_server_config.py /home/app/.jupyter/jupyter_server_config.py
USER app
CMD ["jupyter", "lab", "--ServerApp.ip=127.0.0.1"]
"""
SAFE_FILES = {
    "sshd_config": b"PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin no\nMatch User app\n  X11Forwarding no\n",
    "jupyter_server_config.py": b"c.ServerApp.open_browser = False\n",
}
SECRET_TOKEN = "sekrit-token-4f2a9c"
SECRET_HASH = "argon2:$argon2id$v=19$m=10240,t=10,p=8$c2VjcmV0c2FsdA$aGFzaGhhc2hoYXNo"
SECRET_LAB = """FROM scratch
COPY sshd_config /etc/ssh/sshd_config
COPY jupyter_server_config.py /etc/jupyter/jupyter_server_config.py
USER app
CMD ["jupyter", "lab"]
"""
SECRET_FILES = {
    "sshd_config": b"PasswordAuthentication yes\nPermitRootLogin no\n# a comment naming a secret: hunter2\n",
    "jupyter_server_config.py": (f"c.ServerApp.token = '{SECRET_TOKEN}'\n"
                                 f"c.PasswordIdentityProvider.hashed_password = '{SECRET_HASH}'\n").encode(),
}
LOOP_LAB = "FROM scratch\nCOPY sshd_config /etc/ssh/sshd_config\nCOPY d/ /etc/ssh/sshd_config.d/\nUSER app\n"
LOOP_FILES = {
    "sshd_config": b"Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication no\n",
    # Thirty drop-ins that each include all thirty: 30**16 reads if expanded as written.
    **{f"d/{i:02d}.conf": b"Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication yes\n" for i in range(30)},
}
H100_535 = {"driver": "535.104.05", "cuda": 12020, "nvml": "12.535.104.05", "count": 1,
            **nvml_stub.gpu_config(0, "NVIDIA H100 80GB HBM3", cc="9.0")}
RTX4090_550 = {"driver": "550.54.14", "cuda": 12040, "nvml": "12.550.54.14", "count": 1,
               **nvml_stub.gpu_config(0, "NVIDIA GeForce RTX 4090", brand=5, cc="8.9")}


@pytest.fixture(scope="module")
def images(docker_host):
    docker_daemon.build_image_from(docker_host, f"{REPO}:25.10-py3", NGC_DOCKERFILE)
    docker_daemon.build_image_from(docker_host, "cdtest/lab:open", OPEN_LAB, OPEN_FILES)
    docker_daemon.build_image_from(docker_host, "cdtest/lab:safe", SAFE_LAB, SAFE_FILES)
    docker_daemon.build_image_from(docker_host, "cdtest/lab:secret", SECRET_LAB, SECRET_FILES)
    docker_daemon.build_image_from(docker_host, "cdtest/lab:loop", LOOP_LAB, LOOP_FILES)
    return docker_host


def check_json(*args, env):
    out = run_cli("check", "--json", *args, env=env)
    assert out.exit_code in (0, 1), out.stderr
    data = out.json()
    return out.exit_code, data, {f["code"]: f for f in data["findings"]}


@pytest.fixture
def host_env(fake_nvml_env, images, tmp_path):
    def make(config, module):
        root = str(make_sysroot(tmp_path / f"root-{module}", module=module))
        return {**fake_nvml_env(config), "DOCKER_HOST": images, "CUDADOCTOR_SYSROOT": root}
    return make


def _containers(docker_host):
    import docker

    client = docker.DockerClient(base_url=docker_host, timeout=30)
    try:
        return client.containers.list(all=True, filters={"label": "cudadoctor.hygiene"})
    finally:
        client.close()


def test_present_ngc_image_reads_its_arch_list_from_its_environment(host_env, images):
    status, data, codes = check_json("--image", f"{REPO}:25.10-py3", env=host_env(H100_535, "535.104.05"))
    target = data["target"]
    assert target["family"] == "ngc-pytorch" and target["cuda"] == "13.0" and target["torch"] == "2.9"
    assert target["arch_list"] == ["8.0", "8.6", "9.0", "10.0", "11.0", "12.0+PTX"]
    assert codes["gpu-arch-ok"]["severity"] == "ok" and "from its environment" in codes["gpu-arch-ok"]["title"]
    assert codes["ngc-forward-compat"]["severity"] == "info"  # R535 runs CUDA 13.0 through the image's cuda-compat
    assert "driver-too-old" not in codes
    assert codes["image-runs-as-root"]["severity"] == "info"  # NGC images set no USER
    assert "image-jupyter-open" not in codes and "image-ssh-root-login" not in codes
    assert _containers(images) == []


def test_present_ngc_image_on_geforce_says_forward_compatibility_does_not_apply(host_env):
    status, data, codes = check_json("--image", f"{REPO}:25.10-py3", env=host_env(RTX4090_550, "550.54.14"))
    assert status == 1
    assert codes["driver-too-old"]["severity"] == "fail"
    assert "consumer GPU" in codes["ngc-forward-compat-not-applicable"]["detail"]
    assert "gpu-arch-ok" in codes  # sm_89 runs the 8.6 machine code


def test_hygiene_findings_read_from_the_files(host_env, images):
    status, data, codes = check_json("--image", "cdtest/lab:open", env=host_env(H100_535, "535.104.05"))
    assert codes["image-runs-as-root"]["title"].endswith("(no USER line)")
    jupyter = codes["image-jupyter-open"]
    assert jupyter["severity"] == "warn" and "on all interfaces" in jupyter["title"]
    assert "/etc/jupyter/jupyter_server_config.py:2" in jupyter["detail"] and "127.0.0.1:8888:8888" in jupyter["hint"]
    ssh = codes["image-ssh-root-login"]
    assert ssh["severity"] == "warn" and ssh["title"].endswith("for root")
    assert "/etc/ssh/sshd_config.d/50-cloud-init.conf:1" in ssh["detail"]
    files = {f["path"] for f in data["target"]["image_facts"]["hygiene"]["files"]}
    assert files == {"/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/50-cloud-init.conf", "/etc/jupyter/jupyter_server_config.py"}
    assert _containers(images) == []  # the created container is gone


def test_a_clean_image_has_no_hygiene_findings(host_env, images):
    status, data, codes = check_json("--image", "cdtest/lab:safe", env=host_env(H100_535, "535.104.05"))
    assert not {"image-runs-as-root", "image-jupyter-open", "image-ssh-root-login", "image-files-unread"} & set(codes)
    hygiene = data["target"]["image_facts"]["hygiene"]
    assert hygiene["user"] == "app" and "/home/app/.jupyter/jupyter_server_config.py" in {f["path"] for f in hygiene["files"]}
    assert _containers(images) == []


def test_check_json_carries_the_deciding_settings_not_the_files_text(host_env, images):
    out = run_cli("check", "--json", "--image", "cdtest/lab:secret", env=host_env(H100_535, "535.104.05"))
    assert out.exit_code in (0, 1), out.stderr
    for secret in (SECRET_TOKEN, SECRET_HASH, "argon2id", "hunter2"):
        assert secret not in out.stdout
    hygiene = out.json()["target"]["image_facts"]["hygiene"]
    assert all(f["text"] == "" and f["text_withheld"] for f in hygiene["files"])
    settings = hygiene["settings"]
    assert settings["sshd_password_authentication"] == "yes"
    assert settings["sshd_password_authentication_at"] == "/etc/ssh/sshd_config:1"
    assert settings["sshd_permit_root_login"] == "no"
    assert settings["jupyter_token_set"] is True and settings["jupyter_token_empty"] is False
    assert settings["jupyter_password_set"] is True
    codes = {f["code"] for f in out.json()["findings"]}
    assert "image-ssh-root-login" in codes and "image-jupyter-open" not in codes
    assert _containers(images) == []


def test_sshd_dropins_that_include_each_other_are_one_finding_not_a_hang(host_env, images):
    out = run_cli("check", "--json", "--image", "cdtest/lab:loop", "--timeout", "20", env=host_env(H100_535, "535.104.05"), timeout=120)
    assert out.exit_code in (0, 1), out.stderr
    found = {f["code"]: f for f in out.json()["findings"]}
    assert "image-sshd-config-refused" in found and "image-ssh-root-login" not in found
    assert "00.conf -> 00.conf" in found["image-sshd-config-refused"]["detail"]
    assert out.json()["target"]["image_facts"]["hygiene"]["settings"]["sshd_refused"]
    assert _containers(images) == []
