// `modelstat results -f html`: one self-contained page (no external resource)
// of rows = cells and columns = machines. The rows are written once as compact
// data (a dense cells x machines matrix of the latest results, the history
// apart) and drawn by the page's script (results_html_script.cc) a page of
// rows and a page of machine columns at a time, so 100 machines x 10,000 cells
// stay usable: filters, paging, the best setting per model and machine, charts
// of the selected model, a cell's trend over runs, the forecast's error.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "analyzer/measurements/record_json.hpp"
#include "tools/writers/results_writers.hpp"
#include "tools/writers/svg_chart.hpp"

namespace modelstat::report {

extern const char* const kResultsHtmlScript;  // results_html_script.cc
extern const char* const kResultsHtmlStyle;

using suite::ResultRow;

namespace {

// A latency in microseconds, 4 significant digits (the page prints 3): the
// page's largest array, so its numbers are kept short.
Json micros(const std::optional<double>& seconds) {
  if (!seconds || !std::isfinite(*seconds)) return nullptr;
  const double us = *seconds * 1e6;
  if (us >= 1000) return static_cast<int64_t>(std::llround(us));
  return std::stod(fmt::format("{:.4g}", us));
}

// The forecast's error in tenths of a percent (-32: -3.2%).
Json tenths_of_percent(const std::optional<double>& fraction) {
  if (!fraction || !std::isfinite(*fraction)) return nullptr;
  return static_cast<int64_t>(std::llround(*fraction * 1000.0));
}

// JSON inside <script>: no "</script>", "<!--" or "]]>" can appear once <, > and & are escapes.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

Json page_data(const ResultsPage& page) {
  std::map<std::string, size_t> machine_index, cell_index, model_index, run_index, error_index;
  Json machines = Json::array(), cells = Json::array(), models = Json::array(), runs = Json::array(),
       errors = Json::array();
  std::vector<const ResultRow*> machine_rows;
  for (const ResultRow& r : page.rows)
    if (machine_index.emplace(r.machine_id, 0).second) machine_rows.push_back(&r);
  std::stable_sort(machine_rows.begin(), machine_rows.end(),
                   [](const ResultRow* a, const ResultRow* b) { return a->machine_name < b->machine_name; });
  for (const ResultRow* r : machine_rows) {
    machine_index[r->machine_id] = machines.size();
    machines.push_back({r->machine_name, r->machine_id, r->cpu_model, r->cores, r->memory_bytes, r->gpu});
  }
  for (const ResultRow& r : page.rows) {
    if (!model_index.count(r.model)) {
      model_index[r.model] = models.size();
      models.push_back(r.model);
    }
    if (!cell_index.count(r.cell_key)) {
      cell_index[r.cell_key] = cells.size();
      cells.push_back({r.cell_key, model_index[r.model], r.batch, r.threads, r.requests, r.dtype, r.fusion, r.device,
                       r.runtime});
    }
    if (!run_index.count(r.run_id)) {
      run_index[r.run_id] = runs.size();
      runs.push_back({r.run_id, r.finished_at.substr(0, 10), r.modelstat_commit.substr(0, 10), r.modelstat_version});
    }
  }
  const size_t m = machines.size(), n = cells.size() * m;
  Json lat(Json::value_t::array), fe(Json::value_t::array), run(Json::value_t::array);
  std::vector<Json> lat_v(n), fe_v(n), run_v(n);
  Json bf = Json::object(), al = Json::object(), fail = Json::object(), hist = Json::array();
  // Rows come ordered by cell, then machine, then finish time: the last of a (cell, machine) is its latest.
  for (size_t i = 0; i < page.rows.size(); ++i) {
    const ResultRow& r = page.rows[i];
    const size_t at = cell_index[r.cell_key] * m + machine_index[r.machine_id];
    const bool latest = i + 1 == page.rows.size() || page.rows[i + 1].cell_key != r.cell_key ||
                        page.rows[i + 1].machine_id != r.machine_id;
    if (!latest) {
      if (r.status == "ok") hist.push_back({at, run_index[r.run_id], micros(r.median_s)});
      continue;
    }
    lat_v[at] = micros(r.status == "ok" ? r.median_s : std::nullopt);
    fe_v[at] = tenths_of_percent(r.forecast_error);
    run_v[at] = run_index[r.run_id];
    if (r.batch_fps) bf[std::to_string(at)] = std::stod(fmt::format("{:.4g}", *r.batch_fps));
    if (r.async_median_s) al[std::to_string(at)] = micros(r.async_median_s);
    if (r.status != "ok") {
      const std::string text = r.error_type + ": " + r.error;
      if (!error_index.count(text)) {
        error_index[text] = errors.size();
        errors.push_back(text);
      }
      fail[std::to_string(at)] = error_index[text];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    lat.push_back(std::move(lat_v[i]));
    fe.push_back(std::move(fe_v[i]));
    run.push_back(std::move(run_v[i]));
  }
  Json d;
  d["database"] = page.database;
  d["filter"] = page.filter_text;
  d["generated"] = page.generated;
  d["latest_only"] = page.latest_only;
  d["results"] = page.rows.size();
  d["machines"] = std::move(machines);
  d["models"] = std::move(models);
  d["runs"] = std::move(runs);
  d["cells"] = std::move(cells);
  d["lat"] = std::move(lat);
  d["fe"] = std::move(fe);
  d["run"] = std::move(run);
  d["bf"] = std::move(bf);
  d["al"] = std::move(al);
  d["fail"] = std::move(fail);
  d["errors"] = std::move(errors);
  d["hist"] = std::move(hist);
  return d;
}

}  // namespace

void write_results_html(const ResultsPage& page, std::ostream& out) {
  const std::string title = fmt::format("modelstat results: {}", page.database);
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << svg::escape(title) << "</title>\n<style>" << kResultsHtmlStyle << "</style>\n</head>\n<body>\n"
      << "<main>\n<h1>" << svg::escape(title) << "</h1>\n"
      << "<noscript><p class=\"warn\">This page draws its tables and charts with JavaScript; `modelstat results -f "
         "csv` gives the same rows without it.</p></noscript>\n"
      << "<section id=\"summary\"></section>\n"
      << "<section id=\"controls\"></section>\n"
      << "<section><h2>Best setting per model and machine</h2><p class=\"note\" id=\"best-note\"></p>"
         "<div id=\"best\"></div></section>\n"
      << "<section><h2>Cells &times; machines</h2><p class=\"note\" id=\"matrix-note\"></p>"
         "<div id=\"pager\"></div><div id=\"matrix\"></div></section>\n"
      << "<section><h2>Charts</h2><div id=\"chart-controls\"></div><div id=\"charts\" class=\"charts\"></div></section>\n"
      << "<section><h2>Trend of a cell over runs</h2><p class=\"note\">Click a cell's row in the table to draw the "
         "median of each of its runs per machine, by date and modelstat commit.</p><div id=\"trend\"></div></section>\n"
      << "<script id=\"data\" type=\"application/json\">" << script_safe(page_data(page).dump()) << "</script>\n"
      << "<script>" << kResultsHtmlScript << "</script>\n</main>\n</body>\n</html>\n";
}

}  // namespace modelstat::report
