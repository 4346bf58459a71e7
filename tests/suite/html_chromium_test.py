#!/usr/bin/env python3
"""The `modelstat results` page in headless Chromium: synthetic results of 3
machines x 120 cells, two runs each (bench/suite_synthetic.py, written from the
documented result format), collected, rendered, and driven through the page's
#fragment (filters, paging, metric, latency budget, selected cell). Each view's
DOM (after its script ran) is checked against what the generator wrote.

  html_chromium_test.py --modelstat BIN --source SRC --workdir DIR
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILURES = []
CHECKS = [0]


def check(ok, what):
    CHECKS[0] += 1
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("command failed (%d): %s\n%s%s" % (r.returncode, " ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("chromium not found: apt-get install chromium (tools/dev.sh installs it)")


def dom(page, fragment):
    """The page's DOM once its script has run, with `fragment` as the URL's #fragment."""
    profile = tempfile.mkdtemp(prefix="modelstat-chromium-")
    try:
        r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync", "--no-first-run",
                            "--user-data-dir=" + profile, "--virtual-time-budget=10000", "--dump-dom",
                            "file://" + os.path.abspath(page) + "#" + fragment],
                           capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    html = r.stdout
    body = re.search(r"<body([^>]*)>", html)
    attrs = body.group(1) if body else ""
    check('data-ready="1"' in attrs, "#%s: the script did not finish (%s)" % (fragment, attrs or r.stderr[-400:]))
    check("data-error" not in attrs, "#%s: a script error: %s" % (fragment, attrs))
    return html


def table(html, table_id):
    """Rows of a table: [(attributes of the tr, [cell texts], [cell title attributes])]."""
    m = re.search(r'<table id="%s">(.*?)</table>' % table_id, html, re.S)
    if not m:
        return [], []
    head = re.findall(r"<th[^>]*>(.*?)</th>", m.group(1), re.S)
    rows = []
    for tr in re.finditer(r"<tr([^>]*)>(.*?)</tr>", m.group(1).split("</thead>")[-1], re.S):
        cells = re.findall(r"<td([^>]*)>(.*?)</td>", tr.group(2), re.S)
        texts = [re.sub(r"<[^>]+>", " ", c[1]).replace("&nbsp;", " ").strip() for c in cells]
        titles = [(re.search(r'title="([^"]*)"', c[0]) or [None, ""])[1] for c in cells]
        rows.append((tr.group(1), texts, titles))
    return head, rows


UNITS = {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}


def micros(text):
    number, unit = text.split()
    return float(number) * UNITS[unit]


def close(a, b, rel=0.006):
    return abs(a - b) <= rel * abs(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modelstat", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    results, db = os.path.join(a.workdir, "results"), os.path.join(a.workdir, "results.db")
    manifest_path = os.path.join(a.workdir, "manifest.json")
    run([sys.executable, os.path.join(a.source, "bench/suite_synthetic.py"), results, "--machines", "3", "--cells", "120",
         "--runs", "2", "--failed-every", "7", "--manifest", manifest_path])
    run([a.modelstat, "suite", "collect", results, "--into", db])
    latest_page, history_page = os.path.join(a.workdir, "latest.html"), os.path.join(a.workdir, "history.html")
    run([a.modelstat, "results", db, "-f", "html", "-o", latest_page])
    run([a.modelstat, "results", db, "-f", "html", "--all-runs", "-o", history_page])
    manifest = json.load(open(manifest_path))
    machines = [m["name"] for m in manifest["machines"]]
    machine_id = {m["name"]: m["id"] for m in manifest["machines"]}
    # The page's row order: the database's (model, mode, batch, threads for these cells).
    cells = sorted(manifest["cells"], key=lambda c: (c["model"], c["requests"], c["batch"], c["threads"]))
    latest = manifest["latest"]

    def expected(cell, machine):
        return latest["%s/%s" % (machine_id[machine], cell["key"])]

    # 1. The first page: 50 rows of 3 machines, each value the generator's latest median, ✗ where it failed.
    html = dom(latest_page, "")
    head, rows = table(html, "matrix-table")
    check(head[2:] == machines, "machine columns %s" % head)
    check(len(rows) == 50, "rows on the first page: %d" % len(rows))
    for (attrs, texts, titles), cell in zip(rows, cells):
        label = "b%d t%d %s" % (cell["batch"], cell["threads"], "async%d" % cell["requests"] if cell["requests"] else "sync")
        check(texts[0] == cell["model"] and texts[1] == label, "row %s: %s" % (texts[:2], label))
        for machine, text, title in zip(machines, texts[2:], titles[2:]):
            e = expected(cell, machine)
            if e["status"] == "failed":
                check(text == "✗" and "out of memory (synthetic)" in title, "%s on %s: %r" % (label, machine, text))
            else:
                check(close(micros(text), e["median_s"] * 1e6), "%s on %s: %s vs %s s" % (label, machine, text, e["median_s"]))
    check("cells 1-50 of 120" in html, "pager text")

    # 2. A model filter; 3. the third page; 4. the second page of machine columns.
    _, rows = table(dom(latest_page, "model=model001"), "matrix-table")
    check(len(rows) == 20 and all(r[1][0] == "model001" for r in rows), "model filter: %d rows" % len(rows))
    html = dom(latest_page, "page=3")
    _, rows = table(html, "matrix-table")
    check(len(rows) == 20 and "cells 101-120 of 120" in html, "third page: %d rows" % len(rows))
    head, _ = table(dom(latest_page, "mcols=2&mpage=2"), "matrix-table")
    check(head[2:] == machines[2:], "second machine page: %s" % head)

    # 5. Only cells that failed somewhere; 6. FPS; 7. the forecast's error.
    _, rows = table(dom(latest_page, "status=failed"), "matrix-table")
    want = sum(1 for c in cells if any(expected(c, m)["status"] == "failed" for m in machines))
    check(len(rows) == min(50, want) and all("✗" in r[1] for r in rows), "failed filter: %d rows, want %d" % (len(rows), want))
    _, rows = table(dom(latest_page, "metric=fps"), "matrix-table")
    for (_, texts, _), cell in zip(rows, cells):
        e = expected(cell, machines[0])
        if e["status"] == "ok":
            check(close(float(texts[2].replace(",", "")), cell["batch"] / e["median_s"]), "FPS of %s: %s" % (cell, texts[2]))
    _, rows = table(dom(latest_page, "metric=fe"), "matrix-table")
    for (_, texts, _), cell in zip(rows, cells):
        e = expected(cell, machines[1])
        if e["status"] == "ok":
            check(abs(float(texts[3].rstrip("%")) - 100 * e["forecast_error"]) <= 0.051, "forecast error of %s: %s" % (cell, texts[3]))

    # 8. The best setting per model and machine: the highest FPS (batch FPS for async cells).
    head, rows = table(html, "best-table")
    for model_row in rows:
        model = model_row[1][0]
        for machine, text in zip(machines, model_row[1][1:]):
            best = 0
            for c in cells:
                e = expected(c, machine)
                if c["model"] == model and e["status"] == "ok":
                    best = max(best, e["batch_fps"] if c["requests"] else c["batch"] / e["median_s"])
            check(close(float(text.split()[0].replace(",", "")), best), "best of %s on %s: %s vs %.4g" % (model, machine, text, best))
    _, rows = table(dom(latest_page, "budget=0.000001"), "best-table")
    check(rows and all(t == "-" for r in rows for t in r[1][1:]), "a budget nothing meets leaves no best setting")

    # 9. The charts: a line per machine, the forecast-error histogram.
    for chart in ("chart-threads", "chart-batch"):
        svg = re.search(r'<svg id="%s".*?</svg>' % chart, html, re.S)
        check(svg and len(re.findall(r'<polyline class="series"', svg.group(0))) == 3, "%s: a line per machine" % chart)
    svg = re.search(r'<svg id="chart-forecast".*?</svg>', html, re.S)
    check(svg and len(re.findall(r'class="bin"', svg.group(0))) == 20, "forecast histogram bins")
    # Seed 004's chart: latency vs threads, a line per mode and batch on one machine.
    svg = re.search(r'<svg id="chart-threads".*?</svg>', dom(latest_page, "by=setting&chart=model000"), re.S)
    groups = {(c["requests"], c["batch"]) for c in cells
              if c["model"] == "model000" and expected(c, machines[0])["status"] == "ok"}
    check(svg and len(re.findall(r'<polyline class="series"', svg.group(0))) == len(groups),
          "latency vs threads by setting: %d lines" % len(groups))

    # 10. A cell's trend over its two runs (the history page).
    html = dom(history_page, "cell=0")
    _, rows = table(html, "trend-table")
    ok_machines = [m for m in machines if expected(cells[0], m)["status"] == "ok"]
    check(len(rows) == 2 * len(ok_machines), "trend rows: %d, want %d" % (len(rows), 2 * len(ok_machines)))
    svg = re.search(r'<svg id="chart-trend".*?</svg>', html, re.S)
    check(svg and len(re.findall(r'<polyline class="series"', svg.group(0))) == len(ok_machines), "trend: a line per machine")

    if FAILURES:
        sys.exit("%d checks failed" % len(FAILURES))
    print("results page in headless Chromium: %d checks of 10 views passed" % CHECKS[0])


if __name__ == "__main__":
    main()
