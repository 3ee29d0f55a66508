"""Image references against Docker's reference grammar."""

from __future__ import annotations

import pytest

from cudadoctor.model.imageref import ImageRefError, parse_image_ref

DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    "text,domain,path,tag,digest",
    [
        ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", None, "pytorch/pytorch", "2.5.1-cuda12.4-cudnn9-runtime", None),
        ("nvidia/cuda:12.8.1-base-ubuntu22.04", None, "nvidia/cuda", "12.8.1-base-ubuntu22.04", None),
        ("pytorch-cuda:v2.9-cu128", None, "pytorch-cuda", "v2.9-cu128", None),
        ("ubuntu", None, "ubuntu", None, None),
        ("localhost:5000/team/img:latest", "localhost:5000", "team/img", "latest", None),
        ("registry.example/a__b/c-d.e:T_1", "registry.example", "a__b/c-d.e", "T_1", None),
        (f"nvcr.io/nvidia/pytorch:24.08-py3@{DIGEST}", "nvcr.io", "nvidia/pytorch", "24.08-py3", DIGEST),
        (f"img@{DIGEST}", None, "img", None, DIGEST),
        ("[::1]:5000/img", "[::1]:5000", "img", None, None),
        ("Registry/img", "Registry", "img", None, None),
    ],
)
def test_valid(text, domain, path, tag, digest):
    ref = parse_image_ref(text)
    assert (ref.domain, ref.path, ref.tag, ref.digest) == (domain, path, tag, digest)
    assert str(ref) == text


@pytest.mark.parametrize(
    "text,says",
    [
        ("", "empty"),
        ("ubuntu; rm -rf /", "not allowed"),
        ("$(reboot)", "not allowed"),
        ("`id`", "not allowed"),
        ("img:tag|cat", "not allowed"),
        ("img\nx", "not allowed"),
        ("a" * 2000, "characters long"),
        ("a" * 256, "longer than 255"),
        ("Ubuntu", "lowercase"),
        ("img:" + "t" * 129, "tag"),
        ("img:-tag", "tag"),
        ("img@sha256:abc", "digest"),
        ("img//x", "repository"),
        ("img-", "repository"),
        ("-img", "repository"),
        ("bad_host!/img", "not allowed"),
        ("/img", "repository"),
        ("img:", "tag"),
        ("ümlaut", "not allowed"),
    ],
)
def test_invalid(text, says):
    with pytest.raises(ImageRefError) as info:
        parse_image_ref(text)
    assert says in str(info.value)
    assert "\n" not in str(info.value)
