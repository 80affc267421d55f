"""Facts read from an engine release's wheel, shared by scripts/sglang-facts.py and
scripts/vllm-native-facts.py: fetching the wheel (kept in a cache), the spans of releases a
fact holds for, and executing the part of a model ``__init__`` that decides one fact.

Executing, from the release's own source, without the engine: the statements the fact depends on are found by
following names back from the statement that sets it (a static slice of the method), compiled
as written and run on a stand-in ``self`` and config; whatever else they call (a parallel
linear layer, a norm, a quantisation helper) is a stand-in. Used for the width of an EAGLE-3 draft's ``fc``.

Why not import the engine: its model modules import CUDA kernels and the whole dependency
tree, and a release is read for 69 SGLang and 39 vLLM wheels on a CPU machine; what decides
the width is a handful of ``getattr`` and arithmetic statements, which run here as written.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import copy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

FRESH = object()
#: the hidden size the configs of FC_CASES have; fc's input width over it is the count
FC_HIDDEN = 4096
IDS = "eagle_aux_hidden_state_layer_ids"
#: the configs fc's width is executed on: the inputs a release may size it from (the ids
#: under eagle_config: 4, at the top level: 2, num_aux_hidden_states: 1), alone and in the
#: pairs whose precedence the rules need, and a head that declares it reads no aux state
FC_CASES = {
    "default": {},
    "num_aux_hidden_states": {"num_aux_hidden_states": 1},
    "eagle_config_ids": {"eagle_config": {IDS: [1, 2, 3, 4]}},
    "top_level_ids": {IDS: [1, 2]},
    "num_and_eagle_config_ids": {"num_aux_hidden_states": 1, "eagle_config": {IDS: [1, 2, 3, 4]}},
    "both_ids": {"eagle_config": {IDS: [1, 2, 3, 4]}, IDS: [1, 2]},
    "no_aux": {"eagle_config": {"use_aux_hidden_state": False}},
}
#: what the stand-in ``self`` and config already are: a statement that only sets these
#: (``self.config = vllm_config...hf_config``) is left out of the slice
PROVIDED = frozenset({"self.config", "config", "self"})


class Names(dict):
    """The namespace the statements run in: a name not given here and not a builtin is a
    stand-in that returns FRESH when called; a ``...Linear`` class records its input width."""

    def __missing__(self, key):
        if hasattr(builtins, key):
            raise KeyError(key)  # then found among the builtins
        return _Stand(key)


class _Stand:
    """A module or class the statements use (``torch``, ``nn``, ``RMSNorm``): its attributes
    are stand-ins too, its ``...Linear`` ones recorders."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str):
        return linear if name.endswith("Linear") else _Stand(name)

    def __call__(self, *args, **kwargs):
        return linear(*args, **kwargs) if self._name.endswith("Linear") else FRESH


def linear(*args, **kwargs):
    """A linear layer's stand-in: ``("linear", input width)``."""
    width = args[0] if args else kwargs.get("input_size", kwargs.get("in_features"))
    return ("linear", width)


def init_body(text: str | None, cls: str) -> list[ast.stmt]:
    """The statements of ``cls.__init__`` in a module's source (empty when absent)."""
    if text is None:
        return []
    init = next(
        (
            f
            for c in ast.parse(text).body
            if isinstance(c, ast.ClassDef) and c.name == cls
            for f in c.body
            if isinstance(f, ast.FunctionDef) and f.name == "__init__"
        ),
        None,
    )
    return init.body if init else []


def _names(node: ast.AST, ctx: type) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx):
            out.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ctx):
            out.add(ast.unparse(n))
    return out


def backward_slice(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements the last one depends on: walking back from it, a statement is kept when
    it sets a name (``x``, ``self.x``) that a kept statement reads, unless all it sets is
    what the stand-ins provide."""
    kept = [body[-1]]
    needed = _names(body[-1], ast.Load)
    for node in reversed(body[:-1]):
        stored = _names(node, ast.Store)
        if stored & needed and not stored <= PROVIDED:
            kept.insert(0, node)
            needed |= _names(node, ast.Load)
    return kept


def fc_code(text: str | None):
    """The compiled statements that build ``self.fc`` in the module ``text``: the slice of
    the first ``__init__`` that sets it, with the module's top-level functions (a count
    helper); None when no class builds fc."""
    if text is None:
        return None
    tree = ast.parse(text)
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        body = init_body(text, node.name)
        at = next((i for i, n in enumerate(body) if "self.fc =" in ast.unparse(n)), None)
        if at is None:
            continue
        helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        module = ast.Module(body=[*helpers, *backward_slice(body[: at + 1])], type_ignores=[])
        # annotations of attributes (``self.x: T | None = ...``) are not evaluated
        return compile(module, node.name, "exec", flags=__future__.annotations.compiler_flag)
    return None


def fc_states(code, given: dict) -> int | None:
    """How many hidden states of FC_HIDDEN the fc built by ``code`` takes for a config with
    ``given``: 0 when the statements run and build no fc, None when its width is no whole
    number of states or a statement fails."""
    config = SimpleNamespace(
        hidden_size=FC_HIDDEN, rms_norm_eps=1e-6, num_hidden_layers=1, **copy.deepcopy(given)
    )
    me = SimpleNamespace(config=config)
    names = Names(self=me, config=config, prefix="")
    try:
        exec(code, {"__builtins__": builtins}, names)  # noqa: S102 - the release's own code
    except Exception:  # noqa: BLE001 - no answer for this case; the table leaves it out
        return None
    built = getattr(me, "fc", None)
    if built is None:
        return 0
    if not (isinstance(built, tuple) and isinstance(built[1], int)):
        return None
    return built[1] // FC_HIDDEN if built[1] % FC_HIDDEN == 0 else None


def fc_cases(text: str | None) -> dict[str, int | None] | None:
    """fc's count for each of FC_CASES, or None when the module builds no fc."""
    code = fc_code(text)
    if code is None:
        return None
    return {case: fc_states(code, given) for case, given in FC_CASES.items()}


def wheel(package: str, version: str, cache: Path) -> Path:
    """``package==version``'s wheel in ``cache``, fetched there with ``pip download
    --no-deps`` when missing (pip's output only when it fails: its index warnings would
    fill CI's log once a release)."""
    found = sorted(cache.glob(f"{package}-{version}-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{package}=={version}"]
            + ["-d", str(cache)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise SystemExit(
                f"pip download {package}=={version} failed (exit {done.returncode}):\n{tail}"
            )
        found = sorted(cache.glob(f"{package}-{version}-*.whl"))
    return found[0]


def spans(flags: list[bool], versions: list[str]) -> list[list[str]]:
    """The runs of consecutive ``versions`` whose flag is true, as ``[first, last]``."""
    out, start = [], None
    for i, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            out.append([versions[start], versions[i - 1]])
            start = None
    return out


def spans_by_outcome(outcomes: list, versions: list[str]) -> dict[str, list]:
    """``{str(outcome): spans of versions}`` for the outcomes that are not None."""
    return {
        str(o): spans([x == o for x in outcomes], versions)
        for o in sorted({x for x in outcomes if x is not None})
    }
