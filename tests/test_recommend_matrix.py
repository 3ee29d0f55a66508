"""Recommendations across the whole matrix follow the policy in recommend.py's docstring:
keep the variants whose builds carry code for every GPU (and whose toolkit supports it); prefer
those the driver supports fully (Table 3), then those that run under minor-version compatibility;
within a tier the newest CUDA wins; else none, with the smallest driver upgrade that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudadoctor.model.facts import HostFacts, SystemFacts
from cudadoctor.recommend import recommend
from cudadoctor.app.loader import default_table_path, load_table
from cudadoctor.model.versions import CudaVersion, DriverVersion
from cudadoctor.host.view import HostView
from cudadoctor.host.whatif import apply_what_if

TABLE = load_table()
DRIVERS = ["450.80.02", "515.43.04", "520.61.05", "525.60.13", "530.30.02", "535.104.05", "550.54.14",
           "560.28.03", "570.26", "575.51.03", "580.65.06", "590.44.01", "595.45.04"]
GPUS = ["K80", "GTX 1080 Ti", "V100", "T4", "A100", "RTX 4090", "H100", "B200", "RTX 5090"]


def view(driver, *gpus, platform=None):
    return HostView.of(host(driver, *gpus, platform=platform), TABLE)


# The OS facts a probe records (sys.platform, uname machine) for each platform the table names.
OS_FACTS = {"linux-x86_64": ("linux", "x86_64"), "linux-aarch64": ("linux", "aarch64"), "windows": ("win32", "AMD64")}


def host(driver, *gpus, platform=None):
    facts = HostFacts()
    if platform is not None:
        os_name, machine = OS_FACTS[platform]
        facts = HostFacts(system=SystemFacts(os=os_name, machine=machine))
    return apply_what_if(facts, TABLE, driver, list(gpus))


# The oracle below reads the raw JSON with its own arithmetic, so that a bug in the table module's
# queries (coverage, toolkit ranges, driver minimums) cannot agree with itself.
RAW = json.loads(Path(default_table_path()).read_text())


def nums(text):
    return tuple(int(part) for part in text.split("."))


def padded(a, b):
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def at_least(a, b):
    a, b = padded(a, b)
    return a >= b


def raw_cc(gpu):
    for entry in RAW["gpus"]:
        if gpu == entry["name"] or gpu in entry.get("aliases", []):
            return nums(entry["cc"])
    raise KeyError(gpu)


def raw_tier(driver, cuda):
    rows = [r for r in RAW["cuda_releases"] if r.get("kind") != "RC"]
    full_min = min((nums(r["min_driver_linux"]) for r in rows if nums(r["version"])[:2] == cuda[:2]), key=lambda v: padded(v, (0,) * 3)[0])
    newest = max((nums(r["version"])[:2] for r in rows if at_least(driver, nums(r["min_driver_linux"]))), default=None)
    if (newest is not None and newest >= cuda[:2]) or at_least(driver, full_min):
        return "full"
    floor = next((nums(r["min_driver_linux"]) for r in RAW["minor_version_compatibility"] if r["cuda_major"] == cuda[0]), None)
    if floor is not None and at_least(driver, floor) and (newest is None or newest[0] == cuda[0]):
        return "minor-compat"
    return None


def raw_runs(variant, cc, tier):
    """SASS for X.Y runs on X.Z (Z >= Y); PTX is JIT-compiled for newer GPUs, but not under
    minor-version compatibility; and the toolkit must be able to target the GPU at all."""
    toolkit = next(t for t in RAW["toolkit_architectures"] if nums(t["cuda"]) == nums(variant["cuda"])[:2])
    if not (nums(toolkit["min_cc"]) <= cc <= nums(toolkit["max_cc"])):
        return False
    if any(nums(b)[0] == cc[0] and nums(b)[1] <= cc[1] for b in variant["arch_list"]):
        return True
    # PTX that is not on record ("ptx": null) never counts
    return tier == "full" and any(nums(p) <= cc for p in variant.get("ptx") or [])


def raw_build(variant, platform):
    """The variant as published for a platform (None: no wheels there on record), with that platform's
    own arch list where the table records one; a variant nothing settles is never a candidate."""
    listed = variant.get("platforms", [])
    if platform is not None and listed and platform not in listed and not ("linux" in listed and platform.startswith("linux")):
        return None
    if platform == "linux-aarch64" and platform not in variant.get("platform_builds", {}):
        return None  # the main list is read off x86_64 wheels: it says nothing about the Arm ones
    build = dict(variant, **variant.get("platform_builds", {}).get(platform, {}))
    return None if build["evidence"] == "unverified" else build


def expected(release, driver, gpus, platform=None):
    """The policy, stated directly over the raw table: (variant, tier) or None."""
    raw = next(r for r in RAW["pytorch_releases"] if r["version"] == release.version)
    best = None
    for listed in raw["variants"]:
        variant = raw_build(listed, platform)
        if variant is None:
            continue
        cuda = nums(variant["cuda"])
        tier = raw_tier(nums(driver), cuda)
        if tier is None or not all(raw_runs(variant, raw_cc(g), tier) for g in gpus):
            continue
        key = ((0 if tier == "full" else 1), tuple(-n for n in cuda))
        if best is None or key < best[0]:
            best = (key, variant["name"], tier)
    return best[1:] if best else None


CASES = [(r.version, d, g) for r in TABLE.pytorch_releases for d in DRIVERS for g in GPUS]


@pytest.mark.parametrize("version,driver,gpu", CASES, ids=[f"{v}-{d}-{g}" for v, d, g in CASES])
def test_matrix_follows_policy(version, driver, gpu):
    release = TABLE.release(version)
    rec = recommend(view(driver, gpu), release, TABLE.family("pytorch-cuda"), suggest_other_releases=False)
    want = expected(release, driver, [gpu])
    if want is None:
        assert not rec.found, rec
        assert {r.variant for r in rec.rejected} == {v.name for v in release.variants}
    else:
        assert (rec.variant, rec.support) == want
        assert rec.image == f"pytorch-cuda:v{version}-{want[0]}"


# The newest releases on each platform: Linux-only and aarch64-specific builds, unverified variants.
NEW = [r.version for r in TABLE.pytorch_releases if r.key >= (2, 12)]
PLATFORM_CASES = [(v, d, g, p) for v in NEW for d in ("535.104.05", "580.65.06", "595.45.04") for g in GPUS
                  for p in OS_FACTS]


@pytest.mark.parametrize("version,driver,gpu,platform", PLATFORM_CASES, ids=["-".join(c) for c in PLATFORM_CASES])
def test_platform_matrix_follows_policy(version, driver, gpu, platform):
    release = TABLE.release(version)
    rec = recommend(view(driver, gpu, platform=platform), release, TABLE.family("pytorch-cuda"), suggest_other_releases=False)
    assert ((rec.variant, rec.support) if rec.found else None) == expected(release, driver, [gpu], platform)
    assert rec.platform == platform
    assert {r.variant for r in rec.rejected} | ({rec.variant} if rec.found else set()) == {v.name for v in release.variants}


def test_v100_on_2_14_gets_the_cu126_build():
    # Done-when of issue 9: the legacy cu126 build is the 2.14 build that carries sm_70 (RELEASE.md).
    rec = recommend(view("580.65.06", "V100"), TABLE.release("2.14"), TABLE.family("pytorch-cuda"))
    assert (rec.variant, rec.image, rec.evidence) == ("cu126", "pytorch-cuda:v2.14-cu126", "release-matrix")


def test_aarch64_has_no_turing_code_from_2_12():
    # The PyPI aarch64 wheels carry sm_80..sm_120 only: a T4 (sm_75) on an Arm host has no 13.x build.
    for version in ("2.12", "2.13", "2.14", "2.15"):
        assert recommend(view("595.45.04", "T4", platform="linux-x86_64"), TABLE.release(version)).found
        arm = recommend(view("595.45.04", "T4", platform="linux-aarch64"), TABLE.release(version))
        assert not arm.found, version


def test_linux_only_patch_variant_is_offered_on_linux_only():
    # 2.12.1 cu129: Linux only, its x86_64 arch list settled by release/2.12's build case (PR 188443).
    rec = recommend(view("575.51.03", "RTX 4090", platform="windows"), TABLE.release("2.12"), images=False)
    reasons = {r.variant: r.reason for r in rec.rejected}
    assert "not Windows" in reasons["cu129"]
    rec = recommend(view("575.51.03", "RTX 4090", platform="linux-x86_64"), TABLE.release("2.12"), images=False)
    assert (rec.variant, rec.support) == ("cu129", "full") and rec.unverified == ()
    assert rec.evidence == "build-script"
    rec = recommend(view("575.51.03", "H100", platform="linux-aarch64"), TABLE.release("2.12"), images=False)
    assert rec.variant != "cu129"  # what its Arm wheel carries is not on record


def test_patch_only_variant_is_pinned_to_its_first_patch():
    # A variant that appeared in 2.12.1 gets `torch==2.12.1`, not `torch==2.12.*` (which could pick 2.12.0).
    import copy

    from cudadoctor.compat.validate import parse_table
    from cudadoctor.doctor.answer import pip_command

    raw = copy.deepcopy(RAW)
    release = next(r for r in raw["pytorch_releases"] if r["version"] == "2.12")
    cu129 = next(v for v in release["variants"] if v["name"] == "cu129")
    cu129.update(arch_list=["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"], evidence="third-party")
    table = parse_table(raw, "patched")
    linux = HostView.of(apply_what_if(HostFacts(system=SystemFacts(os="linux", machine="x86_64")), table, "575.51.03", ["RTX 4090"]), table)
    rec = recommend(linux, table.release("2.12"), images=False)  # wheels: 2.12 cu129 has no official image
    assert (rec.variant, rec.first_patch, rec.install_version) == ("cu129", "2.12.1", "2.12.1")
    assert pip_command(rec).startswith("pip install 'torch==2.12.1' --index-url ")
    windows = HostView.of(apply_what_if(HostFacts(system=SystemFacts(os="win32", machine="AMD64")), table, "575.51.03", ["RTX 4090"]), table)
    assert recommend(windows, table.release("2.12"), images=False).variant != "cu129"


# Mixed hosts: every GPU must be covered (the oldest and the newest architecture both count).
PAIRS = [("V100", "H100"), ("GTX 1080 Ti", "RTX 5090"), ("K80", "A100"), ("T4", "RTX 5090")]
MIXED = [(r.version, d, pair) for r in TABLE.pytorch_releases for d in DRIVERS for pair in PAIRS]


@pytest.mark.parametrize("version,driver,pair", MIXED, ids=[f"{v}-{d}-{'+'.join(p)}" for v, d, p in MIXED])
def test_mixed_hosts_follow_policy(version, driver, pair):
    release = TABLE.release(version)
    rec = recommend(view(driver, *pair), release, TABLE.family("pytorch-cuda"), suggest_other_releases=False)
    want = expected(release, driver, list(pair))
    assert ((rec.variant, rec.support) if rec.found else None) == want


# Hand-checked cases (driver numbers: NVIDIA Table 3 / Table 2; arch lists: docs/table.md).
@pytest.mark.parametrize(
    "version,driver,gpus,variant,support",
    [
        ("2.9", "580.65.06", ["A100"], "cu130", "full"),
        ("2.9", "570.26", ["RTX 5090"], "cu128", "full"),  # cu126 has no sm_120; cu129 needs 575 for full
        ("2.9", "560.28.03", ["GTX 1080 Ti"], "cu126", "full"),  # only cu126 still carries Pascal code
        ("2.9", "535.104.05", ["GTX 1080 Ti"], "cu126", "minor-compat"),
        ("2.9", "580.65.06", ["V100"], "cu129", "full"),  # cu130 dropped Volta
        ("2.9", "580.65.06", ["V100", "RTX 5090"], "cu129", "full"),  # every GPU must be covered
        ("2.5", "520.61.05", ["K80"], "cu118", "full"),  # Kepler: last in the official cu118 of 2.5
        ("1.13", "470.82.01", ["K80"], "cu117", "minor-compat"),  # the K80's last driver branch runs 11.x by minor compat
        ("1.3", "418.39", ["T4"], "cu101", "full"),
        ("2.13", "570.86.10", ["RTX 5090"], "cu129", "minor-compat"),  # 2.13 cu129 (PR 188443) carries sm_120; 12.9 wants 575 for full
        ("2.5", "530.30.02", ["RTX 4090"], "cu121", "full"),  # CUDA 12.1 on 530, no R535 needed
        ("2.5", "525.60.13", ["RTX 4090"], "cu118", "full"),  # a fully supported cu118 beats cu124 under minor compat
        ("2.8", "525.60.13", ["RTX 4090"], "cu129", "minor-compat"),  # all 12.x: the newest CUDA wins
        ("2.0", "515.43.04", ["T4"], "cu117", "full"),  # full support beats a newer minor-compat CUDA
        ("2.11", "580.65.06", ["V100"], "cu126", "full"),  # cu128/cu129 lost sm_70 in 2.11
        ("2.12", "580.65.06", ["V100"], "cu126", "full"),
        ("2.13", "580.65.06", ["A100"], "cu130", "full"),
        ("2.13", "595.45.04", ["H100"], "cu132", "full"),
        ("2.14", "580.65.06", ["V100"], "cu126", "full"),
        ("2.14", "575.51.03", ["RTX 4090"], "cu126", "full"),  # fully supported cu126 (sm_86 code) beats 13.x under minor compat
        ("2.15", "595.45.04", ["RTX 5090"], "cu132", "full"),
        ("2.15", "580.65.06", ["H100"], "cu132", "minor-compat"),
    ],
    ids=lambda v: str(v),
)
def test_hand_checked(version, driver, gpus, variant, support):
    rec = recommend(view(driver, *gpus), TABLE.release(version), TABLE.family("pytorch-cuda"))
    assert (rec.variant, rec.support) == (variant, support)


def test_nothing_fits_names_the_smallest_upgrade():
    rec = recommend(view("520.61.05", "A100"), TABLE.release("2.9"), TABLE.family("pytorch-cuda"))
    assert not rec.found
    assert rec.fixes[0].startswith("upgrade the NVIDIA driver to >= 525.60.13 to run cu126")
    assert any("PyTorch 2.7" in fix for fix in rec.fixes)  # cu118 of 2.7 fits a 520 driver


def test_kepler_has_no_build_after_2_7():
    rec = recommend(view("580.65.06", "K80"), TABLE.release("2.8"), TABLE.family("pytorch-cuda"))
    assert not rec.found
    assert all("no code for" in r.reason or "cannot build for" in r.reason for r in rec.rejected)


def test_official_family_only_offers_published_images():
    # 2.13 has cu129 wheels (PR 188443) but no 2.13.0-cuda12.9 image (reported nonexistent where it was pulled).
    official = TABLE.family("pytorch/pytorch")
    rec = recommend(view("575.51.03", "RTX 4090"), TABLE.release("2.13"), official)
    assert rec.variant == "cu126"
    assert rec.image == "pytorch/pytorch:2.13.0-cuda12.6-cudnn9-runtime"
    assert recommend(view("575.51.03", "RTX 4090"), TABLE.release("2.13"), images=False).variant == "cu129"  # the wheels
    assert recommend(view("575.51.03", "RTX 4090"), TABLE.release("2.13")).variant == "cu126"  # the default family: PyTorch's images
    # 2.9.1's cu129 image is published (the docker release matrix follows the branch's CUDA versions)
    assert recommend(view("575.51.03", "RTX 4090"), TABLE.release("2.9"), official).image == "pytorch/pytorch:2.9.1-cuda12.9-cudnn9-runtime"


def test_2_14_images_cover_its_three_cuda_versions():
    # Source: docker-release's matrix (one runtime and one devel image per CUDA version of the release's build
    # matrix) with RELEASE.md's 2.14 rows (CUDA 12.6, 13.0, 13.2); the 2.14.1 tags are pulled by digest publicly.
    for name in ("pytorch/pytorch", "pytorch/pytorch:devel"):
        assert TABLE.family(name).variants_for(TABLE.release("2.14")) == ("cu126", "cu130", "cu132")
    rec = recommend(view("570.86.15", "V100"), TABLE.release("2.14"), TABLE.family("pytorch/pytorch"))
    assert rec.image == "pytorch/pytorch:2.14.1-cuda12.6-cudnn9-runtime"


def test_driver_cuda_cutoffs_match_table3():
    assert TABLE.cuda_supported_by_driver(DriverVersion.parse("570.26")) == CudaVersion.parse("12.8")
    assert TABLE.cuda_supported_by_driver(DriverVersion.parse("570.25")) == CudaVersion.parse("12.6")
