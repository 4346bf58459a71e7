// Profiles the model named on the command line with the installed profiler
// library (a short CPU run) and prints "layers L median_s T".
#include <cstdio>

#include "modelstat/error.hpp"
#include "modelstat/profile.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_profile MODEL.onnx\n");
    return 2;
  }
  try {
    modelstat::ProfileOptions options;
    options.threads = 1;
    options.warmup_iterations = 1;
    options.warmup_seconds = 0;
    options.min_iterations = 3;
    options.min_seconds = 0;
    options.max_seconds = 1;
    const modelstat::ProfileResult r = modelstat::profile_model(argv[1], modelstat::LoadOptions{}, options);
    std::printf("layers %zu median_s %.9g\n", r.layers.size(), r.whole.median);
    return 0;
  } catch (const modelstat::Error& e) {
    std::fprintf(stderr, "consumer_profile: %s\n", e.what());
    return e.exit_code();
  }
}
