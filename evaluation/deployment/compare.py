"""The same fleet under several emoji designs: accuracy, bytes per device, ε spent and the linking observer.

A deployment scenario may hold a ``[variants.<name>]`` table per design: the keys of a
``[use_case.emoji]`` table (mechanism, epsilon, memoize, the mechanism's parameters). Every variant
runs the scenario's fleet with the same seed (so the same devices type the same emoji), with its
emoji use case replaced; the readings stay as the scenario has them. One row per variant:

* ``share_mse_top10``: mean over days and the true top 10 of (estimated − true share)²;
* ``bytes_per_device``: bytes uploaded per device over the run (wire form, framing included);
* ``epsilon_mean`` / ``epsilon_max``: ε charged per device over the run (all use cases), and
  ``epsilon_saved_mean``: what memoization did not charge;
* ``linked`` / ``stripped``: the deployment observer's accuracy guessing each tapped device's
  favourite emoji from its linked reports, or from same-day reports after stripping and shuffling
  (``deployment_metrics.adversary``);
* per reading use case (the same in every variant, e.g. 1BitMean's typing speed): ``<reading>_mae``,
  the mean over days of |estimated − true mean of the donated readings|, and ``<reading>_sd``, the mean
  of the report's daily theory sd (raw units).

``python -m ldpsim.evaluation.deployment.compare industrial`` prints the table.
"""

from __future__ import annotations

import dataclasses
import tempfile

import numpy as np
import pandas as pd


def load_variants(path) -> dict:
    """name → the table of each ``[variants.<name>]`` of the scenario file (raw TOML values)."""
    from ldpsim.evaluation.scenario.schema import ScenarioError, load_toml

    raw = load_toml(path).get("variants", {})
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise ScenarioError(path, "variants", "must hold one [variants.<name>] table per design")
    return raw


def compare(path, devices: int | None = None, days: int | None = None, seed: int | None = None,
            only=None) -> pd.DataFrame:
    """Run every variant (or those named in ``only``) of the scenario at ``path`` on the same fleet;
    one row per variant."""
    from ldpsim.evaluation.deployment.estimates import measure
    from ldpsim.evaluation.scenario.deployment_file import _use_case, load_deployment
    from ldpsim.evaluation.workloads.make import make_workload
    from ldpsim.simulator.deployment import run

    cfg, meta = load_deployment(path, devices, days, seed)
    workload = make_workload("emoji", 1, top=len(cfg.items))
    rows = []
    for name, table in load_variants(path).items():
        if only is not None and name not in only:
            continue
        uc = _use_case("emoji", table, workload, path, f"variants.{name}")
        others = tuple(u for u in cfg.use_cases if u.kind != "event")
        variant = dataclasses.replace(cfg, use_cases=(uc, *others))
        with tempfile.TemporaryDirectory(prefix="ldpsim-compare-") as out:
            result = run(variant, out, meta["workers"])
        m = measure(variant, result, np.random.SeedSequence(variant.seed, spawn_key=(9,)))
        daily, s = m["daily"], m["summary"]
        top = daily.groupby("item")["true_donated"].mean().nlargest(10).index
        in_top = daily[daily["item"].isin(top)]
        saved = result.ledger_saved if result.ledger_saved is not None else np.zeros(1)
        rows.append({"variant": name, "mechanism": uc.mechanism, "memoize": uc.memoize,
                     "epsilon_per_report": uc.epsilon,
                     "share_mse_top10": float(((in_top["estimate"] - in_top["true_donated"]) ** 2).mean()),
                     "bytes_per_device": s["bytes_total"] / variant.n_devices,
                     "epsilon_mean": s["epsilon_total_mean"], "epsilon_max": s["epsilon_total_max"],
                     "epsilon_saved_mean": float(saved.mean()),
                     "linked": s.get("adversary_linked", np.nan), "stripped": s.get("adversary_stripped", np.nan),
                     "prior_only": s.get("adversary_prior_only", np.nan), **_reading_columns(m["readings"])})
    return pd.DataFrame(rows)


def _reading_columns(daily: pd.DataFrame) -> dict:
    """``<reading>_mae`` and ``<reading>_sd`` per reading use case from the daily reading table."""
    out = {}
    for name, r in (daily.groupby("use_case") if not daily.empty else []):
        out[f"{name}_mae"] = float((r["estimate"] - r["true_donated"]).abs().mean())
        out[f"{name}_sd"] = float(r["sd"].mean())
    return out


def main(argv=None) -> int:
    import argparse
    from pathlib import Path

    p = argparse.ArgumentParser(prog="python -m ldpsim.evaluation.deployment.compare",
                                description="Run every [variants.*] design of a deployment scenario on the same fleet.")
    p.add_argument("scenario", nargs="?", default="industrial", help="scenario file or shipped name")
    p.add_argument("--devices", type=int)
    p.add_argument("--days", type=int)
    p.add_argument("--seed", type=int)
    p.add_argument("--out", help="folder for compare.csv")
    p.add_argument("--only", help="comma-separated variant names (default: all)")
    args = p.parse_args(argv)
    path = Path(args.scenario)
    if not path.is_file():
        path = Path(__file__).resolve().parents[2] / "scenarios" / f"{args.scenario.removesuffix('.toml')}.toml"
    df = compare(path, args.devices, args.days, args.seed, args.only.split(",") if args.only else None)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        df.to_csv(Path(args.out) / "compare.csv", index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df.round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
