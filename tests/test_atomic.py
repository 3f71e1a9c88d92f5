"""toonstream._atomic.AtomicOutput: the destination is replaced only when
the block succeeds; a process killed outright leaves no temporary file
where the system has anonymous files (O_TMPFILE)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from toonstream._atomic import AtomicOutput, _anonymous


def test_success_failure_and_modes(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with AtomicOutput(str(out)) as f:
        f.write(b"one")
        assert not out.exists()
    assert out.read_bytes() == b"one" and os.listdir(tmp_path) == ["out.txt"]
    out.chmod(0o640)
    with pytest.raises(RuntimeError):
        with AtomicOutput(str(out)) as f:
            f.write(b"two")
            raise RuntimeError("failed")
    assert out.read_bytes() == b"one" and os.listdir(tmp_path) == ["out.txt"]
    with AtomicOutput(str(out)) as f:
        f.write(b"three")
    assert out.read_bytes() == b"three" and (out.stat().st_mode & 0o777) == 0o640
    link = tmp_path / "link"
    link.symlink_to("out.txt")
    with AtomicOutput(str(link)) as f:
        f.write(b"four")
    assert link.is_symlink() and out.read_bytes() == b"four"
    assert sorted(os.listdir(tmp_path)) == ["link", "out.txt"]


_KILLED = """
import sys, time
from toonstream._atomic import AtomicOutput
with AtomicOutput(sys.argv[1]) as f:
    f.write(b"x" * (1 << 20))
    f.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


@pytest.mark.skipif(_anonymous(".") is None, reason="no anonymous files (O_TMPFILE) on this system: mkstemp's name stays")
def test_sigkill_while_writing_leaves_nothing(tmp_path: Path) -> None:
    """SIGKILL (the OOM killer, a container's eviction) cannot be caught: the
    file being written is anonymous until the end, so nothing is left."""
    out = tmp_path / "out.toon"
    out.write_text("old")
    p = subprocess.Popen([sys.executable, "-c", _KILLED, str(out)], stdout=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline() == b"writing\n"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    assert os.listdir(tmp_path) == ["out.toon"] and out.read_text() == "old"
