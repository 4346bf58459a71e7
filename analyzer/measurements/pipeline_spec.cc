// Reading and checking a pipeline description (docs/pipeline.md): keys,
// stage names, links between stages (by name or by position), order and
// cycles, and the shapes and dtypes on each link, found by loading every
// model's graph with its bindings (never its weights). Every refusal is
// Error(Input) naming the description and the stage.
#include <algorithm>
#include <functional>
#include <set>

#include "analyzer/measurements/json_input.hpp"
#include "modelstat/pipeline.hpp"

namespace modelstat {

const char* stage_kind_name(StageKind kind) {
  switch (kind) {
    case StageKind::Model: return "model";
    case StageKind::HostBusy: return "host_busy";
    case StageKind::HostModel: return "host_model";
  }
  return "?";
}

namespace {

// A link as written, before the models are loaded.
struct RawLink {
  std::string input;
  std::string stage;   // empty: own random input (null in the description)
  std::string output;  // empty: the output at the input's position
};

struct RawStage {
  PipelineStage stage;
  bool positional = true;  // no "inputs" object: inputs take the previous model stage's outputs by position
  std::vector<RawLink> links;
};

class Reader {
 public:
  Reader(std::string origin, std::string folder) : origin_(std::move(origin)), folder_(std::move(folder)) {}

  [[noreturn]] void fail(const std::string& message) const { throw Error(ErrorKind::Input, message, origin_); }
  [[noreturn]] void fail_stage(size_t k, const std::string& name, const std::string& message) const {
    fail("stage '" + name + "' (stages[" + std::to_string(k) + "]): " + message);
  }

  void check_keys(const Json& object, const std::set<std::string>& known, const std::string& where) const {
    for (auto it = object.begin(); it != object.end(); ++it)
      if (!known.count(it.key())) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail(where + ": unknown key '" + it.key() + "' (known: " + list + ")");
      }
  }

  std::string resolve(const std::string& path) const {
    if (path.empty() || path[0] == '/' || folder_.empty()) return path;
    return folder_ + "/" + path;
  }

  void read_bindings(const Json& s, size_t k, PipelineStage& stage) const {
    if (const Json* dims = json_field_if(s, "dims")) {
      if (!dims->is_object()) fail_stage(k, stage.name, "\"dims\" must be an object {\"NAME\": VALUE}");
      for (auto it = dims->begin(); it != dims->end(); ++it) {
        if (!it.value().is_number_integer() || it.value().get<int64_t>() < 1)
          fail_stage(k, stage.name, "dim '" + it.key() + "' must be a positive integer");
        stage.load.dim_values[it.key()] = it.value().get<int64_t>();
      }
    }
    if (const Json* shapes = json_field_if(s, "shapes")) {
      if (!shapes->is_object()) fail_stage(k, stage.name, "\"shapes\" must be an object {\"INPUT\": [dims]}");
      for (auto it = shapes->begin(); it != shapes->end(); ++it) {
        std::vector<int64_t> dims;
        if (!it.value().is_array()) fail_stage(k, stage.name, "shape of '" + it.key() + "' must be an array of dims");
        for (const Json& d : it.value()) {
          if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (int64_t(1) << 40))
            fail_stage(k, stage.name, "shape of '" + it.key() + "' holds a dim that is not a whole number in [0, 2^40]");
          dims.push_back(d.get<int64_t>());
        }
        stage.load.input_shapes[it.key()] = dims;
      }
    }
  }

  RawStage read_stage(const Json& s, size_t k, const std::string& default_device) const {
    RawStage raw;
    PipelineStage& stage = raw.stage;
    stage.name = "stages[" + std::to_string(k) + "]";
    if (!s.is_object()) fail(stage.name + ": a stage must be an object");
    if (const Json* name = json_field_if(s, "name")) {
      if (!name->is_string() || name->get<std::string>().empty())
        fail(stage.name + ": \"name\" must be a non-empty string");
      stage.name = name->get<std::string>();
      if (stage.name.find('.') != std::string::npos)
        fail_stage(k, stage.name, "a stage name cannot hold '.' (links are written STAGE.OUTPUT)");
    }
    const Json* host = json_field_if(s, "host");
    const Json* model = json_field_if(s, "model");
    if (host && model) fail_stage(k, stage.name, "a stage is either \"model\" or \"host\", not both");
    if (!host && !model) fail_stage(k, stage.name, "a stage needs \"model\" (an ONNX file) or \"host\" (host work)");
    if (host) {
      check_keys(s, {"name", "host", "dims", "shapes", "inputs"}, "stage '" + stage.name + "'");
      if (!host->is_object()) fail_stage(k, stage.name, "\"host\" must be an object: {\"busy_ms\": 2.0} or {\"model\": \"pre.onnx\"}");
      check_keys(*host, {"busy_ms", "model"}, "stage '" + stage.name + "', \"host\"");
      const Json* busy = json_field_if(*host, "busy_ms");
      const Json* host_model = json_field_if(*host, "model");
      if (!!busy == !!host_model) fail_stage(k, stage.name, "\"host\" needs exactly one of \"busy_ms\" and \"model\"");
      stage.device = "cpu";
      if (busy) {
        if (!busy->is_number() || !(busy->get<double>() >= 0) || busy->get<double>() > 3.6e6)
          fail_stage(k, stage.name, "\"busy_ms\" must be a number of milliseconds in [0, 3600000]");
        stage.kind = StageKind::HostBusy;
        stage.busy_seconds = busy->get<double>() * 1e-3;
        if (json_field_if(s, "inputs") || json_field_if(s, "dims") || json_field_if(s, "shapes"))
          fail_stage(k, stage.name, "a busy host stage takes no \"inputs\", \"dims\" or \"shapes\"");
        return raw;
      }
      if (!host_model->is_string()) fail_stage(k, stage.name, "\"host\".\"model\" must be a path");
      stage.kind = StageKind::HostModel;
      stage.model = resolve(host_model->get<std::string>());
    } else {
      check_keys(s, {"name", "model", "device", "dims", "shapes", "inputs"}, "stage '" + stage.name + "'");
      if (!model->is_string()) fail_stage(k, stage.name, "\"model\" must be a path");
      stage.model = resolve(model->get<std::string>());
      stage.device = default_device;
      if (const Json* device = json_field_if(s, "device")) {
        if (!device->is_string() || (*device != "cpu" && *device != "cuda"))
          fail_stage(k, stage.name, "\"device\" must be \"cpu\" or \"cuda\"");
        stage.device = device->get<std::string>();
      }
    }
    if (!json_field_if(s, "name")) {
      std::string stem = stage.model.substr(stage.model.rfind('/') + 1);
      stem = stem.substr(0, stem.rfind(".onnx") == std::string::npos ? stem.size() : stem.rfind(".onnx"));
      std::replace(stem.begin(), stem.end(), '.', '_');
      stage.name = stem.empty() ? stage.name : stem;
    }
    read_bindings(s, k, stage);
    if (const Json* inputs = json_field_if(s, "inputs")) {
      if (!inputs->is_object())
        fail_stage(k, stage.name, "\"inputs\" must be an object {\"INPUT\": \"STAGE.OUTPUT\" | \"STAGE\" | null}");
      raw.positional = false;
      for (auto it = inputs->begin(); it != inputs->end(); ++it) {
        RawLink link;
        link.input = it.key();
        if (!it.value().is_null()) {
          if (!it.value().is_string() || it.value().get<std::string>().empty())
            fail_stage(k, stage.name, "input '" + it.key() + "' must link to \"STAGE.OUTPUT\", \"STAGE\" or null");
          const std::string text = it.value().get<std::string>();
          const size_t dot = text.find('.');
          link.stage = text.substr(0, dot);
          if (dot != std::string::npos) link.output = text.substr(dot + 1);
        }
        raw.links.push_back(link);
      }
    }
    return raw;
  }

 private:
  std::string origin_, folder_;
};

std::vector<int64_t> dims_of(const Shape& s) {
  std::vector<int64_t> dims;
  for (const auto& d : s.dims) dims.push_back(d.value);
  return dims;
}

const Tensor& graph_tensor(const Model& m, int id) { return m.graph.tensors[size_t(id)]; }

// Loads a stage's model with its bindings; a load error names the stage.
Model load_stage_model(const Reader& reader, size_t k, const PipelineStage& stage, const LoadOptions& load) {
  try {
    return load_model(stage.model, load);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Runtime) throw;
    reader.fail_stage(k, stage.name,
                      "model '" + stage.model + "': " + e.message() + (e.node().empty() ? "" : " (node " + e.node() + ")"));
  }
}

// Resolves the links of every stage and checks them against the loaded
// graphs, in stage order (a link reads only stages before it).
PipelineSpec resolve(const Reader& reader, std::vector<RawStage> raw, const std::string& source) {
  PipelineSpec spec;
  spec.source = source;
  std::map<std::string, size_t> by_name;
  for (size_t k = 0; k < raw.size(); ++k)
    if (!by_name.emplace(raw[k].stage.name, k).second)
      reader.fail_stage(k, raw[k].stage.name, "a stage of this name already exists (names must be unique)");
  if (raw.empty()) reader.fail("\"stages\" is empty: a pipeline needs at least one stage");
  // Names and order first, before any model is loaded: a link to an unknown
  // stage, to a busy host stage, or against the order (a cycle, or a stage
  // that runs later).
  std::vector<std::vector<size_t>> reads(raw.size());
  for (size_t k = 0; k < raw.size(); ++k)
    for (const RawLink& link : raw[k].links) {
      if (link.stage.empty()) continue;
      auto it = by_name.find(link.stage);
      if (it == by_name.end())
        reader.fail_stage(k, raw[k].stage.name, "input '" + link.input + "' links to stage '" + link.stage +
                                                    "', which does not exist");
      if (!raw[it->second].stage.is_model())
        reader.fail_stage(k, raw[k].stage.name, "input '" + link.input + "' links to stage '" + link.stage +
                                                    "', a busy host stage, which has no outputs");
      reads[k].push_back(it->second);
    }
  // A cycle: depth-first search over "reads" edges.
  std::vector<int> state(raw.size(), 0);  // 0 new, 1 on the stack, 2 done
  std::vector<size_t> stack;
  std::function<void(size_t)> visit = [&](size_t k) {
    state[k] = 1;
    stack.push_back(k);
    for (size_t from : reads[k]) {
      if (state[from] == 1) {
        std::string cycle;
        auto start = std::find(stack.begin(), stack.end(), from);
        for (auto s = start; s != stack.end(); ++s) cycle += raw[*s].stage.name + " <- ";
        cycle += raw[from].stage.name;
        reader.fail_stage(k, raw[k].stage.name, "its links form a cycle (" + cycle + ", each reading the next)");
      }
      if (state[from] == 0) visit(from);
    }
    stack.pop_back();
    state[k] = 2;
  };
  for (size_t k = 0; k < raw.size(); ++k)
    if (state[k] == 0) visit(k);
  for (size_t k = 0; k < raw.size(); ++k)
    for (size_t from : reads[k])
      if (from >= k)
        reader.fail_stage(k, raw[k].stage.name, "reads stage '" + raw[from].stage.name +
                                                    "', which runs after it (stages run in the order listed)");

  // Then the graphs, in order.
  std::vector<Model> models(raw.size());
  int previous_model = -1;
  for (size_t k = 0; k < raw.size(); ++k) {
    PipelineStage stage = raw[k].stage;
    if (!stage.is_model()) {
      spec.stages.push_back(stage);
      continue;
    }
    const Model declared = load_stage_model(reader, k, stage, stage.load);
    std::vector<std::string> input_names;
    for (int id : declared.graph.inputs) input_names.push_back(graph_tensor(declared, id).name);
    for (const RawLink& link : raw[k].links)
      if (std::find(input_names.begin(), input_names.end(), link.input) == input_names.end())
        reader.fail_stage(k, stage.name, "\"inputs\" names '" + link.input + "', which is not a graph input of " +
                                             stage.model);
    // Each graph input's source.
    for (size_t i = 0; i < input_names.size(); ++i) {
      StageInputSource src;
      src.input = input_names[i];
      if (raw[k].positional) {
        if (previous_model >= 0 && i < spec.stages[size_t(previous_model)].output_names.size()) {
          src.from_stage = previous_model;
          src.from_output = int(i);
        }
      } else {
        for (const RawLink& link : raw[k].links) {
          if (link.input != src.input || link.stage.empty()) continue;
          const size_t from = by_name.at(link.stage);
          const PipelineStage& source_stage = spec.stages[from];
          src.from_stage = int(from);
          if (link.output.empty()) {
            src.from_output = int(i);
            if (i >= source_stage.output_names.size())
              reader.fail_stage(k, stage.name, "input '" + src.input + "' (position " + std::to_string(i) +
                                                   ") links to stage '" + link.stage + "' by position, which has only " +
                                                   std::to_string(source_stage.output_names.size()) + " outputs");
          } else {
            auto o = std::find(source_stage.output_names.begin(), source_stage.output_names.end(), link.output);
            if (o == source_stage.output_names.end()) {
              std::string list;
              for (const auto& n : source_stage.output_names) list += (list.empty() ? "" : ", ") + n;
              reader.fail_stage(k, stage.name, "input '" + src.input + "' links to output '" + link.output +
                                                   "' of stage '" + link.stage + "', which has no such output (its outputs: " +
                                                   list + ")");
            }
            src.from_output = int(o - source_stage.output_names.begin());
          }
        }
      }
      if (src.from_stage >= 0)
        src.output_name = spec.stages[size_t(src.from_stage)].output_names[size_t(src.from_output)];
      stage.inputs.push_back(src);
    }
    // A linked input the user did not shape takes its source output's shape,
    // so a symbolic dim (batch) follows the stage that feeds it.
    for (const StageInputSource& src : stage.inputs) {
      if (src.from_stage < 0 || stage.load.input_shapes.count(src.input)) continue;
      const Model& from = models[size_t(src.from_stage)];
      const Shape& shape = graph_tensor(from, from.graph.outputs[size_t(src.from_output)]).shape;
      if (shape.fully_known()) stage.load.input_shapes[src.input] = dims_of(shape);
    }
    Model bound;
    try {
      bound = load_model(stage.model, stage.load);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Runtime) throw;
      reader.fail_stage(k, stage.name, "incompatible shapes between stages: binding its linked inputs to the shapes of "
                                       "the outputs that feed them fails: " + e.message() +
                                           (raw[k].positional ? " (linked by position: name the links in \"inputs\")" : ""));
    }
    for (size_t i = 0; i < stage.inputs.size(); ++i) {
      const StageInputSource& src = stage.inputs[i];
      if (src.from_stage < 0) continue;
      const Model& from = models[size_t(src.from_stage)];
      const Tensor& out = graph_tensor(from, from.graph.outputs[size_t(src.from_output)]);
      const Tensor& in = graph_tensor(bound, bound.graph.inputs[i]);
      const std::string link = "'" + spec.stages[size_t(src.from_stage)].name + "." + out.name + "' -> '" + in.name + "'";
      if (out.dtype != in.dtype)
        reader.fail_stage(k, stage.name, std::string("incompatible dtypes between stages: ") + link + " carries " +
                                             dtype_name(out.dtype) + ", the input is " + dtype_name(in.dtype));
      bool same = out.shape.rank_known && in.shape.rank_known && out.shape.dims.size() == in.shape.dims.size();
      for (size_t d = 0; same && d < out.shape.dims.size(); ++d)
        same = out.shape.dims[d].value == in.shape.dims[d].value;
      if (!same || !out.shape.fully_known())
        reader.fail_stage(k, stage.name, "incompatible shapes between stages: " + link + " carries " +
                                             out.shape.to_string() + ", the input is " + in.shape.to_string() +
                                             (raw[k].positional ? " (linked by position: name the links in \"inputs\")" : ""));
    }
    for (int id : bound.graph.outputs) {
      stage.output_names.push_back(graph_tensor(bound, id).name);
      stage.output_shapes.push_back(graph_tensor(bound, id).shape.to_string());
    }
    models[k] = std::move(bound);
    previous_model = int(k);
    spec.stages.push_back(stage);
  }
  return spec;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

PipelineSpec parse_pipeline_text(const std::string& text, const std::string& origin, const std::string& folder) {
  const Json doc = parse_json_document(text, origin);
  Reader reader(origin, folder);
  if (!doc.is_object()) reader.fail("a pipeline description is an object {\"stages\": [...]}");
  reader.check_keys(doc, {"version", "device", "stages"}, "the description");
  if (const Json* version = json_field_if(doc, "version"))
    if (!version->is_number_integer() || version->get<int64_t>() != 1)
      reader.fail("\"version\" must be 1 (the only version of the description, docs/pipeline.md)");
  std::string device = "cpu";
  if (const Json* d = json_field_if(doc, "device")) {
    if (!d->is_string() || (*d != "cpu" && *d != "cuda")) reader.fail("\"device\" must be \"cpu\" or \"cuda\"");
    device = d->get<std::string>();
  }
  const Json* stages = json_field_if(doc, "stages");
  if (!stages || !stages->is_array()) reader.fail("\"stages\" must be an array of stages");
  std::vector<RawStage> raw;
  for (size_t k = 0; k < stages->size(); ++k) raw.push_back(reader.read_stage((*stages)[k], k, device));
  return resolve(reader, std::move(raw), origin);
}

PipelineSpec read_pipeline_file(const std::string& path) {
  const Json doc = read_json_file(path);  // the file's errors (missing, empty, not JSON) name it
  return parse_pipeline_text(doc.dump(), path, folder_of(path));
}

PipelineSpec chain_pipeline(const std::vector<std::string>& models, const LoadOptions& bindings,
                            const std::string& device, double host_busy_seconds) {
  Reader reader("chain of " + std::to_string(models.size()) + " models", "");
  std::vector<RawStage> raw;
  for (size_t m = 0; m < models.size(); ++m) {
    if (m > 0 && host_busy_seconds > 0) {
      RawStage host;
      host.stage.kind = StageKind::HostBusy;
      host.stage.name = "host" + std::to_string(m);
      host.stage.busy_seconds = host_busy_seconds;
      raw.push_back(host);
    }
    RawStage s;
    s.stage.model = models[m];
    s.stage.device = device;
    std::string stem = models[m].substr(models[m].rfind('/') + 1);
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".onnx") == 0) stem.resize(stem.size() - 5);
    std::replace(stem.begin(), stem.end(), '.', '_');
    s.stage.name = stem.empty() ? "stage" + std::to_string(m) : stem;
    for (const RawStage& r : raw)
      if (r.stage.name == s.stage.name) s.stage.name += "_" + std::to_string(m);
    s.stage.load = bindings;
    // An --input binds the model that has that input; the others ignore it.
    Model declared = load_stage_model(reader, raw.size(), s.stage, LoadOptions{});
    std::map<std::string, std::vector<int64_t>> own;
    for (int id : declared.graph.inputs) {
      const std::string& name = declared.graph.tensors[size_t(id)].name;
      if (bindings.input_shapes.count(name)) own[name] = bindings.input_shapes.at(name);
    }
    s.stage.load.input_shapes = own;
    raw.push_back(s);
  }
  for (const auto& [name, dims] : bindings.input_shapes) {
    bool used = false;
    for (const RawStage& r : raw) used = used || r.stage.load.input_shapes.count(name);
    if (!used) throw Error(ErrorKind::Usage, "--input " + name + ": no model of the chain has an input of that name");
  }
  std::string source;
  for (const auto& m : models) source += (source.empty() ? "" : " -> ") + m;
  return resolve(reader, std::move(raw), source);
}

}  // namespace modelstat
