"""Run the VDAF draft's Python reference implementation (``poc/`` of draft-irtf-cfrg-vdaf) on given
Prio3 settings and reports (executed INSIDE the PoC's interpreter).

Usage: ``python -I vdaf_poc_script.py POC_DIR JOBS_JSON``, where POC_DIR holds the ``vdaf_poc``
package and JOBS_JSON is ``{"sizes": [setting, ...], "validity": [case, ...], "aggregate": [job, ...]}``
with a setting ``{"vdaf", "length", "bound", "chunk_length"}`` (``vdaf`` one of count, sum, sumvec,
histogram, multihot), a case a setting plus ``"vector"`` (the submitted integers, any sign) and a job
a setting plus ``"measurements"``. Prints one JSON object: the fields' moduli and encoded sizes, the
encoded public/input/verifier share lengths and FLP lengths of each setting, the PoC's verdict on each
case (and the two aggregators' output shares summed over the field when it accepts), and each job's
aggregate from a full two-aggregator run.

A case's vector is what a malicious client may submit: it is shared and proved as is (the PoC's
``encode`` is bypassed), then both aggregators prepare it; the verdict is whether preparation succeeds.
For sum/sumvec each value is range-check encoded when the draft's encoding admits it, else as
``[v, 0, …, 0]`` (which decodes to v); for multihot every claimed weight in [0, bound] is tried.

This file imports only the standard library and the PoC, never ldpsim. The PoC needs Python ≥ 3.12
(under 3.11 ``import vdaf_poc.vdaf_prio3`` fails: ``SyntaxError`` at ``class Lagrange[F: NttField]():``
in ``field.py``); on 3.11 its two 3.12-only spellings (that PEP 695 class header, ``typing.override``)
are rewritten while importing, no semantics touched: so loaded, the draft-20 PoC passes its own Prio3,
field and FLP unit tests and reproduces its published Prio3 test vectors. Randomness is a fixed seed:
the run is reproducible.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import json
import random
import sys
from pathlib import Path


class _Py311Loader(importlib.machinery.SourceFileLoader):
    def source_to_code(self, data, path, *, _optimize=-1):
        text = data.decode("utf-8")
        text = text.replace("class Lagrange[F: NttField]():", "from typing import Generic\n\n\n"
                            "class Lagrange(Generic[F]):")
        text = text.replace(", override\n", "\nfrom typing_extensions import override\n")
        return compile(text, path, "exec", dont_inherit=True)


class _Py311Finder(importlib.abc.MetaPathFinder):
    def __init__(self, root):
        self.root = Path(root)

    def find_spec(self, name, path=None, target=None):
        if name != "vdaf_poc" and not name.startswith("vdaf_poc."):
            return None
        parts = name.split(".")
        folder = self.root.joinpath(*parts)
        file = folder / "__init__.py" if folder.is_dir() else self.root.joinpath(*parts[:-1], parts[-1] + ".py")
        if not file.is_file():
            return None
        loader = _Py311Loader(name, str(file))
        return importlib.util.spec_from_file_location(name, file, loader=loader,
                                                      submodule_search_locations=[str(folder)] if folder.is_dir()
                                                      else None)


def _load(poc_dir):
    sys.path.insert(0, str(poc_dir))
    if sys.version_info < (3, 12):
        sys.meta_path.insert(0, _Py311Finder(poc_dir))
    from vdaf_poc import flp_bbcggi19, vdaf_prio3
    return flp_bbcggi19, vdaf_prio3


def _instance(prio3, s):
    if s["vdaf"] == "count":
        return prio3.Prio3Count(2)
    if s["vdaf"] == "sum":
        return prio3.Prio3Sum(2, s["bound"])
    if s["vdaf"] == "sumvec":
        return prio3.Prio3SumVec(2, s["length"], s["bound"], s["chunk_length"])
    if s["vdaf"] == "histogram":
        return prio3.Prio3Histogram(2, s["length"], s["chunk_length"])
    return prio3.Prio3MultihotCountVec(2, s["length"], s["bound"], s["chunk_length"])


def _honest(s):
    """A valid measurement of the setting, in the PoC's own type."""
    return {"count": 1, "sum": s["bound"], "sumvec": [s["bound"]] * s["length"], "histogram": 0,
            "multihot": [True] * s["bound"] + [False] * (s["length"] - s["bound"])}[s["vdaf"]]


def _run(vdaf, encoded, rng):
    """Shard ``encoded`` (field elements, bypassing encode) and prepare it: the two output shares, or None."""
    ctx, key = b"ldpsim vdaf check", rng.randbytes(vdaf.VERIFY_KEY_SIZE)
    nonce, rand = rng.randbytes(vdaf.NONCE_SIZE), rng.randbytes(vdaf.RAND_SIZE)
    honest_encode = vdaf.flp.encode
    vdaf.flp.encode = lambda meas: meas
    try:
        public, shares = vdaf.shard(ctx, encoded, nonce, rand)
    finally:
        vdaf.flp.encode = honest_encode
    states, vshares = [], []
    for j in range(vdaf.SHARES):
        state, vshare = vdaf.verify_init(key, ctx, j, None, nonce, public, shares[j])
        states.append(state)
        vshares.append(vshare)
    try:
        message = vdaf.verifier_shares_to_message(ctx, None, vshares)
        return [vdaf.verify_next(ctx, state, message) for state in states]
    except ValueError:
        return None


def _encodings(flp_mod, field, s, vector):
    """The encodings a client may submit for ``vector`` (see the module docstring)."""
    f = [field(v % field.MODULUS) for v in vector]
    if s["vdaf"] in ("count", "histogram"):
        return [f]
    if s["vdaf"] == "multihot":
        return [f + flp_mod.encode_range_checked_int(field, w, s["bound"]) for w in range(s["bound"] + 1)]
    bits = s["bound"].bit_length()
    out = []
    for v, fv in zip(vector, f):
        if 0 <= v <= s["bound"]:
            out += flp_mod.encode_range_checked_int(field, v, s["bound"])
        else:
            out += [fv] + [field(0)] * (bits - 1)
    return [out]


def main(poc_dir, jobs):
    flp_mod, prio3 = _load(poc_dir)
    from vdaf_poc.field import Field64, Field128
    rng = random.Random(20260624)
    out = {"python": sys.version.split()[0],
           "fields": {f.__name__: {"modulus": str(f.MODULUS), "encoded_bytes": f.ENCODED_SIZE}
                      for f in (Field64, Field128)},
           "sizes": [], "validity": [], "aggregate": []}
    ctx = b"ldpsim vdaf check"
    for s in jobs["sizes"]:
        vdaf = _instance(prio3, s)
        nonce, rand = rng.randbytes(vdaf.NONCE_SIZE), rng.randbytes(vdaf.RAND_SIZE)
        public, shares = vdaf.shard(ctx, _honest(s), nonce, rand)
        key = rng.randbytes(vdaf.VERIFY_KEY_SIZE)
        _, vshare = vdaf.verify_init(key, ctx, 0, None, nonce, public, shares[0])
        pub, lead, help_ = (len(vdaf.encode_public_share(public)), len(vdaf.encode_input_share(shares[0])),
                            len(vdaf.encode_input_share(shares[1])))
        out["sizes"].append(dict(s, field=vdaf.flp.field.__name__, public_share=pub, leader_share=lead,
                                 helper_share=help_, upload=pub + lead + help_,
                                 measurement_elements=vdaf.flp.MEAS_LEN, proof_elements=vdaf.flp.PROOF_LEN,
                                 verifier_elements=vdaf.flp.VERIFIER_LEN,
                                 prep_per_aggregator=len(vdaf.encode_verifier_share(vshare))))
    for case in jobs["validity"]:
        vdaf = _instance(prio3, case)
        field = vdaf.flp.field
        verdict, total = False, None
        for encoded in _encodings(flp_mod, field, case, case["vector"]):
            outs = _run(vdaf, encoded, rng)
            if outs is not None:
                verdict, total = True, [int((a + b).int()) for a, b in zip(*outs)]
                break
        out["validity"].append(dict(case, accepted=verdict, share_sum=total))
    for job in jobs["aggregate"]:
        vdaf = _instance(prio3, job)
        field = vdaf.flp.field
        agg = [vdaf.agg_init(None) for _ in range(vdaf.SHARES)]
        for m in job["measurements"]:
            outs = _run(vdaf, vdaf.flp.encode(m), rng)
            agg = [vdaf.agg_update(None, a, o) for a, o in zip(agg, outs)]
        out["aggregate"].append(dict(job, aggregate=vdaf.unshard(None, agg, len(job["measurements"])),
                                     agg_shares=[[str(x.int()) for x in a] for a in agg]))
    return out


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text(encoding="utf-8")))))
