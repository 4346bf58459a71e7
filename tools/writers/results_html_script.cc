// The script and style of the `modelstat results` page (results_html_writer.cc
// writes the data they draw). The page's state (filters, pages, the chart's
// model, the selected cell) lives in the URL's #fragment, so a view can be
// linked, and the headless-Chromium test drives the page through it.
//
// Data (docs/suites.md, "HTML"): machines [name, id, cpu, cores, memory, gpu];
// models [name]; runs [id, date, commit, version]; cells [key, model, batch,
// threads, requests, dtype, fusion, device, runtime]; lat, fe and run: the
// latest result per cell and machine, cell-major (index cell * machines +
// machine): median in µs (null: none or failed), the forecast's error in
// tenths of a percent, the run's index; bf [[index, batch FPS]] and al [[index,
// µs]] (async cells: batch FPS, a request's latency); fail [[index, error]];
// errors [text]; hist [[index, run, µs]] (older runs).
namespace modelstat::report {

extern const char* const kResultsHtmlStyle = R"css(
:root { --fg: #1d2330; --muted: #5b6474; --line: #d8dde6; --bad: #b3261e; --good: #1b7f3b; --accent: #2456c9; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); margin: 0; background: #f6f7fa; }
main { max-width: 1500px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 8px 0 4px; word-break: break-all; }
h2 { font-size: 16px; margin: 24px 0 6px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px 12px; margin-top: 14px; }
.note { color: var(--muted); margin: 2px 0 8px; }
.warn { color: var(--bad); }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; min-width: 110px; }
.card b { display: block; font-size: 18px; }
.controls { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; }
.controls label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
.controls input, .controls select { font: inherit; padding: 2px 4px; min-width: 70px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #eef1f6; position: sticky; top: 0; }
td.l, th.l { text-align: left; }
tr.sel td { background: #e8eefc; }
tbody tr:hover td { background: #f2f5fb; cursor: pointer; }
td.fail { color: var(--bad); }
td.none { color: #b0b6c0; }
.small { color: var(--muted); font-size: 12px; }
.scroll { overflow-x: auto; max-height: 70vh; }
.pager button { font: inherit; margin: 0 4px; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
svg text { font: 11px system-ui, sans-serif; fill: var(--fg); }
svg .axis { stroke: #8a93a3; }
svg .grid { stroke: #eceff4; }
)css";

extern const char* const kResultsHtmlScript = R"js(
(function () {
"use strict";
window.onerror = function (message) { document.body.dataset.error = String(message); };
const D = JSON.parse(document.getElementById("data").textContent);
const M = D.machines.length, C = D.cells.length;
const BF = new Map(D.bf), AL = new Map(D.al), FAIL = new Map(D.fail);
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"})[c]);
const PALETTE = ["#2456c9", "#d1495b", "#1b7f3b", "#e09f3e", "#6a4c93", "#00798c", "#8d6346", "#c05299", "#5c6b73", "#9bab2d"];

// ---- the data
const cell = (c) => D.cells[c];
const cellModel = (c) => D.models[cell(c)[1]];
const cellLabel = (c) => {
  const x = cell(c);
  let s = "b" + x[2] + " t" + (x[3] > 0 ? x[3] : "all") + (x[4] > 0 ? " async" + x[4] : " sync");
  if (x[5] !== "model") s += " " + x[5];
  if (x[6] !== "on") s += " fusion-" + x[6];
  if (x[7] !== "cpu") s += " " + x[7];
  if (x[8] !== "modelstat") s += " " + x[8];
  return s;
};
const at = (c, m) => c * M + m;
const latency = (c, m) => D.lat[at(c, m)];  // µs, null when none or failed
const failure = (c, m) => { const e = FAIL.get(at(c, m)); return e === undefined ? null : D.errors[e]; };
const fps = (c, m) => { const v = latency(c, m); return v ? cell(c)[2] / (v * 1e-6) : null; };
const batchFps = (c, m) => { const v = BF.get(at(c, m)); return v === undefined ? null : v; };
const throughput = (c, m) => cell(c)[4] > 0 ? batchFps(c, m) : fps(c, m);
// A request's latency: alone (sync), or with the cell's N requests in flight (async).
const requestLatency = (c, m) => { if (cell(c)[4] === 0) return latency(c, m); const v = AL.get(at(c, m)); return v === undefined ? null : v; };
const modeName = (c) => cell(c)[4] > 0 ? "async" + cell(c)[4] : "sync";
const runtimeName = (c) => cell(c)[8] === "modelstat" ? "" : cell(c)[8] + " ";
const forecastError = (c, m) => { const v = D.fe[at(c, m)]; return v === null || v === undefined ? null : v / 10; };
const hasResult = (c, m) => D.run[at(c, m)] !== null && D.run[at(c, m)] !== undefined;

// ---- units
const three = (v) => { const a = Math.abs(v); return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2); };
const fmtTime = (us) => {
  if (us === null || us === undefined) return "-";
  if (us < 1) return three(us * 1e3) + " ns";
  if (us < 1e3) return three(us) + " µs";
  if (us < 1e6) return three(us / 1e3) + " ms";
  return three(us / 1e6) + " s";
};
const fmtRate = (v) => v === null || v === undefined ? "-" : v >= 1000 ? Math.round(v).toLocaleString("en-US") : three(v);
const fmtPercent = (v) => v === null ? "-" : (v > 0 ? "+" : "") + v.toFixed(1) + "%";
const METRICS = {
  lat: {name: "median latency", value: latency, text: fmtTime},
  fps: {name: "FPS (batch / median)", value: fps, text: fmtRate},
  bfps: {name: "batch FPS (async)", value: batchFps, text: fmtRate},
  fe: {name: "forecast error", value: forecastError, text: fmtPercent},
};

// ---- the state, kept in the URL's #fragment
const S = {model: "", batch: "", threads: "", mode: "", dtype: "", fusion: "", device: "", runtime: "", status: "",
           machine: "", metric: "lat", page: 1, rows: 50, mpage: 1, mcols: 10, budget: "", chart: "", cb: "", ct: "",
           by: "machine", cell: -1};
const NUMBERS = ["page", "rows", "mpage", "mcols", "cell"];
function readHash() {
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq)), v = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1));
    if (!(k in S)) continue;
    if (!NUMBERS.includes(k)) { S[k] = v; continue; }
    const n = parseInt(v, 10);
    S[k] = Number.isNaN(n) ? DEFAULTS[k] : n;
  }
  if (!METRICS[S.metric]) S.metric = "lat";
}
function writeHash() {
  const parts = [];
  for (const k of Object.keys(S)) if (String(S[k]) !== String(DEFAULTS[k])) parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(S[k]));
  history.replaceState(null, "", "#" + parts.join("&"));
}
const DEFAULTS = Object.assign({}, S);

// A glob (* ?) matches the whole name; other text matches anywhere in it; case is ignored.
function matcher(text) {
  if (!text) return () => true;
  if (/[*?]/.test(text)) {
    const re = new RegExp("^" + text.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$", "i");
    return (s) => re.test(s);
  }
  const t = text.toLowerCase();
  return (s) => s.toLowerCase().includes(t);
}

function visibleMachines() {
  const match = matcher(S.machine);
  const out = [];
  for (let m = 0; m < M; ++m) if (match(D.machines[m][0])) out.push(m);
  return out;
}

function visibleCells(machines) {
  const model = matcher(S.model);
  const out = [];
  for (let c = 0; c < C; ++c) {
    const x = cell(c);
    if (!model(D.models[x[1]])) continue;
    if (S.batch !== "" && String(x[2]) !== S.batch) continue;
    if (S.threads !== "" && String(x[3]) !== S.threads) continue;
    if (S.mode !== "" && (S.mode === "sync" ? x[4] !== 0 : x[4] === 0)) continue;
    if (S.dtype !== "" && x[5] !== S.dtype) continue;
    if (S.fusion !== "" && x[6] !== S.fusion) continue;
    if (S.device !== "" && x[7] !== S.device) continue;
    if (S.runtime !== "" && x[8] !== S.runtime) continue;
    if (S.status !== "") {
      let any = false;
      for (const m of machines) if (S.status === "failed" ? failure(c, m) !== null : latency(c, m)) { any = true; break; }
      if (!any) continue;
    }
    out.push(c);
  }
  return out;
}

// ---- controls
function distinct(column) {
  const seen = new Set();
  for (const x of D.cells) seen.add(x[column]);
  return Array.from(seen).sort((a, b) => typeof a === "number" ? a - b : String(a).localeCompare(String(b)));
}
function select(key, label, values, names) {
  let h = `<label>${esc(label)}<select data-k="${key}"><option value="">any</option>`;
  values.forEach((v, i) => { h += `<option value="${esc(v)}"${String(S[key]) === String(v) ? " selected" : ""}>${esc(names ? names[i] : v)}</option>`; });
  return h + "</select></label>";
}
function input(key, label, hint) {
  return `<label>${esc(label)}<input data-k="${key}" value="${esc(S[key])}" placeholder="${esc(hint)}"></label>`;
}
function buildControls() {
  let h = '<div class="controls">';
  h += input("model", "model", "resnet* or text");
  h += input("machine", "machine", "name or glob");
  h += select("batch", "batch", distinct(2));
  h += select("threads", "threads", distinct(3), distinct(3).map((t) => t > 0 ? t : "all"));
  h += select("mode", "mode", ["sync", "async"]);
  h += select("dtype", "dtype", distinct(5));
  h += select("fusion", "fusion", distinct(6));
  h += select("device", "device", distinct(7));
  h += select("runtime", "runtime", distinct(8));
  h += select("status", "status", ["ok", "failed"]);
  h += `<label>metric<select data-k="metric">` + Object.keys(METRICS).map((k) =>
    `<option value="${k}"${S.metric === k ? " selected" : ""}>${esc(METRICS[k].name)}</option>`).join("") + "</select></label>";
  h += input("budget", "latency budget (ms)", "e.g. 10");
  h += `<label>rows per page<select data-k="rows">` + [25, 50, 100, 250].map((n) =>
    `<option${S.rows === n ? " selected" : ""}>${n}</option>`).join("") + "</select></label>";
  h += `<label>machines per page<select data-k="mcols">` + [5, 10, 20, 50].map((n) =>
    `<option${S.mcols === n ? " selected" : ""}>${n}</option>`).join("") + "</select></label>";
  $("controls").innerHTML = h + "</div>";
  for (const el of $("controls").querySelectorAll("[data-k]")) {
    el.addEventListener(el.tagName === "INPUT" ? "input" : "change", () => {
      const k = el.dataset.k;
      S[k] = NUMBERS.includes(k) ? parseInt(el.value, 10) : el.value;
      S.page = 1;
      S.mpage = 1;
      render();
    });
  }
}

// ---- summary
function renderSummary() {
  const failures = FAIL.size;
  const cards = [["results", D.results.toLocaleString("en-US")], ["machines", M], ["cells", C.toLocaleString("en-US")],
                 ["models", D.models.length], ["runs", D.runs.length], ["failed (latest)", failures]];
  let h = '<div class="cards">' + cards.map(([k, v]) => `<div class="card">${esc(k)}<b>${esc(v)}</b></div>`).join("") + "</div>";
  h += `<p class="note">${D.latest_only ? "The latest result of each cell on each machine" : "Every run (the trend shows the older ones)"}` +
       `${D.filter ? "; selected by " + esc(D.filter) : ""}. Generated ${esc(D.generated)}. Rows are cells (model and setting), ` +
       "columns are machines; hover a value for its details.</p>";
  $("summary").innerHTML = h;
}

// ---- best setting per model and machine
function renderBest(cells, machines) {
  const budget = parseFloat(S.budget);
  const byModel = new Map();
  for (const c of cells) { const k = cell(c)[1]; if (!byModel.has(k)) byModel.set(k, []); byModel.get(k).push(c); }
  $("best-note").textContent = "The highest throughput (FPS; batch FPS for async cells) of each model on each machine among the " +
    "cells shown" + (budget > 0 ? `, keeping only cells whose median latency is within ${budget} ms` : "") + ", and the setting that reaches it.";
  let h = '<div class="scroll"><table id="best-table"><thead><tr><th class="l">model</th>' +
    machines.map((m) => `<th title="${esc(D.machines[m][2])}">${esc(D.machines[m][0])}</th>`).join("") + "</tr></thead><tbody>";
  for (const [model, list] of byModel) {
    h += `<tr><td class="l">${esc(D.models[model])}</td>`;
    for (const m of machines) {
      let best = -1, bestValue = -1;
      for (const c of list) {
        const v = throughput(c, m), l = latency(c, m);
        if (v === null || !l || (budget > 0 && l / 1e3 > budget)) continue;
        if (v > bestValue) { bestValue = v; best = c; }
      }
      h += best < 0 ? '<td class="none">-</td>'
        : `<td title="${esc(cellLabel(best) + ": median " + fmtTime(latency(best, m)))}">${fmtRate(bestValue)} <span class="small">${esc(cellLabel(best))}</span></td>`;
    }
    h += "</tr>";
  }
  $("best").innerHTML = h + "</tbody></table></div>";
}

// ---- the matrix
function pageOf(list, page, size) {
  const pages = Math.max(1, Math.ceil(list.length / size));
  const p = Math.min(Math.max(1, page), pages);
  return {items: list.slice((p - 1) * size, p * size), page: p, pages: pages, first: (p - 1) * size};
}
function renderMatrix(cells, machines) {
  const rows = pageOf(cells, S.page, S.rows), cols = pageOf(machines, S.mpage, S.mcols);
  S.page = rows.page;
  S.mpage = cols.page;
  const metric = METRICS[S.metric];
  $("matrix-note").textContent = `${metric.name} of the latest result; ✗ a failed cell (hover for its error), - not run there.`;
  $("pager").innerHTML = `<p class="pager">cells ${cells.length ? rows.first + 1 : 0}-${rows.first + rows.items.length} of ${cells.length}` +
    `<button data-go="page" data-d="-1"${rows.page <= 1 ? " disabled" : ""}>&lsaquo; previous</button>` +
    `<button data-go="page" data-d="1"${rows.page >= rows.pages ? " disabled" : ""}>next &rsaquo;</button>` +
    ` &nbsp; machines ${machines.length ? cols.first + 1 : 0}-${cols.first + cols.items.length} of ${machines.length}` +
    `<button data-go="mpage" data-d="-1"${cols.page <= 1 ? " disabled" : ""}>&lsaquo;</button>` +
    `<button data-go="mpage" data-d="1"${cols.page >= cols.pages ? " disabled" : ""}>&rsaquo;</button></p>`;
  for (const b of $("pager").querySelectorAll("button")) b.addEventListener("click", () => { S[b.dataset.go] += parseInt(b.dataset.d, 10); render(); });
  let h = '<div class="scroll"><table id="matrix-table"><thead><tr><th class="l">model</th><th class="l">setting</th>' +
    cols.items.map((m) => `<th title="${esc(D.machines[m][2] + ", " + D.machines[m][3] + " CPUs" + (D.machines[m][5] ? ", " + D.machines[m][5] : ""))}">${esc(D.machines[m][0])}</th>`).join("") +
    "</tr></thead><tbody>";
  for (const c of rows.items) {
    h += `<tr data-cell="${c}"${c === S.cell ? ' class="sel"' : ""}><td class="l">${esc(cellModel(c))}</td><td class="l">${esc(cellLabel(c))}</td>`;
    for (const m of cols.items) {
      const f = failure(c, m);
      if (f !== null) { h += `<td class="fail" title="${esc(f)}">✗</td>`; continue; }
      if (!hasResult(c, m)) { h += '<td class="none">-</td>'; continue; }
      const v = metric.value(c, m), fe = forecastError(c, m), run = D.runs[D.run[at(c, m)]];
      const tip = `median ${fmtTime(latency(c, m))}, FPS ${fmtRate(fps(c, m))}` + (batchFps(c, m) !== null ? `, batch FPS ${fmtRate(batchFps(c, m))}` : "") +
        `, forecast error ${fmtPercent(fe)}; run ${run[0]} (${run[1]}, commit ${run[2] || "?"})`;
      h += `<td title="${esc(tip)}">${esc(metric.text(v))}</td>`;
    }
    h += "</tr>";
  }
  $("matrix").innerHTML = h + "</tbody></table></div>";
  for (const tr of $("matrix").querySelectorAll("tbody tr")) tr.addEventListener("click", () => { S.cell = parseInt(tr.dataset.cell, 10); render(); });
  return cols.items;
}

// ---- charts (inline SVG)
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) { hi = lo + 1; }
  const step0 = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= step0);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toPrecision(12));
  return ticks;
}
// series: [{name, color, pts: [[x, y, tip]]}]; xs: the x values (numbers) or categories (strings).
function lineChart(id, title, xlabel, ylabel, series, yfmt, categories) {
  const W = 460, H = 280, L = 62, R = 12, T = 28, B = 44;
  const pts = series.flatMap((s) => s.pts);
  let h = `<svg id="${id}" width="${W}" height="${H + 18 * Math.ceil(series.length / 3)}" role="img"><text x="${L}" y="16" font-weight="bold">${esc(title)}</text>`;
  if (!pts.length) return h + `<text x="${L}" y="${T + 40}">no data for this selection</text></svg>`;
  const xsAll = categories ? categories.map((_, i) => i) : pts.map((p) => p[0]);
  const x0 = Math.min(...xsAll), x1 = Math.max(...xsAll), y1 = Math.max(...pts.map((p) => p[1])) * 1.08;
  const sx = (x) => L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R);
  const sy = (y) => T + (1 - y / y1) * (H - T - B);
  for (const t of niceTicks(0, y1, 5)) h += `<line class="grid" x1="${L}" x2="${W - R}" y1="${sy(t)}" y2="${sy(t)}"/><text x="${L - 6}" y="${sy(t) + 4}" text-anchor="end">${esc(yfmt(t))}</text>`;
  const xticks = categories ? categories.map((c, i) => [i, c]) : Array.from(new Set(xsAll)).sort((a, b) => a - b).map((x) => [x, String(x)]);
  for (const [x, label] of xticks) h += `<text x="${sx(x)}" y="${H - B + 16}" text-anchor="middle">${esc(label)}</text>`;
  h += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/><line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/>`;
  h += `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">${esc(xlabel)}</text>`;
  h += `<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(ylabel)}</text>`;
  series.forEach((s) => {
    const p = s.pts.slice().sort((a, b) => a[0] - b[0]);
    h += `<polyline class="series" fill="none" stroke="${s.color}" stroke-width="2" points="${p.map((q) => sx(q[0]).toFixed(1) + "," + sy(q[1]).toFixed(1)).join(" ")}"><title>${esc(s.name)}</title></polyline>`;
    for (const q of p) h += `<circle cx="${sx(q[0]).toFixed(1)}" cy="${sy(q[1]).toFixed(1)}" r="3" fill="${s.color}"><title>${esc(s.name + ": " + q[2])}</title></circle>`;
  });
  series.forEach((s, i) => {
    const lx = L + (i % 3) * 130, ly = H + 4 + 18 * Math.floor(i / 3);
    h += `<rect x="${lx}" y="${ly}" width="10" height="10" fill="${s.color}"/><text x="${lx + 14}" y="${ly + 9}">${esc(s.name.length > 18 ? s.name.slice(0, 17) + "…" : s.name)}</text>`;
  });
  return h + "</svg>";
}
function histogram(id, title, values) {
  const W = 460, H = 280, L = 50, R = 24, T = 28, B = 44, lo = -100, hi = 100, width = 10;
  const bins = new Array((hi - lo) / width).fill(0);
  for (const v of values) bins[Math.min(bins.length - 1, Math.max(0, Math.floor((Math.max(lo, Math.min(hi - 1e-9, v)) - lo) / width)))]++;
  const top = Math.max(1, ...bins);
  const abs = values.map(Math.abs).sort((a, b) => a - b);
  const mid = abs.length ? (abs.length % 2 ? abs[(abs.length - 1) / 2] : (abs[abs.length / 2 - 1] + abs[abs.length / 2]) / 2) : null;
  const within10 = abs.filter((a) => a <= 10).length;
  let h = `<svg id="${id}" width="${W}" height="${H}" role="img"><text x="${L}" y="16" font-weight="bold">${esc(title)}</text>`;
  const bw = (W - L - R) / bins.length;
  bins.forEach((n, i) => {
    const y = T + (1 - n / top) * (H - T - B);
    h += `<rect class="bin" x="${(L + i * bw + 1).toFixed(1)}" y="${y.toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(H - B - y).toFixed(1)}" fill="#2456c9"><title>${lo + i * width}% to ${lo + (i + 1) * width}%: ${n}</title></rect>`;
  });
  for (let x = lo; x <= hi; x += 50) h += `<text x="${(L + (x - lo) / (hi - lo) * (W - L - R)).toFixed(1)}" y="${H - B + 16}" text-anchor="middle">${x > 0 ? "+" : ""}${x}%</text>`;
  h += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>`;
  h += `<text x="${L}" y="${H - 8}">${values.length} results; median |error| ${mid === null ? "-" : mid.toFixed(1) + "%"}; within ±10%: ${values.length ? (100 * within10 / values.length).toFixed(0) : "-"}%</text>`;
  return h + "</svg>";
}
function renderCharts(cells, allMachines, pageMachines) {
  const models = Array.from(new Set(cells.map((c) => cell(c)[1])));
  const model = models.includes(D.models.indexOf(S.chart)) ? D.models.indexOf(S.chart) : models[0];
  const mine = cells.filter((c) => cell(c)[1] === model);
  const batches = Array.from(new Set(mine.map((c) => cell(c)[2]))).sort((a, b) => a - b);
  const threads = Array.from(new Set(mine.map((c) => cell(c)[3]))).sort((a, b) => a - b);
  const cb = batches.includes(parseInt(S.cb, 10)) ? parseInt(S.cb, 10) : batches[0];
  const ct = threads.includes(parseInt(S.ct, 10)) ? parseInt(S.ct, 10) : threads[threads.length - 1];
  const bySetting = S.by === "setting" && pageMachines.length > 0;
  const m0 = pageMachines[0];
  let h = '<div class="controls">';
  h += `<label>model<select data-c="chart">${models.map((k) => `<option${k === model ? " selected" : ""}>${esc(D.models[k])}</option>`).join("")}</select></label>`;
  h += `<label>lines<select data-c="by"><option value="machine"${bySetting ? "" : " selected"}>one per machine</option>` +
       `<option value="setting"${bySetting ? " selected" : ""}>one per runtime, mode and batch (first machine)</option></select></label>`;
  h += `<label>batch (latency vs threads)<select data-c="cb">${batches.map((b) => `<option${b === cb ? " selected" : ""}>${b}</option>`).join("")}</select></label>`;
  h += `<label>threads (throughput vs batch)<select data-c="ct">${threads.map((t) => `<option value="${t}"${t === ct ? " selected" : ""}>${t > 0 ? t : "all"}</option>`).join("")}</select></label>`;
  $("chart-controls").innerHTML = h + "</div><p class=\"note\">" + (bySetting
    ? `One line per runtime, mode and batch on ${esc(D.machines[m0][0])} (seed 004's chart): an async cell's latency is a request's with its requests in flight. `
    : `One line per machine of the current machine page (${pageMachines.length} of ${allMachines.length}). `) +
    "The other settings are the first value of each axis among the cells shown. The forecast-error histogram covers every cell and machine selected.</p>";
  for (const el of $("chart-controls").querySelectorAll("select")) el.addEventListener("change", () => { S[el.dataset.c] = el.value; render(); });
  // The other axes held at the first value present, so that each line varies one thing.
  const first = mine.length ? cell(mine[0]) : null;
  const same = (c, keep) => { const x = cell(c); return [4, 5, 6, 7, 8].every((k) => keep.includes(k) || x[k] === first[k]); };
  const seriesOf = (pick, xOf, yOf, tip) => pageMachines.map((m, i) => ({
    name: D.machines[m][0], color: PALETTE[i % PALETTE.length],
    pts: mine.filter(pick).map((c) => [xOf(c), yOf(c, m), tip(c, m)]).filter((p) => p[1] !== null && p[1] !== undefined),
  })).filter((s) => s.pts.length);
  // Lines of settings on one machine: group the model's cells by `key`.
  const settingSeries = (cells, key, xOf, yOf, tip) => {
    const groups = new Map();
    for (const c of cells) { const k = key(c); if (!groups.has(k)) groups.set(k, []); groups.get(k).push(c); }
    return Array.from(groups, ([name, list], i) => ({name: name, color: PALETTE[i % PALETTE.length],
      pts: list.map((c) => [xOf(c), yOf(c, m0), tip(c, m0)]).filter((p) => p[1] !== null && p[1] !== undefined)}))
      .filter((s) => s.pts.length);
  };
  const modelName = model === undefined ? "" : D.models[model];
  const ms = (c, m) => { const v = requestLatency(c, m); return v ? v / 1e3 : null; };
  let charts = bySetting
    ? lineChart("chart-threads", `${modelName}: latency vs threads, sync and async`, "threads", "median latency of a request (ms)",
        settingSeries(mine.filter((c) => same(c, [4, 8])), (c) => runtimeName(c) + modeName(c) + " b" + cell(c)[2], (c) => cell(c)[3], ms,
                      (c, m) => cellLabel(c) + " " + fmtTime(requestLatency(c, m))), (v) => three(v))
    : lineChart("chart-threads", `${modelName}: latency vs threads (batch ${cb})`, "threads", "median latency (ms)",
        seriesOf((c) => cell(c)[2] === cb && same(c, []), (c) => cell(c)[3], (c, m) => latency(c, m) ? latency(c, m) / 1e3 : null,
                 (c, m) => cellLabel(c) + " " + fmtTime(latency(c, m))), (v) => three(v));
  const asyncCells = first && first[4] > 0;
  charts += bySetting
    ? lineChart("chart-batch", `${modelName}: throughput vs batch (threads ${ct > 0 ? ct : "all"})`, "batch", "FPS (async: batch FPS)",
        settingSeries(mine.filter((c) => cell(c)[3] === ct && same(c, [4, 8])), (c) => runtimeName(c) + modeName(c), (c) => cell(c)[2], throughput,
                      (c, m) => cellLabel(c) + " " + fmtRate(throughput(c, m)) + " FPS"), (v) => fmtRate(v))
    : lineChart("chart-batch", `${modelName}: ${asyncCells ? "batch FPS" : "throughput"} vs batch (threads ${ct > 0 ? ct : "all"})`, "batch",
        asyncCells ? "batch FPS" : "FPS (batch / median)",
        seriesOf((c) => cell(c)[3] === ct && same(c, []), (c) => cell(c)[2], (c, m) => throughput(c, m),
                 (c, m) => cellLabel(c) + " " + fmtRate(throughput(c, m)) + " FPS"), (v) => fmtRate(v));
  const errors = [];
  for (const c of cells) for (const m of allMachines) { const e = forecastError(c, m); if (e !== null && latency(c, m)) errors.push(e); }
  charts += histogram("chart-forecast", "forecast error: fit's latency / measured median - 1", errors);
  $("charts").innerHTML = charts;
}

// ---- a cell's trend over runs
function renderTrend(machines) {
  const c = S.cell;
  if (c < 0 || c >= C) { $("trend").innerHTML = ""; return; }
  const points = [];  // [machine, run, µs]
  for (const [index, run, us] of D.hist) if (Math.floor(index / M) === c) points.push([index % M, run, us]);
  for (let m = 0; m < M; ++m) if (latency(c, m)) points.push([m, D.run[at(c, m)], latency(c, m)]);
  const runs = Array.from(new Set(points.map((p) => p[1]))).sort((a, b) =>
    (D.runs[a][1] + D.runs[a][0]).localeCompare(D.runs[b][1] + D.runs[b][0]));
  const categories = runs.map((r) => D.runs[r][1] + (D.runs[r][2] ? " " + D.runs[r][2].slice(0, 7) : ""));
  const shown = machines.filter((m) => points.some((p) => p[0] === m)).slice(0, PALETTE.length);
  const series = shown.map((m, i) => ({name: D.machines[m][0], color: PALETTE[i],
    pts: points.filter((p) => p[0] === m).map((p) => [runs.indexOf(p[1]), p[2] / 1e3, D.runs[p[1]][0] + ": " + fmtTime(p[2])])}));
  let h = lineChart("chart-trend", `${cellModel(c)} ${cellLabel(c)}: median latency per run`, "run (date, commit)", "median latency (ms)",
                    series, (v) => three(v), categories);
  h += '<table id="trend-table"><thead><tr><th class="l">run</th><th class="l">date</th><th class="l">commit</th><th class="l">version</th><th class="l">machine</th><th>median</th></tr></thead><tbody>';
  for (const p of points.sort((a, b) => runs.indexOf(a[1]) - runs.indexOf(b[1]) || a[0] - b[0]))
    h += `<tr><td class="l">${esc(D.runs[p[1]][0])}</td><td class="l">${esc(D.runs[p[1]][1])}</td><td class="l">${esc(D.runs[p[1]][2])}</td><td class="l">${esc(D.runs[p[1]][3])}</td><td class="l">${esc(D.machines[p[0]][0])}</td><td>${fmtTime(p[2])}</td></tr>`;
  $("trend").innerHTML = h + "</tbody></table>";
}

function render() {
  const machines = visibleMachines();
  const cells = visibleCells(machines);
  renderBest(cells, pageOf(machines, S.mpage, S.mcols).items);
  const pageMachines = renderMatrix(cells, machines);
  renderCharts(cells, machines, pageMachines);
  renderTrend(machines);
  writeHash();
  document.body.dataset.ready = "1";
}

readHash();
renderSummary();
buildControls();
render();
window.addEventListener("hashchange", () => { readHash(); buildControls(); render(); });
})();
)js";

}  // namespace modelstat::report
