"""Image hygiene parsers and the check, on the facts a probe hands over (the real-daemon path is
tests/test_present_image_contents.py): sshd's first-value-wins, Include and Match rules; Jupyter's
command line over its config files; USER."""

from __future__ import annotations

import pytest

from cudadoctor.model.facts import ImageFacts
from cudadoctor.model.hygiene import ImageFile, ImageHygiene
from cudadoctor.model.target import Target
from cudadoctor.rules.hygiene import (
    check_hygiene,
    command_words,
    jupyter_open,
    jupyter_settings,
    runs_as_root,
    sshd_problems,
)

DEBIAN_MAIN = """# Debian's sshd_config, shortened
Include /etc/ssh/sshd_config.d/*.conf
KbdInteractiveAuthentication no
UsePAM yes
X11Forwarding yes
Subsystem sftp /usr/lib/openssh/sftp-server
"""


def sshd(main: str, **dropins: str) -> ImageHygiene:
    files = [ImageFile("/etc/ssh/sshd_config", main)]
    files += [ImageFile(f"/etc/ssh/sshd_config.d/{name.replace('_', '-')}.conf", text) for name, text in dropins.items()]
    return ImageHygiene(state="ok", files=tuple(files))


@pytest.mark.parametrize("user, root", [("", True), ("root", True), ("0", True), ("0:0", True), ("root:wheel", True),
                                         ("1000", False), ("app", False), ("app:app", False)])
def test_who_the_image_runs_as(user, root):
    assert runs_as_root(user) is root


def test_debian_default_allows_password_authentication_by_sshd_default():
    problems = sshd_problems(sshd(DEBIAN_MAIN))
    assert problems == ["PasswordAuthentication yes (sshd's default)"]


def test_first_value_wins_a_dropin_included_first_overrides_the_main_file():
    safe = sshd(DEBIAN_MAIN + "PasswordAuthentication yes\nPermitRootLogin yes\n",
                a_hardening="PasswordAuthentication no\nPermitRootLogin prohibit-password\n")
    assert sshd_problems(safe) == []
    # The same lines after the Include lose to it the other way round.
    unsafe = sshd("PermitRootLogin yes\nPasswordAuthentication yes\n" + DEBIAN_MAIN, a_hardening="PasswordAuthentication no\n")
    problems = sshd_problems(unsafe)
    assert problems[0].startswith("PermitRootLogin yes (/etc/ssh/sshd_config:1)") and "root can log in" in problems[0]
    assert "PasswordAuthentication yes (/etc/ssh/sshd_config:2)" in problems


def test_dropins_are_read_in_lexical_order():
    hygiene = sshd(DEBIAN_MAIN, b_second="PasswordAuthentication no\n", a_first="PasswordAuthentication=yes\n")
    assert sshd_problems(hygiene) == ["PasswordAuthentication yes (/etc/ssh/sshd_config.d/a-first.conf:1)"]


def test_match_blocks_apply_only_to_their_connections():
    text = "PasswordAuthentication no\nKbdInteractiveAuthentication no\nMatch Address 10.0.0.0/8\n  PasswordAuthentication yes\n"
    assert sshd_problems(sshd(text)) == ["Match Address 10.0.0.0/8: passwordauthentication yes (/etc/ssh/sshd_config:4)"]
    # A value inside a Match block does not set the global one: the default still applies.
    later = "Match User backup\n  PasswordAuthentication no\n"
    assert sshd_problems(sshd(later)) == ["PasswordAuthentication yes (sshd's default)"]
    # Match all overrides the global section for every connection.
    assert sshd_problems(sshd("PasswordAuthentication yes\nMatch all\nPasswordAuthentication no\n")) == []


def test_pam_keyboard_interactive_counts_as_passwords():
    problems = sshd_problems(sshd("PasswordAuthentication no\nUsePAM yes\n"))
    assert problems == ["keyboard-interactive passwords through PAM (KbdInteractiveAuthentication yes, sshd's default)"]
    assert sshd_problems(sshd("PasswordAuthentication no\nUsePAM yes\nChallengeResponseAuthentication no\n")) == []


def test_no_sshd_config_no_sshd():
    assert sshd_problems(ImageHygiene(state="ok")) == []


def hyg(entrypoint=(), cmd=(), files=(), user="") -> ImageHygiene:
    return ImageHygiene(state="ok", user=user, entrypoint=tuple(entrypoint), cmd=tuple(cmd), files=tuple(files))


@pytest.mark.parametrize(
    "entrypoint, cmd, open_",
    [
        ((), ("jupyter", "lab", "--ip=0.0.0.0", "--NotebookApp.token=''"), True),  # exec form keeps the quotes
        ((), ("jupyter", "lab", "--ServerApp.token=", "--ServerApp.password="), True),
        ((), ("jupyter", "lab", "--ServerApp.token", ""), True),
        (("/bin/sh", "-c"), ("jupyter notebook --ip 0.0.0.0 --NotebookApp.token='' --allow-root",), True),
        ((), ("/bin/bash", "-c", "cd /workspace && jupyter lab --IdentityProvider.token='' && sleep 1"), True),
        ((), ("python3", "-m", "jupyter", "lab", "--ServerApp.token="), True),
        ((), ("jupyter-lab", "--ServerApp.token=abc"), False),
        ((), ("jupyter", "lab", "--ServerApp.token=", "--ServerApp.password=sha1:abc:def"), False),
        ((), ("jupyter", "lab", "--ServerApp.password="), False),  # the token Jupyter generates still guards it
        ((), ("python", "train.py", "--ServerApp.token="), False),  # not Jupyter
        (("/opt/nvidia/nvidia_entrypoint.sh",), ("jupyter", "lab", "--NotebookApp.token="), True),
    ],
)
def test_jupyter_on_the_command_line(entrypoint, cmd, open_):
    settings = jupyter_settings(hyg(entrypoint, cmd), [])
    assert jupyter_open(settings) is open_


def test_config_file_token_and_the_command_line_overriding_it():
    config = ImageFile("/usr/local/etc/jupyter/jupyter_server_config.py", "c.ServerApp.ip = '0.0.0.0'\nc.ServerApp.token = ''  # open\n")
    settings = jupyter_settings(hyg(cmd=("jupyter", "lab")), [config])
    assert jupyter_open(settings) and settings.ip == "0.0.0.0" and settings.token_at.endswith("jupyter_server_config.py:2")
    assert not jupyter_open(jupyter_settings(hyg(cmd=("jupyter", "lab", "--ServerApp.token=s3cret")), [config]))
    json_config = ImageFile("/etc/jupyter/jupyter_notebook_config.json", '{"NotebookApp": {"token": "", "password": ""}}')
    assert jupyter_open(jupyter_settings(hyg(), [json_config]))


def test_shell_scripts_split_as_a_shell_would():
    assert command_words(hyg(cmd=("sh", "-c", "jupyter lab --NotebookApp.token='' # comment"))) == [
        "jupyter", "lab", "--NotebookApp.token=",
    ]


def _run(hygiene: ImageHygiene) -> list[str]:
    from cudadoctor.host.view import HostView
    from cudadoctor.app.loader import load_table
    from cudadoctor.model.facts import HostFacts
    from cudadoctor.rules.context import CheckContext

    image = ImageFacts("acme/lab:1", state="ok", hygiene=hygiene)
    target = Target(torch="", variant="", cuda="", image="acme/lab:1", origin="--image", image_facts=image)
    ctx = CheckContext(host=HostView.of(HostFacts(), load_table()), target=target, target_cuda=None, first_fit=lambda r: None)
    return [f.code for f in check_hygiene(ctx)]


def test_the_check_reports_each_problem_once():
    bad = hyg(cmd=("jupyter", "lab", "--ip=0.0.0.0", "--ServerApp.token="),
              files=[ImageFile("/etc/ssh/sshd_config", "PermitRootLogin yes\n")])
    assert _run(bad) == ["image-runs-as-root", "image-jupyter-open", "image-ssh-root-login"]
    assert _run(hyg(user="app", cmd=("python", "train.py"))) == []
    assert _run(ImageHygiene(state="error", error="boom", user="app")) == ["image-files-unread"]


def test_jupyter_fix_does_not_ask_for_the_loopback_port_the_run_line_has():
    from cudadoctor.host.view import HostView
    from cudadoctor.app.loader import load_table
    from cudadoctor.model.facts import HostFacts
    from cudadoctor.model.runline import parse_run_line
    from cudadoctor.rules.context import CheckContext

    image = ImageFacts("acme/lab:1", state="ok", hygiene=hyg(user="app", cmd=("jupyter", "lab", "--ip=0.0.0.0", "--ServerApp.token=")))

    def hint(line: str) -> str:
        target = Target(torch="", variant="", cuda="", image="acme/lab:1", origin="--image", image_facts=image, run=parse_run_line(line))
        ctx = CheckContext(host=HostView.of(HostFacts(), load_table()), target=target, target_cuda=None, first_fit=lambda r: None)
        return next(f.hint for f in check_hygiene(ctx) if f.code == "image-jupyter-open")

    assert "-p 127.0.0.1:8888:8888" in hint("docker run --gpus all -p 8888:8888 acme/lab:1")
    assert "127.0.0.1" not in hint("docker run --gpus all -p 127.0.0.1:8888:8888 acme/lab:1")


# --- Include expansion is bounded the way sshd bounds it -------------------------------------


def test_dropins_that_include_each_other_stop_sshd_and_are_read_once():
    from cudadoctor.rules.hygiene import sshd_config

    loop = "Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication yes\n"
    hygiene = sshd(DEBIAN_MAIN, **{f"d{i}": loop for i in range(30)})
    config = sshd_config(hygiene)
    assert config.refused is not None and "Too many recursive configuration includes" in config.refused
    assert "d0.conf -> d0.conf" in config.refused
    assert sshd_problems(hygiene) == []  # sshd does not start with it: nothing takes passwords
    assert _run(ImageHygiene(state="ok", user="app", files=hygiene.files)) == ["image-sshd-config-refused"]


def test_includes_nested_past_sshds_depth_limit_are_refused_and_within_it_read():
    from cudadoctor.rules.hygiene import MAX_INCLUDE_DEPTH, sshd_config

    def chain(levels: int) -> ImageHygiene:
        dropins = {f"c{i:02d}": f"Include /etc/ssh/sshd_config.d/c{i + 1:02d}.conf\n" for i in range(levels)}
        dropins[f"c{levels:02d}"] = "PasswordAuthentication yes\n"
        return sshd("Include /etc/ssh/sshd_config.d/c00.conf\n", **dropins)

    deepest_read = chain(MAX_INCLUDE_DEPTH - 1)  # c00 at depth 1 ... c15 at depth 16
    assert sshd_config(deepest_read).refused is None
    assert sshd_problems(deepest_read) == ["PasswordAuthentication yes (/etc/ssh/sshd_config.d/c15.conf:1)"]
    too_deep = chain(MAX_INCLUDE_DEPTH)  # c16 at depth 17
    assert "limit of 16" in (sshd_config(too_deep).refused or "")


def test_a_fan_out_without_a_loop_is_cut_at_the_bound():
    from cudadoctor.rules.hygiene import MAX_INCLUDED_READS, sshd_config

    includes = "Include /etc/ssh/sshd_config.d/*.conf\n" * 2000
    hygiene = sshd(includes + "PasswordAuthentication no\n", **{f"leaf{i}": "X11Forwarding no\n" for i in range(256)})
    config = sshd_config(hygiene)
    assert config.refused is None and config.cut is not None and str(MAX_INCLUDED_READS) in config.cut
