"""Run a command in a child process; report wall time and peak memory.

    python benchmarks/_measure.py CMD ARG...
    -> prints JSON {"seconds": .., "peak_rss_mb": .., "peak_tree_rss_mb": .., "returncode": ..}

``peak_rss_mb``: the largest single process (the command or any process it
started), from getrusage.  ``peak_tree_rss_mb``: the largest sum of the RSS
of the command and all its descendants at once, sampled from /proc every
20 ms (Linux; equal to peak_rss_mb for a one-process command, up to sampling).
"""

import json
import resource
import subprocess
import sys
import time


def _tree_rss(pid: int) -> int:
    """Sum of VmRSS (kB) of ``pid`` and its descendants, from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            pass
    return total


t0 = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:])
tree = 0
while True:
    tree = max(tree, _tree_rss(proc.pid))
    try:
        proc.wait(timeout=0.02)  # returns as soon as the command ends
        break
    except subprocess.TimeoutExpired:
        pass
dt = time.perf_counter() - t0
# (Linux keeps a process's ru_maxrss across exec, and a fork starts from its parent's pages:
# the command is measured from this small wrapper, never from a big benchmark process)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": dt, "peak_rss_mb": rss, "peak_tree_rss_mb": max(tree / 1024, rss), "returncode": proc.returncode}))
