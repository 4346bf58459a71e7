// Precision and checkpointing names (include/modelstat/training_setup.hpp).
#include "modelstat/training_setup.hpp"

#include <utility>

#include "modelstat/error.hpp"

namespace modelstat {

namespace {

constexpr std::pair<TrainPrecision, const char*> kPrecisions[] = {
    {TrainPrecision::Fp32, "fp32"}, {TrainPrecision::Bf16, "bf16"}, {TrainPrecision::Fp16, "fp16"}};
constexpr std::pair<Checkpointing, const char*> kCheckpointing[] = {
    {Checkpointing::None, "none"}, {Checkpointing::Selective, "selective"}, {Checkpointing::Full, "full"}};

}  // namespace

const char* train_precision_name(TrainPrecision p) {
  for (const auto& [value, name] : kPrecisions)
    if (value == p) return name;
  return "?";
}

const char* checkpointing_name(Checkpointing c) {
  for (const auto& [value, name] : kCheckpointing)
    if (value == c) return name;
  return "?";
}

TrainPrecision parse_train_precision(const std::string& name) {
  for (const auto& [value, known] : kPrecisions)
    if (name == known) return value;
  throw Error(ErrorKind::Usage, "--precision must be fp32, bf16 or fp16, got '" + name + "'");
}

Checkpointing parse_checkpointing(const std::string& name) {
  for (const auto& [value, known] : kCheckpointing)
    if (name == known) return value;
  throw Error(ErrorKind::Usage, "--checkpointing must be none, selective or full, got '" + name + "'");
}

}  // namespace modelstat
