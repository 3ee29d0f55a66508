"""The requirement evaluator against libnvidia-container's behaviour, case by case.

Rows follow libnvidia-container's behaviour as read from its src/dsl.c and src/cli/configure.c
(tokenising, operators, version comparison, per-GPU evaluation). Default host: one GPU, cuda 12.4, driver
550.54.14, arch 8.0, brand Tesla (as libnvidia-container spells it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudadoctor.model.nvidia_require import (
    HINT_SUFFIX,
    Device,
    HostValues,
    RequirementError,
    compare_versions,
    evaluate_requirements,
    image_requirements,
    parse_condition,
    parse_go_bool,
    unsatisfied_message,
    validate_requirement,
    visible_devices_meaning,
)

TESLA = Device(arch="8.0", brand="Tesla", label="GPU 0")
GEFORCE = Device(arch="8.9", brand="GeForce", label="GPU 1")
HOST = HostValues(cuda="12.4", driver="550.54.14", devices=(TESLA,))
NO_GPU = HostValues(cuda="12.4", driver="550.54.14", devices=())
IMAGES = json.loads((Path(__file__).parent / "data" / "cuda_image_requirements.json").read_text())["images"]
CUDA_1281 = IMAGES["12.8.1"]["NVIDIA_REQUIRE_CUDA"]
CUDA_1241 = IMAGES["12.4.1"]["NVIDIA_REQUIRE_CUDA"]
ALT_39 = "cuda>=12.8 brand=tesla,driver>=550,driver<551"

S, U, I = "satisfied", "unsatisfied", "invalid"  # noqa: E741 (the three outcomes, one letter each for the table below)
H = HINT_SUFFIX


def host(**changes):
    base = dict(cuda="12.4", driver="550.54.14", devices=(TESLA,))
    base.update(changes)
    return HostValues(**base)


# (row, requirement, host, outcome, message after "requirement error: ")
CASES = [
    (1, "cuda>=12.4", HOST, S, ""),
    (2, "cuda>=12.8", HOST, U, "unsatisfied condition: cuda>=12.8" + H),
    (3, "cuda>=12.4.1", HOST, U, "unsatisfied condition: cuda>=12.4.1" + H),
    (4, "cuda>=12.4.0", HOST, S, ""),
    (5, "cuda>12.4", HOST, U, "unsatisfied condition: cuda>12.4"),
    (6, "cuda<13", HOST, S, ""),
    (7, "cuda=12.4", HOST, S, ""),
    (8, "cuda!=12.4", HOST, U, "unsatisfied condition: cuda!=12.4"),
    (9, "cuda!12.4", HOST, U, "unsatisfied condition: cuda!12.4"),
    (10, "cuda==12.4", HOST, I, "invalid expression"),
    (11, "cuda>>12", HOST, I, "invalid expression"),
    (12, "cuda=>12", HOST, I, "invalid expression"),
    (13, "cuda<>12", HOST, I, "invalid expression"),
    (14, "cuda>==12", HOST, I, "invalid expression"),
    (15, "cuda=", HOST, I, "invalid expression"),
    (16, "cuda>=", HOST, I, "invalid expression"),
    (17, "=12", HOST, I, "invalid expression"),
    (18, ">=12.0", HOST, I, "invalid expression"),
    (19, "cuda", HOST, I, "invalid expression"),
    (20, "cuda~12", HOST, I, "invalid expression"),
    (21, "cuda >= 12.0", HOST, I, "invalid expression"),
    (22, "CUDA>=12.0", HOST, S, ""),
    (23, "CUDA>=13.0", HOST, U, "unsatisfied condition: CUDA>=13.0"),
    (24, "foo>=1", HOST, I, "invalid expression"),
    (25, "cuda>=12.0,", HOST, S, ""),
    (26, ",cuda>=12.0", HOST, S, ""),
    (27, "cuda>=13.0  driver>=550", HOST, S, ""),
    (28, "", HOST, S, ""),
    (29, " cuda>=13.0", HOST, U, "unsatisfied condition: "),
    (30, "cuda>=12.a", HOST, I, "invalid expression"),
    (31, "cuda>=v12", HOST, I, "invalid expression"),
    (32, "cuda>=.5", HOST, I, "invalid expression"),
    (33, "cuda>=12..4", HOST, S, ""),
    (34, "cuda>=99999999999999999999", HOST, I, "invalid expression"),
    (35, "driver>=550", HOST, S, ""),
    (36, "driver<=550", HOST, U, "unsatisfied condition: driver<=550"),
    (37, "driver>=550.54.15", HOST, U, "unsatisfied condition: driver>=550.54.15"),
    (38, "driver>=535,driver<536", HOST, U, "unsatisfied condition: driver>=535,driver<536"),
    (39, ALT_39, HOST, S, ""),
    (40, ALT_39, host(devices=(Device("8.9", "GeForce"),)), U, "unsatisfied condition: cuda>=12.8" + H),
    (41, ALT_39, host(driver="560.35.03", cuda="12.6"), U, "unsatisfied condition: cuda>=12.8" + H),
    (42, ALT_39, host(cuda="12.8", driver="570.86.10"), S, ""),
    (43, ALT_39, NO_GPU, S, ""),
    (44, "brand=tesla", HOST, S, ""),
    (45, "brand=TESLA", HOST, S, ""),
    (46, "brand=quadro", HOST, U, "unsatisfied condition: brand=quadro"),
    (47, "brand!=geforce", HOST, S, ""),
    (48, "brand>=tesla", HOST, I, "invalid expression"),
    (49, "brand>=tesla", NO_GPU, S, ""),
    (50, "brand=nvidiartx", host(devices=(Device("8.6", "NvidiaRTX"),)), S, ""),
    (51, "brand=vapps", host(devices=(Device("8.6", "VApps"),)), S, ""),
    (52, "arch>=8.0", HOST, S, ""),
    (53, "arch=8", HOST, S, ""),
    (54, "arch>=8.6", HOST, U, "unsatisfied condition: arch>=8.6"),
    (55, "arch>=9.0", NO_GPU, S, ""),
    (56, "brand=tesla", host(devices=(TESLA, GEFORCE)), U, "unsatisfied condition: brand=tesla"),
    (57, "cuda>=12.8 cuda>=12.0", HOST, S, ""),
    (58, "cuda>=12.0 foo>=1", HOST, S, ""),
    (59, "foo>=1 cuda>=12.0", HOST, I, "invalid expression"),
    (60, "cuda>=13.0,foo>=1", HOST, U, "unsatisfied condition: cuda>=13.0,foo>=1" + H),
    (61, "cuda>=13.0 ,", HOST, U, "unsatisfied condition: cuda>=13.0" + H),
    (62, ",", HOST, S, ""),
    (63, "cuda>=12.4\tdriver>=1", HOST, I, "invalid expression"),
    (64, "cuda>=12.9", host(cuda="13.0", driver="580.65.06"), S, ""),
    (65, "cuda>=12.8", host(cuda=None), S, ""),
    (67, CUDA_1281, HOST, S, ""),
    (68, CUDA_1281, host(devices=(Device("8.0", "GeForce"),)), U, "unsatisfied condition: cuda>=12.8" + H),
    (69, CUDA_1281, host(cuda="12.2", driver="535.104.05", devices=(Device("8.9", "GeForce"),)), U, "unsatisfied condition: cuda>=12.8" + H),
    (70, CUDA_1241, host(cuda="12.2", driver="535.104.05", devices=(Device("8.9", "GeForce"),)), S, ""),
    # More cases from the same rules.
    (101, "arch>=abc", NO_GPU, S, ""),  # no device: arch is never compared, so never parsed
    (102, "arch>=abc", HOST, I, "invalid expression"),
    (103, "driver>=550", host(driver=None), S, ""),
    (104, "Driver>=550,ARCH=8.0,Brand=TESLA", HOST, S, ""),
    (105, "cuda>=13.0 ,cuda>=1", HOST, S, ""),  # ", cuda>=1" is one alternative with a condition
    (106, "cuda>=13.0 , cuda>=1", HOST, U, "unsatisfied condition: cuda>=13.0" + H),  # "," ends the loop
    (107, ", cuda>=99", HOST, S, ""),
    (108, "cuda>=12.4.0.0.0", HOST, S, ""),
    (109, "cuda=12.4.0.1", HOST, U, "unsatisfied condition: cuda=12.4.0.1"),
    (110, "driver=550", HOST, U, "unsatisfied condition: driver=550"),
    (111, "driver>550", HOST, S, ""),
    (112, "cuda>=012.004", HOST, S, ""),
    (113, "cuda>=12.", HOST, S, ""),
    (114, "cuda>=12.8,driver>=999", HOST, U, "unsatisfied condition: cuda>=12.8,driver>=999" + H),
    (115, "cuda<=12.4 cuda>=13", HOST, S, ""),
    (116, "cuda>=13 cuda>=14", HOST, U, "unsatisfied condition: cuda>=13" + H),
    (117, "brand=geforce,arch>=8.9", host(devices=(GEFORCE,)), S, ""),
    (118, "arch<9.0", host(devices=(TESLA, Device("9.0", "Nvidia"))), U, "unsatisfied condition: arch<9.0"),
    (119, "brand=tesla", host(devices=(Device("8.0", None),)), S, ""),  # brand unknown: satisfied
    (120, "cuda>=12.8 " + "x" * 5, HOST, I, "invalid expression"),  # "xxxxx" has no operator
    (121, "driver>=" + "1" * 130, HOST, I, "invalid expression"),  # overflow
    (122, "driver<=" + "1." * 70, HOST, I, "invalid expression"),  # 128-byte message buffer
    (123, "jetpack>=5", HOST, I, "invalid expression"),
    (124, "cuda>=12\n", HOST, I, "invalid expression"),
    (125, "cuda\t>=12", HOST, I, "invalid expression"),  # rule name "cuda\t" is unknown
    (126, "cuda>=12.4=1", HOST, I, "invalid expression"),  # value "12.4=1"
    (127, "cuda>=12.4 !", HOST, S, ""),  # never reached
    (128, "!", HOST, I, "invalid expression"),
    (129, "cuda>=11.8 brand=tesla,driver>=470,driver<471", host(cuda="11.4", driver="470.256.02"), S, ""),
    (130, "cuda>=12.8", host(cuda="12.10"), S, ""),  # numeric, not lexicographic
]


@pytest.mark.parametrize("row,requirement,values,expected,message", CASES, ids=[f"row{c[0]}" for c in CASES])
def test_evaluator_matches_libnvidia_container(row, requirement, values, expected, message):
    outcome = evaluate_requirements([requirement], values)[0]
    got = I if outcome.invalid else (S if outcome.satisfied else U)
    assert got == expected
    assert outcome.message == message


def test_two_variables_must_both_hold():  # row 66
    outcomes = evaluate_requirements(["cuda>=12.0", "arch>=9.0"], HOST)
    assert [o.satisfied for o in outcomes] == [True, False]
    assert outcomes[1].message == "unsatisfied condition: arch>=9.0"


def test_failure_names_the_gpu_it_failed_on():
    outcome = evaluate_requirements(["brand=tesla"], host(devices=(TESLA, GEFORCE)))[0]
    assert outcome.device == GEFORCE
    assert outcome.failed_condition == "brand=tesla"


@pytest.mark.parametrize(
    "version,cuda,driver,brand,ok",
    [
        ("11.8.0", "11.4", "470.256.02", "Tesla", True),  # forward-compat window
        ("11.8.0", "11.4", "470.256.02", "GeForce", True),  # geforce listed up to 12.4
        ("12.4.1", "12.2", "535.104.05", "Quadro", True),
        ("12.6.3", "12.2", "535.104.05", "GeForce", False),  # geforce alternatives gone from 12.6
        ("12.6.3", "12.2", "535.104.05", "GRID", True),
        ("12.9.1", "12.4", "550.54.14", "VApps", True),
        ("12.9.1", "12.2", "470.256.02", "Tesla", False),  # 470 window dropped in 12.9
        ("13.0.2", "12.8", "570.86.10", "Tesla", True),
        ("13.0.2", "12.8", "570.86.10", "GeForceRTX", False),
        ("13.0.2", "13.0", "580.65.06", "GeForce", True),
    ],
)
def test_official_cuda_images(version, cuda, driver, brand, ok):
    requirement = IMAGES[version]["NVIDIA_REQUIRE_CUDA"]
    outcome = evaluate_requirements([requirement], host(cuda=cuda, driver=driver, devices=(Device("8.0", brand),)))[0]
    assert outcome.satisfied is ok
    if not ok:
        assert outcome.message == f"unsatisfied condition: cuda>={version.rsplit('.', 1)[0]}" + H


def test_operators_and_bang_alone():
    assert parse_condition("cuda!12").operator == "!="
    assert [parse_condition(f"cuda{op}1").operator for op in ("=", "!=", "<", "<=", ">", ">=")] == ["=", "!=", "<", "<=", ">", ">="]


@pytest.mark.parametrize(
    "host_value,required,order",
    [("12.8", "12.8.0", 0), ("12.8", "12.8.1", -1), ("550", "550.54.14", -1), ("8", "8.0", 0), ("12.10", "12.9", 1), ("012", "12", 0)],
)
def test_compare_versions(host_value, required, order):
    assert compare_versions(host_value, required) == order


def test_unsatisfied_message_quotes_first_space_token():
    assert unsatisfied_message("cuda>=12.8 brand=tesla,driver>=550") == "unsatisfied condition: cuda>=12.8" + H
    assert unsatisfied_message("driver>=999 cuda>=12.8") == "unsatisfied condition: driver>=999"


@pytest.mark.parametrize(
    "text,token",
    [
        ("cuda>>12", "cuda>>12"),
        ("cuda>=12.8 foo>=1", "foo>=1"),  # strict: a later alternative is checked too
        ("brand>=tesla", "brand>=tesla"),
        ("cuda >= 12.0", "cuda"),
        ("cuda>=12.x", "cuda>=12.x"),
    ],
)
def test_validate_names_bad_token(text, token):
    with pytest.raises(RequirementError) as info:
        validate_requirement(text)
    assert info.value.token == token


def test_validate_accepts_official_strings():
    for env in IMAGES.values():
        validate_requirement(env["NVIDIA_REQUIRE_CUDA"])


@pytest.mark.parametrize(
    "text,value",
    [("1", True), ("t", True), ("T", True), ("TRUE", True), ("true", True), ("True", True),
     ("0", False), ("false", False), ("yes", False), ("on", False), ("", False), (" true", False), (None, False), ("tRUE", False)],
)
def test_disable_require_reads_like_go_parsebool(text, value):
    assert parse_go_bool(text) is value


def test_image_requirements_collection():
    env = {
        "NVIDIA_REQUIRE_CUDA": "cuda>=12.8",
        "NVIDIA_REQUIRE_ARCH": "arch>=8.0",
        "NVIDIA_REQUIRE_JETPACK": "csv-mounts=all",
        "NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS": "",
        "NVIDIA_REQUIRE_EMPTY": "",
        "CUDA_VERSION": "12.8.1",
    }
    got = image_requirements(env)
    assert got.requirements == (("NVIDIA_REQUIRE_CUDA", "cuda>=12.8"), ("NVIDIA_REQUIRE_ARCH", "arch>=8.0"), ("NVIDIA_REQUIRE_EMPTY", ""))
    assert got.ignored == ("NVIDIA_REQUIRE_JETPACK", "NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS")
    assert not got.legacy


@pytest.mark.parametrize(
    "cuda_version,requirement", [("12.8.1", "cuda>=12.8"), ("11.6.2", "cuda>=11.6"), ("11", "cuda>=11.0"), ("v12.4", "cuda>=12.4")]
)
def test_legacy_cuda_version(cuda_version, requirement):
    got = image_requirements({"CUDA_VERSION": cuda_version})
    assert got.legacy and got.strings == (requirement,)
    # Set but empty: still legacy, and the empty value is passed on too (it is always satisfied).
    empty = image_requirements({"CUDA_VERSION": cuda_version, "NVIDIA_REQUIRE_CUDA": ""})
    assert empty.legacy and empty.strings == ("", requirement)


def test_legacy_unparsable_and_disabled():
    assert image_requirements({"CUDA_VERSION": "twelve"}).legacy_error == "twelve"
    disabled = image_requirements({"NVIDIA_DISABLE_REQUIRE": "1", "NVIDIA_REQUIRE_CUDA": "cuda>=99"})
    assert disabled.disabled and disabled.strings == ()
    # The spelling with an S is not read by the toolkit.
    assert image_requirements({"NVIDIA_DISABLE_REQUIRES": "true", "NVIDIA_REQUIRE_CUDA": "cuda>=99"}).strings == ("cuda>=99",)


@pytest.mark.parametrize(
    "env,legacy,gpu_container,devices",
    [
        ({}, False, False, "none"),
        ({}, True, True, "all"),  # a legacy image with it unset gets all
        ({"NVIDIA_VISIBLE_DEVICES": ""}, True, False, "none"),
        ({"NVIDIA_VISIBLE_DEVICES": "void"}, False, False, "none"),
        ({"NVIDIA_VISIBLE_DEVICES": "none"}, False, True, "none"),
        ({"NVIDIA_VISIBLE_DEVICES": "all"}, False, True, "all"),
        ({"NVIDIA_VISIBLE_DEVICES": "0,1"}, False, True, "some"),
        ({"NVIDIA_VISIBLE_DEVICES": "void,all"}, False, True, "all"),  # all wins
        ({"NVIDIA_VISIBLE_DEVICES": "none,void"}, False, True, "none"),  # then none
    ],
)
def test_visible_devices(env, legacy, gpu_container, devices):
    meaning = visible_devices_meaning(env, legacy)
    assert (meaning.gpu_container, meaning.devices) == (gpu_container, devices)
