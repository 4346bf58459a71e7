// Loading: map the file, strip weight payloads, parse, then the stages of
// load_stages.hpp in order (validate opsets and domains, order the graph,
// bind input dims, infer shapes) and convert to modelstat's IR.
#include <fcntl.h>
#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "analyzer/loader/load_stages.hpp"
#include "analyzer/loader/loader.hpp"
#include "analyzer/loader/onnx_ir.hpp"
#include "analyzer/stage_timer.hpp"
#include "modelstat/error.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat::loader {

namespace {

// Payloads up to this size stay in the parsed model: shape inference needs
// the values of shape constants, scales and axes. Weights are far larger.
constexpr size_t kKeepPayloadBytes = 4096;

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw Error(ErrorKind::Input, std::string("cannot open model: ") + std::strerror(errno), path);
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::Input, "is a directory, not an ONNX model file", path);
    if (!S_ISREG(st.st_mode)) throw Error(ErrorKind::Input, "is not a regular file", path);
    if (st.st_size == 0) throw Error(ErrorKind::Input, "empty file: not a valid ONNX model", path);
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(ErrorKind::Input, std::string("cannot open model: ") + std::strerror(errno), path);
    size_ = size_t(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      ::close(fd_);
      throw Error(ErrorKind::Runtime, std::string("cannot map model: ") + std::strerror(errno), path);
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ~MappedFile() {
    ::munmap(const_cast<uint8_t*>(data_), size_);
    ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

namespace {

std::atomic<int64_t> g_sources_read{0};

}  // namespace

namespace {

std::shared_ptr<ModelSource> read_source(const uint8_t* data, size_t size, const std::string& base_dir,
                                         const std::string& display_path) {
  try {
    if (size == 0) throw Error(ErrorKind::Input, "empty file: not a valid ONNX model");
    auto source = std::make_shared<ModelSource>();
    source->stripped = strip_tensor_payloads(data, size, kKeepPayloadBytes);
    source->file_size = int64_t(size);
    source->base_dir = base_dir;
    source->display_path = display_path;
    ++g_sources_read;
    return source;
  } catch (Error& e) {
    if (e.file().empty() && !display_path.empty())
      throw Error(e.kind(), e.message(), display_path, e.node(), e.op());
    throw;
  }
}

std::shared_ptr<ModelSource> read_file_source(const std::string& path) {
  MappedFile file(path);
  std::error_code ec;
  std::string base = std::filesystem::absolute(std::filesystem::path(path), ec).parent_path().string();
  if (base.empty()) base = ".";
  return read_source(file.data(), file.size(), base, path);
}

// bind_model_source; with `parsed_bytes`, the source's bytes, read for this
// one load, are freed as soon as they are parsed: the later stages reuse
// their memory (a 100k-node graph's 11 MB: 2,800 fewer page faults).
Model bind_source(const ModelSource& source, const LoadOptions& options, std::string* parsed_bytes);

}  // namespace

std::shared_ptr<const ModelSource> read_model_bytes(const uint8_t* data, size_t size, const std::string& base_dir,
                                                    const std::string& display_path) {
  return read_source(data, size, base_dir, display_path);
}

int64_t model_sources_read() { return g_sources_read.load(); }

Model bind_model_source(const ModelSource& source, const LoadOptions& options) {
  return bind_source(source, options, nullptr);
}

namespace {

Model bind_source(const ModelSource& source, const LoadOptions& options, std::string* parsed_bytes) {
  const std::string& display_path = source.display_path;
  try {
    StageTimer timer;
    const std::string& stripped = source.stripped.bytes;
    // On an arena: a 100k-node graph is 100k small messages, allocated and
    // freed in bulk instead of one by one.
    google::protobuf::Arena arena;
    onnx::ModelProto& proto = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    if (stripped.size() > size_t(INT32_MAX) || !proto.ParseFromArray(stripped.data(), int(stripped.size())))
      throw Error(ErrorKind::Input, "not a valid ONNX file: protobuf parsing failed (truncated or not a model)");
    if (parsed_bytes) std::string().swap(*parsed_bytes);
    if (!proto.has_graph())
      throw Error(ErrorKind::Input, "not a valid ONNX file: no graph (is this an ONNX model?)");
    if (proto.ir_version() <= 0)
      throw Error(ErrorKind::Input, "not a valid ONNX file: missing or invalid ir_version");
    // Bound before anything reorders nodes; keyed by address from here on.
    const PayloadTable payloads = bind_payload_table(proto, source.stripped.tensors);

    Model model;
    model.path = display_path;
    model.file_size_bytes = source.file_size;
    model.ir_version = proto.ir_version();
    model.producer_name = proto.producer_name();
    model.producer_version = proto.producer_version();
    for (const auto& o : proto.opset_import()) model.opsets.push_back({normalize_domain(o.domain()), o.version()});

    timer.lap("parse protobuf");
    validate_opsets(proto, options, model.notices);
    check_and_order_graph(*proto.mutable_graph());
    timer.lap("validate + order");
    // A node has inference when the registry shape inference asks hands out a
    // schema for it (ONNX's, or one made from a record's shape rule).
    bind_inputs(*proto.mutable_graph(), options, model.notices, [&model](const onnx::NodeProto& n) {
      const std::string domain = normalize_domain(n.domain());
      int version = 0;
      for (const auto& o : model.opsets)
        if (o.domain == domain) version = int(o.version);
      return guarded_registry()->GetSchema(n.op_type(), version, domain) != nullptr;
    });
    timer.lap("bind inputs");
    InferredTypes inferred;
    infer_shapes(proto, options, model.notices, model.unknown_shape_cause, &inferred);
    timer.lap("shape inference + folding");

    ExternalDataPolicy policy;
    policy.base_dir = source.base_dir;
    policy.notices = &model.notices;
    policy.payloads = &payloads;
    policy.branches = &options.branches;
    policy.trip_counts = &options.trip_counts;
    policy.observed_branches = &options.observed_branches;
    policy.observed_trip_counts = &options.observed_trip_counts;
    model.graph = build_graph(proto.graph(), policy, 0, nullptr, &inferred);
    for (const auto& [name, then] : options.branches)
      if (!policy.control_names_used.count(name))
        model.notices.push_back("--branch " + name + " matches no If node");
    for (const auto& [name, trips] : options.trip_counts)
      if (!policy.control_names_used.count(name))
        model.notices.push_back("--trip-count " + name + " matches no Loop node");
    timer.lap("build IR");
    return model;
  } catch (Error& e) {
    if (e.file().empty() && !display_path.empty())
      throw Error(e.kind(), e.message(), display_path, e.node(), e.op());
    throw;
  }
}

}  // namespace

Model load_model_bytes(const uint8_t* data, size_t size, const LoadOptions& options, const std::string& base_dir,
                       const std::string& display_path) {
  StageTimer timer;
  const std::shared_ptr<ModelSource> source = read_source(data, size, base_dir, display_path);
  timer.lap("strip payloads");
  return bind_source(*source, options, &source->stripped.bytes);
}

std::shared_ptr<const ModelSource> read_model_file(const std::string& path) { return read_file_source(path); }

Model load_model_file(const std::string& path, const LoadOptions& options) {
  const std::shared_ptr<ModelSource> source = read_file_source(path);
  return bind_source(*source, options, &source->stripped.bytes);
}

}  // namespace modelstat::loader
