"""The request's one family value (doctor/family.py): the wheel families and NGC both implement the
interface, the callers ask it, and nothing above the doctor tests which kind it is."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from helpers import REPO_ROOT, core_check, host

from cudadoctor import recommend as recommend_module
from cudadoctor.app.loader import load_snapshot, load_table
from cudadoctor.doctor import recommend_for, resolve_request
from cudadoctor.doctor.family import NGC, WHEEL_IMAGE, Family
from cudadoctor.doctor.ngc_family import NgcImageFamily
from cudadoctor.doctor.request import Request
from cudadoctor.doctor.wheel_family import WheelImageFamily
from cudadoctor.host.view import HostView
from cudadoctor.model.record import fields

TABLE = load_table()
MEMBERS = sorted(name for name in vars(Family) if not name.startswith("_"))


def test_both_families_implement_every_member_of_the_interface_with_its_parameters():
    assert {"name", "kind", "recommend", "target", "candidates", "offers_wheels", "chooses_release"} <= set(MEMBERS)
    for cls in (WheelImageFamily, NgcImageFamily):
        for name in MEMBERS:
            assert hasattr(cls, name), f"{cls.__name__} lacks {name}"
            wanted = getattr(Family, name)
            if inspect.isfunction(wanted):
                have = list(inspect.signature(getattr(cls, name)).parameters)
                assert have == list(inspect.signature(wanted).parameters), f"{cls.__name__}.{name}"


def test_resolve_request_holds_one_family_value_of_the_kind_asked_for():
    wheel = resolve_request(TABLE).family
    ngc = resolve_request(TABLE, family="ngc-pytorch").family
    assert isinstance(wheel, WheelImageFamily) and isinstance(wheel, Family)
    assert isinstance(ngc, NgcImageFamily) and isinstance(ngc, Family)
    assert (wheel.kind, wheel.name, wheel.offers_wheels) == (WHEEL_IMAGE, TABLE.image_families[0].name, True)
    assert (ngc.kind, ngc.name, ngc.offers_wheels) == (NGC, "ngc-pytorch", False)
    # Where no month fits, the default wheel family's release target stands in.
    assert ngc.wheel_family == TABLE.image_families[0]
    assert "ngc" not in {f.name for f in fields(Request)}


def test_only_a_wheel_family_chooses_the_release_when_nothing_names_the_build():
    assert resolve_request(TABLE).family.chooses_release(resolve_request(TABLE))
    assert not resolve_request(TABLE, torch="2.9").family.chooses_release(resolve_request(TABLE, torch="2.9"))
    ngc = resolve_request(TABLE, family="ngc-pytorch")
    assert not ngc.family.chooses_release(ngc)


def test_the_ngc_family_recommends_a_month_and_names_it_as_the_target():
    facts = load_snapshot(host("h100-550"))
    request = resolve_request(TABLE, family="ngc-pytorch")
    rec = recommend_for(facts, TABLE, request)
    assert rec.found and rec.family == "ngc-pytorch" and TABLE.ngc_release(rec.variant or "") is not None
    assert rec == request.family.recommend(HostView.of(facts, TABLE), request)
    target = core_check(facts, family="ngc-pytorch").target
    assert target.image == rec.image and target.family == "ngc-pytorch"


def test_a_wheel_request_for_an_ngc_image_is_judged_by_the_ngc_family():
    facts = load_snapshot(host("h100-550"))
    result = core_check(facts, image="nvcr.io/nvidia/pytorch:24.05-py3")
    wheel = resolve_request(TABLE).family
    judging = wheel.for_image(TABLE, result.target)
    assert isinstance(judging, NgcImageFamily) and judging.name == "ngc-pytorch"
    assert result.recommendation.family == "ngc-pytorch"
    plain = core_check(facts, image="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")
    assert wheel.for_image(TABLE, plain.target) is wheel


def test_the_ngc_recommender_lives_beside_its_family_not_in_the_wheel_recommender():
    from cudadoctor.doctor import ngc_family

    source = (REPO_ROOT / "cudadoctor" / "recommend.py").read_text(encoding="utf-8")
    for name in ("recommend_ngc", "_smallest_ngc_fix", "_NGC_MODE_WORDS"):
        assert not hasattr(recommend_module, name) and name not in source
        assert hasattr(ngc_family, name)


def _reads_of_ngc(path: Path) -> list[str]:
    """Every ``.ngc`` attribute read and ``recommend_ngc`` use in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "ngc":
            found.append(f"{path}:{node.lineno}: .ngc")
        elif isinstance(node, ast.Name) and node.id in ("recommend_ngc", "ngc_torch"):
            found.append(f"{path}:{node.lineno}: {node.id}")
    return found


def test_no_caller_asks_the_request_for_ngc_or_calls_the_ngc_recommender():
    package = REPO_ROOT / "cudadoctor"
    callers = [p for layer in ("doctor", "fleet", "report", "cli") for p in sorted((package / layer).rglob("*.py"))]
    callers.append(package / "api.py")
    callers = [p for p in callers if p.name != "ngc_family.py"]  # the NGC family itself
    found = [hit for path in callers for hit in _reads_of_ngc(path)]
    assert not found, "\n".join(found)


def test_the_ngc_read_finder_fires_on_a_module_that_branches_on_request_ngc(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(request):\n    if request.ngc is not None:\n        return recommend_ngc(request)\n", encoding="utf-8")
    assert [hit.split(": ", 1)[1] for hit in _reads_of_ngc(bad)] == [".ngc", "recommend_ngc"]
