"""`cudadoctor fleet`'s work, without click (the fast path runs it too, cli/fast.py): its sources read,
its hosts judged, its report written; cli/fleet_cmd.py declares its options and help."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Mapping, Optional, Union

from ..app.loader import json_files_under, read_user_bytes
from ..fleet.sources import WHOLE_LIST_BYTES, FleetHost, SnapshotCache, SourceError, SourceProblem, decode_hosts
from .errors import InputError, UsageProblem, say_warning
from .inputs import emit_json, emit_json_members, load_table_or_fail, request_or_fail, today_or_fail, user_values_or_fail

if TYPE_CHECKING:
    from ..compat.table import CompatTable
    from ..fleet.judge import FleetResult
    from ..fleet.matrix import Matrix
    from ..fleet.plan import UpgradePlan


def _stdin_stream() -> BinaryIO:
    if sys.stdin is None or sys.stdin.isatty():  # a waiting prompt would look like a hang
        raise InputError("SOURCE - reads standard input, which is a terminal: pipe a node list or snapshot into it")
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("standard input: cannot be read (not a byte stream)")
    return stream  # type: ignore[no-any-return]


def _hosts_of_stream(
    source: Union[bytes, BinaryIO], where: str, fallback: str, hosts: list["FleetHost"], problems: list["SourceProblem"], cache: "SnapshotCache"
) -> None:
    """Every host of one document, read as it streams (fleet/sources.py decode_hosts: a node list's
    memory is its nodes' facts, not the document's size)."""
    for item in decode_hosts(source, where, fallback, cache):
        (hosts if isinstance(item, FleetHost) else problems).append(item)  # type: ignore[arg-type]


def _hosts_of_files(
    paths: list[str], named: bool, hosts: list["FleetHost"], problems: list["SourceProblem"], cache: "SnapshotCache"
) -> None:
    """Every host of every file. A file that cannot be read is one problem and the rest are read;
    one the user named (``named``) is an InputError."""
    for path in paths:
        try:
            # A file of a size a fleet's facts dwarf anyway is read whole: a node list is then
            # decoded field by field (fleet/sources.py), several times faster; a larger one streams.
            try:
                source = read_user_bytes(path, "fleet source", SourceError, WHOLE_LIST_BYTES)
            except OSError as exc:
                raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from None
            if isinstance(source, bytes):
                _hosts_of_stream(source, path, _fallback_name(path), hosts, problems, cache)
            else:
                with source:
                    _hosts_of_stream(source, path, _fallback_name(path), hosts, problems, cache)
        except SourceError as exc:
            if named:
                raise InputError(str(exc)) from None
            problems.append(SourceProblem(path, str(exc)))


def _fallback_name(path: str) -> str:
    base = os.path.basename(path)
    return base[:-5] if base.endswith(".json") else base or path


def read_sources(sources: Iterable[str]) -> tuple[list["FleetHost"], list["SourceProblem"]]:
    """Every host of every source. A named file that cannot be read is an InputError; inside a
    directory (or a node list) a bad entry is one problem and the rest are still read."""
    cache = SnapshotCache()

    hosts: list[FleetHost] = []
    problems: list[SourceProblem] = []
    for source in sources:
        if source == "-":
            try:
                _hosts_of_stream(_stdin_stream(), "standard input", "stdin", hosts, problems, cache)
            except SourceError as exc:
                raise InputError(str(exc)) from None
        elif os.path.isdir(source):
            files, unlisted = json_files_under(source)
            problems.extend(SourceProblem(source, message) for message in unlisted)
            _hosts_of_files(files, False, hosts, problems, cache)
            if not files:
                problems.append(SourceProblem(source, f"{source}: no *.json files in this directory"))
        else:
            _hosts_of_files([source], True, hosts, problems, cache)
    return hosts, problems


def _kubernetes_hosts(context: Optional[str], selector: Optional[str], timeout: float) -> list["FleetHost"]:
    from ..probe.kube import KubeError, iter_node_pages

    hosts: list[FleetHost] = []
    try:
        # Page by page, each decoded as a node list file is (decode_hosts: msgspec, field by
        # field): each node is kept only as its host, so a large cluster costs its nodes' facts,
        # not its whole node list.
        for page in iter_node_pages(context=context, selector=selector, timeout=timeout):
            for item in decode_hosts(page, KUBERNETES, KUBERNETES):
                if isinstance(item, SourceProblem):
                    say_warning(item.error)  # a node that cannot be read: the others still count
                else:
                    hosts.append(item)
    except KubeError as exc:
        raise InputError(str(exc)) from None
    except SourceError as exc:  # a page that is JSON to msgspec but not to json (kube checked it is a node list)
        raise InputError(f"{exc} (a node list page of the Kubernetes API)") from None
    return hosts


KUBERNETES = "kubernetes"  # where a live cluster's hosts were read (FleetHost.source)


def import_msgspec_lean() -> None:
    """msgspec, imported for this command without typing_extensions. msgspec asks that optional
    package only for the annotations of the TypedDicts, dataclasses and attrs classes it is given
    (where it is absent, msgspec uses typing's own functions, as on any machine without it); the
    fleet gives it Structs and plain values only. Importing typing_extensions, and the inspect
    module it imports, was about 25 ms of every fleet command's CPU (docs/performance.md). A
    process that already holds either is left as it is, and typing_extensions stays importable."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # None: "import it" raises ImportError
    try:
        import msgspec  # noqa: F401
    finally:
        if "typing_extensions" in sys.modules and sys.modules["typing_extensions"] is None:
            del sys.modules["typing_extensions"]


def run_fleet(params: Mapping[str, Any]) -> int:
    """The fleet command with click's parameters (cli/fleet_cmd.py's names); its exit status.
    A command line click would refuse for its combination of options raises UsageProblem."""
    if not params["sources"] and not params["live"]:
        raise UsageProblem("give at least one SOURCE (a snapshot, a directory, a node list, or -) or --kubernetes")
    if (params["context"] or params["selector"]) and not params["live"]:
        raise UsageProblem("--context and --selector need --kubernetes")
    exported = params["output_format"] in ("prometheus", "html")
    if (params["matrix"] or params["plan"] or exported) and (params["image"] or params["variant"]):
        what = f"--format {params['output_format']} judges" if exported else "--matrix and --plan judge"
        raise UsageProblem(f"{what} whole releases: drop --image and --variant")
    if (params["matrix"] or params["plan"]) and params["output_format"] == "node-affinity":
        raise UsageProblem("--matrix and --plan print a report (text or --json): drop --format node-affinity")
    if exported and params["as_json"]:
        raise UsageProblem(f"--format {params['output_format']} prints its own format: drop --json")
    values = user_values_or_fail(params["image"], params["variant"], (), None)
    table = load_table_or_fail(params["table_path"], params["families_path"], params["config_path"])
    request = request_or_fail(
        table, torch=params["torch_release"], family=params["family"], variant=params["variant"], values=values,
        today=today_or_fail(),
    )
    if (params["matrix"] or params["plan"] or exported) and not request.family.offers_wheels:
        raise InputError("--matrix, --plan and --format prometheus/html judge PyTorch releases as wheels, not NGC months: give --family with a wheel family such as pytorch/pytorch")
    import_msgspec_lean()
    hosts, problems = read_sources(params["sources"])
    if params["live"]:
        hosts.extend(_kubernetes_hosts(params["context"], params["selector"], params["timeout"]))
    for problem in problems:
        say_warning(problem.error)
    if not hosts:
        raise InputError("no host could be read from the sources given" if problems else "the sources hold no host")

    image_facts = None
    if request.image is not None:
        from ..probe.containers import probe_containers

        _, image_facts = probe_containers(request.image, False, False, False, params["timeout"])

    from ..fleet.judge import judge_fleet

    result = judge_fleet(hosts, table, request, image=image_facts, problems=problems)
    if params["output_format"] == "node-affinity":
        from ..fleet.affinity import AffinityError, affinity_yaml, node_affinity

        try:
            affinity = node_affinity(result, table)
        except AffinityError as exc:
            raise InputError(str(exc)) from None
        if params["as_json"]:
            emit_json(affinity)
        else:
            _echo(affinity_yaml(affinity))
        return 0
    if exported:
        _export(result, table, params["output_format"])
        return 0
    matrix, plan = _planning(result, table, params["matrix"], params["plan"])
    if params["as_json"]:
        from ..fleet.payload import fleet_members

        members = fleet_members(result, reuse=True)  # written, never changed
        if matrix is not None or plan is not None:  # their modules only for them
            from ..fleet.plan_payload import matrix_payload, plan_payload

            if matrix is not None:
                members.append(("matrix", matrix_payload(matrix)))
            if plan is not None:
                members.append(("plan", plan_payload(plan)))
        emit_json_members(members)  # written entry by entry: a million nodes' report is never held whole
    else:
        from ..report.console import make_console

        console = make_console()
        if matrix is None and plan is None:
            from ..report.fleet_text import render_fleet

            render_fleet(console, result)
        from ..report.fleet_plan_text import render_matrix, render_plan

        if matrix is not None:
            render_matrix(console, matrix, len(result.hosts))
        if plan is not None:
            if matrix is not None:
                console.print()
            render_plan(console, plan)
    return result.exit_status()




def _export(result: "FleetResult", table: "CompatTable", output_format: str) -> None:
    """--format prometheus or html: the whole fleet, its matrix and plan, in that format on stdout."""
    from ..about import __version__

    if output_format == "prometheus":
        from ..fleet.matrix import coverage_matrix
        from ..fleet.prometheus import prometheus_text

        # Every release: a series must not vanish when its release stops running anywhere.
        _echo(prometheus_text(result, coverage_matrix(result, table, every_release=True), __version__))
        return
    from ..report.fleet_html import fleet_html

    matrix, plan = _planning(result, table, True, True)
    assert matrix is not None and plan is not None
    _echo(fleet_html(result, matrix, plan, __version__))


def _planning(result: "FleetResult", table: "CompatTable", matrix: bool, plan: bool) -> tuple[Optional["Matrix"], Optional["UpgradePlan"]]:
    """The coverage matrix and the upgrade plan, each when asked for (not for an NGC family: refused above)."""
    if not (matrix or plan):
        return None, None
    from ..fleet.matrix import coverage_matrix
    from ..fleet.plan import upgrade_plan

    return (coverage_matrix(result, table) if matrix else None), (upgrade_plan(result, table) if plan else None)


def _echo(text: str) -> None:
    """A whole document on stdout as click.echo writes it (which drops terminal escapes from a
    stream that is not a terminal): the formats written this way import click for it."""
    import click

    click.echo(text, nl=False)
