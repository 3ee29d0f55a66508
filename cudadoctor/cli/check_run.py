"""`cudadoctor check`'s work, without click: the click command (cli/check_cmd.py) and the fast
path (cli/fast.py) both run it with the same options (click's parameter names and values)."""

from __future__ import annotations

from ..model.record import replace
from .errors import InputError
from .inputs import (
    emit_json,
    gather_facts,
    load_table_or_fail,
    request_or_fail,
    start_nvml_probe,
    today_or_fail,
    user_values_or_fail,
    with_topology_or_fail,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping


def run_check(options: Mapping[str, Any]) -> int:
    """Parse, probe, check, render; the exit status. InputError for a value the user gave."""
    from ..doctor import check

    image, pull, smoke = options["image"], options["pull"], options["smoke"]
    # The values a user typed are checked before any file is read: a typo is reported first.
    if options["quiet"] and options["verbose"]:
        raise InputError("give -q/--quiet or -v/--verbose, not both")
    if (pull or smoke) and image is None and options["run_line"] is None:
        raise InputError(f"{'--pull' if pull else '--smoke'} needs --image REF")
    values = user_values_or_fail(image, options["variant"], options["requires"], options["min_memory"], options["run_line"])
    nvml = start_nvml_probe(options["snapshot"], options["nvml_timeout"], options["driver"], options["gpus"])
    try:
        table = load_table_or_fail(options["table_path"], options["families_path"], options["config_path"])
        request = request_or_fail(
            table, torch=options["torch_release"], family=options["family"], variant=options["variant"], values=values,
            today=today_or_fail(), newer_ok=True, gpus_per_job=options["gpus_per_job"],
        )
        facts = gather_facts(
            table, options["snapshot"], options["driver"], options["gpus"], options["torch_runtime"],
            options["nvml_timeout"], nvml, options["forward_compat"],
        )  # fmt: skip
        if options["topology"]:
            facts = with_topology_or_fail(facts, options["topology"])
    except BaseException:
        if nvml is not None:
            nvml.cancel()
        raise
    image_facts = None
    if request.image is not None or smoke or options["docker"]:
        from ..probe.containers import probe_containers
        from ..report.console import status_line

        docker_facts, image_facts = probe_containers(
            request.image, pull, smoke, options["docker"], options["timeout"],
            pull_timeout=options["pull_timeout"], smoke_timeout=options["smoke_timeout"],
            progress=status_line() if (pull or smoke) else None,
        )  # fmt: skip
        if docker_facts is not None:
            facts = replace(facts, docker=docker_facts)
    from ..doctor.answer import decide

    result = check(facts, table, request, image=image_facts)
    answer = decide(result, table)
    if options["as_json"]:
        from ..report.payload import check_payload

        emit_json(check_payload(result, table, answer))
    else:
        from ..report.text import NORMAL, QUIET, VERBOSE, make_console, render_check

        verbosity = QUIET if options["quiet"] else VERBOSE if options["verbose"] else NORMAL
        render_check(make_console(), result, answer, verbosity)
    return result.exit_status(options["strict"])
