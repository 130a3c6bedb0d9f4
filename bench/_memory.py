"""Run the harness CLI under tracemalloc, keeping a snapshot near its peak: _memory.py OUT ARGS...

Peak RSS says how much, not what: this says which lines hold the memory when the
run holds the most. A thread looks at the traced size every half second and takes
a snapshot whenever it has grown by 2% past the largest seen; the last one is
written to OUT (read it with `tracemalloc.Snapshot.load`, or `python
bench/_memory.py --top OUT`). Tracing slows the run and adds its own memory, so
nothing measured under it is a figure.
"""

from __future__ import annotations

import sys
import threading
import tracemalloc

FRAMES = 12


def _watch(out: str, stop: threading.Event) -> None:
    best = 0
    while not stop.wait(0.5):
        size = tracemalloc.get_traced_memory()[0]
        if size > best * 1.02:
            best = size
            tracemalloc.take_snapshot().dump(out)


def top(path: str, limit: int = 25) -> None:
    """Print where the snapshot's memory is, by line and by traceback."""
    snap = tracemalloc.Snapshot.load(path).filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    total = sum(s.size for s in snap.statistics("filename"))
    print(f"traced: {total / 2**20:.1f} MiB")
    for stat in snap.statistics("lineno")[:limit]:
        print(f"{stat.size / 2**10:10.0f} KiB {stat.count:8d}  {stat.traceback[0]}")
    print()
    for stat in snap.statistics("traceback")[:limit]:
        print(f"{stat.size / 2**10:10.0f} KiB {stat.count:8d}")
        for line in stat.traceback.format(limit=FRAMES, most_recent_first=True)[::2]:
            print("    ", line.strip())


if __name__ == "__main__":
    if sys.argv[1] == "--top":
        top(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 25)
        sys.exit(0)
    out, args = sys.argv[1], sys.argv[2:]
    sys.argv = ["harness", *args]
    tracemalloc.start(FRAMES)
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(out, stop), daemon=True)
    watcher.start()
    from harness.cli import main

    try:
        main()
    except SystemExit:
        pass
    finally:
        stop.set()
        watcher.join()
