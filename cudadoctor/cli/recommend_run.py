"""`cudadoctor recommend`'s work, without click: the click command (cli/recommend_cmd.py) and the
fast path (cli/fast.py) both run it with the same options (click's parameter names and values)."""

from __future__ import annotations

from .errors import EXIT_FAIL, EXIT_OK, InputError, say
from .inputs import emit_json, gather_facts, load_table_or_fail, request_or_fail, today_or_fail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping


def run_recommend(options: Mapping[str, Any]) -> int:
    """The image tag or wheel variant that fits, printed as asked; the exit status."""
    from ..doctor import recommend_for

    want_image, want_wheel, fmt = options["want_image"], options["want_wheel"], options["fmt"]
    if want_image and want_wheel:
        raise InputError("give --image or --wheel, not both")
    if not want_image and not want_wheel:
        want_image = fmt != "index-url"
        want_wheel = not want_image
    if fmt == "tag" and not want_image:
        raise InputError("--format tag needs --image")
    if fmt == "index-url" and not want_wheel:
        raise InputError("--format index-url needs --wheel")
    table = load_table_or_fail(options["table_path"], options["families_path"], options["config_path"])
    request = request_or_fail(table, torch=options["torch_release"], family=options["family"], today=today_or_fail())
    if want_wheel and not request.family.offers_wheels:
        raise InputError(f"--family {request.family.name} is a family of images: give --image, not --wheel")
    facts = gather_facts(table, options["snapshot"], options["driver"], options["gpus"], nvml_timeout=options["nvml_timeout"],
                         forward_compat=options["forward_compat"])
    rec = recommend_for(facts, table, request, images=want_image)
    if not rec.found:
        # Nothing on stdout (a script's `$(...)` gets "", and `set -e` stops it on the exit status);
        # the reason, the release that fits instead and the fixes go to stderr.
        if fmt == "json":
            from ..report.payload import recommend_payload

            emit_json(recommend_payload(rec, table))
        import sys

        from ..report.text import make_console, render_no_fit

        render_no_fit(make_console(sys.stderr), rec, wheel=want_wheel)
        return EXIT_FAIL
    if fmt == "tag":
        say(rec.image or "")
    elif fmt == "index-url":
        say(rec.wheel_index_url or "")
    elif fmt == "json":
        from ..report.payload import recommend_payload

        emit_json(recommend_payload(rec, table))
    else:
        from ..report.text import make_console, render_recommendation

        render_recommendation(make_console(), rec, wheel=want_wheel)
    return EXIT_OK
