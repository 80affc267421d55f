"""Runs inside one vLLM reader environment (scripts/reader-envs.sh); never imported by specfmt.

One process answers everything the readers test group asks one release, so the release's
vLLM (with torch and transformers, most of a probe's time) is imported once per session.
Requests, one JSON line each on stdin, are answered in order, one JSON line each on stdout:

* ``{"config": {...}}`` (or ``{}``): the config reader, vllm_probe.py's answer;
* ``{"draft": DIR, "verifier": DIR}``: the drafter's weight loading, weights_probe.py's answer;
* ``{"positions": DIR}``: ``{"max_model_len": N}`` or ``{"error": "ERR ..."}``, the maximum
  model length positions_probe.py derives for the config in DIR.

With ``--weights`` (a model layer on the python path) weights_probe.py is imported first, so
its set-up (the CPU platform, the in-process registry inspection) precedes every other import
of vLLM, as in a process of its own; the config reader answers the same under it. vLLM's cache
root and every temporary file are in one temporary directory, removed at the end: nothing is
read from or written to the user's ~/.cache/vllm.
"""

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

WORKDIR = tempfile.TemporaryDirectory(prefix="vllm-release-probe-")
os.environ["VLLM_CACHE_ROOT"] = os.path.join(WORKDIR.name, "vllm-cache")
tempfile.tempdir = WORKDIR.name  # the gloo group's rendezvous file, vLLM's own temporaries
# answers go to the original standard output; whatever vLLM prints goes to standard error
# (at the descriptor level: some releases dup sys.stdout's descriptor)
ANSWERS = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)

if "--weights" in sys.argv[1:]:
    import weights_probe
import vllm_probe  # noqa: E402  (after the model layer's set-up)


def answer(request: dict, workdir: Path) -> dict:
    if "draft" in request:
        try:
            return weights_probe.load(request)
        except Exception as exc:  # report, do not stop the session
            return {
                "stage": "probe",
                "error": f"{type(exc).__name__}: {exc}"[:1000],
                "trace": traceback.format_exc(),
            }
    if "positions" in request:
        import positions_probe  # only the positions test asks; older releases lack its module

        value = positions_probe.max_len(request["positions"])
        if isinstance(value, str):
            return {"error": value}
        return {"max_model_len": value}
    return vllm_probe.answer(request, workdir)


def main() -> None:
    workdir = Path(WORKDIR.name)
    os.chdir(workdir)  # relative verifier paths resolve here, never in the checkout
    for line in sys.stdin:
        if line.strip():
            ANSWERS.write(json.dumps(answer(json.loads(line), workdir)) + "\n")
            ANSWERS.flush()
    WORKDIR.cleanup()
    # every answer is written: skip the interpreter's teardown of torch and vLLM (2-5 s)
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
