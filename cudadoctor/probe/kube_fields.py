"""msgspec's side of reading the Kubernetes API's node list pages (probe/kube.py): a page's kind,
metadata (its continue token) and items, each item kept as its raw JSON for the fleet's own node
list decoder (fleet/sources.decode_hosts). Decoding checks the whole page as JSON but builds no
node. Imported only by ``fleet --kubernetes``; no ``from __future__ import annotations``: msgspec
reads these annotations."""

from typing import Any, Optional

import msgspec


class NodePage(msgspec.Struct):
    kind: Any = None
    metadata: Any = None
    items: Optional[list[msgspec.Raw]] = None


decode_page = msgspec.json.Decoder(NodePage).decode
Malformed = msgspec.DecodeError  # not JSON, or not of these types, or a number msgspec does not hold
