"""ldpsim's Prio3 model against the VDAF draft's Python reference implementation (docs/math.md §9.3).

The reference implementation is the ``poc/`` folder of the CFRG VDAF draft repository; ldpsim does not
depend on it. Point ``LDPSIM_VDAF_POC`` at that folder (the one holding the ``vdaf_poc`` package) and,
optionally, ``LDPSIM_VDAF_PYTHON`` at an interpreter with its one dependency (``pycryptodomex``; plus
``typing_extensions`` on Python 3.11; default: the running interpreter). :func:`run_poc` runs
:mod:`ldpsim.scenarios.studies.bench.vdaf_poc_script` there on the settings below and :func:`mismatches`
lists every place where ldpsim's model differs from what the PoC did:

(a) the fields' moduli and encoded sizes; (b) each setting's public share, input shares, FLP proof and
verifier lengths and upload bytes against :func:`~ldpsim.mechanisms.aggregation.field_shares.prio3_bytes`;
(c) the PoC's verdict on valid and invalid submitted vectors against
:func:`~ldpsim.mechanisms.aggregation.field_shares.valid_reports`; (d) that the two aggregators' output
shares sum over the field to the measurement, and that ldpsim's ``reconstruct`` turns the PoC's
aggregate shares into the sum of the measurements. :func:`published_vector_mismatches` checks (b) on the
draft's published test vectors as well.

The PoC's sizes for :data:`SETTINGS` are committed in ``vdaf_poc_sizes.json`` (:data:`TABLE`), checked
against ldpsim's model whether or not the PoC is present.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ldpsim.mechanisms.aggregation.field_shares import (FIELD64, FIELD128, prio3_bytes, reconstruct, split,
                                                        valid_reports)

#: the draft version the committed table was produced from
DRAFT = "draft-irtf-cfrg-vdaf-20 (repository commit 5203892540a95e564dfa978345d16b40baf3c65d, 2026-06-24)"
SCRIPT = Path(__file__).with_name("vdaf_poc_script.py")
TABLE = Path(__file__).with_name("vdaf_poc_sizes.json")
#: the size keys compared between the PoC and :func:`prio3_bytes`
SIZE_KEYS = ("field", "public_share", "leader_share", "helper_share", "upload", "measurement_elements",
             "proof_elements", "verifier_elements", "prep_per_aggregator")


def _s(vdaf, length=1, bound=1, chunk_length=None, **extra):
    return dict(vdaf=vdaf, length=length, bound=bound, chunk_length=chunk_length, **extra)


SETTINGS = [_s("count"), _s("sum", bound=1), _s("sum", bound=255), _s("sum", bound=1000),
            _s("sumvec", 3, 5, 3), _s("sumvec", 10, 1, 4),
            _s("histogram", 4, chunk_length=2), _s("histogram", 10, chunk_length=4),
            _s("histogram", 100, chunk_length=10), _s("histogram", 2000, chunk_length=45),
            _s("histogram", 2000, chunk_length=32),
            _s("multihot", 10, 3, 4), _s("multihot", 100, 5, 11), _s("multihot", 2000, 10, 45)]

_H4, _H5, _M5 = dict(length=4, chunk_length=2), dict(length=5, chunk_length=2), dict(length=5, bound=2,
                                                                                      chunk_length=2)
CASES = ([_s("count", vector=[v]) for v in (0, 1, 2, -1)]
         + [_s("sum", bound=5, vector=[v]) for v in (-1, 0, 3, 5, 6, 7)]
         + [_s("sum", bound=1, vector=[v]) for v in (0, 1, 2)]
         + [_s("sumvec", 3, 5, 3, vector=v) for v in ([0, 5, 3], [6, 0, 0], [0, -1, 0])]
         + [_s("histogram", **_H4, vector=v) for v in ([0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 0],
                                                        [2, -1, 0, 0], [0, 2, 0, 0])]
         + [_s("histogram", **_H5, vector=v) for v in ([0, 0, 0, 0, 1], [0, 0, 0, 1, 1])]
         + [_s("multihot", **_M5, vector=v) for v in ([0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0],
                                                       [1, 1, 1, 0, 0], [2, 0, 0, 0, 0], [1, -1, 1, 0, 0],
                                                       [1, 1, 1, 1, 1])]
         + [_s("multihot", 5, 5, 2, vector=[1, 1, 1, 1, 1])])

AGGREGATES = [_s("count", measurements=[1, 0, 1, 1]), _s("sum", bound=255, measurements=[7, 255, 0]),
              _s("sumvec", 3, 5, 3, measurements=[[1, 2, 3], [5, 5, 5]]),
              _s("histogram", **_H4, measurements=[0, 1, 1, 3]),
              _s("multihot", **_M5, measurements=[[True, False, False, False, True], [False] * 5,
                                                  [False, True, True, False, False]])]


def poc_from_env() -> tuple[Path, str] | None:
    """(PoC folder, interpreter) from ``LDPSIM_VDAF_POC`` / ``LDPSIM_VDAF_PYTHON``, or None when unset."""
    folder = os.environ.get("LDPSIM_VDAF_POC")
    if not folder:
        return None
    return Path(folder), os.environ.get("LDPSIM_VDAF_PYTHON") or sys.executable


def run_poc(poc_dir: Path, python: str) -> dict:
    """Run the driver script in ``python`` against the PoC in ``poc_dir`` on :data:`SETTINGS`,
    :data:`CASES` and :data:`AGGREGATES`; its parsed JSON output."""
    jobs = {"sizes": SETTINGS, "validity": CASES, "aggregate": AGGREGATES}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jobs.json"
        path.write_text(json.dumps(jobs), encoding="utf-8")  # a scratch input, removed with the folder
        done = subprocess.run([python, "-I", str(SCRIPT), str(poc_dir), str(path)], capture_output=True,
                              text=True)
    if done.returncode:
        raise RuntimeError(f"the VDAF PoC run failed ({python} {SCRIPT.name} {poc_dir}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def model_sizes(setting: dict) -> dict:
    """ldpsim's :func:`prio3_bytes` for one setting, restricted to :data:`SIZE_KEYS`."""
    model = prio3_bytes(setting["vdaf"], setting["length"], setting["bound"], setting["chunk_length"])
    return {k: model[k] for k in SIZE_KEYS}


def _as_vector(setting: dict, measurement) -> list[int]:
    """A measurement of the PoC's type as the integer vector ldpsim's predicates and shares take."""
    if setting["vdaf"] == "histogram":
        return [int(i == measurement) for i in range(setting["length"])]
    return [int(v) for v in np.atleast_1d(measurement)]


def model_verdict(case: dict) -> bool:
    """Whether ldpsim's clear-text predicate accepts the case's vector (bit, bounded, one-hot, m-hot)."""
    rule = {"count": "bounded_sum", "sum": "bounded_sum", "sumvec": "bounded_sum", "histogram": "one_hot",
            "multihot": "multi_hot"}[case["vdaf"]]
    return bool(valid_reports([case["vector"]], rule, max_ones=case["bound"], bound=case["bound"])[0])


def _field(vdaf: str):
    """The draft's field of a Prio3 instance: Field64 for Count and Sum, else Field128."""
    return FIELD64 if vdaf in ("count", "sum") else FIELD128


def mismatches(poc: dict, table: dict | None = None) -> list[str]:
    """Every difference between the PoC's output (:func:`run_poc`) and ldpsim's model — empty when they
    agree — and, with ``table``, between the PoC's sizes and the committed table."""
    out = []
    for f in (FIELD64, FIELD128):
        theirs = poc["fields"][f.name]
        if int(theirs["modulus"]) != f.modulus or theirs["encoded_bytes"] != f.encoded_bytes:
            out.append(f"(a) {f.name}: PoC {theirs}, ldpsim modulus {f.modulus}, {f.encoded_bytes} bytes")
    for i, row in enumerate(poc["sizes"]):
        ours = model_sizes(row)
        diff = {k: (row[k], ours[k]) for k in SIZE_KEYS if row[k] != ours[k]}
        if diff:
            out.append(f"(b) {row['vdaf']} {SETTINGS[i]}: (PoC, ldpsim) {diff}")
        if table is not None and {k: row[k] for k in SIZE_KEYS} != {k: table["sizes"][i][k] for k in SIZE_KEYS}:
            out.append(f"(b) {row['vdaf']} {SETTINGS[i]}: PoC {row} differs from the committed table")
    for case in poc["validity"]:
        if case["accepted"] != model_verdict(case):
            out.append(f"(c) {case['vdaf']} {case['vector']}: PoC accepts={case['accepted']}, "
                       f"ldpsim accepts={model_verdict(case)}")
        elif case["accepted"]:
            if case["share_sum"] != [v % _field(case["vdaf"]).modulus for v in case["vector"]]:
                out.append(f"(d) {case['vdaf']} {case['vector']}: PoC shares sum to {case['share_sum']}")
    for job in poc["aggregate"]:
        field = _field(job["vdaf"])
        x = np.array([_as_vector(job, m) for m in job["measurements"]], dtype=np.int64)
        dtype = np.uint64 if field.native else object
        leader, helper = (np.array([int(v) for v in s], dtype=dtype) for s in job["agg_shares"])
        theirs, ours = reconstruct(leader, helper, field), reconstruct(
            *(field.sum(s) for s in split(x, field, rng=0)), field)
        want = x.sum(axis=0)
        if not (np.array_equal(theirs, want) and np.array_equal(ours, want)
                and np.array_equal(np.atleast_1d(job["aggregate"]), want)):
            out.append(f"(d) {job['vdaf']} {job['measurements']}: sum {want.tolist()}, PoC aggregate "
                       f"{job['aggregate']}, ldpsim reconstruct of the PoC's shares {theirs.tolist()}, "
                       f"of ldpsim's {ours.tolist()}")
    return out


_VECTORS = {"Prio3Count": "count", "Prio3Sum": "sum", "Prio3SumVec": "sumvec", "Prio3Histogram": "histogram",
            "Prio3MultihotCountVec": "multihot"}


def published_vector_mismatches(poc_dir: Path) -> tuple[int, list[str]]:
    """The draft's published Prio3 test vectors (``test_vec/vdaf/`` beside ``poc/``) with two
    aggregators: (number checked, every report whose encoded public or input share length differs from
    :func:`prio3_bytes`)."""
    checked, out = 0, []
    for path in sorted((Path(poc_dir).parent / "test_vec" / "vdaf").glob("Prio3*_[0-9]*.json")):
        vdaf = _VECTORS.get(path.stem.rsplit("_", 1)[0])
        vec = json.loads(path.read_text(encoding="utf-8"))
        if vdaf is None or vec["shares"] != 2:
            continue
        model = prio3_bytes(vdaf, vec.get("length", 1), vec.get("max_measurement", vec.get("max_weight", 1)),
                            vec.get("chunk_length"))
        for report in vec["reports"]:
            theirs = [len(report["public_share"]) // 2] + [len(x) // 2 for x in report["input_shares"]]
            ours = [model["public_share"], model["leader_share"], model["helper_share"]]
            checked += 1
            if theirs != ours:
                out.append(f"(b) {path.name}: test vector (public, leader, helper) {theirs}, ldpsim {ours}")
    return checked, out


def committed_table() -> dict:
    """The committed PoC sizes: ``{"draft", "fields", "sizes"}`` (:data:`TABLE`)."""
    return json.loads(TABLE.read_text(encoding="utf-8"))
