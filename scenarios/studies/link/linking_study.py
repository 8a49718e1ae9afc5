"""``ldpsim link``: the linking observer over 30 days, fresh against memoized reports — docs/math.md §7.5.

The study of the memoization section: GRR, OUE and CMS on the emoji workload, measured by
:func:`ldpsim.evaluation.adversary.linking.linking_study`, written to a run folder of kind ``"link"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.adversary.linking import linking_study, plot_linking
from ldpsim.evaluation.privacy.accountant import losses
from ldpsim.evaluation.privacy.composition import basic_composition
from ldpsim.evaluation.privacy.person_level import MEANINGS, person_level
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.mechanisms import make
from ldpsim.mechanisms._validation import check_int
from ldpsim.runtime import durable
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout, RunFolder
from ldpsim.runtime.brief_repr import BriefRepr

#: ``ldpsim link``: the memoization linking study
LAYOUT = Layout("link", ("linking.csv", "linking.png"))


@dataclass(frozen=True, repr=False)
class LinkingResult(BriefRepr):
    """What :func:`memo_linking` returns: the tidy table of :func:`linking_study` and its parameters."""

    table: pd.DataFrame
    devices: int
    epsilon: float
    seed: int

    def summary(self) -> pd.DataFrame:
        """Linked-observer accuracy on days 1, 7, 14, 15 and 30 per mechanism, memo setting and value model,
        beside ``epsilon_report`` and ``epsilon_person`` (:func:`person_epsilons`)."""
        days = self.table[self.table["day"].isin([1, 7, 14, 15, 30])].pivot_table(
            index=["mechanism", "memoize", "value"], columns="day", values="linked")
        eps = self.table.groupby(["mechanism", "memoize", "value"])[["epsilon_report", "epsilon_person"]].first()
        return eps.join(days.round(3))

    def epsilon_note(self) -> str:
        """What the ε columns mean, as printed under the table and in the figure."""
        days = int(self.table["day"].max())
        return (f"ε = {self.epsilon:g} of one report (epsilon_report); epsilon_person: one person over the {days} "
                f"days (fresh: {days} reports composed; memoized: ∞, {MEANINGS['pure memoization']})")

    def to_folder(self, out, force: bool = False) -> list:
        """Write ``linking.csv`` and ``linking.png`` into the run folder ``out`` (kind ``"link"``).

        A folder holding another study's results (other devices, ε or seed) is refused unless ``force``.
        """
        identity = {"fingerprint": f"link-{self.devices}-{self.epsilon!r}", "seed": self.seed}
        with RunFolder.open(out, LAYOUT, identity, replace=force) as folder:
            csv = folder.path("linking.csv")
            durable.write_file(csv, lambda tmp: self.table.to_csv(tmp, index=False))
            png = folder.path("linking.png")
            durable.write_file(png, lambda tmp: plot_linking(self.table, tmp, self.title()))
            paths = [folder.record("linking.csv"), folder.record("linking.png")]
            folder.finalize()
        return paths

    def title(self) -> str:
        """The figure's title: the mechanisms and what their ε means."""
        days = int(self.table["day"].max())
        fresh = self.table.loc[~self.table["memoize"], "epsilon_person"].max()
        return (f"Linking observer, {', '.join(m.upper() for m in self.table['mechanism'].unique())} at ε = "
                f"{self.epsilon:g} per report; per person over {days} days: fresh {fresh:g}, memoized ∞ (a changed report "
                f"proves a changed value)")


def person_epsilons(cases: dict, days: int) -> pd.DataFrame:
    """ε of one report and of one person over ``days`` daily reports, per mechanism of ``cases`` (name →
    mechanism) and memo setting (docs/math.md §8.2, §8.6): fresh reports composed by the accountant;
    memoized ones between arbitrary histories (:func:`~ldpsim.evaluation.privacy.person_level.person_level`:
    ∞, a change of report proves a change of value). Columns mechanism, memoize, epsilon_report, epsilon_person."""
    rows = []
    for name, mech in cases.items():
        fresh = basic_composition(e * n for e, n in losses(mech, days).items())
        for memoize, person in ((False, fresh), (True, person_level(mech, days).epsilon)):
            rows.append({"mechanism": name, "memoize": memoize, "epsilon_report": mech.guarantee.epsilon_report,
                         "epsilon_person": person})
    return pd.DataFrame(rows)


def memo_linking(devices: int = 2000, epsilon: float = 1.0, seed: int = 0, days: int = 30,
                 change_day: int = 15) -> LinkingResult:
    """The linking study of the memoization section: GRR, OUE and CMS (k = m = 64) on the emoji workload.

    Parameters
    ----------
    devices : int
        Devices, each holding one value of the emoji workload's top 20 (≥ 1).
    epsilon : float
        ε of one report (> 0).
    seed : int
        Root seed (≥ 0).
    days, change_day : int
        Days observed, and the day the changing value changes (docs/math.md §7.5).

    Returns
    -------
    LinkingResult
    """
    check_int("memo_linking", "devices", devices, low=1)
    check_int("memo_linking", "seed", seed, low=0)
    if not (isinstance(epsilon, (int, float)) and np.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"memo_linking: epsilon (--epsilon) must be finite and > 0; got {epsilon!r}")
    wl = make_workload("emoji", 1000, top=20)
    d = len(wl.items)
    cases = {"grr": make("grr", epsilon=epsilon, domain_size=d), "oue": make("oue", epsilon=epsilon, domain_size=d),
             "cms": make("cms", epsilon=epsilon, k=64, m=64, seed=3)}
    df = linking_study(cases, list(wl.items), wl.counts, devices, days, change_day, seed)
    df = df.merge(person_epsilons(cases, days), on=["mechanism", "memoize"], how="left")
    df.attrs["change_day"] = change_day
    return LinkingResult(df, int(devices), float(epsilon), int(seed))

