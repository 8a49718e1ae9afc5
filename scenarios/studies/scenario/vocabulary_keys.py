"""The ``vocabulary`` keys of a scenario's ``[workload]`` table (both kinds), and ``--vocabulary``.

::

    [workload]
    vocabulary = "data/emoji_500.csv"   # relative to the scenario file's folder
    format = "csv"                      # optional: csv | tsv | parquet | list | corpus (default: extension)
    lowercase = false                   # optional: default true for a corpus, false for lists and tables
    top = 300                           # optional: keep the most frequent items only

``name`` may be left out (it is ``"vocabulary"``). The command line's ``--vocabulary FILE`` (relative
to the current folder) replaces the scenario's workload by that file. The file is read once here, so
a broken file fails before anything runs, and its SHA-256 goes into the workload's parameters: a
sweep's cells are tied to the file's bytes (:func:`~ldpsim.evaluation.workloads.vocabulary.vocabulary_workload`
refuses a file changed since).
"""

from __future__ import annotations

from pathlib import Path

from ldpsim.runtime.errors import InputError

from ldpsim.scenarios.studies.scenario.schema import ScenarioError
from ldpsim.evaluation.workloads.vocabulary import Vocabulary, load_vocabulary, resolve_file

#: the [workload] keys of a vocabulary workload besides ``name`` (``n`` in sweeps)
VOCABULARY_KEYS = ("vocabulary", "format", "lowercase", "top")


def vocabulary_workload_table(workload: dict, file, override=None,
                              allowed=VOCABULARY_KEYS) -> tuple[dict, Vocabulary | None]:
    """The ``[workload]`` table with its vocabulary read and pinned, and the :class:`Vocabulary`.

    Parameters
    ----------
    workload : dict
        The scenario's ``[workload]`` table as read from TOML.
    file : str or Path
        The scenario file (relative vocabulary paths are relative to its folder; named in errors).
    override : str or Path, optional
        ``--vocabulary``: a file (relative to the current folder) replacing the scenario's workload;
        the other keys of ``workload`` listed in ``allowed`` besides ``VOCABULARY_KEYS`` (``n``) are kept.
    allowed : tuple of str
        The keys a vocabulary workload table may hold besides ``name``.

    Returns
    -------
    (dict, Vocabulary or None)
        ``workload`` unchanged and None when it names no vocabulary; else ``{"name": "vocabulary",
        "vocabulary": <absolute path>, "sha256": ..., <other keys>}`` and the file's vocabulary.
    """
    if override is not None:
        kept = {k: v for k, v in workload.items() if k in allowed and k not in VOCABULARY_KEYS}
        workload, base, where = {**kept, "vocabulary": str(override)}, None, "--vocabulary"
    elif "vocabulary" in workload:
        base, where = Path(file).parent, "workload.vocabulary"
    else:
        return workload, None
    name = workload.get("name", "vocabulary")
    if name != "vocabulary":
        raise ScenarioError(file, "workload.name", f"a [workload] with a vocabulary file is named 'vocabulary' "
                            f"(or has no name); got {name!r}")
    for key in workload:
        if key not in allowed and key not in ("name", "sha256"):
            raise ScenarioError(file, f"workload.{key}", f"unknown key for a vocabulary workload; allowed: "
                                f"{', '.join(('name',) + tuple(allowed))}")
    if not isinstance(workload["vocabulary"], str):
        raise ScenarioError(file, where, f"must be a file name (str); got {workload['vocabulary']!r}")
    path = resolve_file(workload["vocabulary"], base).absolute()
    options = {k: workload[k] for k in ("format", "lowercase", "top") if k in workload}
    try:
        vocab = load_vocabulary(path, **options)
    except InputError as exc:
        raise ScenarioError(file, where, str(exc)) from None
    if vocab.domain_size < 2:
        raise ScenarioError(file, where, f"vocabulary file {path} holds {vocab.domain_size} item; at least 2 are "
                            "needed (one item leaves nothing to estimate)")
    return {**workload, "name": "vocabulary", "vocabulary": str(path), "sha256": vocab.source["sha256"]}, vocab
