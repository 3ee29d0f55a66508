"""Probes: the only code that reads the outside world. Each returns facts and never raises."""
