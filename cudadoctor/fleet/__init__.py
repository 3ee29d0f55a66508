"""The fleet: every node of a cluster judged at once, from host snapshots or the node labels of
NVIDIA's GPU Feature Discovery. Pure: the CLI reads the sources (through the loader) and prints.

``sources`` tells documents apart and turns each into hosts, ``gfd`` reads GFD's labels as host
facts, ``judge`` groups the hosts and runs the pure check once per group, ``payload`` renders the
result, ``affinity`` writes a Kubernetes nodeAffinity and ``nfd`` a Node Feature Discovery file.
"""

from .judge import FleetResult, judge_fleet
from .sources import FleetHost, SourceError, SourceProblem, hosts_in

__all__ = ["FleetResult", "FleetHost", "SourceError", "SourceProblem", "hosts_in", "judge_fleet"]
