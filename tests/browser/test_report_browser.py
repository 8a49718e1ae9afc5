"""The report page in a real headless Chromium: it loads, every figure renders, nothing logs an error.

No WebDriver: a copy of the page gets a small script (its CSP loosened for inline scripts only)
that records errors — ``console.error``, uncaught exceptions, failed resource loads, CSP
violations — and, on ``load``, writes every image's natural size and those errors into a
``<pre id="ldpsim-checks">``; ``chromium --headless --dump-dom`` prints the resulting DOM. Chromium's
own log (stderr) is also scanned: the report has no script, so any ``CONSOLE`` line is a failure.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from ldpsim.evaluation.report.html import CSP, report_from_run_dir
from tests.report_files import make_run_dir

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = [pytest.mark.slow,  # a Chromium start: 2-8 s on a loaded machine
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                 "(Debian: apt-get install -y chromium chromium-driver)")]

PROBE = """<script>(function () {
  var errors = [];
  var consoleError = console.error;
  console.error = function () { errors.push("console.error: " + Array.from(arguments).join(" "));
                                consoleError.apply(console, arguments); };
  window.addEventListener("error", function (e) {
    errors.push("error: " + (e.message || (e.target && (e.target.src || e.target.href)) || e.type)); }, true);
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("CSP: " + e.violatedDirective + " " + e.blockedURI); });
  window.addEventListener("load", function () {
    var out = {loaded: true, title: document.title, tables: document.querySelectorAll("table").length,
               scripts: document.scripts.length, errors: errors,
               images: Array.from(document.images).map(function (i) {
                 return {alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}; })};
    var pre = document.createElement("pre");
    pre.id = "ldpsim-checks";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();</script>"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]


def probe(page, tmp_path) -> tuple[dict, list[str]]:
    """Open ``page`` (HTML text) with the probe in Chromium; return its checks and the console log lines."""
    probed = page.replace(CSP, CSP + "; script-src 'unsafe-inline'").replace("</head>", PROBE + "</head>", 1)
    copy = tmp_path / "probed.html"
    copy.write_text(probed, encoding="utf-8")
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           copy.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="ldpsim-checks">(.*?)</pre>', done.stdout, re.S)
    assert found, f"no checks in the DOM (exit {done.returncode}); stderr:\n{done.stderr[-2000:]}"
    console = [ln for ln in done.stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]
    return json.loads(html.unescape(found.group(1))), console


def test_report_renders_in_chromium(tmp_path):
    page = report_from_run_dir(make_run_dir(tmp_path / "run")).read_text(encoding="utf-8")
    checks, console = probe(page, tmp_path)
    assert checks["loaded"] and checks["title"] == "ldpsim report: run"
    assert len(checks["images"]) == 2
    assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in checks["images"]), checks["images"]
    assert checks["errors"] == [] and console == []
    assert checks["tables"] >= 3 and checks["scripts"] == 1  # only the probe: escaped text stayed text


def test_probe_catches_a_broken_page(tmp_path):
    page = report_from_run_dir(make_run_dir(tmp_path / "run")).read_text(encoding="utf-8")
    broken = page.replace("</body>", '<img src="http://127.0.0.1:9/x.png" alt="external">'
                                     "<script>console.error('boom'); undefinedFunction();</script></body>")
    checks, console = probe(broken, tmp_path)
    external = [i for i in checks["images"] if i["alt"] == "external"]
    assert external and external[0]["width"] == 0
    assert any(e.startswith("CSP: img-src") for e in checks["errors"])
    assert any("boom" in e for e in checks["errors"]) and any("undefinedFunction" in e for e in checks["errors"])
    assert any("Uncaught" in ln for ln in console)
