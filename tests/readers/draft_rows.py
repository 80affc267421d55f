"""Write a vLLM reader-table file from what the executed release reads (a drafting aid).

``python -m tests.readers.draft_rows vllm==0.20.0 [--template vllm==0.28.0]`` runs the
release's environment (scripts/reader-envs.sh) on the same configs the readers test group
asks, with the rows of the template release (default: the newest table file of each type), and
prints a table file: the types it accepts, the keys it requires, the verifier forms and layer
model types it refuses, and per field the reading of each case, or ``ignored`` when no value
changes anything. ``members`` comes from scripts/vllm-digests.py (the releases whose reader
and model source both digest the same); each served type's weight block is the template's,
for the readers test group to execute (scripts/add-release.py writes the file). Whatever the table format cannot say is printed on stderr for
review; the readers test group then checks every row.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys

from spec_format.facts import readers
from tests.common import load_script
from tests.readers import oracle
from tests.readers.test_reader_table import VERIFIERS, _layer_type, _mixed_layers, _without

TYPES = ("eagle3", "peagle", "dflash", "dflash2", "dspark")
UNKNOWN = "not-a-speculators-type"
LAYER_TYPES = (None, "mistral", "llama", "qwen3")


def _digests():
    return load_script(oracle.ROOT / "scripts" / "vllm-digests.py")


def template_rows(template: str | None) -> dict[str, tuple[readers.Release, dict]]:
    """type -> (release, model entry) of the template (default: the newest with the type)."""
    out: dict[str, tuple[readers.Release, dict]] = {}
    rids = [template] if template else [r for r in readers.releases() if r.startswith("vllm==")]
    for rid in rids:
        rel = readers.release(*rid.split("=="))
        for model_type, model in rel.data.get("models", {}).items():
            out[model_type] = (rel, model)
    return out


def draft(version: str, template: str | None) -> tuple[dict, list[str]]:
    rel = readers.Release("vllm", version, {"version": version})
    rows = template_rows(template)
    newest = readers.release(
        *[r for r in readers.releases() if r.startswith("vllm==")][-1].split("==")
    )
    requests: dict[tuple, dict] = {}
    eagle = oracle.base_config("vllm==0", "eagle3")
    requests[("unknown",)] = {**copy.deepcopy(eagle), "speculators_model_type": UNKNOWN}
    for pointer in newest.data.get("requires", {}):
        requests[("requires", pointer)] = _without(eagle, pointer)
    for value in ("qwen3", "llama", "speculators"):
        requests[("top", value)] = {**copy.deepcopy(eagle), "model_type": value}
    for value in VERIFIERS:
        cfg = copy.deepcopy(eagle)
        cfg["speculators_config"]["verifier"]["name_or_path"] = value
        requests[("verifier", repr(value))] = cfg
    for model_type in TYPES:
        base = oracle.base_config("vllm==0", model_type)
        requests[("base", model_type)] = base
        for value in LAYER_TYPES:
            requests[("layer", model_type, repr(value))] = _layer_type(base, value)
        for name, row in rows[model_type][1].get("fields", {}).items():
            for case, value in oracle.cases(row):
                key = ("row", model_type, name, case, repr(value))
                requests[key] = oracle.variant(base, name, case, value)
            for value in row.get("test_values", []) if "scope" in row else ():
                requests[("scope", model_type, name, repr(value))] = _mixed_layers(
                    oracle.variant(base, name, "given", value)
                )
    answers = dict(zip(requests, oracle.run(rel, list(requests.values())), strict=True))
    review: list[str] = []

    def rejected(key) -> str | None:
        answer = answers[key]
        return None if answer.get("accepted") else (answer.get("error") or "")

    unknown = rejected(("unknown",))
    out: dict = {"$schema": "reader.schema.json", "reader": "vllm", "version": version}
    accepted, fails, serves_as = [], {}, {}
    for model_type in TYPES:
        error = rejected(("base", model_type))
        if error is not None and error == unknown.replace(UNKNOWN, model_type):
            continue
        if error is not None and "Expected one of" in error:
            continue
        accepted.append(model_type)
        if error is not None:
            fails[model_type] = error
            continue
        spec = answers[("base", model_type)]["speculative"]
        how = {}
        if spec["method"] != model_type:
            how["method"] = spec["method"]
        if spec["parallel_drafting"]:
            how["parallel_drafting"] = True
        if how:
            serves_as[model_type] = how
    out["types"] = {"accepted": accepted, "message": unknown}
    if fails:
        out["types"]["fails"] = fails
    if serves_as:
        out["types"]["serves_as"] = serves_as
    requires = {}
    for pointer in newest.data.get("requires", {}):
        error = rejected(("requires", pointer))
        if error is not None:
            requires[pointer] = error
    out["requires"] = requires
    if (
        rejected(("top", "qwen3"))
        and rejected(("top", "llama"))
        and not rejected(("top", "speculators"))
    ):
        out["top_level"] = copy.deepcopy(newest.data["top_level"])
    refused = [readers.verifier_form(v) for v in VERIFIERS if rejected(("verifier", repr(v)))]
    if refused:
        messages = {rejected(("verifier", repr(v))) for v in VERIFIERS} - {None}
        out["verifier"] = {
            "pointer": "/speculators_config/verifier/name_or_path",
            "rejects": sorted(set(refused), key=refused.index),
            "message": _common(messages),
        }
    models = {}
    for model_type in accepted:
        if model_type in fails:
            continue
        trel, tmodel = rows[model_type]
        model: dict = {"fields": {}}
        base_answer = answers[("base", model_type)]
        for name, row in tmodel.get("fields", {}).items():
            new, notes = _row(model_type, name, row, answers, base_answer)
            model["fields"][name] = new
            review += notes
        layer_ok = {v: rejected(("layer", model_type, repr(v))) is None for v in LAYER_TYPES}
        if not layer_ok["mistral"]:
            layer = copy.deepcopy(tmodel.get("layer_model_type") or {})
            if not layer:
                review.append(f"{model_type}: refuses layer model_type mistral; no template row")
            else:
                layer["accepts"] = [v for v in ("llama", "qwen3") if layer_ok[v]]
                layer["message"] = _layer_message(
                    rejected(("layer", model_type, "'mistral'")), layer["message"]
                )
                model["layer_model_type"] = layer
        models[model_type] = model
    out["models"] = models
    return out, review


def _common(messages: set[str]) -> str:
    """The longest common prefix of the messages (a stable part of each)."""
    items = sorted(messages)
    first, last = items[0], items[-1]
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i].rstrip()


def _layer_message(error: str | None, template: str) -> str:
    if error and "mistral" in error:
        return error.replace("mistral", "{value}")
    return template


def _row(model_type, name, row, answers, base_answer) -> tuple[dict, list[str]]:
    review = []
    keep = {
        k: row[k] for k in ("into", "transform", "taps", "list", "scope", "test_values") if k in row
    }
    got = {}
    for case, value in oracle.cases(row):
        answer = answers[("row", model_type, name, case, repr(value))]
        got[(case, repr(value))] = (value, answer, oracle.observed(_VLLM, row, name, answer))
    stable = {json.dumps(_stable(a), sort_keys=True) for _, a, _ in got.values()}
    if len(stable) == 1 and json.dumps(_stable(base_answer), sort_keys=True) in stable:
        return {"ignored": True, "test_values": row.get("test_values", [])}, review
    new: dict = {}
    given_rejects = []
    for (case, _), (value, _, (kind, reading)) in got.items():
        if case == "given":
            if kind == "rejected":
                given_rejects.append({"when": {"in": [value]}, "message": reading})
            elif reading != value:
                review.append(
                    f"{model_type}.{name} given {value!r}: reads {reading!r} (not expressible)"
                )
            continue
        new[case] = {"rejects": reading} if kind == "rejected" else {"reads": reading}
    if given_rejects:
        new["given_rejects"] = given_rejects
    new.update(keep)
    if "scope" in new:
        for value in row.get("test_values", []):
            answer = answers[("scope", model_type, name, repr(value))]
            layers = (answer.get("draft") or {}).get("layer_causal")
            if layers is None:
                new.pop("scope")
                review.append(
                    f"{model_type}.{name}: no per-layer causality to execute; scope left out"
                )
                break
    if "taps" in new:
        for value in row.get("test_values", []):
            answer = answers[("row", model_type, name, "given", repr(value))]
            tapped = oracle.dig(answer, new["taps"]["into"])
            shifts = {t - i for t, i in zip(tapped or [], value, strict=False)}
            if isinstance(tapped, list) and len(tapped) == len(value) and len(shifts) == 1:
                new["taps"] = {**new["taps"], "offset": shifts.pop()}  # the release's own shift
            if tapped != [i + new["taps"]["offset"] for i in value]:
                review.append(f"{model_type}.{name}: taps {tapped} for {value}; taps left out")
                new.pop("taps")
                break
    if "note" in row and {k: v for k, v in row.items() if k != "note"} == new:
        new["note"] = row["note"]
    return new, review


_VLLM = readers.Release("vllm", "0", {})


def _stable(answer: dict) -> dict:
    return {k: answer.get(k) for k in ("accepted", "error", "speculative", "draft")}


#: the order of a table file's top-level keys
ORDER = ("$schema", "reader", "version", "members", "source", "types", "requires")


def table_file(version: str, template: str | None, wheels) -> tuple[dict, list[str]]:
    """The table file of a new group represented by ``version`` (its environment built),
    and the review lines: the rows of the executed release, its ``source`` units, ``members``
    (the wheels under ``wheels`` whose reader and model digests are both the release's), and
    per served type the weight block (EAGLE-3: read from the wheel when the template has no
    block; otherwise the template's, for the readers test group to execute)."""
    data, review = draft(version, template)
    digests = _digests()
    found = [digests.digests(p) for p in sorted(wheels.glob("vllm-*.whl"))]
    mine = next(d for d in found if d["version"] == version)
    data["source"] = sorted(mine["units"])
    rows = template_rows(template)
    for model_type, model in data["models"].items():
        trel, tmodel = rows[model_type]
        if "weights" in tmodel:
            model["weights"] = copy.deepcopy(tmodel["weights"])
            review.append(
                f"{model_type}: weights block ({tmodel['weights']['status']}) taken from "
                f"{trel.id}; `pytest -m readers tests/readers -k {version}` executes it"
            )
    if "eagle3" in data["models"] and "weights" not in data["models"]["eagle3"]:
        weights = digests.eagle3_weights(digests.wheel_of(wheels, version))
        if weights:
            data["models"]["eagle3"]["weights"] = weights
    pair = (mine["reader"], mine["model"])
    data["members"] = {
        d["version"]: {"reader": d["reader"], "model": d["model"]}
        for d in sorted(found, key=lambda d: digests._vkey(d["version"]))
        if (d["reader"], d["model"]) == pair
    }
    order = [*ORDER, *(k for k in data if k not in ORDER)]
    return {k: data[k] for k in order if k in data}, review


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="vllm==X.Y.Z (its environment must be built)")
    parser.add_argument("--template", help="the release whose rows to try (default: newest)")
    args = parser.parse_args(argv)
    version = args.release.split("==")[1]
    digests = _digests()
    wheels = digests.WHEELS if not oracle.VLLM_CACHE else oracle.VLLM_CACHE / "wheels"
    data, review = table_file(version, args.template, wheels)
    print(json.dumps(data, indent=2, ensure_ascii=False))
    for line in review:
        print(f"review: {line}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
