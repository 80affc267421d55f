"""Real command output for the docs: the snippets the hand-written guide includes."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any

#: a fixed terminal for command output in the docs (the same on every machine and CI)
CLI_ENV = {
    "COLUMNS": "80",  # fits the main column at 800 px and beside both sidebars at 1280 px
    "NO_COLOR": "1",
    "TERM": "dumb",
    "FORCE_COLOR": None,
    "PY_COLORS": None,
    "GITHUB_ACTIONS": None,
}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _run_cli(args: list[str], cwd: Path) -> tuple[int, str]:
    from typer.testing import CliRunner

    from spec_format.cli.app import app

    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, args, env=CLI_ENV, catch_exceptions=False)
    finally:
        os.chdir(old)
    lines = [line.rstrip() for line in ANSI.sub("", result.output).splitlines()]
    return result.exit_code, "\n".join(lines).strip("\n") + "\n"


def _console(args: list[str], cwd: Path, *, expect: tuple[int, ...] = (0, 1)) -> str:
    code, output = _run_cli(args, cwd)
    if code not in expect:
        raise SystemExit(
            f"`specfmt {' '.join(args)}` exited {code} while generating the docs:\n{output}"
        )
    shown = " ".join(shlex.quote(a) for a in args)
    return f"```console\n$ specfmt {shown}\n{output.rstrip()}\n```\n"


def _broken_draft(root: Path) -> dict[str, Any]:
    """The DFlash example with three realistic mistakes, for the validate examples."""
    config = json.loads((root / "examples" / "qwen3-8b-dflash" / "config.json").read_text())
    config = copy.deepcopy(config)
    ids = config.get("aux_hidden_state_layer_ids") or [1, 9, 17, 25, 33]
    config["aux_hidden_state_layer_ids"] = [0, *ids[1:]]  # z-lab ids not shifted by one
    config.pop("sample_from_anchor", None)
    methods = config["speculators_config"]["proposal_methods"]
    methods[0]["speculative_tokens"] = config.get("block_size", 16)
    return config


def snippets(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    example = "examples/qwen3-8b-eagle3"
    config = f"{example}/config.json"
    out["validate-example.txt"] = _console(["validate", example], root)
    out["validate-json.txt"] = _console(["validate", "--format", "json", example], root)
    out["migrate-example.txt"] = _console(["migrate", "--dry-run", config], root, expect=(0,))
    out["history.txt"] = _console(["history"], root, expect=(0,))
    with tempfile.TemporaryDirectory() as tmp:
        out["schema-vscode.txt"] = _console(["schema", "vscode"], Path(tmp))  # writes a file
        draft = Path(tmp) / "drafts" / "qwen3-8b-dflash"
        draft.mkdir(parents=True)
        (draft / "config.json").write_text(json.dumps(_broken_draft(root), indent=2) + "\n")
        rel = "drafts/qwen3-8b-dflash"
        out["validate-broken.txt"] = _console(["validate", rel], Path(tmp))
        out["validate-github.txt"] = _console(["validate", "--format", "github", rel], Path(tmp))
        # a 0.9 EAGLE-3 config that leaves out the keys readers disagree on
        lean = json.loads(
            (root / "examples" / "llama-3.1-8b-eagle3-0.9" / "config.json").read_text()
        )
        for key in ("norm_before_residual", "eagle_aux_hidden_state_layer_ids"):
            lean.pop(key, None)
        (Path(tmp) / "drafts" / "llama-eagle3").mkdir(parents=True)
        (Path(tmp) / "drafts" / "llama-eagle3" / "config.json").write_text(
            json.dumps(lean, indent=2) + "\n"
        )
        out["fix-example.txt"] = _console(
            ["fix", "--dry-run", "drafts/llama-eagle3"], Path(tmp), expect=(0,)
        )
    out["publish-table.md"] = _publish_table()
    from spec_format.facts import export

    out["schemastore-entry.txt"] = f"```json\n{export.dumps(export.schemastore_entry())}```\n"
    return {f"generated/docs/snippets/{k}": v for k, v in out.items()}


def _publish_table() -> str:
    """Which committed files are to be served at which addresses (their $ids), per version."""
    from spec_format.facts import catalog, export, schemas

    base = catalog.data()["base_uri"]
    by_folder: dict[str, list[str]] = {}
    for path, uri in export.published_files():
        if uri != base + path:
            raise SystemExit(f"{path}: $id {uri} is not {base}{path}; publishing would break")
        folder, name = path.rsplit("/", 1)
        by_folder.setdefault(folder, []).append(name.removesuffix(schemas.SCHEMA_SUFFIX))
    lines = ["| folder in `generated/schemas/` | serve at | files (`<name>.schema.json`) |"]
    lines.append("|---|---|---|")
    for folder, names in by_folder.items():
        lines.append(f"| `{folder}/` | `{base}{folder}/` | {', '.join(names)} |")
    return "\n".join(lines) + "\n"
