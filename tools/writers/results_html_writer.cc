// `modelstat results -f html`: one self-contained page (no external resource)
// of rows = cells and columns = machines. The rows are written once as compact
// data (a dense cells x machines matrix of the latest results, the history
// apart) and drawn by the page's script (results_html_script.cc) a page of
// rows and a page of machine columns at a time, so 100 machines x 10,000 cells
// stay usable: filters, paging, the best setting per model and machine, charts
// of the selected model, a cell's trend over runs, the forecast's error.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

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
Json micros(double seconds) {
  if (!std::isfinite(seconds)) return nullptr;
  const double us = seconds * 1e6;
  if (us >= 1000) return static_cast<int64_t>(std::llround(us));
  return std::stod(fmt::format("{:.4g}", us));
}

// The forecast's error in tenths of a percent (-32: -3.2%).
Json tenths_of_percent(double fraction) {
  if (!std::isfinite(fraction)) return nullptr;
  return static_cast<int64_t>(std::llround(fraction * 1000.0));
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

// The page's data, built from the rows as they stream by (one compact entry per
// row, then the matrix): a million rows take tens of MB here, not GB.
class PageData {
 public:
  void add(const ResultRow& r) {
    const uint32_t cell = index_of(cell_index_, r.cell_key, [&] {
      cells_.push_back({r.cell_key, index_of(model_index_, r.model, [&] { models_.push_back(r.model); }), r.batch,
                        r.threads, r.requests, r.dtype, r.fusion, r.device, r.runtime});
    });
    const uint32_t machine = index_of(machine_index_, r.machine_id, [&] {
      machines_.push_back({r.machine_name, r.machine_id, r.cpu_model, r.cores, r.memory_bytes, r.gpu});
    });
    const uint32_t run = index_of(run_index_, r.run_id, [&] {
      runs_.push_back({r.run_id, r.finished_at.substr(0, 10), r.modelstat_commit.substr(0, 10), r.modelstat_version});
    });
    Entry e{cell, machine, run, kNone, kNone, kNone, kNone, -1};
    if (r.status == "ok") {
      e.median = r.median_s.value_or(kNone);
      e.batch_fps = r.batch_fps.value_or(kNone);
      e.async_latency = r.async_median_s.value_or(kNone);
    } else {
      const std::string text = r.error_type + ": " + r.error;
      e.error = static_cast<int32_t>(index_of(error_index_, text, [&] { errors_.push_back(text); }));
    }
    e.forecast_error = r.forecast_error.value_or(kNone);
    entries_.push_back(e);
  }

  Json json(const ResultsPage& page) {
    // Machines by name; entries of one (cell, machine) arrive together, oldest first: the last is the latest.
    std::vector<uint32_t> order(machines_.size()), rank(machines_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return machines_[a][0] < machines_[b][0]; });
    Json machines = Json::array();
    for (uint32_t i = 0; i < order.size(); ++i) {
      rank[order[i]] = i;
      machines.push_back(machines_[order[i]]);
    }
    const size_t m = machines_.size(), n = cells_.size() * m;
    std::vector<const Entry*> latest(n, nullptr);
    // Sparse values as [index, value] pairs (the page makes Maps of them): an ordered_json object
    // looks its keys up linearly, which a million cells turn quadratic.
    Json bf = Json::array(), al = Json::array(), fail = Json::array(), hist = Json::array();
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      const size_t at = e.cell * m + rank[e.machine];
      const bool last = i + 1 == entries_.size() || entries_[i + 1].cell != e.cell || entries_[i + 1].machine != e.machine;
      if (!last) {
        if (e.error < 0) hist.push_back({at, e.run, micros(e.median)});
        continue;
      }
      latest[at] = &e;
      if (std::isfinite(e.batch_fps)) bf.push_back({at, std::stod(fmt::format("{:.4g}", e.batch_fps))});
      if (std::isfinite(e.async_latency)) al.push_back({at, micros(e.async_latency)});
      if (e.error >= 0) fail.push_back({at, e.error});
    }
    Json lat = Json::array(), fe = Json::array(), run = Json::array();
    for (const Entry* e : latest) {
      lat.push_back(e ? micros(e->median) : Json(nullptr));
      fe.push_back(e ? tenths_of_percent(e->forecast_error) : Json(nullptr));
      run.push_back(e ? Json(e->run) : Json(nullptr));
    }
    Json d;
    d["database"] = page.database;
    d["filter"] = page.filter_text;
    d["generated"] = page.generated;
    d["latest_only"] = page.latest_only;
    d["results"] = entries_.size();
    d["machines"] = std::move(machines);
    d["models"] = models_;
    d["runs"] = runs_;
    d["cells"] = cells_;
    d["lat"] = std::move(lat);
    d["fe"] = std::move(fe);
    d["run"] = std::move(run);
    d["bf"] = std::move(bf);
    d["al"] = std::move(al);
    d["fail"] = std::move(fail);
    d["errors"] = errors_;
    d["hist"] = std::move(hist);
    return d;
  }

 private:
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  struct Entry {
    uint32_t cell, machine, run;
    double median, forecast_error, batch_fps, async_latency;  // NaN: none
    int32_t error;                                             // index into errors_, -1: ok
  };
  template <typename Add>
  static uint32_t index_of(std::unordered_map<std::string, uint32_t>& index, const std::string& key, Add&& add) {
    const auto [it, fresh] = index.emplace(key, static_cast<uint32_t>(index.size()));
    if (fresh) add();
    return it->second;
  }
  std::unordered_map<std::string, uint32_t> cell_index_, model_index_, machine_index_, run_index_, error_index_;
  Json cells_ = Json::array(), models_ = Json::array(), runs_ = Json::array(), errors_ = Json::array();
  std::vector<Json> machines_;
  std::vector<Entry> entries_;
};

}  // namespace

void write_results_html(const ResultsPage& page, const ResultRowSource& rows, std::ostream& out) {
  PageData data;
  rows([&](const ResultRow& r) { data.add(r); });
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
      << "<script id=\"data\" type=\"application/json\">" << script_safe(data.json(page).dump()) << "</script>\n"
      << "<script>" << kResultsHtmlScript << "</script>\n</main>\n</body>\n</html>\n";
}

}  // namespace modelstat::report
