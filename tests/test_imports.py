"""Config-only validation stays cheap: no torch, no numpy."""

from __future__ import annotations

import subprocess
import sys

from tests.common import EXAMPLES, ROOT


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
