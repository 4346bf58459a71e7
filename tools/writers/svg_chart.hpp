// Small building blocks for the inline-SVG charts of the HTML report
// (joined_html_writer.cc): escaping, axis scales with ticks, axes, a
// categorical palette and display-only histogram binning. They lay out data;
// they compute no statistic.
//
// Every number written into SVG goes through num(), which never writes "nan"
// or "inf": a non-finite coordinate would make the browser drop the element
// silently, so callers leave such points out and num() is the last guard.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "tools/writers/units.hpp"

namespace modelstat::report::svg {

// Text safe inside HTML/SVG text and inside a double- or single-quoted attribute:
// & < > " ' escaped. Model names are untrusted input and always pass through here.
std::string escape(const std::string& text);

// A coordinate or length for an SVG attribute: at most 2 decimals, no exponent,
// "0" for a non-finite value.
std::string num(double value);

// Tick labels. si_label: 1e9 -> "1G", 2.5e-3 -> "2.5m", 0.1 -> "0.1" (3 significant
// digits, SI prefixes from p to E). seconds_label: 1e-3 -> "1 ms", 2e-5 -> "20 µs".
// Both return "-" for a non-finite value.
// The same with a space and a unit, for text: si_text(1.23e10, "FLOP/s") -> "12.3 GFLOP/s".
// All three are units.hpp's.
using modelstat::seconds_label;
using modelstat::si_label;
using modelstat::si_text;

class Scale;
using Labeler = std::function<std::string(double)>;
// Labels for a linear time axis, all in the unit seconds_label picks for the
// axis's largest tick ("0 ms", "200 ms", .. "1000 ms", not ".. 800 ms, 1 s").
Labeler seconds_labels_for(const Scale& axis);

// A data value -> pixel map along one axis.
class Scale {
 public:
  // Logarithmic, widened to whole decades around [data_lo, data_hi]
  // (both must be > 0; at least one decade). Major ticks at the decades,
  // minor ticks at 2..9 x each decade.
  static Scale log10(double data_lo, double data_hi, double px_lo, double px_hi);
  // Linear, widened to "nice" round ticks (1, 2, 2.5, 5 x 10^k) around
  // [data_lo, data_hi], about `target_ticks` of them.
  static Scale linear(double data_lo, double data_hi, double px_lo, double px_hi, int target_ticks = 5);
  // Logarithmic base 2 over [data_lo, data_hi] exactly, for batch sizes; ticks
  // are given by the caller (the measured batches).
  static Scale log2(double data_lo, double data_hi, double px_lo, double px_hi);

  double operator()(double value) const;  // pixel; clamps to the axis range
  bool contains(double value) const;      // inside [lo, hi] (inclusive)
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  const std::vector<double>& major_ticks() const { return major_; }
  const std::vector<double>& minor_ticks() const { return minor_; }
  void set_major_ticks(std::vector<double> ticks) { major_ = std::move(ticks); }

 private:
  enum class Kind { Linear, Log10, Log2 };
  Scale(Kind kind, double px_lo, double px_hi) : kind_(kind), px_lo_(px_lo), px_hi_(px_hi) {}
  Kind kind_ = Kind::Linear;
  double lo_ = 0, hi_ = 1, px_lo_ = 0, px_hi_ = 1;
  std::vector<double> major_, minor_;
};

// The plot area of a chart, in SVG user units (y grows downwards).
struct Frame {
  double left = 0, top = 0, right = 0, bottom = 0;
};

// Grid lines, the frame, tick marks, tick labels and the two axis titles.
void draw_axes(std::ostream& out, const Frame& frame, const Scale& x, const Scale& y, const Labeler& x_label,
               const Labeler& y_label, const std::string& x_title, const std::string& y_title);

// Categorical colours (Tableau 10 without its grey), and the grey used for "other".
size_t palette_size();
const char* palette_color(size_t index);  // index modulo palette_size()
extern const char* const kOtherColor;

// Display-only binning: counts of samples in `bins` equal-width bins over
// [lo, hi]; the last bin is closed. Samples outside, or non-finite, are not counted.
std::vector<size_t> bin_counts(const std::vector<double>& samples, double lo, double hi, size_t bins);

}  // namespace modelstat::report::svg
