"""Each command imports what it runs, and nothing else: start-up is most of a short run.

Each case runs ``specfmt ARGS`` in a fresh interpreter (the console script's ``main``) and
lists the modules it imported; the test fails naming the modules a command should not pay
for (another command's module, the jsonschema stack on a passing config, torch, ...).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from spec_format.testing.builder import build_checkpoint, tiny_config
from tests.common import EXAMPLES, ROOT

#: what no config-only validate of a passing config imports
HEAVY = ("torch", "numpy", "pydantic", "jsonschema", "referencing", "rich", "huggingface_hub")
OTHER_COMMANDS = tuple(
    f"spec_format.cli.{m}_cmd"
    for m in (
        "convert",
        "forward",
        "history",
        "inspect",
        "rewrite",
        "rules",
        "schema",
        "serving",
    )
)
VALIDATION = (
    "spec_format.runner.validation",
    "spec_format.rules.registry",
    "jsonschema",
    "pydantic",
)


def _imported(args: list[str]) -> tuple[int, set[str], str]:
    code = (
        "import sys\n"
        "from spec_format.cli.app import main\n"
        f"sys.argv = ['specfmt', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "else:\n"
        "    code = 0\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
        "sys.stderr.write(f'EXIT {code}\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    lines = proc.stderr.splitlines()
    modules = next(line for line in lines if line.startswith("MODULES ")).split()[1:]
    exit_code = int(next(line for line in lines if line.startswith("EXIT ")).split()[1] or 0)
    return exit_code, set(modules), proc.stdout + proc.stderr


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def test_validate_of_a_passing_config_imports_no_other_command_and_no_jsonschema():
    code, modules, output = _imported(["validate", str(EXAMPLES[0] / "config.json")])
    assert code == 0, output
    assert _loaded(modules, HEAVY + OTHER_COMMANDS) == []
    assert "spec_format.facts.schema_check" in modules  # the compiled check said yes


def test_validate_of_a_config_imports_no_weights_reader_and_no_tensor_contract():
    # the weights rules are imported with every rule, but a config has no weights: the
    # safetensors reader and the contracts' expansion load only when a checkpoint is read
    code, modules, output = _imported(["validate", str(EXAMPLES[0] / "config.json")])
    assert code == 0, output
    weights_only = (
        "spec_format.parsers.safetensors",
        "spec_format.parsers.header_reader",
        "spec_format.facts.contract.loader",
        "spec_format.facts.contract.expected",
        "spec_format.facts.contract.diff",
    )
    assert _loaded(modules, weights_only) == []


def test_validate_of_a_failing_config_imports_jsonschema_to_explain_it(tmp_path):
    config = json.loads((EXAMPLES[0] / "config.json").read_text())
    config["transformer_layer_config"]["hidden_size"] = "4096"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, modules, output = _imported(["validate", str(path), "--format", "json"])
    assert code == 1, output
    assert "S102" in output
    assert "jsonschema" in modules
    assert _loaded(modules, ("torch", "numpy", "pydantic") + OTHER_COMMANDS) == []


@pytest.mark.parametrize(
    "args",
    [["inspect", "CKPT"], ["convert", "--help"], ["schema", "--help"], ["history"]],
    ids=" ".join,
)
def test_commands_that_do_not_validate_do_not_import_validation(args, tmp_path):
    if "CKPT" in args:
        ckpt = build_checkpoint(tmp_path / "ckpt", tiny_config("eagle3", None)).path
        args = [str(ckpt) if a == "CKPT" else a for a in args]
    code, modules, output = _imported(args)
    assert code == 0, output
    assert _loaded(modules, VALIDATION + ("torch",)) == []
    own = {"inspect": "inspect", "convert": "convert", "schema": "schema", "history": "history"}
    others = [m for m in OTHER_COMMANDS if m != f"spec_format.cli.{own[args[0]]}_cmd"]
    assert _loaded(modules, ("spec_format.cli.validate_cmd", *others)) == []


def test_convert_help_imports_no_converter():
    code, modules, output = _imported(["convert", "--help"])
    assert code == 0, output
    assert _loaded(modules, ("spec_format.convert", "numpy", "safetensors")) == []


def test_rules_command_module_imports_no_registry():
    code = (
        "import sys, spec_format.cli.rules_cmd; print('spec_format.rules.registry' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "False", proc.stderr


def test_validate_does_not_import_torch_or_numpy():
    code = (
        "import sys\n"
        "from spec_format.cli.app import app\n"
        "from typer.testing import CliRunner\n"
        f"r = CliRunner().invoke(app, ['validate', {str(EXAMPLES[0])!r}, '--format', 'json'])\n"
        "assert r.exit_code == 0, r.output\n"
        "heavy = sorted(m for m in ('torch', 'numpy') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
