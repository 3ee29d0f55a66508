"""The cluster's nodes, read live: the configuration through the official ``kubernetes`` client (the
optional extra ``cudadoctor[kubernetes]``: the current kubeconfig (``$KUBECONFIG``, ``--context``),
else the in-cluster service account), the nodes API through probe/http_get.py's bounded GET. Every
failure is one KubeError line; every call is bounded.

- The kubeconfig is read here first: a regular file only (a FIFO would block), at most
  :data:`MAX_KUBECONFIG_BYTES`, YAML nested no deeper than Python allows (a RecursionError is one
  line, not a crash); its secrets (tokens, passwords, keys) never appear in a message.
- One deadline (``--timeout``) bounds the whole listing: every page, each one's connect, status,
  headers, body and decompression. Each page's body is capped at :data:`MAX_PAGE_BYTES` after
  decompression (a gzip bomb stops there).
- The nodes come back as the API server's own JSON (``kubectl get nodes -o json`` has the same
  shape), a page at a time (``limit`` / ``continue``), each page's bytes checked here to be a node
  list (probe/kube_fields.py) and decoded by the fleet as a node list file is; a continue token the
  server already gave is an error (it would loop for ever), and an answer whose ``items`` or
  ``metadata`` is not of the right type is one line.
"""

from __future__ import annotations

import json
import os
import stat
import time
import urllib.parse
from typing import Any, Iterator, Optional

from ..model.redact import redact
from ..model.text import one_line, shown_path
from .http_get import FetchError, Policy, get

PAGE = 500  # nodes per request: the API server's chunking (limit / continue)
MAX_PAGE_BYTES = 64 * 1024 * 1024  # 500 nodes of a few KiB each are megabytes; far more is no node list
MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024  # embedded certificates are kilobytes each


class KubeError(Exception):
    """The cluster could not be read; the message says why and what to do."""


def _read_kubeconfig(path: str) -> str:
    shown = shown_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise KubeError(f"kubeconfig {shown}: cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise KubeError(f"kubeconfig {shown}: not a regular file (a FIFO or a device?): give a kubeconfig file")
        if info.st_size > MAX_KUBECONFIG_BYTES:
            raise KubeError(f"kubeconfig {shown}: larger than {MAX_KUBECONFIG_BYTES // (1024 * 1024)} MiB: not a kubeconfig")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_KUBECONFIG_BYTES + 1)
    except OSError as exc:
        raise KubeError(f"kubeconfig {shown}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_KUBECONFIG_BYTES:
        raise KubeError(f"kubeconfig {shown}: larger than {MAX_KUBECONFIG_BYTES // (1024 * 1024)} MiB: not a kubeconfig")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise KubeError(f"kubeconfig {shown}: not UTF-8 text") from None


def _secrets_in(data: Any) -> list[str]:
    """Every string under the kubeconfig's users (tokens, passwords, key data): never shown."""
    found: list[str] = []
    stack = [data.get("users")] if isinstance(data, dict) else []
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _parse_kubeconfig(path: str, text: str) -> dict[str, Any]:
    import yaml

    shown = shown_path(path)
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:  # its text would quote the line (a token): only where
        line = f" at line {exc.problem_mark.line + 1}" if exc.problem_mark is not None else ""
        raise KubeError(f"kubeconfig {shown}: not valid YAML{line}") from None
    except (yaml.YAMLError, ValueError):
        raise KubeError(f"kubeconfig {shown}: not valid YAML") from None
    except RecursionError:
        raise KubeError(f"kubeconfig {shown}: nested too deeply to be a kubeconfig") from None
    if not isinstance(data, dict):
        raise KubeError(f"kubeconfig {shown}: not a kubeconfig (a mapping with clusters, users and contexts)")
    return data


def _configuration(context: Optional[str]) -> tuple[Any, list[str]]:
    """(the client's Configuration, the secrets no message may show)."""
    try:
        import yaml
        from kubernetes import client, config
    except ImportError:
        raise KubeError("--kubernetes needs the Kubernetes client: pip install 'cudadoctor[kubernetes]'") from None
    configuration = client.Configuration()
    kubeconfig = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    paths = [p for p in kubeconfig.split(os.pathsep) if p]
    present = [p for p in paths if os.path.lexists(p)]
    secrets: list[str] = []
    try:
        if present or context:
            # Each file is checked and parsed here first, so a FIFO, a huge or a deeply nested one is one
            # line; the client then loads them as it always does (relative paths, merging, plugins).
            for path in present:
                secrets += _secrets_in(_parse_kubeconfig(path, _read_kubeconfig(path)))
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration,  # type: ignore[no-untyped-call]
                                    persist_config=False)
        else:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    except config.ConfigException as exc:
        raise KubeError(redact(f"no usable Kubernetes configuration ({one_line(str(exc), 200)}): set KUBECONFIG or run inside a cluster",
                               secrets)) from None
    except RecursionError:
        raise KubeError(f"kubeconfig {shown_path(kubeconfig)}: nested too deeply to be a kubeconfig") from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, yaml.YAMLError) as exc:  # a kubeconfig that is not one
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise KubeError(redact(f"kubeconfig {shown_path(kubeconfig)}: cannot be used ({type(exc).__name__}: {one_line(first, 200)})",
                               secrets)) from None
    secrets += [str(v) for v in (getattr(configuration, "api_key", None) or {}).values()]
    secrets += [s for s in (getattr(configuration, "password", None),) if isinstance(s, str)]
    return configuration, secrets


def _headers(configuration: Any, secrets: list[str]) -> dict[str, str]:
    hook = getattr(configuration, "refresh_api_key_hook", None)
    try:
        if hook is not None:
            hook(configuration)  # an exec plugin's or an expiring token's refresh
        settings = configuration.auth_settings()
    except Exception as exc:  # a plugin that fails: its own words, secrets removed  # noqa: BLE001
        raise KubeError(redact(f"the kubeconfig's credentials cannot be obtained ({type(exc).__name__}: "
                               f"{one_line(str(exc), 200)})", secrets)) from None
    headers = {}
    for setting in settings.values():
        if isinstance(setting, dict) and setting.get("in") == "header" and setting.get("value"):
            headers[str(setting["key"])] = str(setting["value"])
            secrets.append(str(setting["value"]))
    return headers


def _ssl_context(configuration: Any, secrets: list[str]) -> Any:
    import ssl

    try:
        if getattr(configuration, "verify_ssl", True):
            context = ssl.create_default_context(cafile=getattr(configuration, "ssl_ca_cert", None) or None)
        else:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if getattr(configuration, "cert_file", None):
            context.load_cert_chain(configuration.cert_file, getattr(configuration, "key_file", None) or None)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise KubeError(redact(f"the kubeconfig's TLS settings cannot be used ({one_line(str(exc), 160)})", secrets)) from None
    return context


def iter_node_pages(context: Optional[str] = None, selector: Optional[str] = None, timeout: float = 10.0) -> Iterator[bytes]:
    """Each page (PAGE nodes at most) of the Nodes matching ``selector``, as the bytes of the API
    server's NodeList, checked to be one (an object whose items are objects, whose continue token
    is a string): the fleet decodes it as it decodes a node list file, field by field
    (fleet/sources.decode_hosts). KubeError on any failure, raised where the iteration reaches it."""
    deadline = time.monotonic() + timeout
    configuration, secrets = _configuration(context)
    authority = str(configuration.host).split("://", 1)[-1].split("/", 1)[0]
    if "@" in authority:  # userinfo in a server URL without a scheme (host:port), which redact_url cannot anchor on
        secrets.append(authority.rsplit("@", 1)[0])
    where = redact(str(configuration.host), secrets)
    if getattr(configuration, "proxy", None):
        raise KubeError("the kubeconfig names a proxy-url, which --kubernetes does not use: "
                        "pipe `kubectl get nodes -o json` into `cudadoctor fleet -` instead")
    headers = _headers(configuration, secrets)
    base = str(configuration.host).rstrip("/")
    ssl_context = _ssl_context(configuration, secrets) if base.lower().startswith("https://") else None
    policy = Policy(allow_http=True, follow_redirects=False)  # the kubeconfig names the server; no redirect is followed
    token: Optional[str] = None
    tokens: set[str] = set()
    while True:
        query: dict[str, Any] = {"limit": PAGE}
        if selector:
            query["labelSelector"] = selector
        if token:
            query["continue"] = token
        chunks: list[bytes] = []
        try:
            get(f"{base}/api/v1/nodes?{urllib.parse.urlencode(query)}", deadline=deadline, timeout=timeout, write=chunks.append,
                max_bytes=MAX_PAGE_BYTES, what="a node list page", accept="application/json", headers=headers, policy=policy,
                ssl_context=ssl_context, gzip=True)
        except FetchError as exc:
            raise KubeError(_fetch_error(exc, where, timeout, secrets)) from None
        if time.monotonic() >= deadline:
            raise KubeError(f"the Kubernetes API at {where} did not answer within {timeout:g}s (--timeout)")
        body = b"".join(chunks)
        del chunks
        token = _page_token(body, where)
        yield body
        if not token:
            return
        if token in tokens:
            raise KubeError(f"the Kubernetes API at {where} gave the same continue token twice: the listing would never end")
        tokens.add(token)


def _page_token(body: bytes, where: str) -> Optional[str]:
    """The continue token of a page, once the page is checked to be a node list: by msgspec, which
    keeps each item as its raw JSON; where msgspec refuses the page (a number it does not hold),
    by json, whose words the errors use."""
    from . import kube_fields

    try:
        page = kube_fields.decode_page(body)
    except (kube_fields.Malformed, RecursionError):
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, UnicodeDecodeError, 4300+ digits
            raise KubeError(f"the Kubernetes API at {where} gave no node list ({type(exc).__name__})") from None
        items = parsed.get("items") if isinstance(parsed, dict) else None
        _check_items([isinstance(item, dict) for item in items] if isinstance(items, list) else None, where)
        return _continue_token(parsed.get("metadata"), where)
    # msgspec keeps a value without the space around it: an object's raw JSON starts with "{"
    _check_items([bytes(memoryview(item)[:1]) == b"{" for item in page.items] if page.items is not None else None, where)
    return _continue_token(page.metadata, where)


def _check_items(objects: Optional[list[bool]], where: str) -> None:
    """A page's items, each told as an object or not (None: no items list)."""
    if objects is None:
        raise KubeError(f"the Kubernetes API at {where} answered with something that is not a node list")
    if not all(objects):
        raise KubeError(f"the Kubernetes API at {where} answered with a node list whose items are not all objects")


def _continue_token(metadata: Any, where: str) -> Optional[str]:
    """The page's ``metadata.continue``, given its metadata as decoded."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise KubeError(f"the Kubernetes API at {where} answered with a node list whose metadata is not an object")
    token = metadata.get("continue")
    if token in (None, ""):
        return None
    if not isinstance(token, str) or len(token) > 64 * 1024:
        raise KubeError(f"the Kubernetes API at {where} answered with a continue token that is not a string")
    return token


def _fetch_error(exc: FetchError, where: str, timeout: float, secrets: list[str]) -> str:
    if exc.timed_out:
        return f"the Kubernetes API at {where} did not answer within {timeout:g}s (--timeout)"
    status = exc.status
    if status == 401:
        return f"the Kubernetes API at {where} refused the credentials (401 Unauthorized): refresh the kubeconfig's token"
    if status == 403:
        return f"the Kubernetes API at {where} forbids listing nodes (403 Forbidden): the account needs get/list on nodes"
    body = redact(exc.body.decode("utf-8", "replace"), secrets)
    if status == 400 and "selector" in body.lower():
        return f"--selector: the API server rejected the label selector ({one_line(body, 200)})"
    if status is not None:
        return f"the Kubernetes API at {where} answered {status} {one_line(exc.reason, 80)}".rstrip()
    if exc.unreachable:
        return redact(f"the Kubernetes API at {where} cannot be reached ({exc})", secrets)
    return redact(f"the Kubernetes API at {where} gave no node list: {exc}", secrets)
