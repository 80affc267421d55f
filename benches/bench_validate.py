"""Generated configs for the validate benchmarks of benches/run.py (``python benches/run.py
validate``, which writes benches/RESULTS-validate.md): every example type, realistic values
with random variations, about one in ten broken on purpose."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/config.json"))


def _variants(n: int, seed: int = 0, *, distinct: bool = False):
    """n configs derived from the examples: renamed, resized, flags flipped, some broken.
    About 600 of 10,000 are distinct documents (a run checks each distinct one once:
    spec_format/runner/config_memo.py); ``distinct`` makes them differ (each names a verifier
    repository of its own, but where the break drops that name), so that little is shared."""
    rng = random.Random(seed)
    bases = [json.loads(p.read_text()) for p in EXAMPLES]
    for i in range(n):
        cfg = copy.deepcopy(rng.choice(bases))
        tlc = cfg["transformer_layer_config"]
        tlc["num_hidden_layers"] = (
            rng.choice([1, 2, 3, 5])
            if cfg["speculators_model_type"] != "mtp"
            else tlc["num_hidden_layers"]
        )
        if "layer_types" in tlc and cfg["speculators_model_type"] != "mtp":
            tlc["layer_types"] = ["full_attention"] * tlc["num_hidden_layers"]
        cfg["speculators_config"]["proposal_methods"][0]["verifier_accept_k"] = 1
        if distinct:
            verifier = cfg["speculators_config"]["verifier"]
            verifier["name_or_path"] = f"bench-org-{i}/{verifier['name_or_path'].split('/')[-1]}"
        if "draft_vocab_size" in cfg:
            cfg["draft_vocab_size"] = rng.choice([16000, 32000, 64000])
        if "norm_before_residual" in cfg:
            cfg["norm_before_residual"] = rng.random() < 0.5
        if i % 10 == 0:  # a broken one: wrong type, out of range, or a dropped required key
            kind = rng.randrange(3)
            if kind == 0:
                tlc["hidden_size"] = str(tlc["hidden_size"])
            elif kind == 1:
                cfg["speculators_config"]["proposal_methods"][0]["speculative_tokens"] = 0
            else:
                del cfg["speculators_config"]["verifier"]["name_or_path"]
        yield cfg
