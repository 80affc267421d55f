"""Records what each vLLM release group reads, per draft class: ``schema/readers/reads/``.

``python -m tests.readers.reads vllm==0.24.0 [...]`` (no argument: every vLLM group whose
environment has its model layer) loads the weight-contract drafts of every type the group's
table file executes (tests/readers/test_weight_contract.py's cases) into the release's own
draft classes with recording on (weights_probe.py, reads_probe.py) and writes
``schema/readers/reads/vllm-<group>.json`` (format: ``reads.schema.json``): per class the release builds, the draft config
fields it read (raw keys, and attributes of the draft's config object as
``transformer_layer_config`` keys unless the conversion takes them from the top level), the
verifier config attributes it read, and the tensor names it loaded, skipped and left at their
initial value (layer and module indices as ``{i}``); and the verifier architectures of its
registry whose class can hand a drafter aux hidden states (tests/readers/aux_archs.py, read
from the source; ``supports_eagle3`` executed for the test verifiers' classes). Then it rewrites the counts in
``schema/readers/README.md`` (``spec_format.facts.reads.summary``).
``tests/readers/test_reads.py`` checks a file against the executed release.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

from spec_format.facts import readers, reads
from tests.readers import aux_archs, mtp_reads, oracle, probes

DIR = oracle.ROOT / "schema" / "readers" / "reads"
README = oracle.ROOT / "schema" / "readers" / "README.md"
_INDEX = re.compile(r"\.\d+\.")


def generic(name: str) -> str:
    """``layers.0.mlp.up_proj.weight`` -> ``layers.{i}.mlp.up_proj.weight``."""
    return _INDEX.sub(".{i}.", name.removeprefix("model."))


def requests(rid: str, root: Path) -> dict[tuple[str, str], dict]:
    """(type, case) -> a recording request for every weight-contract draft ``rid`` loads."""
    from tests.readers import test_weight_contract as contract

    return {
        key: {**request, "record": True} for key, request in contract._requests(rid, root).items()
    }


def fields(raw: list[str], attributes: list[str]) -> list[str]:
    """The draft config fields of one recording: the raw keys read, and each attribute of
    the draft's config object as the top-level key the conversion copies it from, else as
    the ``transformer_layer_config`` key the object is built from."""
    top = {k for k in raw if "." not in k}
    out = set(raw)
    for name in attributes:
        out.add(name if name in top else f"transformer_layer_config.{name}")
    return sorted(out)


def collect(answers: dict[tuple[str, str], dict]) -> dict:
    """class -> its reads, over the recorded answers (a draft the release did not build is
    left out: its class is unknown)."""
    out: dict[str, dict] = {}
    for (model_type, _), got in sorted(answers.items()):
        cls = got.get("class")
        recorded = got.get("reads")
        if not cls or recorded is None:
            continue
        entry = out.setdefault(
            cls,
            {
                "types": [],
                "draft": set(),
                "verifier": set(),
                "loaded": set(),
                "skipped": set(),
                "initial": set(),
            },
        )
        if model_type not in entry["types"]:
            entry["types"].append(model_type)
        entry["draft"] |= set(fields(recorded["draft"], recorded["draft_attributes"]))
        entry["verifier"] |= set(recorded["verifier_attributes"])
        entry["loaded"] |= {generic(n) for n in got.get("loaded") or {}}
        entry["skipped"] |= {generic(n) for n in got.get("dropped") or ()}
        entry["initial"] |= {generic(n) for n in got.get("initial") or ()}
    return {
        cls: {
            "types": sorted(e["types"]),
            "draft": sorted(e["draft"]),
            "verifier": sorted(e["verifier"]),
            "tensors": {k: sorted(e[k]) for k in ("loaded", "skipped", "initial")},
        }
        for cls, e in sorted(out.items())
    }


def record(rid: str, root: Path) -> dict:
    rel = readers.release(*rid.split("=="))
    asked = requests(rid, root)
    keys = list(asked)
    got = probes.run(rel, [asked[k] for k in keys])
    for key, answer in zip(keys, got, strict=True):
        if answer.get("stage") == "probe":
            raise RuntimeError(f"{rid} {key}: {answer['error']}")
    answers = dict(zip(keys, got, strict=True))
    return {
        "$schema": "reads.schema.json",
        "reader": "vllm",
        "version": rel.representative,
        "classes": collect(answers),
        "verifier_architectures": aux_archs.architectures(oracle.env_path(rel) / "src"),
        "executed_interface": executed_interface(answers),
        "eagle3_target_model_types": aux_archs.eagle3_target_types(oracle.env_path(rel) / "src"),
        "mtp_n_predict": mtp_reads.n_predict_reads(oracle.env_path(rel) / "src"),
    }


def executed_interface(answers: dict) -> dict[str, bool | None]:
    """The test verifiers' architectures -> what ``supports_eagle3`` answered for the class
    the release loads (executed; the source reading of ``aux_archs`` must agree)."""
    out: dict[str, bool | None] = {}
    for got in answers.values():
        out.update((got.get("reads") or {}).get("interface") or {})
    return dict(sorted(out.items()))


def main(argv: list[str]) -> int:
    rids = argv or [
        r
        for r in readers.representatives()
        if r.startswith("vllm==")
        and (oracle.env_path(readers.release(*r.split("=="))) / ".model-ok").is_file()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for rid in rids:
            data = record(rid, Path(tmp))
            path = DIR / f"vllm-{data['version']}.json"
            path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            print(f"{rid}: {len(data['classes'])} classes -> {path}", file=sys.stderr)
    reads.groups.cache_clear()
    README.write_text(reads.readme_text(README.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
