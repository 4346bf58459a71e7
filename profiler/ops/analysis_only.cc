// Ops the analyzer costs but the executor does not run, each with the reason.
// One visible list: tests/profiler/exec_registry_test.cc checks that every op
// with a cost rule has an executor or appears here, and never both.
#include "profiler/ops/exec_rule.hpp"

namespace modelstat::profiler {

const std::vector<AnalysisOnlyOp>& analysis_only_ops() {
  static const char* const kSequenceMap = "control flow over sequences: the executor passes tensors only";
  static const char* const kContainer = "sequence/optional values: the executor passes tensors only";
  static const std::vector<AnalysisOnlyOp> ops = {
      {"SequenceMap", kSequenceMap},
      {"SequenceAt", kContainer},
      {"SequenceConstruct", kContainer},
      {"SequenceEmpty", kContainer},
      {"SequenceErase", kContainer},
      {"SequenceInsert", kContainer},
      {"SequenceLength", kContainer},
      {"SplitToSequence", kContainer},
      {"ConcatFromSequence", kContainer},
      {"Optional", kContainer},
      {"OptionalGetElement", kContainer},
      {"OptionalHasElement", kContainer},
      {"RoiAlign", "no ATen kernel (torchvision's roi_align is not in LibTorch); rare outside detection heads"},
  };
  return ops;
}

}  // namespace modelstat::profiler
