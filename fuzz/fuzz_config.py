"""Long fuzz run of everything that reads a config.json (the CI property tests of
tests/hostile, for longer): validate (with and without a hostile --verifier), migrate and fix.

    python fuzz/fuzz_config.py --seconds 600            # ~90,000 configs on one core
    python fuzz/fuzz_config.py --seconds 600 --checkpoints   # hostile headers, every W/D/V rule
    python fuzz/fuzz_config.py --seed 123 --count 1     # replay one case (prints the file)

A case fails when specfmt reports an internal error (I012 / exit 70), raises anything but
its own errors, or migrate/fix produce NaN, Infinity or a lone surrogate. Failing seeds are
printed and the exit status is 1. Run before a release.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spec_format.base.errors import SpecfmtError  # noqa: E402
from spec_format.runner.validation import ValidateOptions, validate  # noqa: E402
from tests.hostile.config_gen import config_text, verifier_text  # noqa: E402
from tests.hostile.test_properties import (  # noqa: E402
    assert_no_internal_error,
    check_checkpoint,
    check_rewrite,
    put,
)


def checkpoint_problem(seed: int, workdir: Path) -> str | None:
    import json

    from spec_format.testing.builder import build_checkpoint, tiny_config

    folder = workdir / "ckpt"
    real = workdir / "real.safetensors"
    verifier = workdir / "verifier.json"
    if not real.exists():
        built = build_checkpoint(workdir / "base", tiny_config("eagle3"), data="zeros").path
        real.write_bytes((built / "model.safetensors").read_bytes())
        folder.mkdir()
        verifier.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 64}))
    options = ValidateOptions(deep=True, scan_weights=True, verifier=str(verifier))
    try:
        check_checkpoint(folder, real.read_bytes(), options, seed)
    except Exception:
        return traceback.format_exc()
    return None


def problem(seed: int, workdir: Path) -> str | None:
    config, verifier = workdir / "config.json", workdir / "verifier.json"
    put(config, config_text(seed))
    put(verifier, verifier_text(seed))
    try:
        assert_no_internal_error(validate([config]), seed)
        try:
            report = validate([config], ValidateOptions(verifier=str(verifier)))
        except SpecfmtError as exc:
            assert exc.exit_code == 2, f"seed {seed}: unusable verifier gave {exc.exit_code}"
        else:
            assert_no_internal_error(report, seed)
        check_rewrite(config, seed)
    except Exception:
        return traceback.format_exc()
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--count", type=int, default=None, help="stop after this many cases")
    parser.add_argument(
        "--checkpoints", action="store_true", help="hostile safetensors headers instead"
    )
    args = parser.parse_args()
    failures = 0
    done = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        seed = args.seed
        while time.monotonic() < deadline and (args.count is None or done < args.count):
            found = (checkpoint_problem if args.checkpoints else problem)(seed, workdir)
            if found:
                failures += 1
                print(f"seed {seed}:\n{found}", flush=True)
            if args.count == 1:
                print(config_text(seed))
            seed += 1
            done += 1
    print(f"{done} cases from seed {args.seed}, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
