"""Renderers: JSON for scripts, rich text for people. The only other place that writes output."""
