"""harness: prove, by attempting violations, which properties a sandbox enforces.

The package root holds the version only, so that reading a report never imports the
runner, asyncssh or the CLI library; modules import what they use, where they use it.
"""

from harness._version import __version__

__all__ = ["__version__"]
