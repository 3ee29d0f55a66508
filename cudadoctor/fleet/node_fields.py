"""msgspec's side of reading a fleet's documents. The fields of a Kubernetes node list that a
fleet host is made of, as msgspec types: each node's kind, name, labels and status.nodeInfo.
Decoding a list into them checks the whole document as JSON but builds no Python object for
anything else (annotations, images, spec, conditions), so a node list reads at about four times
json's speed. Imported only by a fleet (fleet/sources.py); no ``from __future__ import
annotations``: msgspec reads these annotations."""

from typing import Any, Optional

import msgspec


class Metadata(msgspec.Struct):
    name: str = ""
    labels: msgspec.Raw = msgspec.Raw(b"{}")  # decoded node by node: never every node's labels at once


class Status(msgspec.Struct):
    nodeInfo: Any = None


class Node(msgspec.Struct):
    kind: str = "Node"
    metadata: Optional[Metadata] = None
    status: Optional[Status] = None


class NodeList(msgspec.Struct):
    kind: Any = None
    items: Optional[list[Node]] = None


decode_node_list = msgspec.json.Decoder(NodeList).decode
decode_labels = msgspec.json.Decoder(dict[str, str]).decode
decode_value = msgspec.json.decode  # any JSON value: a small document read whole (a snapshot)
Malformed = msgspec.DecodeError  # not JSON, or not of these types (msgspec.ValidationError is one)
