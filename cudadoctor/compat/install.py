"""How a release's CUDA wheels are installed, as PyTorch's own pages document it for that release.

PyTorch's "Previous PyTorch Versions" page changed its wheel commands over the years; the table
records the form per release (``pytorch_releases[].install_style``) and this module writes the
command from it. Pure: the URLs come from the table's ``wheel_index`` (never written here).

- ``index-url`` (2.0 on, the default): ``pip install 'torch==2.9.*' --index-url <index>/cu128``.
- ``extra-index-url`` (1.11 to 1.13): ``pip install 'torch==1.13.1+cu117' --extra-index-url <index>/cu117``.
- ``find-links`` (1.2 to 1.10): ``pip install 'torch==1.7.1+cu92' -f <root>/torch_stable.html``; the
  release's default variant is PyPI's plain wheel, ``pip install 'torch==1.7.1'``.
- ``wheel-page`` (1.0, 1.1): no pip command on the page, only "Download and install wheel from
  <index>/cuNNN/torch_stable.html"; the default variant is PyPI's plain wheel.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

INSTALL_STYLES = ("index-url", "extra-index-url", "find-links", "wheel-page")
DEFAULT_INSTALL_STYLE = "index-url"


def wheel_page_url(style: str, index_url: str, index_root: str) -> Optional[str]:
    """The find-links page the release's documented command (or download) names; None for index styles."""
    if style == "find-links":
        return f"{index_root}/torch_stable.html"
    if style == "wheel-page":
        return f"{index_url}/torch_stable.html"
    return None


def install_command(
    style: str,
    torch: str,
    install_version: str,
    variant: str,
    index_url: str,
    page_url: Optional[str] = None,
    first_patch: Optional[str] = None,
    plain_wheel: bool = False,
) -> Optional[str]:
    """The pip line for one build in the release's documented form; None where the page gives none
    (a non-default wheel of 1.0 or 1.1: download it from ``page_url``).

    ``plain_wheel``: the variant is the release's default, PyPI's plain ``torch`` wheel."""
    if style == "extra-index-url":
        return f"pip install 'torch=={install_version}+{variant}' --extra-index-url {index_url}"
    if style in ("find-links", "wheel-page"):
        if plain_wheel:
            return f"pip install 'torch=={install_version}'"
        if style == "find-links" and page_url:
            return f"pip install 'torch=={install_version}+{variant}' -f {page_url}"
        return None
    # A variant that appeared in a later patch release is pinned to that patch ('torch==2.12.1').
    pin = first_patch or f"{torch}.*"
    return f"pip install 'torch=={pin}' --index-url {index_url}"
