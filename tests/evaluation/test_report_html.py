"""The HTML report page: self-contained (nothing but data: URIs and in-page anchors), escaped, complete."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser

import pandas as pd
import pytest

from ldpsim.scenarios.studies.sweep.sweep_report import report_sweep
from ldpsim.evaluation.report.html import (CSP, Preformatted, Table, render_html, report_from_run_dir, versions,
                                    write_report_html)
from ldpsim.scenarios.studies.scenario.grid import scenario_from_dict
from ldpsim.scenarios.studies.sweep.runner import run_sweep
from tests.report_files import HOSTILE, make_run_dir, put, small_figure  # shared with the browser test

TINY_SWEEP = {"scenario": {"name": "tiny", "seed": 5, "repeats": 3, "path": "direct", "top": 5},
              "workload": {"name": "harmonic", "n": 2000, "domain_size": 20},
              "mechanism": [{"name": "grr"}], "grid": {"epsilon": [1.0, 4.0]},
              "metrics": {"names": ["mse", "variance"]}}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]


def parse(page: str) -> _Tags:
    tags = _Tags()
    tags.feed(page)
    return tags


def test_page_is_self_contained_and_escaped(tmp_path):
    png = tmp_path / "a.png"
    small_figure().savefig(png, dpi=50)
    page = render_html(f"title {HOSTILE}", [
        ("text", [f"a paragraph {HOSTILE}", Preformatted(HOSTILE)]),
        ("table", pd.DataFrame({"x": [HOSTILE], "y": [1.5]})),
        ("figures", [small_figure(), png]),
    ], config={"scenario": {"name": HOSTILE}}, seed=12345)
    tags = parse(page)
    assert "script" not in tags.tags and "link" not in tags.tags and "iframe" not in tags.tags
    sources = [v for tag, k, v in tags.attrs if k in ("src", "href", "srcset", "action", "data")]
    assert sources and all(v.startswith(("data:image/", "#")) for v in sources)
    assert ("meta", "content", CSP) in tags.attrs
    assert HOSTILE not in page and page.count("&lt;script&gt;alert") == 6  # title, h1, p, pre, td, config
    images = [v for tag, k, v in tags.attrs if tag == "img" and k == "src"]
    assert len(images) == 2
    assert all(base64.b64decode(v.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n" for v in images)
    assert "12345" in page and versions()["numpy"] in page and "Reproducibility" in page


def test_table_truncation_names_the_source():
    frame = pd.DataFrame({"i": range(30)})
    page = render_html("t", [("big", Table(frame, "big.csv"))], max_rows=10)
    assert "first 10 of 30 rows; all in big.csv" in page
    assert page.count("<tr") == 11 + 1 + len(versions()) + 1  # header + 10 rows; the versions table


def test_bad_content_is_rejected(tmp_path):
    with pytest.raises(TypeError, match="cannot render a int"):
        render_html("t", [("x", 3)])
    with pytest.raises(ValueError, match="must be one of"):
        render_html("t", [("x", tmp_path / "notes.txt")])


def test_versions_name_python_platform_and_packages():
    v = versions()
    assert {"python", "platform", "ldpsim", "numpy", "scipy"} <= set(v)


def test_report_from_deployment_like_folder(tmp_path):
    path = report_from_run_dir(make_run_dir(tmp_path / "run"))
    page = path.read_text(encoding="utf-8")
    assert path == tmp_path / "run" / "report.html"
    assert "Table top.csv" in page and "top.parquet" not in page and "Table days.parquet" in page
    assert "summary.json" in page and "Scenario file" in page and "rank  true" in page
    assert "![fig]" not in page and "```" not in page
    images = [v for tag, k, v in parse(page).attrs if tag == "img" and k == "src"]
    assert len(images) == 2 and sum(v.startswith("data:image/svg+xml") for v in images) == 1
    assert "2026" in page and HOSTILE not in page
    assert "# Deployment run" not in page  # no Markdown heading inside the summary's <pre>


def test_figures_follow_captions_json_and_known_tables_come_first(tmp_path):
    run = make_run_dir(tmp_path / "run")
    put(run / "plots" / "captions.json", json.dumps({"vector.svg": "second: the vector one",
                                                     "fig.png": "third: the raster one"}))
    put(run / "summary.txt", "pooled top-10\n")
    put(run / "daily_reports.csv", lambda p: pd.DataFrame({"day": [0], "reports_emoji": [5]}).to_csv(p, index=False))
    page = report_from_run_dir(run).read_text(encoding="utf-8")
    captions = [c.split("</figcaption>")[0] for c in page.split("<figcaption>")[1:]]
    assert captions == ["second: the vector one", "third: the raster one"]
    assert "pooled top-10" in page and "rank  true" not in page  # summary.txt wins over report.md
    headings = [h.split("</h2>")[0] for h in page.split("<h2>")[1:]]
    assert headings.index("Table top.csv") < headings.index("Table daily_reports.csv") < headings.index(
        "Table days.parquet")
    assert "Per day: reports received per use case" in page  # the table's note


def test_report_from_sweep_folder(tmp_path):
    scenario = scenario_from_dict(TINY_SWEEP)
    run_sweep(scenario, "", tmp_path / "sweep", serial=True, progress=False)
    page = report_sweep(tmp_path / "sweep", title="tiny sweep").read_text(encoding="utf-8")
    assert "<title>tiny sweep</title>" in page and "Results (aggregate metrics per cell" in page
    results = page.split("<h2>Results", 1)[1].split("</h2>", 1)[1].split("</section>", 1)[0]
    assert results.count("<tr") == 1 + 2 and results.count("± ") == 2 * 2  # header + 2 cells × 2 metrics
    assert page.count("± ") >= 4 and ">mse<" in page and ">epsilon<" in page
    assert "fingerprint" in page  # the resolved config


def test_report_from_reproduction_folder(tmp_path):
    put(tmp_path / "fig2.json", json.dumps({"name": "fig2", "seed": 7}))
    put(tmp_path / "fig2.csv", lambda p: pd.DataFrame({"epsilon": [1.0], "mse": [0.1]}).to_csv(p, index=False))
    put(tmp_path / "fig2.png", lambda p: small_figure().savefig(p, dpi=50, format="png"))
    page = write_report_html(tmp_path / "r.html", "t", []).read_text(encoding="utf-8")
    assert "Reproducibility" in page
    page = report_from_run_dir(tmp_path).read_text(encoding="utf-8")
    assert "fig2.json" in page and "Table fig2.csv" in page and '<td>{"fig2": 7}</td>' in page
