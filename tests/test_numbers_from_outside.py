"""Every reader of a number from outside goes through model/numbers.py: a run line's --gpus, -p
and --shm-size, a fleet source, the seconds options, a families file, a table's NGC section.
Each bad value gives one short line and exit 2, never an internal error."""

from __future__ import annotations

import json

import pytest

from hardening import assert_one_short_error, run_main
from helpers import host

HUGE = "9" * 5000


@pytest.mark.parametrize("flags", ["--gpus ²", f"--gpus {HUGE}", f"-p 8888:{HUGE}", f"-p {HUGE}", f"--shm-size {'9' * 400}",
                                   "--shm-size 99999999999999g", "--gpus ٣", "-p 8888:８８８８"])
def test_run_line_numbers_give_one_line(flags: str) -> None:
    assert_one_short_error(run_main(["check", "--snapshot", host("h100-550"), "--run", f"docker run {flags} img:1"]), flags)


def test_run_line_numbers_that_docker_reads_still_work() -> None:
    from cudadoctor.model.runline import parse_gpus, parse_port, parse_size

    assert parse_gpus("2").count == 2 and parse_gpus("all").count == -1
    assert parse_port("127.0.0.1:8888:8888").container_ports == (8888,)
    assert parse_size("1.5g") == int(1.5 * 1024**3)


@pytest.mark.parametrize("value", ["٣", "１", "1_0", "1e3", "inf", " nan", "0x10", "+5"])
@pytest.mark.parametrize("option", ["--nvml-timeout", "--timeout"])
def test_seconds_options_take_ascii_decimals_only(option: str, value: str) -> None:
    assert_one_short_error(run_main(["check", option, value, "--snapshot", host("h100-550")]), value)


def test_seconds_options_still_take_plain_decimals() -> None:
    outcome = run_main(["check", "--nvml-timeout", "2.5", "--timeout", " 3 ", "--snapshot", host("h100-550"), "-q"])
    assert outcome.exit_code in (0, 1), outcome.stderr


def test_a_fleet_source_with_a_5000_digit_integer(tmp_path) -> None:
    text = open(host("h100-550")).read().replace('"gpus"', f'"x": {HUGE}, "gpus"', 1)
    path = tmp_path / "big.json"
    path.write_text(text)
    assert_one_short_error(run_main(["fleet", str(path)]), "fleet")


@pytest.mark.parametrize("description", [HUGE[:4000], "[1, 2]", "5"])
def test_a_families_description_that_is_not_a_string(tmp_path, description: str) -> None:
    path = tmp_path / "families.toml"
    path.write_text(f'[[family]]\nname = "acme"\nrepository = "acme/pt"\ntag_template = "{{torch}}-cuda{{cuda}}"\ndescription = {description}\n')
    assert_one_short_error(run_main(["check", "--snapshot", host("h100-550"), "--families", str(path)]), description[:10])


@pytest.mark.parametrize("bad", [5, "x", [1], None])
def test_table_validate_reports_an_ngc_entry_of_the_wrong_type(tmp_path, bad) -> None:
    from cudadoctor.app.loader import table_path

    table = json.loads(open(table_path(None)).read())
    table["ngc_pytorch_releases"][0] = bad
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table))
    outcome = run_main(["table", "--validate", str(path)])
    assert outcome.exit_code in (1, 2), outcome.stderr
    assert "internal error" not in outcome.stderr and "Traceback" not in outcome.stderr
    assert len(outcome.stderr.splitlines()) <= 1


@pytest.mark.parametrize("value", ["٣", "１", "1_0", "+5", "0x10", "9" * 5000, "65", "0"])
def test_the_gpus_per_job_count_takes_ascii_digits_only(value: str) -> None:
    """--gpus-per-job was a click.IntRange, whose int() takes ٣, １ and 1_0 as 3, 1 and 10."""
    assert_one_short_error(run_main(["check", "--gpus-per-job", value, "--snapshot", host("h100-550")]), "--gpus-per-job")


def test_the_gpus_per_job_count_still_takes_a_count() -> None:
    outcome = run_main(["check", "--gpus-per-job", "2", "--snapshot", host("h100-550"), "-q"])
    assert outcome.exit_code in (0, 1), outcome.stderr
