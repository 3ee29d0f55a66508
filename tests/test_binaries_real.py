"""The fat binary reader on real GPU code: made here by NVIDIA's NVRTC and nvFatbin (no GPU
needed), wrapped into extension-like shared objects, and NVIDIA's own libcurand; each listing
must equal NVIDIA's cuobjdump's. Then `cudadoctor scan` on environments and wheels built from
them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gpu_code import NvFatbin, NvidiaTools, Nvrtc, cuobjdump_listing, nvidia_tools, reader_listing, wrap_shared_object
from helpers import Run, run_cli

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tools() -> NvidiaTools:
    return nvidia_tools()


@pytest.fixture(scope="module")
def nvrtc(tools: NvidiaTools) -> Nvrtc:
    return Nvrtc(tools.nvrtc)


@pytest.fixture(scope="module")
def nvfatbin(tools: NvidiaTools) -> NvFatbin:
    return NvFatbin(tools.nvfatbin)


# (name, targets, nvFatbin options): SASS only, PTX only, several architectures, the
# architecture- and family-specific targets, and compressed entries.
CASES = [
    ("sass-only", ["sm_80", "sm_90"], ["-compress=false"]),
    ("ptx-only", ["compute_75"], []),
    ("several", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "compute_120"], []),
    ("specific", ["sm_90a", "sm_100a", "sm_100f", "compute_90a", "compute_120f"], []),
    ("compressed", ["sm_80", "sm_90", "compute_90"], ["-compress-all"]),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, nvrtc: Nvrtc, nvfatbin: NvFatbin) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gpu-code")
    out = {}
    for name, targets, options in CASES:
        out[name] = wrap_shared_object(root / name, f"{name}_ext.so", [nvfatbin.build(nvrtc, targets, options)])
    # two fat binaries in one section, as a library of several translation units has
    out["two-fatbins"] = wrap_shared_object(
        root / "two", "two_ext.so", [nvfatbin.build(nvrtc, ["sm_80"], []), nvfatbin.build(nvrtc, ["compute_90", "sm_90"], [])]
    )
    return out


@pytest.mark.parametrize("name", [c[0] for c in CASES] + ["two-fatbins"])
def test_reader_lists_what_cuobjdump_lists(built: dict[str, Path], tools: NvidiaTools, name: str) -> None:
    expected = cuobjdump_listing(tools.cuobjdump, built[name])
    assert expected, f"cuobjdump listed nothing in {built[name]}"
    assert reader_listing(built[name]) == expected


def test_reader_lists_what_cuobjdump_lists_in_nvidias_libcurand(tools: NvidiaTools) -> None:
    expected = cuobjdump_listing(tools.cuobjdump, Path(tools.curand))
    assert len(expected) > 20
    assert reader_listing(Path(tools.curand)) == expected


def read(path: Path):  # type: ignore[no-untyped-def]
    from cudadoctor.binaries.read import read_binary

    with open(path, "rb") as stream:
        return read_binary(stream, path.stat().st_size)


def test_ptx_carries_the_isa_version_nvrtc_wrote(built: dict[str, Path], nvrtc: Nvrtc) -> None:
    ptx = nvrtc.compile("compute_75").decode()
    version = next(line.split()[1] for line in ptx.splitlines() if line.startswith(".version"))
    code = read(built["ptx-only"])
    assert [(e.kind, e.arch, e.ptx_isa) for e in code.entries] == [("ptx", 75, version)]


def test_ptx_isa_versions_of_this_nvrtc_are_in_the_sourced_mapping(nvrtc: Nvrtc) -> None:
    from cudadoctor.binaries.ptx_isa import cuda_for_ptx_isa

    ptx = nvrtc.compile("compute_75").decode()
    isa = next(line.split()[1] for line in ptx.splitlines() if line.startswith(".version"))
    version = ctypes_version(nvrtc)
    from cudadoctor.binaries.ptx_isa import PTX_ISA_TO_CUDA

    newest = max(i for i, cuda in PTX_ISA_TO_CUDA.items() if cuda <= version)  # the newest ISA a toolkit this old writes
    assert cuda_for_ptx_isa(isa) is not None and isa == f"{newest[0]}.{newest[1]}", f"NVRTC {version} writes PTX ISA {isa}"


def ctypes_version(nvrtc: Nvrtc) -> tuple[int, int]:
    import ctypes

    major, minor = ctypes.c_int(), ctypes.c_int()
    assert nvrtc.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0
    return major.value, minor.value


def test_compression_and_specific_targets_are_read(built: dict[str, Path]) -> None:
    assert not any(e.compressed for e in read(built["sass-only"]).entries)
    assert all(e.compressed for e in read(built["compressed"]).entries)
    specific = read(built["specific"])
    assert [e.sm for e in specific.entries] == ["sm_90a", "sm_100a", "sm_100f", "sm_90a", "sm_120f"]


def test_the_runtime_the_extension_links_is_read_from_dt_needed(built: dict[str, Path]) -> None:
    code = read(built["several"])
    assert "libcudart.so.12" in code.needed and code.cuda_runtime == "12"


def test_nvidias_libcurand_is_read_in_a_small_fraction_of_its_size(tools: NvidiaTools) -> None:
    """Payloads are skipped, not read: count the bytes the reader asks for."""
    from cudadoctor.binaries.read import read_binary

    class Counting:
        def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
            self.stream, self.read_bytes = stream, 0

        def seek(self, offset: int, whence: int = 0) -> int:
            return self.stream.seek(offset, whence)

        def read(self, count: int = -1) -> bytes:
            assert count >= 0, "an unbounded read"
            data = self.stream.read(count)
            self.read_bytes += len(data)
            return data

    size = os.path.getsize(tools.curand)
    with open(tools.curand, "rb") as raw:
        counting = Counting(raw)
        code = read_binary(counting, size)  # type: ignore[arg-type]
    assert len(code.entries) > 20
    assert counting.read_bytes < size / 100, f"read {counting.read_bytes} of {size} bytes"


# ---- cudadoctor scan on an environment and a wheel built from these binaries -------------------


def make_dist(site: Path, name: str, version: str, files: dict[str, Path]) -> None:
    """Install files into site as pip would: the files, and a dist-info whose RECORD lists them."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA test package.\n")
    rows = []
    for relative, source in files.items():
        target = site / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        rows.append(f"{relative},sha256=x,{target.stat().st_size}")
    rows += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, nvrtc: Nvrtc, nvfatbin: NvFatbin) -> Path:
    """A virtual environment holding a CUDA torch-like wheel (sm_75 ... sm_120 and PTX) and an
    extension built for sm_80/sm_90 only."""
    root = tmp_path_factory.mktemp("venv")
    build = root / "build"
    torch_lib = wrap_shared_object(
        build / "torch", "libtorch_cuda.so",
        [nvfatbin.build(nvrtc, ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"], [])],
    )  # fmt: skip
    extension = wrap_shared_object(build / "ext", "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", [nvfatbin.build(nvrtc, ["sm_80", "sm_90"], [])])
    env = root / "env"
    site = env / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    make_dist(site, "torch", "2.9.0+cu128", {"torch/lib/libtorch_cuda.so": torch_lib})
    make_dist(site, "flash-attn", "2.8.3", {"flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so": extension})
    return env


def scan(*args: str) -> Run:
    return run_cli("scan", *args)


def test_scan_fails_naming_the_extension_without_code_for_an_rtx_5090(venv: Path) -> None:
    run = scan(str(venv), "--gpu", "RTX 5090", "--driver", "580.65.06")
    assert run.returncode == 1, run.stdout + run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("FAIL: flash-attn 2.8.3 has no code for sm_120: it will fail on the GeForce RTX 5090"), first
    assert "torch 2.9.0+cu128 carries sm_120 machine code" in run.stdout


def test_scan_passes_the_same_environment_on_an_h100(venv: Path) -> None:
    run = scan(str(venv), "--gpu", "H100")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("OK:")


def test_scan_json_names_each_binary_its_code_and_its_verdict(venv: Path) -> None:
    run = scan(str(venv), "--gpu", "RTX 5090", "--driver", "580.65.06", "--json")
    assert run.returncode == 1
    data = json.loads(run.stdout)
    assert data["verdict"] == "fail"
    packages = {p["name"]: p for p in data["packages"]}
    ext = packages["flash-attn"]["binaries"][0]
    assert ext["sass"] == ["sm_80", "sm_90"] and ext["ptx"] == []
    assert ext["verdicts"] == [{"gpu_index": 0, "status": "no-kernel-image", "uses": None, "needs_cuda": None}]
    assert ext["cuda_runtime"] == "12"
    torch_bin = packages["torch"]["binaries"][0]
    assert torch_bin["verdicts"][0]["status"] == "native" and torch_bin["verdicts"][0]["uses"] == "sm_120"
    codes = [(f["code"], f["severity"]) for f in data["findings"]]
    assert ("binary-no-kernel-image", "fail") in codes and ("binary-ok", "ok") in codes


@pytest.fixture(scope="module")
def ptx_only_dir(tmp_path_factory: pytest.TempPathFactory, nvrtc: Nvrtc, nvfatbin: NvFatbin) -> Path:
    """A build tree with one extension that carries only compute_80 PTX, of this NVRTC's ISA."""
    root = tmp_path_factory.mktemp("ptx-only")
    wrap_shared_object(root, "jit_ext.so", [nvfatbin.build(nvrtc, ["compute_80"], [])])
    return root


def test_scan_runs_ptx_by_jit_when_the_driver_supports_its_isa(ptx_only_dir: Path, nvrtc: Nvrtc) -> None:
    from cudadoctor.binaries.ptx_isa import PTX_ISA_TO_CUDA

    version = ctypes_version(nvrtc)
    drivers = {(12, 6): "560.28.03", (12, 8): "570.26", (12, 9): "575.51.03", (13, 0): "580.65.06", (13, 1): "590.44.01", (13, 2): "595.45.04"}
    if version not in drivers:
        pytest.skip(f"no driver row written here for NVRTC {version}")
    assert max(PTX_ISA_TO_CUDA.values()) >= version
    new_enough = drivers[version]  # the first driver of NVRTC's CUDA (Table 3)
    run = scan(str(ptx_only_dir), "--gpu", "RTX 5090", "--driver", new_enough, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(run.stdout)
    assert data["packages"][0]["binaries"][0]["verdicts"][0]["status"] == "jit"
    assert [f["code"] for f in data["findings"]] == ["binary-jit-only"]


def test_scan_fails_ptx_whose_isa_is_newer_than_the_driver(ptx_only_dir: Path, nvrtc: Nvrtc) -> None:
    if ctypes_version(nvrtc) <= (12, 8):
        pytest.skip("this NVRTC writes PTX a CUDA 12.8 driver can JIT")
    run = scan(str(ptx_only_dir), "--gpu", "RTX 5090", "--driver", "570.26")  # CUDA 12.8: PTX ISA 8.7 at most
    assert run.returncode == 1, run.stdout + run.stderr
    assert "cannot JIT-compile its PTX ISA" in run.stdout.splitlines()[0]
    data = json.loads(scan(str(ptx_only_dir), "--gpu", "RTX 5090", "--driver", "570.26", "--json").stdout)
    assert [f["code"] for f in data["findings"]] == ["binary-ptx-too-new"]
    assert data["packages"][0]["binaries"][0]["verdicts"][0]["status"] == "ptx-too-new"


def test_scan_fails_ptx_for_a_newer_architecture_than_the_gpu(ptx_only_dir: Path) -> None:
    run = scan(str(ptx_only_dir), "--gpu", "T4", "--driver", "595.45.04")  # compute_80 PTX cannot build for sm_75
    assert run.returncode == 1
    assert "has no code for sm_75: it will fail on the T4" in run.stdout.splitlines()[0]


def test_scan_reads_a_wheel_inside_the_zip(tmp_path: Path, venv: Path, tools: NvidiaTools) -> None:
    extension = next((venv / "lib" / "python3.11" / "site-packages").glob("flash_attn_2_cuda*.so"))
    wheel = tmp_path / "flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(extension, extension.name)
        archive.writestr("flash_attn-2.8.3.dist-info/METADATA", "Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.8.3\n\n")
        archive.writestr("flash_attn-2.8.3.dist-info/RECORD", "")
    run = scan(str(wheel), "--gpu", "A100", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(run.stdout)
    assert data["sources"][0]["kind"] == "wheel"
    binary = data["packages"][0]["binaries"][0]
    assert [("sass", s) for s in binary["sass"]] == cuobjdump_listing(tools.cuobjdump, extension)
    assert data["packages"][0]["name"] == "flash-attn"


def test_scan_reads_the_environment_of_the_interpreter_given_with_python(tmp_path: Path, venv: Path) -> None:
    env = tmp_path / "real-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    site = Path(subprocess.run([str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())  # fmt: skip
    source_site = venv / "lib" / "python3.11" / "site-packages"
    for item in source_site.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copyfile)(item, site / item.name)
    run = scan("--python", str(env / "bin" / "python"), "--gpu", "RTX 5090", "--driver", "580.65.06")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "flash-attn 2.8.3 has no code for sm_120" in run.stdout


def test_scan_judges_against_the_gpus_nvml_reports(venv: Path, fake_nvml_env, tmp_path: Path) -> None:
    """No --gpu: the host's GPUs and driver through the real nvidia-ml-py (against the C stand-in)."""
    from test_torch import gpu_host

    env = gpu_host(fake_nvml_env, tmp_path, driver="580.65.06", cuda=13000, gpus=({"name": "NVIDIA GeForce RTX 5090", "cc": "12.0", "memory": 34190917632},))
    run = run_cli("scan", str(venv), "--json", environment=env)
    assert run.returncode == 1, run.stdout + run.stderr
    data = json.loads(run.stdout)
    assert data["gpus"] == [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}]
    assert data["driver"] == {"version": "580.65.06", "cuda": "13.0"}
    assert [f["title"] for f in data["findings"] if f["severity"] == "fail"] == [
        "flash-attn 2.8.3 has no code for sm_120: it will fail on the NVIDIA GeForce RTX 5090"
    ]


# ---- read front to back (a tar stream) and through an image -----------------------------------


def read_forward_file(path: Path, chunk: int = 4096):  # type: ignore[no-untyped-def]
    from cudadoctor.binaries.stream import read_forward

    with open(path, "rb") as stream:
        return read_forward(lambda n: stream.read(min(n, chunk)), path.stat().st_size)


@pytest.mark.parametrize("name", [c[0] for c in CASES] + ["two-fatbins"])
def test_reading_front_to_back_gives_what_seeking_gives(built: dict[str, Path], name: str) -> None:
    assert read_forward_file(built[name]) == read(built[name])


def test_reading_libcurand_front_to_back_gives_what_seeking_gives(tools: NvidiaTools) -> None:
    assert read_forward_file(Path(tools.curand), chunk=1 << 20) == read(Path(tools.curand))


def test_scan_reads_an_image_through_the_archive_api(venv: Path, docker_host: str) -> None:
    import docker_daemon

    site = venv / "lib" / "python3.11" / "site-packages"
    files = {f"site/{p.relative_to(site)}": p.read_bytes() for p in site.rglob("*") if p.is_file()}
    tag = "cudadoctor-test/scan-image:1"
    docker_daemon.build_image_from(docker_host, tag, "FROM scratch\nCOPY site /usr/local/lib/python3.11/site-packages\n", files)
    env = {"DOCKER_HOST": docker_host}
    run = run_cli("scan", "--image", tag, "--gpu", "RTX 5090", "--driver", "580.65.06", "--json", env=env, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    data = json.loads(run.stdout)
    assert data["sources"][0] == {"kind": "image", "location": tag, "python": None}
    packages = {p["name"]: p for p in data["packages"]}
    assert packages["flash-attn"]["binaries"][0]["sass"] == ["sm_80", "sm_90"]
    assert packages["flash-attn"]["binaries"][0]["path"] == "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"
    assert packages["torch"]["binaries"][0]["cuda_runtime"] == "12"
    assert [f["code"] for f in data["findings"] if f["severity"] == "fail"] == ["binary-no-kernel-image"]
    h100 = run_cli("scan", "--image", tag, "--gpu", "H100", env=env, timeout=300)
    assert h100.returncode == 0, h100.stdout + h100.stderr
    missing = run_cli("scan", "--image", "cudadoctor-test/absent:1", env=env, timeout=300)
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1 and "pull it first" in missing.stderr
