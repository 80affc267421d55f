"""Child for the signal tests: the real ``specfmt convert``, paused in the middle of writing.

``python signal_convert.py MARKER convert SRC -o DEST ...``: when the first weights file of
the temporary output is open, the child creates MARKER and sleeps (the parent then sends a
real SIGTERM, SIGHUP or SIGINT); without a signal it goes on after 60 s (or
``SIGNAL_CONVERT_PAUSE`` seconds). Only the timing is arranged: the signal, its handling and
the clean-up are the program's own.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main(marker: Path, args: list[str]) -> None:
    from spec_format.cli.app import main as specfmt
    from spec_format.convert import write

    real = write._write_safetensors

    def paused(path, members, sources):
        marker.write_text(str(path))
        deadline = time.monotonic() + float(os.environ.get("SIGNAL_CONVERT_PAUSE", 60))
        while time.monotonic() < deadline:
            time.sleep(0.05)
        return real(path, members, sources)

    write._write_safetensors = paused
    sys.argv = ["specfmt", *args]
    specfmt()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
