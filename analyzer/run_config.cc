// The name tables of include/modelstat/run_config.hpp: one per enum.
#include "modelstat/run_config.hpp"

#include "modelstat/error.hpp"

namespace modelstat {

template <>
const std::vector<std::pair<std::string, DeviceKind>>& names_of<DeviceKind>() {
  static const std::vector<std::pair<std::string, DeviceKind>> t = {{"cpu", DeviceKind::Cpu}, {"cuda", DeviceKind::Cuda}};
  return t;
}
template <>
const std::vector<std::pair<std::string, ComputeDtype>>& names_of<ComputeDtype>() {
  static const std::vector<std::pair<std::string, ComputeDtype>> t = {
      {"own", ComputeDtype::Own}, {"fp32", ComputeDtype::Fp32}, {"fp16", ComputeDtype::Fp16}, {"bf16", ComputeDtype::Bf16},
      {"tf32", ComputeDtype::Tf32}};
  return t;
}
template <>
const std::vector<std::pair<std::string, GemmBackend>>& names_of<GemmBackend>() {
  static const std::vector<std::pair<std::string, GemmBackend>> t = {
      {"auto", GemmBackend::Auto}, {"onednn", GemmBackend::OneDnn}, {"blas", GemmBackend::Blas}};
  return t;
}
template <>
const std::vector<std::pair<std::string, Optimizer>>& names_of<Optimizer>() {
  static const std::vector<std::pair<std::string, Optimizer>> t = {
      {"sgd", Optimizer::Sgd}, {"momentum", Optimizer::Momentum}, {"adam", Optimizer::Adam}};
  return t;
}
template <>
const std::vector<std::pair<std::string, TrainPrecision>>& names_of<TrainPrecision>() {
  static const std::vector<std::pair<std::string, TrainPrecision>> t = {
      {"fp32", TrainPrecision::Fp32}, {"bf16", TrainPrecision::Bf16}, {"fp16", TrainPrecision::Fp16}};
  return t;
}
template <>
const std::vector<std::pair<std::string, Checkpointing>>& names_of<Checkpointing>() {
  static const std::vector<std::pair<std::string, Checkpointing>> t = {
      {"none", Checkpointing::None}, {"selective", Checkpointing::Selective}, {"full", Checkpointing::Full}};
  return t;
}

namespace {

template <typename E>
const char* lookup(E v) {
  for (const auto& [name, value] : names_of<E>())
    if (value == v) return name.c_str();
  return "?";
}

}  // namespace

const char* name_of(DeviceKind v) { return lookup(v); }
const char* name_of(ComputeDtype v) { return lookup(v); }
const char* name_of(GemmBackend v) { return lookup(v); }
const char* name_of(Optimizer v) { return lookup(v); }
const char* name_of(TrainPrecision v) { return lookup(v); }
const char* name_of(Checkpointing v) { return lookup(v); }

template <typename E>
E parse_as(const std::string& text, const std::string& flag) {
  const auto& table = names_of<E>();
  std::string accepted;
  for (size_t k = 0; k < table.size(); ++k) {
    if (table[k].first == text) return table[k].second;
    accepted += (k == 0 ? "" : k + 1 == table.size() ? " or " : ", ") + table[k].first;
  }
  throw Error(ErrorKind::Usage, flag + " must be " + accepted + ", got '" + text + "'");
}

template DeviceKind parse_as<DeviceKind>(const std::string&, const std::string&);
template ComputeDtype parse_as<ComputeDtype>(const std::string&, const std::string&);
template GemmBackend parse_as<GemmBackend>(const std::string&, const std::string&);
template Optimizer parse_as<Optimizer>(const std::string&, const std::string&);
template TrainPrecision parse_as<TrainPrecision>(const std::string&, const std::string&);
template Checkpointing parse_as<Checkpointing>(const std::string&, const std::string&);

}  // namespace modelstat
