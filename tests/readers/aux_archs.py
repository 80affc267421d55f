"""Which verifier architectures of a vLLM release can hand a drafter its aux hidden states.

EAGLE-3 (and P-EAGLE, served as EAGLE-3), DFlash, DSpark and DFlash2 drafts take hidden
states of chosen verifier layers: the release's model runner turns on its aux hidden-state
outputs for them and refuses a target model class that does not implement ``SupportsEagle3``
(``supports_eagle3(model)``, "Model does not support EAGLE3 interface but
aux_hidden_state_outputs was requested"). This module reads, from a release's installed source
(no import: most model modules need compiled extensions), the generation architectures its
model registry names and, for each, whether the class the registry maps it to inherits
``SupportsEagle3`` (directly, through a base class of the same or another model module, or by
setting ``supports_eagle3 = True``).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

#: registry tables whose architectures can be served as a verifier (text and multimodal)
TABLES = ("_TEXT_GENERATION_MODELS", "_MULTIMODAL_MODELS")
INTERFACE = "SupportsEagle3"


def _registry(models: Path) -> dict[str, tuple[str, str]]:
    tree = ast.parse((models / "registry.py").read_text(encoding="utf-8"))
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if not (isinstance(target, ast.Name) and target.id in TABLES):
            continue
        if not isinstance(node.value, ast.Dict):
            continue
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(value, ast.Tuple)):
                continue
            parts = [e.value for e in value.elts[:2] if isinstance(e, ast.Constant)]
            if len(parts) == 2:
                out[key.value] = (parts[0], parts[1])
    return out


class _Source:
    def __init__(self, src: Path):
        self.src = src
        self.models = src / "vllm" / "model_executor" / "models"

    @cache  # noqa: B019 (one object per release, kept for the process)
    def module(self, name: str) -> ast.Module | None:
        """A model module by its registry name: ``llama`` (under the models package) or a
        dotted module path (``vllm.models.deepseek_v32``, a package: its ``__init__``)."""
        if "." in name:
            base = self.src.joinpath(*name.split("."))
            path = (
                base.with_suffix(".py")
                if base.with_suffix(".py").is_file()
                else base / "__init__.py"
            )
        else:
            path = self.models / f"{name}.py"
        if not path.is_file():
            return None
        return ast.parse(path.read_text(encoding="utf-8"))

    def supports(self, module: str, name: str, seen: frozenset = frozenset()) -> bool | None:
        """Whether ``module.name`` implements the interface (``None``: its source is not
        found)."""
        if (module, name) in seen:
            return False
        seen = seen | {(module, name)}
        tree = self.module(module)
        if tree is None:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return self._class(module, node, seen)
        for node in tree.body:
            # an alias (Name = Other) or an import of the class from another model module
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                if isinstance(node.value, ast.Name):
                    return self.supports(module, node.value.id, seen)
                return None
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        other = self._model_module(node)
                        return self.supports(other, alias.name, seen) if other else None
        return None  # defined at run time (a platform's implementation picked on import)

    def _model_module(self, node: ast.ImportFrom) -> str | None:
        if node.level == 1 and node.module:
            return node.module.split(".")[0]
        prefix = "vllm.model_executor.models."
        if node.level == 0 and node.module and node.module.startswith(prefix):
            return node.module[len(prefix) :].split(".")[0]
        return None

    def _class(self, module: str, node: ast.ClassDef, seen: frozenset) -> bool:
        for stmt in node.body:
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else None
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else target
            if (
                isinstance(target, ast.Name)
                and target.id == "supports_eagle3"
                and isinstance(stmt.value, ast.Constant)
            ):
                return stmt.value.value is True
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if name == INTERFACE:
                return True
            if name and self.supports(module, name, seen):
                return True
        return False


def architectures(src: Path) -> dict[str, list[str]]:
    """The registry's generation architectures (sorted) whose class implements the
    interface (``aux_hidden_states``), whose class does not (``without``), and whose class
    the source does not settle (``unresolved``: a module or class picked at run time)."""
    source = _Source(src)
    out: dict[str, list[str]] = {"aux_hidden_states": [], "without": [], "unresolved": []}
    for arch, (module, cls) in sorted(_registry(source.models).items()):
        found = source.supports(module, cls)
        key = "unresolved" if found is None else "aux_hidden_states" if found else "without"
        out[key].append(arch)
    return out


#: the local list that SpeculativeConfig's argument check holds (0.10.1 to 0.16): an
#: EAGLE-3 target whose text config's model_type contains none of its items is refused
TARGET_LIST = "eagle3_target_supported"
CONFIG_MODULES = ("config/speculative.py", "config/__init__.py", "config.py")


def eagle3_target_check(src: Path) -> ast.If | None:
    """The ``if`` of SpeculativeConfig that refuses an EAGLE-3 target by its model_type
    (``None``: the release has no such check)."""
    for rel in CONFIG_MODULES:
        path = src / "vllm" / rel
        if not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and any(
                isinstance(n, ast.Name) and n.id == TARGET_LIST for n in ast.walk(node.test)
            ):
                return node
    return None


def eagle3_target_types(src: Path) -> list[str] | None:
    """The items of that list, as the release's source spells them (``None``: no check)."""
    if eagle3_target_check(src) is None:
        return None
    for rel in CONFIG_MODULES:
        path = src / "vllm" / rel
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == TARGET_LIST for t in node.targets)
                and isinstance(node.value, ast.List)
            ):
                return [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
    raise LookupError(f"{src}: the EAGLE-3 target check names {TARGET_LIST}, not found")
