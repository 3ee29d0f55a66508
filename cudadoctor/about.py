"""The version, in a module of its own: the probes and the CLI stamp it, and importing it costs nothing."""

__version__ = "0.1.0"
