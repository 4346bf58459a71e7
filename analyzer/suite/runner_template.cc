#include "analyzer/suite/runner_template.hpp"

#include "modelstat/error.hpp"

namespace modelstat::suite {

const std::map<std::string, std::string>& runner_placeholders() {
  static const std::map<std::string, std::string> kPlaceholders = {
      {"model", "the model file (absolute path)"},
      {"batch", "the batch size"},
      {"threads", "intra-op threads (the machine's cores for `all`)"},
      {"dtype", "model, fp32, fp16 or bf16"},
      {"fusion", "on or off"},
      {"device", "cpu or cuda"},
      {"mode", "sync or async"},
      {"requests", "requests in flight (1 for sync)"},
      {"bindings", "the symbolic dims, NAME=VALUE joined by ','"},
      {"inputs", "the graph inputs as bound, JSON: [{\"name\", \"dtype\", \"dims\"}]"},
      {"warmup", "warm-up runs, at least"},
      {"warmup_time", "warm-up seconds, at least"},
      {"iters", "measured runs, at least"},
      {"min_time", "measured seconds, at least"},
      {"max_time", "seconds after which measuring stops"},
      {"suite_dir", "the suite file's folder"},
  };
  return kPlaceholders;
}

namespace {

std::string expand_one(const RunnerTemplate& runner, size_t element, const std::map<std::string, std::string>* values,
                       const std::string& where) {
  const std::string& text = runner.command[element];
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorKind::Input,
                "key 'runners." + runner.name + ".command[" + std::to_string(element) + "]' (\"" + text + "\"): " + why,
                where);
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') fail("unmatched '}' (write '}}' for a literal brace)");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) fail("unmatched '{' (write '{{' for a literal brace)");
    const std::string name = text.substr(i + 1, close - i - 1);
    if (!runner_placeholders().count(name)) {
      std::string known;
      for (const auto& [k, v] : runner_placeholders()) known += (known.empty() ? "{" : ", {") + k + "}";
      fail("unknown placeholder {" + name + "} (known: " + known + ")");
    }
    if (values) out += values->at(name);
    i = close;
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_command(const RunnerTemplate& runner, const std::map<std::string, std::string>& values,
                                        const std::string& where) {
  std::vector<std::string> argv;
  for (size_t i = 0; i < runner.command.size(); ++i) argv.push_back(expand_one(runner, i, &values, where));
  return argv;
}

void check_command(const RunnerTemplate& runner, const std::string& where) {
  for (size_t i = 0; i < runner.command.size(); ++i) expand_one(runner, i, nullptr, where);
}

}  // namespace modelstat::suite
