// Analyses the model named on the command line with the installed library and
// prints its totals as "params P macs M flops F" (the install test compares
// them with the installed `modelstat -f json`).
#include <cstdio>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_analyze MODEL.onnx\n");
    return 2;
  }
  try {
    modelstat::LoadOptions options;
    const modelstat::AnalysisResult r = modelstat::analyze_file(argv[1], options);
    std::printf("params %lld macs %lld flops %lld\n", static_cast<long long>(r.totals.params),
                static_cast<long long>(r.totals.macs), static_cast<long long>(r.totals.flops));
    return 0;
  } catch (const modelstat::Error& e) {
    std::fprintf(stderr, "consumer_analyze: %s\n", e.what());
    return e.exit_code();
  }
}
