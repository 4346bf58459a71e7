#include "tools/cli_common.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <new>
#include <string>

#include "analyzer/measurements/atomic_file.hpp"
#include "tools/cpu_load.hpp"

namespace modelstat::cli {

bool default_openmp_wait_policy() {
  // libgomp's and OpenBLAS's own defaults kept on purpose (bench/openmp_wait_policy.py compares them).
  if (const char* keep = std::getenv("MODELSTAT_OMP_WAIT_POLICY"); keep && std::string(keep) == "libgomp") return false;
  bool set = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {  // else the user's, whatever its value
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    setenv("MODELSTAT_OMP_WAIT_POLICY", "default", 1);
    set = true;
    // A short spin before sleeping when the CPUs are idle (cpu_load.hpp says why); a spin count
    // the user gave stays. One CPU allowed: no team to keep warm, nothing to sample.
    if (!std::getenv("GOMP_SPINCOUNT") && allowed_cpus().size() > 1) {
      const double busy = sample_persistent_busy_cpus(0.1);  // two windows of 0.1 s (cpu_load.hpp)
      const int spin = spin_count_for(busy);
      if (spin > 0) setenv("GOMP_SPINCOUNT", std::to_string(spin).c_str(), 1);
      setenv("MODELSTAT_CPU_BUSY_AT_START", fmt::format("{:.2f}", busy).c_str(), 1);
    }
  }
  if (!std::getenv("OPENBLAS_THREAD_TIMEOUT")) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    setenv("MODELSTAT_OPENBLAS_THREAD_TIMEOUT", "default", 1);
    set = true;
  }
  return set;
}

void write_output(const std::string& path, const std::function<void(std::ostream&, bool is_tty)>& write) {
  if (path.empty() || path == "-") {
    write(std::cout, isatty(STDOUT_FILENO) != 0);
    std::cout.flush();
    if (!std::cout) throw Error(ErrorKind::Runtime, "cannot write to standard output");
    return;
  }
  write_file_atomically(path, [&](std::ostream& out) { write(out, false); });
}

int run_mapping_errors(const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::fprintf(stderr, "modelstat: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "modelstat: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "modelstat: error: internal error: %s\n", e.what());
    return 1;
  }
}

int exit_for_parse_error(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: printed, exit 0
  // The command as typed ("modelstat profile"): what the message is about and whose --help teaches it.
  std::string command = "modelstat";
  for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().front();
    command += " " + sub->get_name();
  }
  std::fprintf(stderr, "modelstat: error: %s: %s (see '%s --help')\n", command.c_str(), e.what(), command.c_str());
  return 2;
}

std::string no_saved_ceilings(const std::string& path) {
  return "no ceilings saved for this device (" + path + ")";
}

std::string quick_ceilings_notice(const std::string& why, const std::string& what) {
  return why + ": measured quick ceilings for " + what +
         " (seconds, not minutes; less accurate); run `modelstat device` to measure and save accurate ceilings";
}

std::optional<double> ceilings_age_seconds(const DeviceCeilings& c, std::time_t now) {
  if (!c.measured() || c.date.size() != 20) return std::nullopt;
  std::tm t{};
  char zone = 0;
  if (std::sscanf(c.date.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
                  &t.tm_sec, &zone) != 7 || zone != 'Z')
    return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  const std::time_t at = timegm(&t);
  if (at == std::time_t(-1)) return std::nullopt;
  return std::difftime(now, at);
}

std::string stale_ceilings_notice(const DeviceCeilings& c, std::time_t now, const std::string& what) {
  const std::optional<double> age = ceilings_age_seconds(c, now);
  constexpr double kDay = 86400.0;
  if (!age || *age <= kDay) return {};
  const double days = *age / kDay;
  return fmt::format(
      "the ceilings priced for {} were measured {} ({:.0f} {} ago): a machine's speed drifts (a virtual one's "
      "most), so a forecast is as good as its calibration is recent; run `modelstat device` again where it may "
      "have changed",
      what, c.date, days, days < 1.5 ? "day" : "days");
}

std::optional<DeviceCeilings> explicit_ceilings(const std::string& ceilings_file, const std::string& datasheet) {
  if (!ceilings_file.empty()) {
    std::optional<DeviceCeilings> c = load_ceilings(ceilings_file);
    if (!c) throw Error(ErrorKind::Usage, "cannot read ceilings file: no such file", ceilings_file);
    return c;
  }
  if (!datasheet.empty()) return datasheet_ceilings(datasheet);
  return std::nullopt;
}

}  // namespace modelstat::cli
