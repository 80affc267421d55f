"""Long fuzz run of the safetensors header reader (the CI property test, for longer).

    python fuzz/fuzz_header.py --seconds 600            # ~1M files on one core
    python fuzz/fuzz_header.py --seed 123 --count 1     # replay one case

For every generated and mutated file: the reader must not raise, must read no more than
the header, and must agree with the safetensors library (accept only what it accepts;
refuse what it accepts only for duplicate names). Failing seeds are printed and the exit
status is 1.
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "safetensors"))

import safetensors  # noqa: E402
from header_gen import generated, mutated  # noqa: E402

from spec_format.parsers.safetensors import BytesSource, HeaderErrorKind, scan_header  # noqa: E402


def problem(blob: bytes) -> str | None:
    source = BytesSource(blob)
    try:
        scan = scan_header(source)
    except Exception:
        return "crash:\n" + traceback.format_exc()
    if len(blob) >= 8:
        n = struct.unpack("<Q", blob[:8])[0]
        if source.bytes_read > 8 + (n if 8 + n <= len(blob) else 0):
            return f"read {source.bytes_read} bytes, more than the header"
    try:
        safetensors.deserialize(blob)
        theirs = True
    except Exception:
        theirs = False
    if scan.ok and not theirs:
        return "accepted a file the library refuses"
    if (
        theirs
        and not scan.ok
        and {e.kind for e in scan.errors} - {HeaderErrorKind.DUPLICATE_TENSOR_NAME}
    ):
        return f"refused a file the library accepts: {scan.errors[:2]}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--count", type=int, default=0, help="stop after this many seeds")
    parser.add_argument("--seed", type=int, default=1_000_000, help="first seed")
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    seed, checked, failures = args.seed, 0, 0
    while time.monotonic() < deadline and (not args.count or checked < 2 * args.count):
        for make in (generated, mutated):
            what = problem(make(seed))
            checked += 1
            if what:
                failures += 1
                print(f"seed {seed} ({make.__name__}): {what}")
        seed += 1
    print(f"{checked:,} files checked, {failures} failures (seeds {args.seed}..{seed - 1})")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
