"""harness: prove, by attempting violations, which properties a sandbox enforces."""

from harness._version import __version__
from harness.errors import HarnessError, SpecError
from harness.plan import Plan, make_plan
from harness.runner import RunOutcome, execute
from harness.spec import load_matrix

__all__ = [
    "HarnessError",
    "Plan",
    "RunOutcome",
    "SpecError",
    "__version__",
    "execute",
    "load_matrix",
    "make_plan",
]
