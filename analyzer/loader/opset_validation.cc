// Load stage: the opsets and domains a model imports and uses, checked
// against what this build reads (load_stages.hpp).
#include <onnx/defs/schema.h>

#include <map>
#include <set>

#include "analyzer/cost/cost_rule.hpp"
#include "analyzer/loader/load_stages.hpp"
#include "modelstat/error.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat::loader {

namespace {

// The newest default-domain opset a model may import (validate_opsets).
constexpr int64_t kNewestDefaultOpset = 23;

// Domains whose nodes have cost rules or are at least known to ONNX.
bool is_known_domain(const std::string& d) {
  if (d.empty() || d == "ai.onnx") return true;
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return map.count(d) > 0;
}

int max_known_version(const std::string& d) {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(normalize_domain(d));
  return it == map.end() ? 0 : it->second.second;
}

// The first node (main graph, subgraphs, then model-local functions) of each
// domain a node uses: what decides whether an unknown imported domain matters.
void collect_used_domains(const onnx::GraphProto& g, std::map<std::string, const onnx::NodeProto*>& used) {
  const std::string* last = nullptr;  // nodes of one domain come in runs: skip the map for them
  for (const auto& n : g.node()) {
    if (!last || n.domain() != *last) {
      const std::string d = normalize_domain(n.domain());
      if (!used.count(d)) used.emplace(d, &n);
      last = &n.domain();
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_used_domains(a.g(), used);
      for (const auto& sub : a.graphs()) collect_used_domains(sub, used);
    }
  }
}

}  // namespace

void validate_opsets(const onnx::ModelProto& m, const LoadOptions& options, std::vector<std::string>& notices) {
  std::map<std::string, const onnx::NodeProto*> used;
  collect_used_domains(m.graph(), used);
  for (const auto& f : m.functions())
    for (const auto& n : f.node()) used.emplace(normalize_domain(n.domain()), &n);
  std::set<std::string> imported, record_domains;
  for (const auto& o : m.opset_import()) {
    const std::string d = normalize_domain(o.domain());
    imported.insert(d);
    if (o.version() < 1)
      throw Error(ErrorKind::Input, "opset import of domain '" + o.domain() + "' has invalid version " +
                                        std::to_string(o.version()));
    if (is_known_domain(d)) {
      const int max_v = max_known_version(d);
      // ai.onnx.ml 4 and 5 (ONNX 1.13, 1.15: LabelEncoder, TreeEnsemble,
      // ...) post-date ONNX 1.12's schemas: loaded, each node counted by a
      // rule where one exists, else listed as unknown, and said so.
      if (d == "ai.onnx.ml" && o.version() > max_v && o.version() <= 5) {
        notices.push_back("ai.onnx.ml opset " + std::to_string(o.version()) + " is newer than this build's schemas (" +
                          std::to_string(max_v) + "): its nodes are checked against opset " + std::to_string(max_v) +
                          " and listed as unknown where modelstat has no rule");
        continue;
      }
      // Default-domain opsets 18-23 (ONNX 1.13-1.18): loaded on ONNX 1.12's
      // schemas where an op only widened its types, modelstat's records for
      // ops added since (Gelu 20, RMSNormalization / RotaryEmbedding /
      // Attention 23, ...), ReduceSum-13's signature for the reductions whose
      // axes became an input in 18, and a node error where an op gained a
      // feature these schemas would misread (Pad axes, AveragePool
      // dilations, ...). Ops added since without a record are unknown.
      if (d.empty() && o.version() > max_v && o.version() <= kNewestDefaultOpset) {
        notices.push_back("opset " + std::to_string(o.version()) + " is newer than this build's ONNX schemas (" +
                          std::to_string(max_v) +
                          "): ops added since count where modelstat has a record; ops changed since are read as "
                          "their opset-" + std::to_string(o.version()) + " meaning (docs/COST_MODEL.md, Opset ranges)");
        continue;
      }
      if (o.version() > max_v)
        throw Error(ErrorKind::Input, "opset " + std::to_string(o.version()) + " of domain '" +
                                          (d.empty() ? "ai.onnx" : d) + "' is newer than this build knows (up to " +
                                          std::to_string(max_v) + ")");
    } else if (cost::domain_has_records(d)) {
      // A contrib domain modelstat has op records for (com.microsoft): its
      // nodes are checked one by one below.
      record_domains.insert(d);
    } else if (!used.count(d)) {
      // Imported and never used (ONNX Runtime's tools import
      // com.ms.internal.nhwc and the like): nothing to count, nothing refused.
      notices.push_back("domain '" + o.domain() + "' is imported but no node uses it");
    } else if (!options.allow_custom_domains) {
      bool local_function = false;
      for (const auto& f : m.functions())
        if (f.domain() == o.domain()) local_function = true;
      const onnx::NodeProto& n = *used.at(d);
      if (!local_function)
        throw Error(ErrorKind::Input,
                    "uses domain '" + o.domain() +
                        "', which modelstat has no rules for (pass --allow-custom-domains to list its nodes as "
                        "unknown)",
                    {}, n.name(), n.op_type());
    }
  }
  if (!imported.count(""))
    throw Error(ErrorKind::Input, "model imports no default-domain (ai.onnx) opset");
  // Nodes must use a domain the model imports.
  const std::string* last = nullptr;  // nodes of one domain come in runs: check each run once
  for (const auto& n : m.graph().node()) {
    if (last && n.domain() == *last && record_domains.empty()) continue;
    last = &n.domain();
    if (!imported.count(normalize_domain(n.domain())))
      throw Error(ErrorKind::Input, "uses domain '" + n.domain() + "' which the model does not import", {},
                  n.name(), n.op_type());
    // In a contrib domain, only ops with a record are known; the others are
    // refused as an unknown domain's are.
    const std::string d = normalize_domain(n.domain());
    if (!options.allow_custom_domains && record_domains.count(d) && !cost::find_op(d, n.op_type()))
      throw Error(ErrorKind::Input, "unknown op '" + n.op_type() + "' of domain '" + n.domain() +
                                        "' (pass --allow-custom-domains to list its nodes as unknown)",
                  {}, n.name(), n.op_type());
  }
  if (options.allow_custom_domains)
    for (const auto& d : imported)
      if (!is_known_domain(d) && !cost::domain_has_records(d) && used.count(d)) notices.push_back("domain '" + d + "' has no cost rules: its nodes are listed as unknown");
}

}  // namespace modelstat::loader
