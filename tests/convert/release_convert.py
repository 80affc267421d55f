"""Runs inside a speculators release environment (never imported by specfmt or the normal
test run): converts SafeAILab EAGLE-3 sources with the release's own ``Eagle3Converter``.

Reads a JSON list of ``{"src", "out", "verifier", "aux"}`` on stdin; prints one JSON list of
``{"ok": true}`` or ``{"error": ...}`` (a release that cannot convert a case says why)."""

from __future__ import annotations

import inspect
import json
import sys
import traceback
import warnings

warnings.filterwarnings("ignore")


def main() -> None:
    from loguru import logger

    logger.remove()
    from speculators.convert.eagle.eagle3_converter import Eagle3Converter

    params = inspect.signature(Eagle3Converter.convert).parameters
    results = []
    for job in json.loads(sys.stdin.read()):
        kwargs = {}
        if "eagle_aux_hidden_state_layer_ids" in params:  # 0.1.0 always uses the default
            kwargs["eagle_aux_hidden_state_layer_ids"] = job["aux"]
        try:
            Eagle3Converter().convert(
                job["src"], job["out"], base_model=job["verifier"], validate=False, **kwargs
            )
            results.append({"ok": True})
        except Exception:
            results.append({"error": traceback.format_exc(limit=3)})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
