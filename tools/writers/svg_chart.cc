// Inline-SVG chart building blocks (see svg_chart.hpp).
#include "tools/writers/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace modelstat::report::svg {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double value) {
  if (!std::isfinite(value)) return "0";
  std::string s = fmt::format("{:.2f}", value);
  // "12.50" -> "12.5", "12.00" -> "12": shorter documents, same pixels.
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

namespace {

// floor(log10(|v|)) that is exact at powers of ten computed with pow().
int decade_of(double v) {
  return int(std::floor(std::log10(std::fabs(v)) + 1e-9));
}

}  // namespace

Labeler seconds_labels_for(const Scale& axis) {
  static const char* const kUnits[] = {"ns", "\xC2\xB5s", "ms", "s"};
  const double largest = std::max(std::fabs(axis.lo()), std::fabs(axis.hi())) * 1e9;
  const size_t unit = scale_to_prefix(largest, 1000.0, std::size(kUnits) - 1, three_digit_decimals).step;
  const double scale = 1e9 / std::pow(1000.0, double(unit));
  const std::string name = kUnits[unit];
  return [scale, name](double seconds) {
    if (!std::isfinite(seconds)) return std::string("-");
    return fmt::format("{:.4g} {}", seconds * scale, name);
  };
}

Scale Scale::log10(double data_lo, double data_hi, double px_lo, double px_hi) {
  Scale s(Kind::Log10, px_lo, px_hi);
  if (!(data_lo > 0) || !std::isfinite(data_lo)) data_lo = 1;
  if (!(data_hi > 0) || !std::isfinite(data_hi)) data_hi = data_lo;
  if (data_hi < data_lo) std::swap(data_lo, data_hi);
  const int first = decade_of(data_lo);
  int last = int(std::ceil(std::log10(data_hi) - 1e-9));
  if (last <= first) last = first + 1;
  s.lo_ = std::pow(10.0, first);
  s.hi_ = std::pow(10.0, last);
  // At most about 8 labelled decades: a wider axis labels every 2nd (3rd, ...) one.
  const int decades = last - first;
  const int step = (decades + 7) / 8;
  for (int d = first; d <= last; ++d) {
    if ((d - first) % step == 0) s.major_.push_back(std::pow(10.0, d));
    if (step == 1 && d < last)
      for (int m = 2; m <= 9; ++m) s.minor_.push_back(m * std::pow(10.0, d));
  }
  return s;
}

Scale Scale::linear(double data_lo, double data_hi, double px_lo, double px_hi, int target_ticks) {
  Scale s(Kind::Linear, px_lo, px_hi);
  if (!std::isfinite(data_lo)) data_lo = 0;
  if (!std::isfinite(data_hi)) data_hi = data_lo;
  if (data_hi < data_lo) std::swap(data_lo, data_hi);
  if (data_hi == data_lo) {
    // One value: a range around it (or 0..1 around zero) so it sits inside the axis.
    const double pad = data_lo == 0 ? 1.0 : std::fabs(data_lo) * 0.1;
    data_lo -= data_lo == 0 ? 0 : pad;
    data_hi += pad;
  }
  // A "nice" step: 1, 2, 2.5 or 5 x 10^k, near span / target_ticks.
  const double raw = (data_hi - data_lo) / std::max(1, target_ticks);
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  double step = base;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * base;
    if (step >= raw) break;
  }
  s.lo_ = std::floor(data_lo / step + 1e-9) * step;
  s.hi_ = std::ceil(data_hi / step - 1e-9) * step;
  if (s.hi_ <= s.lo_) s.hi_ = s.lo_ + step;
  const int count = int(std::round((s.hi_ - s.lo_) / step));
  for (int i = 0; i <= count; ++i) {
    double t = s.lo_ + i * step;
    if (std::fabs(t) < step * 1e-9) t = 0;  // "0", not "-1.1e-17"
    s.major_.push_back(t);
  }
  return s;
}

Scale Scale::log2(double data_lo, double data_hi, double px_lo, double px_hi) {
  Scale s(Kind::Log2, px_lo, px_hi);
  if (!(data_lo > 0) || !std::isfinite(data_lo)) data_lo = 1;
  if (!(data_hi > data_lo) || !std::isfinite(data_hi)) data_hi = data_lo * 2;
  s.lo_ = data_lo;
  s.hi_ = data_hi;
  return s;
}

double Scale::operator()(double value) const {
  if (!std::isfinite(value)) value = lo_;
  value = std::clamp(value, lo_, hi_);
  double t = 0;
  switch (kind_) {
    case Kind::Linear:
      t = (value - lo_) / (hi_ - lo_);
      break;
    case Kind::Log10:
      t = (std::log10(value) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_));
      break;
    case Kind::Log2:
      t = (std::log2(value) - std::log2(lo_)) / (std::log2(hi_) - std::log2(lo_));
      break;
  }
  return px_lo_ + t * (px_hi_ - px_lo_);
}

bool Scale::contains(double value) const {
  return std::isfinite(value) && value >= lo_ && value <= hi_;
}

void draw_axes(std::ostream& out, const Frame& f, const Scale& x, const Scale& y, const Labeler& x_label,
               const Labeler& y_label, const std::string& x_title, const std::string& y_title) {
  out << "<g class=\"grid\">";
  for (double t : x.minor_ticks())
    out << "<line class=\"minor\" x1=\"" << num(x(t)) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(x(t))
        << "\" y2=\"" << num(f.bottom) << "\"/>";
  for (double t : y.minor_ticks())
    out << "<line class=\"minor\" x1=\"" << num(f.left) << "\" y1=\"" << num(y(t)) << "\" x2=\""
        << num(f.right) << "\" y2=\"" << num(y(t)) << "\"/>";
  for (double t : x.major_ticks())
    out << "<line x1=\"" << num(x(t)) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(x(t)) << "\" y2=\""
        << num(f.bottom) << "\"/>";
  for (double t : y.major_ticks())
    out << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(y(t)) << "\" x2=\"" << num(f.right) << "\" y2=\""
        << num(y(t)) << "\"/>";
  out << "</g>\n";
  out << "<rect class=\"frame\" x=\"" << num(f.left) << "\" y=\"" << num(f.top) << "\" width=\""
      << num(f.right - f.left) << "\" height=\"" << num(f.bottom - f.top) << "\"/>\n";
  out << "<g class=\"ticks\">";
  for (double t : x.major_ticks())
    out << "<text x=\"" << num(x(t)) << "\" y=\"" << num(f.bottom + 15) << "\" text-anchor=\"middle\">"
        << escape(x_label(t)) << "</text>";
  for (double t : y.major_ticks())
    out << "<text x=\"" << num(f.left - 6) << "\" y=\"" << num(y(t) + 4) << "\" text-anchor=\"end\">"
        << escape(y_label(t)) << "</text>";
  out << "</g>\n";
  out << "<text class=\"axis-title\" x=\"" << num((f.left + f.right) / 2) << "\" y=\"" << num(f.bottom + 34)
      << "\" text-anchor=\"middle\">" << escape(x_title) << "</text>\n";
  const double ty = (f.top + f.bottom) / 2;
  out << "<text class=\"axis-title\" transform=\"translate(" << num(f.left - 50) << "," << num(ty)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape(y_title) << "</text>\n";
}

namespace {
// Tableau 10, its grey kept apart for "other".
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};
}  // namespace

const char* const kOtherColor = "#bab0ac";

size_t palette_size() {
  return std::size(kPalette);
}
const char* palette_color(size_t index) {
  return kPalette[index % std::size(kPalette)];
}

std::vector<size_t> bin_counts(const std::vector<double>& samples, double lo, double hi, size_t bins) {
  std::vector<size_t> counts(bins, 0);
  if (bins == 0) return counts;
  const double width = (hi - lo) / double(bins);
  for (double v : samples) {
    if (!std::isfinite(v) || v < lo || v > hi) continue;
    size_t i = width > 0 ? size_t((v - lo) / width) : 0;
    counts[std::min(i, bins - 1)] += 1;
  }
  return counts;
}

}  // namespace modelstat::report::svg
