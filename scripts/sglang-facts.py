#!/usr/bin/env python3
"""What each SGLang release can serve beside a draft, read from its own wheel.

    scripts/sglang-facts.py                 # every release on the index from the first with EAGLE-3
    scripts/sglang-facts.py --add 0.5.24    # the table's releases and this one
    scripts/sglang-facts.py --check         # recompute the table's releases; exit 1 when one differs

SGLang is no speculators reader (no release's source reads ``speculators_model_type``), so it
has no file among the reader tables; what decides whether a release can serve an EAGLE-3 or
DFlash draft beside a verifier is its model registry and the verifier class's capture method.
At start-up the model runner calls ``model.set_eagle3_layers_to_capture`` (EAGLE-3) or
``set_dflash_layers_to_capture`` / ``set_dspark_layers_to_capture`` (DFlash, DSpark) on the
verifier's class, which fails when the class has none. Per release this script

- registers every architecture as SGLang's ``ModelRegistry`` does: the ``EntryClass`` of each
  module of ``sglang/srt/models``;
- rebuilds every class of those modules as a stand-in with the same name, the same bases
  (resolved through the module's imports, as Python would) and the same attributes, and asks
  Python's own attribute lookup (``hasattr`` over the MRO) the question the runner asks;
- records whether any source file reads ``speculators_model_type``;
- executes the EAGLE-3 draft classes' own ``__init__`` statements on stand-in configs: what
  the head becomes, the layer-count refusal, and how many hidden states ``fc`` takes for
  each input a release may size it from (``num_aux_hidden_states``, the aux layer ids under
  ``eagle_config`` or at the top level); and reads whether the model runner reads
  ``eagle_config.use_aux_hidden_state`` (a head without aux states).

Releases are fetched with ``pip download --no-deps`` into ``.cache/sglang`` (kept); only the
``.py`` files are read, from the zip, never installed. The table
(``schema/readers/sglang/sglang.json``) stores, per architecture, the spans of releases that
register it and that serve each capture; it is written through the project's writer.
Exit 0 done, 1 the check found a difference or a step failed, 2 a usage error.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import json
import os
import re
import subprocess
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "scripts"):  # the package, and wheel_facts beside this script
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import wheel_facts  # noqa: E402
from packaging.version import Version  # noqa: E402

TABLE = ROOT / "schema" / "readers" / "sglang" / "sglang.json"
CACHE = Path(os.environ.get("SPECFMT_SGLANG_CACHE", ROOT / ".cache" / "sglang"))
MODELS = "sglang/srt/models/"
#: the capture methods the model runner calls, per draft family
CAPTURES = {
    "eagle3": ("set_eagle3_layers_to_capture",),
    "dflash": ("set_dflash_layers_to_capture", "set_dspark_layers_to_capture"),
}
#: the first release the index is scanned from (older ones have no EAGLE-3 capture)
SCAN_FROM = Version("0.4.4")


def _say(line: str) -> None:
    print(f"[sglang-facts] {line}", file=sys.stderr, flush=True)


def index_versions() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "sglang"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("Available versions:"))
    found = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted((v for v in found if Version(v) >= SCAN_FROM), key=Version)


def wheel(version: str) -> Path:
    return wheel_facts.wheel("sglang", version, CACHE)


# -- one release ---------------------------------------------------------------------------
class _Module:
    """One models module: its classes (bases as written, attributes), imports, EntryClass."""

    def __init__(self, name: str, tree: ast.Module):
        self.name = name
        self.classes: dict[str, tuple[list[ast.expr], set[str]]] = {}
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        self.entry: list[str] = []
        for node in tree.body:
            self._statement(node)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.ClassDef):
            attrs = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    attrs.add(item.name)
                elif isinstance(item, ast.Assign):
                    attrs.update(t.id for t in item.targets if isinstance(t, ast.Name))
                elif (
                    isinstance(item, ast.AnnAssign)
                    and isinstance(item.target, ast.Name)
                    and item.value is not None
                ):
                    attrs.add(item.target.id)
            self.classes[node.name] = (list(node.bases), attrs)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(self.name, node.module or "", node.level)
            for alias in node.names:
                self.imports[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:  # `import a.b.c as m`: m.X is (a.b, c) joined
                    parent, _, last = alias.name.rpartition(".")
                    self.imports[alias.asname] = (parent, last)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
        ):
            self.entry += [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.If, ast.Try)):  # definitions under a version guard
            for body in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                for inner in body:
                    self._statement(inner)
            for handler in getattr(node, "handlers", []):
                for inner in handler.body:
                    self._statement(inner)


def _absolute(module: str, target: str, level: int) -> str:
    if not level:
        return target
    package = module.split(".")[: -level or None]
    return ".".join(package + ([target] if target else []))


class Release:
    """The models package of one release, its classes rebuilt as stand-ins."""

    def __init__(self, sources: dict[str, str]):
        self.modules: dict[str, _Module] = {}
        for path, text in sources.items():
            if path.startswith(MODELS) and path.endswith(".py"):
                name = path[:-3].replace("/", ".")
                try:
                    self.modules[name] = _Module(name, ast.parse(text))
                except SyntaxError:
                    continue
        self.reads_speculators = any("speculators_model_type" in text for text in sources.values())
        self._built: dict[tuple[str, str], type] = {}

    def cls(self, module: str, name: str, seen: frozenset = frozenset()) -> type | None:
        """The stand-in class ``name`` of ``module`` (following its imports), or None."""
        key = (module, name)
        if key in self._built:
            return self._built[key]
        mod = self.modules.get(module)
        if mod is None or key in seen:
            return None
        if name not in mod.classes:
            if name in mod.imports:
                return self.cls(*mod.imports[name], seen | {key})
            return None
        bases_written, attrs = mod.classes[name]
        bases = []
        for base in bases_written:
            found = None
            if isinstance(base, ast.Name):
                found = self.cls(module, base.id, seen | {key})
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                target = mod.imports.get(base.value.id)
                owner = ".".join(target) if target else None
                if owner is not None:
                    found = self.cls(owner, base.attr, seen | {key})
            if found is not None and found not in bases:
                bases.append(found)
        namespace = dict.fromkeys(attrs, True)
        try:
            built = type(name, tuple(bases), namespace)
        except TypeError:  # an MRO Python cannot linearise for stand-ins: first base only
            built = type(name, tuple(bases[:1]), namespace)
        self._built[key] = built
        return built

    def registry(self) -> dict[str, type]:
        """Architecture name -> class, as ModelRegistry collects every module's EntryClass."""
        out: dict[str, type] = {}
        for module in sorted(self.modules):
            for name in self.modules[module].entry:
                built = self.cls(module, name)
                if built is not None:
                    out.setdefault(built.__name__, built)
        return out

    def facts(self) -> dict:
        registry = self.registry()
        out = {"reads_speculators": self.reads_speculators, "architectures": {}}
        for arch, built in sorted(registry.items()):
            out["architectures"][arch] = {
                family: any(hasattr(built, method) for method in methods)
                for family, methods in CAPTURES.items()
            }
            # a class that forwards unknown attributes (MiniCPMV to the model it picks)
            # answers at run time: the table says so instead of "no"
            out["architectures"][arch]["delegates"] = hasattr(built, "__getattr__")
        return out


# -- the EAGLE-3 draft's head, executed ----------------------------------------------------
#: the EAGLE-3 draft classes (SafeAILab / SpecForge; the Kimi MLA draft) and their modules
HEAD_CLASSES = {
    "LlamaForCausalLMEagle3": f"{MODELS}llama_eagle3.py",
    "Eagle3DeepseekV2ForCausalLM": f"{MODELS}kimi_k25_eagle3.py",
}
#: the configs the head decision is executed on: (tie_word_embeddings, draft_vocab_size)
HEAD_CASES = {
    "tied": (True, 32000),
    "untied-no-draft-vocab": (False, None),
    "untied-draft-vocab": (False, 32000),
}
_EMBED = object()


def eagle3_head(sources: dict[str, str]) -> dict[str, dict[str, str]]:
    """What each of the release's EAGLE-3 draft classes makes its ``lm_head`` for each of
    HEAD_CASES: ``embed`` (the draft's embedding), ``target`` (it asks the worker for the
    verifier's head) or ``fresh`` (a new head that only the checkpoint's ``lm_head.weight``
    fills). Its ``__init__``'s statements about the head (those naming ``draft_vocab_size``
    or ``load_lm_head_from_target`` before the ``if`` that tests ``tie_word_embeddings``, and
    that ``if``) are executed as written, on a stand-in ``self`` and config; ``target`` needs
    the worker to read the flag too."""
    worker_reads = any(
        "load_lm_head_from_target" in t
        for n, t in sources.items()
        if n.startswith("sglang/srt/speculative/")
    )
    out = {}
    for cls, module in HEAD_CLASSES.items():
        code = _head_code(sources.get(module), cls)
        if code is not None:
            out[cls] = {
                case: _run_head(code, tied, vocab, worker_reads)
                for case, (tied, vocab) in HEAD_CASES.items()
            }
    return out


def eagle3_layer_refusal(sources: dict[str, str]) -> dict[str, str]:
    """Class -> the error its ``__init__`` raises for a two-layer EAGLE-3 draft (the ``if``
    statements that test ``num_hidden_layers`` and raise, executed on a stand-in config);
    classes that build any number of layers are left out."""
    out = {}
    for cls, module in HEAD_CLASSES.items():
        checks = [
            n
            for n in wheel_facts.init_body(sources.get(module), cls)
            if isinstance(n, ast.If)
            and "num_hidden_layers" in ast.unparse(n.test)
            and any(isinstance(x, ast.Raise) for x in ast.walk(n))
        ]
        if not checks:
            continue
        code = compile(ast.Module(body=checks, type_ignores=[]), cls, "exec")
        config = SimpleNamespace(num_hidden_layers=2)
        try:
            exec(
                code,
                {"__builtins__": builtins},
                wheel_facts.Names(self=SimpleNamespace(config=config), config=config),
            )  # noqa: S102,E501
        except Exception as exc:  # noqa: BLE001 - the release's own error, recorded
            out[cls] = str(exc)
    return out


def _head_code(text: str | None, cls: str):
    body = wheel_facts.init_body(text, cls)
    at = next(
        (
            i
            for i, n in enumerate(body)
            if isinstance(n, ast.If) and "tie_word_embeddings" in ast.unparse(n.test)
        ),
        None,
    )
    if at is None:
        return None
    before = [
        n
        for n in body[:at]
        if isinstance(n, ast.Assign)
        and any(k in ast.unparse(n) for k in ("draft_vocab_size", "load_lm_head_from_target"))
    ]
    return compile(ast.Module(body=[*before, body[at]], type_ignores=[]), cls, "exec")


def _run_head(code, tied: bool, draft_vocab: int | None, worker_reads: bool) -> str:
    config = SimpleNamespace(tie_word_embeddings=tied, vocab_size=151936, hidden_size=4096)
    if draft_vocab is not None:
        config.draft_vocab_size = draft_vocab
    else:
        config.draft_vocab_size = None  # transformers configs answer None for an unset key
    me = SimpleNamespace(config=config, model=SimpleNamespace(embed_tokens=_EMBED))
    names = wheel_facts.Names(self=me, config=config, quant_config=None, prefix="")
    exec(code, {"__builtins__": builtins}, names)  # noqa: S102 - the release's own code
    if me.lm_head is _EMBED:
        return "embed"
    if getattr(me, "load_lm_head_from_target", False) and worker_reads:
        return "target"
    return "fresh"


def eagle3_fc(sources: dict[str, str]) -> dict[str, dict[str, int | None]]:
    """For each EAGLE-3 draft class, how many hidden states its ``fc`` takes for each of
    wheel_facts.FC_CASES: the statements of the ``__init__`` in the class's module that
    build ``self.fc``, executed as written (scripts/wheel_facts.py)."""
    out = {}
    for cls, module in HEAD_CLASSES.items():
        cases = wheel_facts.fc_cases(sources.get(module))
        if cases is None:
            continue
        if cases["default"] is None:
            raise SystemExit(f"{module}: {cls}'s fc width did not execute; read it and extend")
        out[cls] = cases
    return out


def runner_reads_use_aux(sources: dict[str, str]) -> bool:
    """Whether the model runner reads the draft's ``eagle_config.use_aux_hidden_state`` (read
    from its source): a release that does not captures aux states for every EAGLE-3 head."""
    return any(
        re.search(r"""\.get\(\s*["']use_aux_hidden_state["']""", text)
        for name, text in sources.items()
        if name.startswith("sglang/srt/model_executor/")
    )


def release_facts(version: str) -> dict:
    with zipfile.ZipFile(wheel(version)) as zf:
        sources = {
            n: zf.read(n).decode("utf-8", "replace")
            for n in zf.namelist()
            if n.startswith("sglang/") and n.endswith(".py")
        }
    facts = Release(sources).facts()
    facts["eagle3_head"] = eagle3_head(sources)
    facts["eagle3_layer_refusal"] = eagle3_layer_refusal(sources)
    facts["eagle3_fc"] = eagle3_fc(sources)
    facts["runner_reads_use_aux"] = runner_reads_use_aux(sources)
    return facts


# -- the table -----------------------------------------------------------------------------
def table(per_release: dict[str, dict]) -> dict:
    versions = sorted(per_release, key=Version)
    names = sorted({a for f in per_release.values() for a in f["architectures"]})
    archs = {}
    for arch in names:
        rows = [per_release[v]["architectures"].get(arch) for v in versions]
        entry = {"registered": wheel_facts.spans([r is not None for r in rows], versions)}
        for family in CAPTURES:
            entry[family] = wheel_facts.spans([bool(r and r[family]) for r in rows], versions)
        entry["delegates"] = wheel_facts.spans(
            [bool(r and r.get("delegates")) for r in rows], versions
        )
        archs[arch] = {k: v for k, v in entry.items() if v}
    heads: dict[str, dict] = {}
    for cls in HEAD_CLASSES:
        for case in HEAD_CASES:
            outcomes = [per_release[v]["eagle3_head"].get(cls, {}).get(case) for v in versions]
            found = {
                o: wheel_facts.spans([x == o for x in outcomes], versions)
                for o in sorted({x for x in outcomes if x is not None})
            }
            if found:
                heads.setdefault(cls, {})[case] = found
    refusals: dict[str, dict] = {}
    for cls in HEAD_CLASSES:
        said = [per_release[v]["eagle3_layer_refusal"].get(cls) for v in versions]
        for message in sorted({m for m in said if m}):
            refusals.setdefault(cls, {})[message] = wheel_facts.spans(
                [m == message for m in said], versions
            )
    fc: dict[str, dict] = {}
    for cls in HEAD_CLASSES:
        for case in wheel_facts.FC_CASES:
            counts = [per_release[v]["eagle3_fc"].get(cls, {}).get(case) for v in versions]
            found = wheel_facts.spans_by_outcome(counts, versions)
            if found:
                fc.setdefault(cls, {})[case] = found
    return {
        "$comment": "written by scripts/sglang-facts.py from each release's wheel; never edit",
        "engine": "sglang",
        "releases": versions,
        "reads_speculators": wheel_facts.spans(
            [per_release[v]["reads_speculators"] for v in versions], versions
        ),
        "captures": {family: list(methods) for family, methods in CAPTURES.items()},
        "eagle3_head": heads,
        "eagle3_layer_refusal": refusals,
        "eagle3_fc": fc,
        "runner_reads_use_aux": wheel_facts.spans(
            [per_release[v]["runner_reads_use_aux"] for v in versions], versions
        ),
        "architectures": archs,
    }


def _write(doc: dict) -> None:
    from spec_format.parsers.outfile import write_output

    TABLE.parent.mkdir(parents=True, exist_ok=True)
    write_output(TABLE, json.dumps(doc, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--add", metavar="VERSION", help="the table's releases and this one")
    parser.add_argument("--check", action="store_true", help="recompute the table's releases")
    parser.add_argument("--fetch", action="store_true", help="only fetch the table's wheels")
    args = parser.parse_args(argv)
    known = json.loads(TABLE.read_text())["releases"] if TABLE.exists() else []
    if args.add:
        if not re.fullmatch(r"\d+(\.\d+){1,3}(\.post\d+)?", args.add):
            _say(f"{args.add!r} is not a release version (write X.Y.Z or X.Y.Z.postN)")
            return 2
        versions = sorted(set(known) | {args.add}, key=Version)
    elif args.check or args.fetch:
        versions = known
    else:
        versions = index_versions()
    try:
        if args.fetch:
            for v in versions:
                wheel(v)
            _say(f"{len(versions)} wheels in {CACHE}")
            return 0
        per_release = {}
        for v in versions:  # fetched one at a time (pip), read on every core
            wheel(v)
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for v, found in zip(versions, pool.map(release_facts, versions), strict=True):
                per_release[v] = found
                _say(f"{v}: {len(found['architectures'])} architectures")
    except (subprocess.CalledProcessError, OSError, zipfile.BadZipFile) as exc:
        _say(f"failed: {exc}")
        return 1
    # releases before the first that can capture for EAGLE-3 are not covered
    while versions and not any(
        f["eagle3"] for f in per_release[versions[0]]["architectures"].values()
    ):
        per_release.pop(versions.pop(0))
    doc = table(per_release)
    if args.check:
        current = json.loads(TABLE.read_text())
        if current != doc:
            _say(f"{TABLE.relative_to(ROOT)} differs from the releases' wheels; rerun the script")
            return 1
        _say(f"{len(versions)} releases: the table matches their wheels")
        return 0
    _write(doc)
    _say(f"wrote {TABLE.relative_to(ROOT)}: {len(versions)} releases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
