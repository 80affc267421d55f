"""Write tests/data/verifiers/v5/*.json: each v4/*.json config loaded and saved by the real
transformers 5 (the class of its model_type), so the v5 files are what transformers 5 writes.

    PYTHONPATH=.cache/interop/envs/0.9.0 .cache/interop/base/bin/python \
        tests/data/verifiers/make_v5.py

v5-input/ holds the settings of models that exist only in transformers 5 (Gemma 4), saved
the same way. Configs of a model_type transformers does not ship (remote code, e.g.
kimi_k2) are skipped.
"""

import json
import sys
import tempfile
from pathlib import Path

import transformers
from transformers import CONFIG_MAPPING

HERE = Path(__file__).resolve().parent


def main() -> None:
    assert transformers.__version__.startswith("5."), transformers.__version__
    sources = [*(HERE / "v4").glob("*.json"), *(HERE / "v5-input").glob("*.json")]
    for src in sorted(sources, key=lambda p: p.name):
        doc = json.loads(src.read_text())
        if doc["model_type"] not in CONFIG_MAPPING:
            print(f"skip {src.name}: {doc['model_type']} is remote code", file=sys.stderr)
            continue
        config = CONFIG_MAPPING[doc["model_type"]].from_dict(doc)
        with tempfile.TemporaryDirectory() as tmp:
            config.save_pretrained(tmp)
            text = (Path(tmp) / "config.json").read_text()
        (HERE / "v5" / src.name).write_text(text)
        print(f"{src.name}: transformers {transformers.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
