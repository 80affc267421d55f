"""Runs inside the speculators 0.9 environment (like tests/forward/speculators_probe.py):
the library's training model (``Eagle3DraftModel``) loads the release's own conversion, the
reference forward loads specfmt's; both draft from the same inputs.

argv: OURS THEIRS. Prints ``{"max_abs_diff": float}``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "forward"))
# specfmt's own dependencies the release environment lacks, searched last (as there)
sys.path.extend(p for p in os.environ.get("SPECFMT_PROBE_FALLBACK_PATH", "").split(os.pathsep) if p)

import torch  # noqa: E402
from forward_helpers import inputs, load  # noqa: E402
from speculators_probe import diff, library_model, lm_head_outputs  # noqa: E402


def main() -> None:
    ours_path, theirs_path = Path(sys.argv[1]), Path(sys.argv[2])
    theirs_config = json.loads((theirs_path / "config.json").read_text())
    ref = library_model(
        "speculators.models.eagle3.core.Eagle3DraftModel", theirs_config, theirs_path
    )
    ours = load(ours_path)
    T, K = 10, 3
    ids, hidden = inputs(ours, T)
    seen = lm_head_outputs(ref)
    with torch.no_grad():
        ref(hidden[None], ids[None], torch.zeros(1, T, dtype=torch.long), ttt_steps=K + 1)
    ours.to_target = lambda draft_ids: torch.zeros_like(draft_ids)  # as training pads
    with torch.no_grad():
        out = ours.draft(ids, hidden, steps=K)
    worst = diff(out.logits, seen[0][0])
    for k in range(1, K + 1):
        worst = max(worst, diff(out.chain_logits[k - 1], seen[k][0, -1]))
    print(json.dumps({"max_abs_diff": worst}))


if __name__ == "__main__":
    main()
