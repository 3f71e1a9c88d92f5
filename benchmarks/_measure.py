"""Run a command in a child process; report wall time and the child's peak RSS.

    python benchmarks/_measure.py CMD ARG...   -> prints JSON {"seconds": .., "peak_rss_mb": ..}
"""

import json
import resource
import subprocess
import sys
import time

t0 = time.perf_counter()
proc = subprocess.run(sys.argv[1:])
dt = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": dt, "peak_rss_mb": rss, "returncode": proc.returncode}))
