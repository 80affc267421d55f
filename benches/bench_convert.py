"""The convert benchmark's source for benches/run.py (``python benches/run.py convert``,
which writes benches/RESULTS-convert.md): a SafeAILab-style EAGLE-3 checkpoint with the
shapes of RedHatAI/Qwen3-8B-speculator.eagle3's draft (H=4096, V=151936, D=32000, one
``midlayer``, a trained ``embed_tokens``, t2d/d2t, bf16, ~2.0 GB) and a Qwen3-8B verifier
config, built in a directory the caller deletes."""

from __future__ import annotations

import json
from pathlib import Path

AUX = "2,18,33"


def build(workdir: Path) -> tuple[Path, Path, int]:
    from spec_format.testing import builder, safeailab

    sizes = safeailab.QWEN3_8B
    src = workdir / "src"
    config = safeailab.safeailab_config(sizes, {"max_position_embeddings": 40960})
    shapes = safeailab.safeailab_shapes(sizes, embed=True)
    safeailab.build_safeailab(src, config, shapes, dense=False)
    verifier = workdir / "verifier"
    verifier.mkdir()
    (verifier / "config.json").write_text(json.dumps(builder.qwen3_8b_config()))
    return src, verifier, (src / "model.safetensors").stat().st_size
