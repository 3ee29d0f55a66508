"""The cluster's nodes, read live through the official ``kubernetes`` client (the optional extra
``cudadoctor[kubernetes]``): the current kubeconfig (``$KUBECONFIG``, ``--context``), else the
in-cluster service account. Every failure is one KubeError line; every call is bounded.

The nodes come back as the API server's own JSON (``kubectl get nodes -o json`` has the same
shape), read a page at a time, so the fleet reads them exactly as it reads a saved node list.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Optional

PAGE = 500  # nodes per request: the API server's chunking (limit / continue)


class KubeError(Exception):
    """The cluster could not be read; the message says why and what to do."""


def _configuration(context: Optional[str]) -> Any:
    try:
        import yaml
        from kubernetes import client, config
    except ImportError:
        raise KubeError("--kubernetes needs the Kubernetes client: pip install 'cudadoctor[kubernetes]'") from None
    configuration = client.Configuration()
    kubeconfig = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    try:
        if context or any(os.path.exists(p) for p in kubeconfig.split(os.pathsep) if p):
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)  # type: ignore[no-untyped-call]
        else:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    except config.ConfigException as exc:
        raise KubeError(f"no usable Kubernetes configuration ({exc}): set KUBECONFIG or run inside a cluster") from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, yaml.YAMLError) as exc:  # a kubeconfig that is not one
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise KubeError(f"kubeconfig {kubeconfig}: cannot be used ({type(exc).__name__}: {first[:200]})") from None
    configuration.retries = 0  # a bound is a bound: no silent retries behind --timeout
    return configuration


def list_nodes(context: Optional[str] = None, selector: Optional[str] = None, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every Node (matching ``selector``), as the API server's JSON; KubeError on any failure."""
    configuration = _configuration(context)
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    deadline = time.monotonic() + timeout
    nodes: list[dict[str, Any]] = []
    token: Optional[str] = None
    where = configuration.host
    with client.ApiClient(configuration) as api_client:
        api = client.CoreV1Api(api_client)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise KubeError(f"the Kubernetes API at {where} did not answer within {timeout:g}s (--timeout)")
            kwargs: dict[str, Any] = {"limit": PAGE, "_preload_content": False, "_request_timeout": left}
            if selector:
                kwargs["label_selector"] = selector
            if token:
                kwargs["_continue"] = token
            try:
                response: Any = api.list_node(**kwargs)  # the raw HTTP answer (_preload_content=False)
                page = json.loads(response.data)
            except ApiException as exc:
                raise KubeError(_api_error(exc, where)) from None
            except HTTPError as exc:
                text = str(exc)
                if "timed out" in text.lower() or "timeout" in type(exc).__name__.lower():
                    raise KubeError(f"the Kubernetes API at {where} did not answer within {timeout:g}s (--timeout)") from None
                raise KubeError(f"the Kubernetes API at {where} cannot be reached ({type(exc).__name__})") from None
            except (OSError, ValueError) as exc:
                raise KubeError(f"the Kubernetes API at {where} gave no node list ({type(exc).__name__}: {exc})") from None
            if not isinstance(page, dict) or not isinstance(page.get("items"), list):
                raise KubeError(f"the Kubernetes API at {where} answered with something that is not a node list")
            nodes.extend(page["items"])
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return nodes


def _api_error(exc: Any, where: str) -> str:
    status = getattr(exc, "status", None)
    if status == 401:
        return f"the Kubernetes API at {where} refused the credentials (401 Unauthorized): refresh the kubeconfig's token"
    if status == 403:
        return f"the Kubernetes API at {where} forbids listing nodes (403 Forbidden): the account needs get/list on nodes"
    if status == 400 and "selector" in str(getattr(exc, "body", "")).lower():
        return f"--selector: the API server rejected the label selector ({str(exc.body)[:200]})"
    return f"the Kubernetes API at {where} answered {status} {getattr(exc, 'reason', '')}".rstrip()
