"""NGC PyTorch containers: recommend --family ngc-pytorch and check --image on an NGC tag, judged
from the table on snapshots of real hosts and on what-if hosts (--driver/--gpu). The rules come
from NVIDIA: a driver that fully supports the container's CUDA runs it (Table 3); an older branch
in the forward-compatibility matrix runs it through the container's cuda-compat, on data-center
GPUs only; a GeForce card cannot use forward compatibility (CUDA error 804)."""

from __future__ import annotations

import pytest

from cudadoctor.app.loader import load_snapshot, load_table
from helpers import core_check, host, invoke

TABLE = load_table()
REPO = TABLE.ngc_families[0].repository  # the NGC repository, as the table names it


def recommend(*args: str):
    run = invoke("recommend", "--image", "--family", "ngc-pytorch", "--format", "json", *args)
    return run.exit_code, run.json()


# R535 is a live branch until June 2026 (NVIDIA's data-center driver pages): the tests of
# forward compatibility on it run on a date before that.
BEFORE_R535_EOL = "2026-05-01"


def test_h100_on_r535_gets_the_newest_settled_release_through_forward_compatibility(monkeypatch):
    monkeypatch.setenv("CUDADOCTOR_TODAY", BEFORE_R535_EOL)
    code, doc = recommend("--snapshot", host("h100-535"))
    rec = doc["recommendation"]
    assert code == 0 and rec["variant"] == "25.12" and rec["support"] == "forward-compat"
    assert rec["image"] == f"{REPO}:25.12-py3" and rec["cuda"] == "13.1" and rec["torch"] == "2.10"
    assert "R535" in rec["why"] and "forward compatibility" in rec["why"]
    # A newer month known only from unverified quotes is not preferred over a settled one.
    assert rec["rejected"][0]["variant"] == "26.07" and "unverified" in rec["rejected"][0]["reason"]


def test_after_r535_s_end_of_life_no_month_is_offered_through_forward_compatibility_on_it():
    code, doc = recommend("--snapshot", host("h100-535"))  # the suite's date: 2026-12-01
    rec = doc["recommendation"]
    assert code == 0 and (rec["variant"], rec["support"]) == ("25.05", "minor-compat")
    assert "R535 is no live branch" in rec["why"] and "end of life June 2026" in rec["why"]


def test_the_repository_name_works_as_the_family_too(monkeypatch):
    monkeypatch.setenv("CUDADOCTOR_TODAY", BEFORE_R535_EOL)
    run = invoke("recommend", "--image", "--family", REPO, "--format", "tag", "--snapshot", host("h100-535"))
    assert run.exit_code == 0 and run.stdout.strip() == f"{REPO}:25.12-py3"


def test_geforce_on_r570_gets_a_cuda_12_8_month_and_no_forward_compatibility():
    # 25.01 to 25.03 (CUDA 12.8, settled by NVIDIA's Triton matrix) run on R570 natively; the 13.x months
    # would need forward compatibility, which a GeForce card cannot use.
    code, doc = recommend("--snapshot", host("rtx5090-570"))
    rec = doc["recommendation"]
    assert code == 0 and (rec["variant"], rec["support"], rec["evidence"]) == ("25.03", "full", "secondary")
    assert "does not apply to these GPUs" in rec["why"] and "natively" in rec["why"]
    reasons = {r["variant"]: r["reason"] for r in rec["rejected"]}
    assert "consumer GPU" in reasons["25.12"] and "forward compatibility" in reasons["25.12"]
    assert "sm_120" in reasons["23.10"]  # CUDA 12.2 cannot build for Blackwell
    assert any(n.startswith("secondary evidence") for n in rec["notes"])
    months = [r["variant"] for r in rec["rejected"]]
    assert months == sorted(months, key=lambda m: tuple(map(int, m.split("."))), reverse=True)


def test_geforce_that_runs_an_older_month_is_told_forward_compatibility_does_not_apply():
    code, doc = recommend("--snapshot", host("rtx4090-550"))
    rec = doc["recommendation"]
    assert code == 0 and rec["variant"] == "24.05" and rec["support"] == "full"
    assert "does not apply to these GPUs" in rec["why"] and "secondary" in rec["why"]


@pytest.mark.parametrize(
    "driver, gpu, release, support",
    [
        ("590.44.01", "H100", "25.12", "full"),  # Table 3's minimum for CUDA 13.1.0
        # The newest month that runs natively comes before a newer one through forward compatibility
        ("580.95.05", "H100", "25.10", "full"),  # CUDA 13.0.2; 25.12 would need R580's cuda-compat 13.1
        ("570.124.06", "A100", "25.03", "full"),  # CUDA 12.8.1
        ("550.54.15", "H100", "24.05", "full"),  # CUDA 12.4.1: a 2024 month, not 23.10
        ("570.86.10", "RTX 5090", "25.03", "full"),  # CUDA 12.8: Blackwell builds
        ("580.95.05", "RTX 4090", "25.10", "full"),
        ("570.124.06", "RTX 4090", "25.03", "full"),
        # None natively: the newest under minor-version compatibility (GeForce: no forward compatibility)
        ("545.23.08", "RTX 4090", "25.05", "minor-compat"),
        # None natively: under minor-version compatibility (R535 is past its end of life on the suite's
        # date, so no month is offered through forward compatibility on it)
        ("535.104.05", "A100", "25.05", "minor-compat"),
    ],
)
def test_what_if_hosts(driver, gpu, release, support):
    code, doc = recommend("--driver", driver, "--gpu", gpu)
    rec = doc["recommendation"]
    assert code == 0 and (rec["variant"], rec["support"]) == (release, support)


def test_check_a_tag_the_table_settles_without_the_image():
    facts = load_snapshot(host("h100-535"))
    result = core_check(facts, image=f"{REPO}:25.12-py3", only=["driver-for-target", "forward-compat", "ngc"])
    assert result.target.family == "ngc-pytorch" and result.target.cuda == "13.1"
    assert result.target.image_facts.facts_from == "table"
    codes = [f.code for f in result.findings]
    assert codes == ["ngc-forward-compat"]  # not driver-too-old: the container's cuda-compat runs it
    assert result.exit_status() == 0


def test_check_on_geforce_says_forward_compatibility_does_not_apply():
    facts = load_snapshot(host("rtx5090-570"))
    result = core_check(facts, image=f"{REPO}:25.12-py3", only=["driver-for-target", "forward-compat", "ngc"])
    codes = [f.code for f in result.findings]
    assert codes == ["driver-too-old", "ngc-forward-compat-not-applicable"]
    assert "consumer GPU" in result.findings[1].detail and "804" in result.findings[1].detail
    assert result.exit_status() == 1


def test_check_natively_and_without_help():
    ok = core_check(load_snapshot(host("h100-535")), image=f"{REPO}:23.10-py3", only=["driver-for-target", "ngc"])
    assert [f.code for f in ok.findings] == ["driver-ok", "ngc-release-ok"]
    assert "unverified" in ok.findings[1].detail
    no = core_check(load_snapshot(host("h100-550")), image=f"{REPO}:25.12-py3", only=["driver-for-target", "ngc"])
    assert [f.code for f in no.findings] == ["driver-too-old", "ngc-forward-compat-unavailable"]


def test_a_month_the_table_does_not_record_is_said_so_not_guessed():
    result = core_check(load_snapshot(host("h100-535")), image=f"{REPO}:23.02-py3", only=["driver-for-target", "ngc"])
    assert result.target.cuda == "" and [f.code for f in result.findings] == ["ngc-release-unrecorded"]


def test_the_table_arch_list_judges_the_gpus_when_the_image_is_absent():
    v100 = core_check(load_snapshot(host("h100-535")), image=f"{REPO}:23.10-py3", only=["gpu-arch"])
    assert {f.code for f in v100.findings} == {"gpu-arch-ok"}  # 9.0 is in 23.10's list
    blackwell = invoke("check", "--json", "--driver", "580.95.05", "--gpu", "12.0", "--image", f"{REPO}:23.10-py3")
    found = [f for f in blackwell.json()["findings"] if f["code"].startswith("gpu-arch")]
    assert [f["code"] for f in found] == ["gpu-arch-not-built"] and "9.0+PTX" in found[0]["title"]


def test_check_family_without_image_targets_the_recommended_month():
    result = core_check(load_snapshot(host("h100-535")), family="ngc-pytorch", only=["ngc"], today=BEFORE_R535_EOL)
    assert result.target.image == f"{REPO}:25.12-py3" and result.recommendation.variant == "25.12"
    assert [f.code for f in result.findings] == ["ngc-forward-compat"]


def test_a_present_image_is_judged_by_its_own_environment():
    from cudadoctor.model.facts import ImageFacts

    # A retagged or rebuilt image whose environment disagrees with the table's month: what runs is the image.
    image = ImageFacts(f"{REPO}:25.12-py3", state="ok",
                       env=(("CUDA_VERSION", "12.8.1.012"), ("PYTORCH_VERSION", "2.7.0a0+79aa17489c"),
                            ("TORCH_CUDA_ARCH_LIST", "7.5 8.0 8.6 9.0 10.0 12.0+PTX")))
    result = core_check(load_snapshot(host("h100-550")), image=f"{REPO}:25.12-py3", image_facts=image,
                        only=["driver-for-target", "ngc", "gpu-arch"])
    assert result.target.cuda == "12.8" and result.target.image_facts.facts_from == "image-env"
    codes = [f.code for f in result.findings]
    assert "driver-minor-compat" in codes and "gpu-arch-ok" in codes  # R550 runs 12.8 under minor-version compatibility
    assert not any(c.startswith("ngc-release-") for c in codes) or "ngc-release-ok" not in codes


def test_the_ngc_family_is_not_a_wheel_family():
    run = invoke("recommend", "--wheel", "--family", "ngc-pytorch", "--snapshot", host("h100-535"))
    assert run.exit_code == 2 and "family of images" in run.stderr


def test_an_ngc_month_without_arch_list_leaves_the_gpus_unjudged_until_the_image_is_here():
    absent = core_check(load_snapshot(host("h100-535")), image=f"{REPO}:25.10-py3", only=["gpu-arch"])
    assert absent.findings == ()  # the table does not record 25.10's arch list; the image's env does (tests/test_present_image_contents.py)


def test_the_months_are_listed_sorted_under_a_heading_naming_the_ngc_family():
    for command in (["recommend", "--image", "--family", "ngc-pytorch"], ["check", "-v", "--family", "ngc-pytorch"]):
        run = invoke(*command, "--driver", "550.54.15", "--gpu", "H100")
        lines = run.stdout.splitlines()
        heading = next(i for i, line in enumerate(lines) if "of the NGC family ngc-pytorch" in line)
        assert "variants of PyTorch" not in run.stdout.lower()
        months = []
        for line in lines[heading + 1:]:
            word = line.strip().split(":", 1)[0]
            if not (len(word) == 5 and word[2] == "." and word.replace(".", "").isdigit()):
                break
            months.append(tuple(map(int, word.split("."))))
        assert len(months) > 5 and months == sorted(months, reverse=True)
