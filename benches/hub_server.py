"""A Hub on 127.0.0.1 with real latency, in a process of its own, for the audit rows of
``benches/run.py audit``:

    python benches/hub_server.py --drafts 200 --latency 0.05

serves ``org/d0`` ... ``org/d{N-1}``, each the same valid EAGLE-3 draft (the tiny one of
``spec_format.testing.builder``, weights over 64 KiB so that a header is a range cut from a
larger file, as on the Hub), through the fake Hub of the tests (tests/weights/fake_hub.py:
listing, files, a redirect of the weights to a second server standing in for the CDN, range
answers), every answer delayed by ``--latency`` seconds. Prints the endpoint on one line and
serves until its standard input closes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from spec_format.testing.builder import build_checkpoint, tiny_config
    from tests.weights.fake_hub import FakeHub, running

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drafts", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    args = parser.parse_args()
    hub = FakeHub(latency_s=args.latency, max_wait_s=3600)
    with tempfile.TemporaryDirectory() as tmp:
        draft = build_checkpoint(Path(tmp) / "d", tiny_config("eagle3"), data="zeros").path
        hub.add("org/d0", draft)
        for i in range(1, args.drafts):  # the same files, held once
            hub.repos[f"org/d{i}"] = hub.repos["org/d0"]
    with running(hub):
        print(hub.endpoint, flush=True)
        sys.stdin.read()  # until the caller closes it
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
