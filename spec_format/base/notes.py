"""Run notes: what a whole ``validate`` run skipped or assumed, said once at its end.

Each has an id (``N`` and three digits) that ``--select``/``--ignore`` and configuration
files accept like a rule id, so a note that is known and accepted can be silenced (under
``--select`` a note is shown with the rules it is about); ``-q`` prints none of them. ``specfmt explain N001`` prints the text below.
"""

from __future__ import annotations

from typing import NamedTuple


class RunNote(NamedTuple):
    id: str
    name: str
    doc: str
    about: str  # the id letters of the rules it is about: selecting one of those shows it


NOTES: dict[str, RunNote] = {
    n.id: n
    for n in (
        RunNote(
            "N001",
            "no-verifier",
            "No `--verifier` was given, so the checks of a draft against its target model (the "
            "V rules: hidden size, vocabulary, aux layer range, attention and rope settings, "
            "architectures) did not run. Pass `--verifier PATH` (the verifier's `config.json`, "
            "its directory or `hf://ORG/NAME`), or `--ignore N001` when that is intended.",
            "V",
        ),
        RunNote(
            "N002",
            "assumed-engines",
            "No `--engine` was given, so the reader checks (C rules) judged each config against "
            "the newest covered release of each engine and the speculators release of its own "
            "format version. Pass `--engine NAME==VERSION` for the engines you serve with (or "
            "set `engine` in a configuration file), or `--ignore N002`.",
            "C",
        ),
        RunNote(
            "N003",
            "no-weights",
            "An input had no `model.safetensors` (or index), so only its config was checked: "
            "not the safetensors header, the tensor contract or the values (H, W, D rules). "
            "Validate the checkpoint directory with its weights, or `--ignore N003` when only "
            "configs are meant to be checked.",
            "HWD",
        ),
    )
}


def selected(note_id: str, select: frozenset[str], ignore: frozenset[str]) -> bool:
    """Shown unless ignored by id; under --select, when it or a rule it is about is selected
    (``--select V`` still says that the V rules were skipped)."""
    if note_id in ignore:
        return False
    about = NOTES[note_id].about
    return not select or note_id in select or any(i[0] in about for i in select)


def text(note_id: str, message: str) -> str:
    """A note as ``Report.notes`` holds it (and ``--format json`` prints it): id first."""
    assert note_id in NOTES, note_id
    return f"{note_id} {message}"


def id_ranges(ids: list[str]) -> str:
    """``V001, V002, V003, V005`` -> ``V001-V003, V005``."""
    out: list[str] = []
    run: list[str] = []
    for i in ids:
        if run and i[0] == run[-1][0] and int(i[1:]) == int(run[-1][1:]) + 1:
            run.append(i)
            continue
        if run:
            out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [i]
    if run:
        out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)
