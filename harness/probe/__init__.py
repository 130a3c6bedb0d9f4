"""The static probe: its C source and the cached build."""

from harness.probe.build import BuiltProbe, build_probe

__all__ = ["BuiltProbe", "build_probe"]
