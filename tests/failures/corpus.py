"""Reproduced public bug reports: build each report's checkpoint, run the command a new user
would run on it, and render the README's table from the records.

One file per report under ``reports/`` (``report.schema.json`` is the format): the thread,
the root cause as the thread states it, the checkpoint (real dimensions in its config,
weights written as holes: a 60 GB draft costs a few kB on disk), the verifier (a real
``config.json``: ``verifiers/`` here, or ``tests/data/verifiers/``), the ``specfmt
validate`` command line, and what specfmt says: the rules it raises at warning or error
(``findings``), the ones among them that name the report's cause (``caught_by``), or
``missed`` with the reason when none does.

    python -m tests.failures.corpus            # rewrite README.md's table from the records
    python -m tests.failures.corpus --run ID   # print what validate says on one report
"""

from __future__ import annotations

import copy
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_format import ValidateOptions, validate
from spec_format.testing.builder import (
    DELETE,
    TensorData,
    _write_weights,
    build_checkpoint,
    set_path,
    vocab_maps,
)
from spec_format.testing.safeailab import safeailab_config, safeailab_shapes
from spec_format.testing.sources import build_zlab_dflash, mtp_source_tensors
from tests.common import ROOT

HERE = Path(__file__).resolve().parent
REPORTS = HERE / "reports"
VERIFIERS = HERE / "verifiers"
DATA_VERIFIERS = ROOT / "tests" / "data" / "verifiers"
README = HERE / "README.md"
SCHEMA = HERE / "report.schema.json"
#: the severities that count as "caught" (a note is not)
COUNTED = ("error", "warning")
_FAMILY = {"float": "BF16", "bool": "BOOL", "int64": "I64"}


@dataclass(frozen=True)
class Report:
    id: str
    data: dict[str, Any]

    @property
    def thread(self) -> str:
        return self.data["thread"]

    @property
    def caught_by(self) -> list[str]:
        return self.data["specfmt"]["caught_by"]

    @property
    def findings(self) -> list[str]:
        return self.data["specfmt"]["findings"]


def reports() -> list[Report]:
    return [
        Report(p.stem, json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(REPORTS.glob("*.json"))
    ]


def build_report(report_id: str, folder: Path, set=None, **changes) -> tuple[Path, Path]:
    """A report's draft and verifier under ``folder`` (``draft/``, ``verifier/``), the draft's
    spec changed for a variant: ``changes`` replace its top-level keys (None removes one),
    ``set`` is merged into its ``set`` (None removes a key)."""
    (report,) = [r for r in reports() if r.id == report_id]
    spec = copy.deepcopy(report.data["draft"])
    for key, value in {**changes, "set": {**spec.get("set", {}), **(set or {})}}.items():
        spec[key] = value
    spec = {k: v for k, v in spec.items() if v is not None}
    spec["set"] = {k: v for k, v in spec["set"].items() if v is not None}
    draft = build_draft(spec, folder / "draft")
    return draft, build_verifier(report.data["verifier"], folder / "verifier")


# -- the checkpoint -----------------------------------------------------------------------


def _edited(doc: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for path, value in spec.get("set", {}).items():
        set_path(doc, path, copy.deepcopy(value))
    for path in spec.get("unset", []):
        set_path(doc, path, DELETE)
    return doc


def _degenerate_maps(config: dict[str, Any], kind: str):
    """Vocabulary maps that load and pass the range checks but say nothing useful: the
    draft vocabulary as the first N target ids (``first-n``), or a ``d2t`` of zeros."""
    import numpy as np

    layer = config.get("transformer_layer_config", config)
    V, D = layer["vocab_size"], config["draft_vocab_size"]
    t2d, d2t = vocab_maps(V, D)
    if kind in ("first-n", "zeros"):
        t2d = np.zeros(V, dtype=bool)
        t2d[:D] = True
        d2t = np.zeros(D, dtype=np.int64)
    return t2d, d2t


def build_draft(spec: dict[str, Any], folder: Path) -> Path:
    """Write the report's draft checkpoint under ``folder``; returns its directory."""
    layout = spec["layout"]
    if layout == "speculators":
        config = _edited(spec["config"], spec)
        weights = spec.get("weights", {})
        source = _edited(config, weights.get("weights_for", {}))
        kwargs: dict[str, Any] = {
            k: weights[k] for k in ("drop", "rename", "include_optional") if k in weights
        }
        if "reshape" in weights:
            kwargs["reshape"] = {n: tuple(s) for n, s in weights["reshape"].items()}
        if "extra" in weights:
            kwargs["extra"] = {n: (t, tuple(s)) for n, (t, s) in weights["extra"].items()}
        if "maps" in weights:
            t2d, d2t = _degenerate_maps(source, weights["maps"])
            kwargs["values"] = {"t2d": t2d, "d2t": d2t}
        build_checkpoint(folder, source, data="sparse", write_config=False, **kwargs)
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        return folder
    if layout == "safeailab":
        sizes = spec["sizes"]
        config = safeailab_config(sizes, spec.get("config_keys"))
        config = _edited(config, spec)
        shapes = safeailab_shapes(
            sizes,
            aux=spec.get("aux", 3),
            target_hidden=spec.get("target_hidden"),
            embed=spec.get("embed", False),
            maps=spec.get("maps", True),
        )
        family = {**_FAMILY, "float": spec.get("float_dtype", _FAMILY["float"])}
        tensors = {n: (family[f], s) for n, (f, s) in shapes.items()}
    elif layout == "native-mtp":
        config = _edited(spec["config"], spec)
        text = config.get("text_config", config)
        tensors = {n: ("BF16", s) for n, s in mtp_source_tensors(text).items()}
    elif layout == "zlab-dflash":
        config = _edited(spec["config"], spec)
        build_zlab_dflash(folder, config, data="sparse")
        return folder
    elif layout == "files":
        config = _edited(spec["config"], spec)
        tensors = {}
    else:  # the schema lists every layout
        raise ValueError(f"unknown layout {layout!r}")
    for name in spec.get("drop", []):
        if spec.get("drop_prefix"):
            tensors = {n: t for n, t in tensors.items() if not n.startswith(name)}
        else:
            del tensors[name]
    for name, (dtype, shape) in spec.get("tensors", {}).items():
        tensors[name] = (dtype, tuple(shape))
    for name, shape in spec.get("reshape", {}).items():
        tensors[name] = (tensors[name][0], tuple(shape))
    _write_sparse(folder, config, tensors, d2t=spec.get("d2t"))
    return folder


def _write_sparse(
    folder: Path, config: dict[str, Any], tensors: dict, d2t: str | None = None
) -> None:
    """config.json and model.safetensors: floats as holes, vocabulary maps for real
    (``d2t="arange"``: a d2t of 0..D-1, the default buffer of a draft that never got a
    mapping, where the engines read d2t as offsets)."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    V = config.get("vocab_size")
    D = config.get("draft_vocab_size", V)
    maps = vocab_maps(V, D) if V and D and D <= V else None
    if maps is not None and d2t == "arange":
        maps = (maps[0], np.arange(D, dtype=np.int64))
    out = {}
    for name, (dtype, shape) in tensors.items():
        if dtype == "BOOL" and maps is not None and shape == (V,):
            out[name] = TensorData(dtype, shape, maps[0].tobytes())
        elif dtype == "I64" and maps is not None and shape == (D,):
            out[name] = TensorData(dtype, shape, maps[1].astype("<i8").tobytes())
        elif dtype in ("BOOL", "I64"):
            out[name] = TensorData(dtype, shape, bytes(TensorData(dtype, shape).nbytes))
        else:
            out[name] = TensorData(dtype, shape)
    if out:
        _write_weights(folder, out, {"format": "pt"}, None)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def build_verifier(spec: dict[str, Any], folder: Path) -> Path:
    """The verifier's folder: its config.json (and generation_config.json when given)."""
    if "file" in spec:
        source = VERIFIERS / f"{spec['file']}.json"
        name = spec["file"]
    else:
        source = DATA_VERIFIERS / f"{spec['data']}.json"
        name = spec["data"].split("/")[-1]
    doc = _edited(json.loads(source.read_text(encoding="utf-8")), spec)
    target = folder / spec.get("folder", name)
    target.mkdir(parents=True, exist_ok=True)
    (target / "config.json").write_text(json.dumps(doc, indent=2) + "\n")
    if "generation_config" in spec:
        (target / "generation_config.json").write_text(json.dumps(spec["generation_config"]))
    return target


# -- the command --------------------------------------------------------------------------


def options(command: str, draft: Path, verifier: Path | None) -> tuple[list[str], dict]:
    """The inputs and ``ValidateOptions`` of the report's command line (``DRAFT`` and
    ``VERIFIER`` stand for the built folders)."""
    argv = shlex.split(command)
    if argv[:2] != ["specfmt", "validate"]:
        raise ValueError(f"not a validate command: {command!r}")
    paths: list[str] = []
    opts: dict[str, Any] = {}
    engines: list[str] = []
    args = iter(argv[2:])
    for arg in args:
        if arg == "--verifier":
            value = next(args)
            if value != "VERIFIER" or verifier is None:
                raise ValueError(f"--verifier {value}: write VERIFIER (the report's verifier)")
            opts["verifier"] = str(verifier)
        elif arg in ("--engine", "-e"):
            engines.append(next(args))
        elif arg == "--deep":
            opts["deep"] = True
        elif arg == "--scan-weights":
            opts["scan_weights"] = True
        elif arg == "DRAFT":
            paths.append(str(draft))
        else:
            raise ValueError(f"{command!r}: {arg!r} is not an option the corpus reads")
    if engines:
        opts["engines"] = tuple(engines)
    return paths, opts


@dataclass
class Outcome:
    #: rule -> (severity, message) of every finding
    findings: dict[str, list[tuple[str, str]]]
    exit_code: int

    @property
    def counted(self) -> list[str]:
        """The rules raised at warning or error, sorted."""
        return sorted(r for r, hits in self.findings.items() if any(s in COUNTED for s, _ in hits))


def run(report: Report, folder: Path) -> Outcome:
    draft = build_draft(report.data["draft"], folder / "draft")
    verifier = None
    if "verifier" in report.data:
        verifier = build_verifier(report.data["verifier"], folder / "verifiers")
    paths, opts = options(report.data["command"], draft, verifier)
    result = validate(paths, ValidateOptions(**opts))
    findings: dict[str, list[tuple[str, str]]] = {}
    for f in (f for fr in result.files for f in fr.findings):
        findings.setdefault(f.rule, []).append((f.severity.value, f.message))
    return Outcome(findings, result.exit_code)


# -- the README ---------------------------------------------------------------------------

BEGIN = "<!-- table: python -m tests.failures.corpus writes it from reports/ -->"
END = "<!-- end of table -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table() -> str:
    rows = reports()
    caught = [r for r in rows if r.caught_by]
    pct = 100 * len(caught) / len(rows) if rows else 0.0
    lines = [
        BEGIN,
        "",
        f"**{len(caught)} of {len(rows)} reports caught ({pct:.0f}%)** at warning or error by a "
        "rule that names the cause; the others are listed as missed with the reason.",
        "",
        "| # | Thread | Root cause (as the thread states it) | Caught by | specfmt says |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        d = r.data
        url = d["thread"]
        short = url.removeprefix("https://github.com/").replace("/issues/", "#")
        short = short.replace("/pull/", "#")
        verdict = ", ".join(f"`{x}`" for x in r.caught_by) or "missed: " + d["specfmt"]["missed"]
        says = ", ".join(f"`{x}`" for x in r.findings) or "nothing at warning or error"
        lines.append(
            f"| {r.id} | [{short}]({url}) | {_cell(d['cause'])} | {_cell(verdict)} | {says} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def readme_with_table(text: str) -> str:
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + table() + tail


def main(argv: list[str]) -> int:
    if argv[:1] == ["--run"]:
        import tempfile

        (report,) = [r for r in reports() if r.id == argv[1]]
        with tempfile.TemporaryDirectory() as tmp:
            out = run(report, Path(tmp))
        for rule, hits in sorted(out.findings.items()):
            for severity, message in hits:
                print(f"{rule} {severity}: {message}")
        print("counted:", out.counted, "exit", out.exit_code)
        return 0
    README.write_text(readme_with_table(README.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
