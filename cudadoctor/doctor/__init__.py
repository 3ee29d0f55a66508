"""Pure orchestration: resolve a request, build the target once, run the checks, recommend."""

from .check import CheckResult, check, recommend_for
from .request import Request, RequestError, resolve_request

__all__ = ["CheckResult", "Request", "RequestError", "check", "recommend_for", "resolve_request"]
