"""The deployment study as a library (``ldpsim.run``) and as ``ldpsim run``: the same numbers and errors, run
folders that never replace another run, short runs that say what lies outside them, and a report page
that can be read (tables, human headers, axes that hold every estimate)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import ldpsim
from ldpsim.scenarios.studies.deployment.study import default_out, run_deployment
from ldpsim.runtime.errors import LdpsimError
from ldpsim.scenarios.cli import main
from tests.fleets import TINY as BASE

#: test_scenario's tiny fleet for 3 days, with the words use case (a new word from day 0) and a server crash
TINY = (BASE.replace('name = "tiny"', 'name = "tinyw"').replace("days = 2", "days = 3")
        .replace("fsync = false", "fsync = false\ncrash_at_h = 30.0") + """
[use_case.words]
mechanism = "pem"
epsilon = 4.0
top_k = 5
pool = 16

[words]
top = 50
slang_start_day = 0
slang_share = 0.3
""")

#: the same fleet for 2 days, its trend (day 5), new word (day 4) and crash (day 6) planned after the run
SHORT = (TINY.replace("days = 3", "days = 2").replace("start_day = 1", "start_day = 5")
         .replace("slang_start_day = 0", "slang_start_day = 4").replace("crash_at_h = 30.0", "crash_at_h = 150.0"))

#: a format placeholder that reached the user ("top-{k}")
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.\[\]']*(:[^}]*)?\}")
TIMING = {"seconds", "device_days_per_s"}


def _scenario(tmp_path, text=TINY, name="tinyw.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _without_timing(text: str) -> str:
    return re.sub(r"device-days/s .*?worker[s]?\)", "", text, flags=re.S)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("study")
    return ldpsim.run(_scenario(tmp), out=tmp / "lib", figures="all")  # (a tiny run: drawn when asked)


@pytest.mark.slow  # ~10 s: two tiny runs
def test_notebook_and_command_line_give_the_same_numbers(study, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["run", str(_scenario(tmp_path)), "--out", str(out), "-q"]) == 0
    printed = capsys.readouterr().out
    cli = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    lib = json.loads((study.out / "summary.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in cli.items() if k not in TIMING} == {k: v for k, v in lib.items() if k not in TIMING}
    assert _without_timing(study.text) in _without_timing(printed)
    assert _without_timing((out / "summary.txt").read_text(encoding="utf-8")) == _without_timing(study.text + "\n")
    assert f"run folder: {out.resolve()}" in printed  # one line says where the run went, even with -q
    for key, frame in study.tables.items():  # the tables of the result are the files of the folder
        if key in ("pooled", "top", "budget", "central_days"):
            name = {"pooled": "pooled_estimates", "budget": "daily_reports"}.get(key, key)
            stored = pd.read_csv(study.out / f"{name}.csv")
            pd.testing.assert_frame_equal(stored, frame.reset_index(drop=True), check_dtype=False)
    assert set(study.figures()) == {p.name for p in study.figure_files}


@pytest.mark.parametrize("case", ["days = 0", "sweep scenario", "out is a file"])
def test_notebook_and_command_line_give_the_same_errors(tmp_path, capsys, case):
    scenario, out = _scenario(tmp_path), tmp_path / "out"
    if case == "days = 0":
        scenario = _scenario(tmp_path, TINY.replace("days = 3", "days = 0"), "bad.toml")
    elif case == "sweep scenario":
        scenario = "smoke"
    else:
        out.write_text("not a folder", encoding="utf-8")
    with pytest.raises(LdpsimError) as raised:
        ldpsim.run(scenario, out=out)
    assert isinstance(raised.value, ValueError)
    assert main(["run", str(scenario), "--out", str(out), "-q"]) == 2
    assert capsys.readouterr().err == f"error: {raised.value}\n"


@pytest.mark.slow  # ~15 s: three tiny runs
def test_a_trial_run_never_replaces_the_main_run(tmp_path, monkeypatch, capsys):
    """Today's default folder ``runs/<name>-seed<seed>`` ignored --devices/--days: the trial replaced the run."""
    monkeypatch.chdir(tmp_path)
    scenario = _scenario(tmp_path)
    assert main(["run", str(scenario), "-q"]) == 0
    assert main(["run", str(scenario), "--days", "1", "-q"]) == 0
    main_run, trial = tmp_path / "runs" / "tinyw-150x3d-seed3", tmp_path / "runs" / "tinyw-150x1d-seed3"
    assert json.loads((main_run / "summary.json").read_text(encoding="utf-8"))["days"] == 3
    assert json.loads((trial / "summary.json").read_text(encoding="utf-8"))["days"] == 1
    capsys.readouterr()
    # into the same folder by hand: a finished run of another configuration needs --force
    assert main(["run", str(scenario), "--days", "1", "--out", str(main_run), "-q"]) == 2
    assert "--force" in capsys.readouterr().err
    assert json.loads((main_run / "summary.json").read_text(encoding="utf-8"))["days"] == 3
    assert main(["run", str(scenario), "--days", "1", "--out", str(main_run), "--force", "-q"]) == 0
    assert json.loads((main_run / "summary.json").read_text(encoding="utf-8"))["days"] == 1


def test_default_folder_names_size_and_seed():
    from types import SimpleNamespace
    a = default_out("keyboard", SimpleNamespace(n_devices=20_000, n_days=14, seed=2026))
    b = default_out("keyboard", SimpleNamespace(n_devices=1000, n_days=2, seed=2026))
    assert a != b and str(a).startswith("runs") and "20000x14d" in a.name and "seed2026" in a.name


@pytest.mark.slow  # ~5 s: a tiny run
def test_a_short_run_states_what_lies_outside_it(tmp_path):
    short = run_deployment(_scenario(tmp_path, SHORT), out=tmp_path / "short", figures="all")
    trend, word, server = (_entry(short.text, key) for key in ("trend", "new word", "server"))
    assert "after the run's last day (day 1)" in trend and "never" not in trend
    assert "after the run's last day (day 1)" in word and "not found" not in word
    assert "after the simulation's end" in server and "no crash in this run" in server
    figures = {p.name for p in short.figure_files}
    assert "emoji_trend_rank.png" not in figures and "words_new_word.png" not in figures
    _no_placeholders(short)


def _entry(text: str, key: str) -> str:
    """The value of a key–value line of the printed summary, its wrapped lines joined."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(key + " "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return " ".join(" ".join(lines[start:end])[len(key):].split())


def _no_placeholders(study):
    captions = (study.out / "plots" / "captions.json").read_text(encoding="utf-8")
    page = re.sub(r"<style>.*?</style>|data:[^\"]+", "", (study.out / "report.html").read_text(encoding="utf-8"),
                  flags=re.S)
    page = page[:page.index("Scenario file")]  # the TOML file shown as written
    for where, text in (("summary", study.text), ("captions", captions), ("report page", page)):
        assert not PLACEHOLDER.search(text), (where, PLACEHOLDER.search(text).group())


@pytest.mark.slow  # the module's tiny run
def test_report_page_shows_the_summary_as_tables_with_human_headers(study):
    _no_placeholders(study)
    page = (study.out / "report.html").read_text(encoding="utf-8")
    summary = page[page.index("</nav>"):page.index("<h2>Figures</h2>")]
    assert "<pre>" not in summary and "<table" in summary and "Summary: Emoji over the whole run" in summary
    headers = re.findall(r"<th[^>]*>(.*?)</th>", page)
    assert headers and not [h for h in headers if "_" in h]
    assert "true share (donated)" in headers and "95% interval low" in headers
    cells = re.findall(r"<td>(-?\d+\.\d+)</td>", page)
    assert cells and max(len(c.lstrip("-").replace(".", "").lstrip("0")) for c in cells) <= 4  # 4 significant digits


@pytest.mark.slow  # the module's tiny run
def test_figures_of_a_run_are_captioned_and_explain_epsilon(study):
    captions = json.loads((study.out / "plots" / "captions.json").read_text(encoding="utf-8"))
    assert "words_new_word.png" in captions  # the words use case has its figure
    central = captions["central_epsilon.png"]
    s = study.summary
    assert f"{s['central_delta_per_partition']:.2g}" in central and f"{s['central_delta']:g}" in central
    assert "per partition" in central and "whole run" in central
    figures = study.figures()
    title = figures["central_epsilon.png"].axes[0].get_title()
    assert f"{s['central_delta']:g}" in title and "partition" in title
    for name, fig in figures.items():
        titles = " ".join(ax.get_title() for ax in fig.axes) + (fig._suptitle.get_text() if fig._suptitle else "")
        if name not in ("central_epsilon.png", "budget_by_day.png"):
            assert "per report" in titles or "a report" in titles, name  # what ε means
        for ax in fig.axes:
            assert ax.get_ylabel(), name


# ---- figures from synthetic tables ------------------------------------------------------------------
def _inside(ax, *values) -> bool:
    lo, hi = ax.get_ylim()
    v = np.concatenate([np.atleast_1d(np.asarray(x, float)) for x in values])
    return bool(((lo <= v) & (v <= hi)).all())


def test_reading_axis_holds_every_estimate_and_interval():
    """Day 3's estimate misses the truth by far (as session length's day 13 did): it must stay on the axis."""
    from ldpsim.evaluation.report.deployment_plots import reading_days
    from ldpsim.simulator.config import UseCase
    uc = UseCase("session_length", "reading", "pm", (("epsilon", 1.0),), value_range=(0.0, 300.0))
    est = np.array([66.0, 64.0, 70.0, 140.0])
    readings = pd.DataFrame({"use_case": uc.name, "day": range(4), "estimate": est, "sd": 8.0,
                             "sd_method": "theory", "true_event": 71.0, "true_donated": 67.0})
    pooled = pd.DataFrame({"use_case": [uc.name], "estimate": [80.0]})
    ax = reading_days(readings, pooled, uc).axes[0]
    assert _inside(ax, est - 1.96 * 8, est + 1.96 * 8, 71.0, 67.0, 80.0)


def test_daily_panels_hold_every_estimate_and_interval():
    from types import SimpleNamespace

    from ldpsim.evaluation.report.deployment_plots import daily_panels
    from ldpsim.simulator.config import UseCase
    uc = UseCase("emoji", "event", "grr", (("epsilon", 1.0), ("domain_size", 5)))
    cfg = SimpleNamespace(use_case=lambda kind: uc)
    rng = np.random.default_rng(1)
    days = np.repeat(np.arange(4), 5)
    items = np.tile(np.arange(5), 4)
    est = rng.normal(0.2, 0.02, 20)
    est[7] = 1.5  # one wild day
    daily = pd.DataFrame({"day": days, "item": items, "estimate": est, "ci_low": est - 0.3, "ci_high": est + 0.3,
                          "true_donated": 0.2})
    pooled = pd.DataFrame({"item": range(5), "token": list("abcde"), "true_rank": range(1, 6),
                           "ci_low": 0.18, "ci_high": 0.22})
    fig = daily_panels(daily, pooled, cfg)
    for ax, item in zip(fig.axes, range(5)):
        d = daily[daily["item"] == item]
        assert _inside(ax, d["ci_low"], d["ci_high"], d["estimate"], d["true_donated"])


def test_a_proportion_is_drawn_on_a_linear_unit_axis(tmp_path, monkeypatch):
    import ldpsim.evaluation.report.plots as plots
    summary = pd.DataFrame({"metric": ["top_k_precision"] * 3 + ["mse"] * 3, "epsilon": [1.0, 2.0, 4.0] * 2,
                            "mean": [0.2, 0.5, 0.9, 1e-3, 1e-4, 1e-5], "se": 0.01, "rank": np.nan,
                            "mechanism": "grr"})
    drawn, save = {}, plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, out, stem: drawn.setdefault(stem, fig) and save(fig, out, stem))
    plots.metric_vs_epsilon(summary, tmp_path)
    precision = drawn["top_k_precision_vs_epsilon"].axes[0]
    assert precision.get_yscale() == "linear" and precision.get_ylim() == (0.0, 1.0)
    assert drawn["mse_vs_epsilon"].axes[0].get_yscale() == "log"


@pytest.mark.slow  # the module's tiny run (its study fixture)
def test_the_run_states_the_time_of_each_phase(study, monkeypatch, capsys):
    """Where a run's time goes, the simulation or the work after it: each phase's wall-clock and CPU seconds
    in the result, and one line per phase in the command's output (not with -q)."""
    from ldpsim.scenarios.studies.deployment import study as library
    assert [t.name for t in study.timings] == ["setup", "simulation", "measurement", "central ε", "tables",
                                               "figures", "report page", "folder check"]
    assert all(t.wall_s >= 0 and t.cpu_s >= 0 for t in study.timings)
    monkeypatch.setattr(library, "run_deployment", lambda *a, **k: study)
    assert main(["run", "--out", str(study.out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    for t in study.timings:
        assert f"  {t.name}  " in "\n".join(lines) and any(line.strip().startswith(t.name) and line.endswith(
            f"{t.wall_s:.1f} s  (CPU {t.cpu_s:.1f} s)") for line in lines), t.name
    assert main(["run", "--out", str(study.out), "-q"]) == 0
    assert "time per phase" not in capsys.readouterr().out
