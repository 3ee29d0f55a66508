"""Property tests: whatever the string, the evaluator answers or raises only RequirementError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cudadoctor.model.imageref import ImageRefError, parse_image_ref
from cudadoctor.model.nvidia_require import (
    Device,
    HostValues,
    RequirementError,
    evaluate_requirements,
    image_requirements,
    validate_requirement,
)

ALPHABET = st.sampled_from(list("cudarivebn<>=!,. 0123456789\tx-") + ["cuda", "driver", "arch", "brand", ">=", "tesla"])
REQUIREMENT = st.lists(ALPHABET, max_size=40).map("".join) | st.text(max_size=200)
HOSTS = st.sampled_from(
    [
        HostValues("12.4", "550.54.14", (Device("8.0", "Tesla"),)),
        HostValues("13.0", "580.65.06", (Device("9.0", "Nvidia"), Device("8.9", "GeForce"))),
        HostValues(None, None, ()),
        HostValues("12.4", "550.54.14", ()),
    ]
)


@settings(max_examples=1500, deadline=None)
@given(REQUIREMENT, HOSTS)
def test_evaluation_never_raises(text, values):
    outcome = evaluate_requirements([text], values)[0]
    assert outcome.invalid or outcome.satisfied or outcome.message.startswith("unsatisfied condition: ")
    if outcome.invalid:
        assert outcome.message == "invalid expression" and outcome.invalid_condition is not None


@settings(max_examples=1500, deadline=None)
@given(REQUIREMENT)
def test_validation_raises_only_the_documented_error(text):
    try:
        validate_requirement(text)
    except RequirementError as exc:
        assert exc.token and exc.reason
        return
    # A string strict validation accepts is never invalid when evaluated, on any host.
    for values in (HostValues("12.4", "550.54.14", (Device("8.0", "Tesla"),)), HostValues("12.4", "550.54.14", ())):
        assert not evaluate_requirements([text], values)[0].invalid


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(["NVIDIA_REQUIRE_CUDA", "NVIDIA_REQUIRE_X", "CUDA_VERSION", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_REQUIRE_JETPACK"]), st.text(max_size=30)))
def test_image_env_collection_never_raises(env):
    got = image_requirements(env)
    assert all(name.startswith(("NVIDIA_REQUIRE_", "CUDA_VERSION")) for name, _ in got.requirements)


@settings(max_examples=1500, deadline=None)
@given(st.text(max_size=300) | st.from_regex(r"[a-z0-9./:@_-]{1,80}", fullmatch=True))
def test_image_refs_never_raise_anything_else(text):
    try:
        ref = parse_image_ref(text)
    except ImageRefError:
        return
    assert parse_image_ref(str(ref)) == ref
    assert not set(str(ref)) & set(" ;|&$`'\"\\<>()*?!\n\t")
