// The ceilings of a run the command line names none for (run_ceilings.hpp).
#include "tools/run_ceilings.hpp"

#include "profiler/ceilings_probe.hpp"
#include "tools/cli_common.hpp"

namespace modelstat::cli {

std::string ceilings_mismatch(const DeviceCeilings& c, const RunContext& run) {
  if (c.device_kind != run.device_kind) return "are for a " + c.device_kind + " device";
  if (!c.device_name.empty() && !run.device_name.empty() && c.device_name != run.device_name)
    return "were measured on '" + c.device_name + "', this run is on '" + run.device_name + "'";
  if (run.device_kind == "cpu" && c.threads != run.threads)
    return "were measured with " + std::to_string(c.threads) + (c.threads == 1 ? " thread" : " threads") +
           ", this run uses " + std::to_string(run.threads);
  return {};
}

std::optional<DeviceCeilings> saved_ceilings(const ProfileOptions& options, const RunContext& run, std::string& why) {
  const std::string path = default_ceilings_path(name_of(options.device));
  const std::optional<DeviceCeilings> saved = load_ceilings(path);
  if (!saved) {
    why = no_saved_ceilings(path);
    return std::nullopt;
  }
  why = ceilings_mismatch(*saved, run);
  if (why.empty()) return saved;
  why = "the saved ceilings (" + path + ") " + why;
  return std::nullopt;
}

DeviceCeilings saved_or_quick_ceilings(const ProfileOptions& options, const RunContext& run,
                                       std::vector<std::string>& notices) {
  std::string why;
  if (std::optional<DeviceCeilings> saved = saved_ceilings(options, run, why)) return *saved;
  profiler::CeilingsProbeOptions probe;
  probe.device = name_of(options.device);
  probe.threads = run.threads;
  probe.quick = true;
  probe.op_costs = false;  // the roofline needs the roofs only
  probe.dtypes = {"fp32"};
  // The CPU probe measures fp32 only (ceilings_probe.cc): a CPU run in fp16
  // (a float16 model in its own dtype) is drawn against the fp32 roof, which
  // join_profile says.
  if (options.device != DeviceKind::Cpu && (run.dtype == "fp16" || run.dtype == "bf16"))
    probe.dtypes.push_back(run.dtype);
  DeviceCeilings quick = profiler::measure_ceilings(probe);
  notices.push_back(quick_ceilings_notice(why, "this report"));
  return quick;
}

}  // namespace modelstat::cli
