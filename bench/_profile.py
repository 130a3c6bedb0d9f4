"""Run the harness CLI under cProfile with a CPU-time clock: _profile.py OUT ARGS...

Wall-clock profilers mostly show an asyncio program waiting; this counts where the
controller's CPU goes. Read the result with `python -m pstats OUT`.
"""

from __future__ import annotations

import cProfile
import sys
import time

from harness.cli import main

if __name__ == "__main__":
    out, args = sys.argv[1], sys.argv[2:]
    sys.argv = ["harness", *args]
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    try:
        main()
    except SystemExit:
        pass
    finally:
        profile.disable()
        profile.dump_stats(out)
