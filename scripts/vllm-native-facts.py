#!/usr/bin/env python3
"""What each vLLM release makes of an EAGLE-3 draft it reads as it is, read from its wheel.

    scripts/vllm-native-facts.py            # every vLLM release of the reader table
    scripts/vllm-native-facts.py --check    # recompute; exit 1 when the table differs

vLLM serves a SafeAILab / SpecForge EAGLE-3 checkpoint (``LlamaForCausalLMEagle3``, no
speculators config) without converting it: its ``Eagle3LlamaForCausalLM``
(``vllm/model_executor/models/llama_eagle3.py``) reads the draft's own ``config.json``, where
such checkpoints keep what the speculators format has no field for (``eagle_config``). The
reader table (``schema/readers/vllm-*.json``) describes the speculators path; this table
describes the class on the source config. Per release (every member of the reader table,
its wheel in ``.cache/vllm/wheels``, fetched there with ``pip download --no-deps`` when
missing; only the ``.py`` files are read, from the zip):

- how many hidden states ``fc`` takes for each input a release may size it from
  (``num_aux_hidden_states``, the aux layer ids under ``eagle_config`` or at the top level,
  alone and in pairs) and for a head that declares ``eagle_config.use_aux_hidden_state:
  false`` (0: no fc is built), executed from the model's own ``__init__``
  (scripts/wheel_facts.py);
- whether ``load_weights`` skips the checkpoint's ``fc.*`` when it built no fc (read from
  the source).

Written to ``schema/readers/native/vllm.json`` through the project's writer.
Exit 0 done, 1 the check found a difference or a step failed, 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "scripts"):  # the package, and wheel_facts beside this script
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import wheel_facts  # noqa: E402

TABLE = ROOT / "schema" / "readers" / "native" / "vllm.json"
WHEELS = Path(os.environ.get("SPECFMT_READER_CACHE", ROOT / ".cache" / "vllm")) / "wheels"
MODULE = "vllm/model_executor/models/llama_eagle3.py"
#: the architecture SafeAILab / SpecForge EAGLE-3 configs name, and the class vLLM builds
ARCHITECTURE = "LlamaForCausalLMEagle3"
_SKIPS_FC = re.compile(
    r"if not self\.model\.use_aux_hidden_state:\s*"
    r"""(skip_substrs\.append\(\s*["']fc\.["']\s*\)|orig_to_new_substr\[\s*["']fc\.["']\s*\] = None)"""
)


def _say(line: str) -> None:
    print(f"[vllm-native-facts] {line}", file=sys.stderr, flush=True)


def versions() -> list[str]:
    from spec_format.facts import readers

    return [r.split("==", 1)[1] for r in readers.releases() if r.startswith("vllm==")]


def wheel(version: str) -> Path:
    return wheel_facts.wheel("vllm", version, WHEELS)


def release_facts(version: str) -> dict:
    with zipfile.ZipFile(wheel(version)) as zf:
        text = zf.read(MODULE).decode("utf-8", "replace") if MODULE in zf.namelist() else None
    cases = wheel_facts.fc_cases(text)
    if cases is None or cases["default"] is None:
        raise SystemExit(
            f"vllm {version}: {MODULE}: fc's width did not execute; read it and extend"
        )
    return {"eagle3_fc": cases, "skips_fc_without_aux": bool(text and _SKIPS_FC.search(text))}


def table(per_release: dict[str, dict], order: list[str]) -> dict:
    fc = {}
    for case in wheel_facts.FC_CASES:
        counts = [per_release[v]["eagle3_fc"][case] for v in order]
        found = wheel_facts.spans_by_outcome(counts, order)
        if found:
            fc[case] = found
    return {
        "$comment": "written by scripts/vllm-native-facts.py from each release's wheel; never edit",
        "engine": "vllm",
        "releases": order,
        "module": MODULE,
        "architecture": ARCHITECTURE,
        "eagle3_fc": {ARCHITECTURE: fc},
        "skips_fc_without_aux": {
            ARCHITECTURE: wheel_facts.spans(
                [per_release[v]["skips_fc_without_aux"] for v in order], order
            )
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="recompute and compare")
    args = parser.parse_args(argv)
    order = versions()
    try:
        per_release = {v: release_facts(v) for v in order}
    except (OSError, zipfile.BadZipFile) as exc:
        _say(f"failed: {exc}")
        return 1
    doc = table(per_release, order)
    if args.check:
        current = json.loads(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else None
        if current != doc:
            _say(f"{TABLE.relative_to(ROOT)} differs from the wheels; rerun without --check")
            return 1
        _say(f"{len(order)} releases: the table matches their wheels")
        return 0
    from spec_format.parsers.outfile import write_output

    TABLE.parent.mkdir(parents=True, exist_ok=True)
    write_output(TABLE, json.dumps(doc, indent=1) + "\n")
    _say(f"wrote {TABLE.relative_to(ROOT)}: {len(order)} releases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
