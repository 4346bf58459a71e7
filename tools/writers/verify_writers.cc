// verify's record (include/modelstat/verification.hpp): the table (one line
// per output, then the verdict; what `modelstat verify` printed before it
// had a record) and JSON (docs/verify.md). Formats only.
#include <sstream>

#include "analyzer/measurements/record_json.hpp"
#include "modelstat/error.hpp"
#include "tools/writers/writers.hpp"

namespace modelstat {

namespace {

class VerifyTableWriter : public VerifyWriter {
 public:
  void write(const VerifyRecord& r, const ReportOptions&, std::ostream& out) const override {
    // A case that did not run to a verdict is an error (the command prints it, on standard error).
    if (!r.unsupported.empty()) return;
    if (!r.mode.empty()) {
      out << "criterion: elementwise allclose, |actual - expected| <= atol + rtol*|expected| with rtol " << r.rtol
          << ", atol " << r.atol << " (" << r.tolerance_source
          << "; NaN matches NaN; integer/bool outputs exact). Also shown, not judged: max abs diff, max rel diff "
             "|actual - expected| / |expected| over elements with |expected| > atol, norm rel err ||actual - "
             "expected||_2 / ||expected||_2\n";
      if (r.mode == "model")
        out << "whole model: an output outside it passes when its norm rel err is within " << kSensitivityFactor
            << " x the model's own rounding sensitivity (how far reruns with its inputs one ulp apart, on other "
               "kernels with its transcendental functions one ulp apart and, if quantised, with its requantisers' "
               "values a few ulps apart move it); "
               "integer/bool elements that differ are decision flips, passed when a rerun flips them too\n";
    }
    for (const auto& n : r.notices) out << "notice: " << n << "\n";
    for (const OutputCheck& c : r.outputs) out << line(c) << "\n";
    bool judged = false;
    for (const OutputCheck& c : r.outputs) judged = judged || c.judged;
    if (judged && r.quantised)
      out << "quantised model: " << r.requantisers
          << " node(s) round activations to a quantisation grid, where a difference smaller than one step "
             "(float rounding in another op) can move a value to the next step and the layers after it carry that "
             "on\n";
    for (const OutputCheck& c : r.outputs)
      if (c.judged) out << "  " << c.data_set << " output " << c.index << " '" << c.name << "': " << c.why << "\n";
    if (!r.error.empty()) return;
    if (r.verdict == "pass (quantised model)")
      out << "PASS (quantised model): " << r.outside
          << " element(s) outside the elementwise tolerance, every differing output within what requantisation "
             "explains (above)\n";
    else if (r.verdict == "pass (rounding sensitivity)")
      out << "PASS (within the model's rounding sensitivity): " << r.outside
          << " element(s) outside the elementwise tolerance, every differing output within " << kSensitivityFactor
          << " x the model's own rounding sensitivity (above)\n";
    else
      out << (r.outside ? "FAIL" : "PASS") << ": " << r.outside << " element(s) outside the tolerance"
          << (r.explained ? ", " + std::to_string(r.outside - r.explained) + " of them beyond the model's rounding "
                                "sensitivity"
                          : std::string())
          << "\n";
  }

 private:
  static std::string line(const OutputCheck& c) {
    std::ostringstream s;
    s << c.data_set << " output " << c.index << " '" << c.name << "': ";
    if (!c.problem.empty()) {
      s << "MISMATCH: " << c.problem;
    } else if (c.elements == 0) {
      s << "pass (empty)";
    } else if (c.exact) {
      s << (c.outside ? "MISMATCH" : "pass") << ": " << c.outside << " of " << c.elements
        << " elements differ (exact comparison, " << c.dtype << "), max abs diff " << c.max_abs_diff;
    } else {
      s << (c.outside ? "MISMATCH" : "pass") << ": " << c.outside << " of " << c.elements
        << " elements outside atol + rtol*|expected|; max abs diff " << c.max_abs_diff << ", max rel diff ";
      if (c.max_rel_diff) s << *c.max_rel_diff;
      else s << "n/a (every |expected| <= atol)";
      s << ", norm rel err " << c.norm_rel_err;
    }
    return s.str();
  }
};

class VerifyJsonWriter : public VerifyWriter {
 public:
  void write(const VerifyRecord& r, const ReportOptions&, std::ostream& out) const override { out << Json(r).dump(2) << "\n"; }
};

}  // namespace

std::unique_ptr<VerifyWriter> make_verify_writer(const std::string& format) {
  return pick_writer<VerifyRecord>("verify", format,
                                   {{"table", writer_of<VerifyRecord, VerifyTableWriter>},
                                    {"json", writer_of<VerifyRecord, VerifyJsonWriter>}});
}

}  // namespace modelstat
