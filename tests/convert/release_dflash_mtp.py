"""Runs inside one speculators release environment (never imported by specfmt or by the
normal test run): converts sources with the release's own converter and judges both
conversions, the release's and specfmt's, with the release's code.

Reads a JSON list of jobs on stdin ``{"case", "kind": "dflash"|"mtp", "src", "verifier",
"release_out", "ours"}`` and prints one JSON list: per job the release's reading of both
configs (tests/interop/probe.py ``read``), and forwards in float32: the library's model of
the release's conversion against the library's model of specfmt's (``library_diff``) and
against specfmt's reference forward of specfmt's conversion (``reference_diff``); a step
that fails records its error instead.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import traceback
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))
sys.path.extend(p for p in os.environ.get("SPECFMT_PROBE_FALLBACK_PATH", "").split(os.pathsep) if p)

import torch  # noqa: E402
from probe import read  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from speculators import SpeculatorModelConfig  # noqa: E402

CLASSES = {
    "dflash": "speculators.models.dflash.core.DFlashDraftModel",
    "mtp": "speculators.models.mtp.core.MTPDraftModel",
}
T, ANCHOR = 12, 5


def convert(job: dict) -> None:
    if job["kind"] == "dflash":
        from speculators.convert.dflash import DFlashConverter

        DFlashConverter().convert(
            job["src"], job["release_out"], base_model=job["verifier"], validate=False
        )
    else:
        from speculators.convert.mtp import MTPConverter

        MTPConverter().convert(
            job["src"], job["release_out"], base_model=job["verifier"], validate=False
        )


def library(path: str, verifier: str | None = None):
    """The release's model of a checkpoint: its config class, strict about unknown tensors,
    the verifier-owned weights loaded as the release loads them (eager attention, float32).
    ``verifier``: the local copy of the hub id the config names (specfmt writes the id the
    verifier's config records; this machine has no network to resolve it)."""
    config = json.loads(Path(path, "config.json").read_text())
    if verifier is not None:
        config["speculators_config"]["verifier"]["name_or_path"] = verifier
    module, name = CLASSES[config["speculators_model_type"]].rsplit(".", 1)
    cls = getattr(__import__(module, fromlist=[name]), name)
    cfg = SpeculatorModelConfig.from_dict(copy.deepcopy(config))
    cfg.transformer_layer_config._attn_implementation = "eager"
    model = cls(cfg)
    state = {}
    for f in sorted(Path(path).glob("*.safetensors")):
        state.update(load_file(str(f)))
    _, unexpected = model.load_state_dict(state, strict=False)
    if unexpected:
        raise AssertionError(f"the release does not know {unexpected}")
    model.load_verifier_weights()
    return model.float().eval()


def reference(path: str, verifier: str):
    from spec_format.forward.config import read_config, resolve
    from spec_format.forward.loader import check_weights, load_draft
    from spec_format.forward.run import model_class

    spec = resolve(read_config(Path(path)))
    return load_draft(
        check_weights(Path(path), spec),
        spec,
        model_class(spec.model_type),
        device=torch.device("cpu"),
        dtype=torch.float32,
        verifier_dir=Path(verifier),
    ).model


def inputs(kind: str, config: dict, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    tlc = config["transformer_layer_config"]
    width = tlc["hidden_size"] * (
        len(config["aux_hidden_state_layer_ids"]) if kind == "dflash" else 1
    )
    ids = torch.randint(0, tlc["vocab_size"], (T,), generator=g)
    return ids, torch.randn(T, width, generator=g)


def library_forward(model, kind: str, ids, hidden):
    with torch.no_grad():
        if kind == "dflash":
            loss_mask = torch.zeros(1, T)
            loss_mask[0, ANCHOR] = 1  # the only valid anchor: training picks this block
            h = model.config.transformer_layer_config.hidden_size
            _, logits, *_ = model._backbone_forward(
                hidden[None],
                ids[None],
                loss_mask,
                torch.zeros(1, T, h),
                torch.zeros(1, T, dtype=torch.long),
                max_anchors=1,
            )
            return logits[0]
        logits, *_ = model(ids[None], hidden[None])
        return logits[0][0]


def reference_forward(model, kind: str, ids, hidden, rows: int):
    with torch.no_grad():
        if kind == "dflash":
            return model.backbone(ids, hidden, ANCHOR)[1]
        return model.draft(ids[1 : 1 + rows], hidden[:rows]).logits  # row t pairs h[t], x[t+1]


def diff(a, b) -> float:
    if a.shape != b.shape:
        raise AssertionError(f"shapes {list(a.shape)} vs {list(b.shape)}")
    return float((a - b).abs().max())


def run(job: dict) -> dict:
    out: dict = {"case": job["case"]}
    try:
        convert(job)
    except Exception:
        out["convert_error"] = traceback.format_exc(limit=3)
        return out
    for side in ("release_out", "ours"):
        try:
            config = json.loads(Path(job[side], "config.json").read_text())
            out[f"read_{side}"] = read(config)
        except Exception as exc:
            out[f"read_{side}"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    try:
        theirs = library(job["release_out"])
        config = json.loads(Path(job["ours"], "config.json").read_text())
        ids, hidden = inputs(job["kind"], config)
        want = library_forward(theirs, job["kind"], ids, hidden)
        out["library_diff"] = diff(
            library_forward(library(job["ours"], job["verifier"]), job["kind"], ids, hidden), want
        )
        if job.get("reference"):
            ref = reference(job["ours"], job["verifier"])
            got = reference_forward(ref, job["kind"], ids, hidden, want.shape[0])
            out["reference_diff"] = diff(got, want)
    except Exception:
        out["forward_error"] = traceback.format_exc(limit=4)
    return out


def main() -> None:
    print(json.dumps([run(job) for job in json.load(sys.stdin)]))


if __name__ == "__main__":
    main()
