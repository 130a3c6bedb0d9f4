"""The static probe: its C source and the cached build for each architecture."""

from harness.probe.build import BuiltProbe, Probes, build_probe

__all__ = ["BuiltProbe", "Probes", "build_probe"]
