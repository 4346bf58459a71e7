// Loading: map the file, strip weight payloads, parse, then the stages of
// load_stages.hpp in order (validate opsets and domains, order the graph,
// bind input dims, infer shapes) and convert to modelstat's IR.
#include <fcntl.h>
#include <google/protobuf/arena.h>
#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#endif
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
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

// The nodes of a serialized ModelProto's main graph (ModelProto.graph = 7,
// GraphProto.node = 1), reading only the framing of the two levels; 0 on
// anything it does not follow (an estimate, the parse checks the bytes).
size_t count_main_graph_nodes(const std::string& bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto varint = [](const uint8_t*& at, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && at < end; shift += 7) {
      const uint8_t b = *at++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  // Moves `at` past the field whose tag was read; false where it cannot.
  const auto skip = [&varint](const uint8_t*& at, const uint8_t* end, uint64_t tag, const uint8_t** data) {
    uint64_t v = 0;
    switch (tag & 7) {
      case 0: return varint(at, end, v);
      case 1: at += 8; return at <= end;
      case 5: at += 4; return at <= end;
      case 2:
        if (!varint(at, end, v) || v > uint64_t(end - at)) return false;
        if (data) *data = at;
        at += v;
        return true;
      default: return false;
    }
  };
  const uint8_t* end = p + bytes.size();
  size_t nodes = 0;
  for (const uint8_t* at = p; at < end;) {
    uint64_t tag = 0;
    const uint8_t* graph = nullptr;
    if (!varint(at, end, tag) || !skip(at, end, tag, &graph)) return nodes;
    if (tag != (7 << 3 | 2)) continue;
    for (const uint8_t* g = graph; g < at;) {
      uint64_t t = 0;
      if (!varint(g, at, t) || !skip(g, at, t, nullptr)) return nodes;
      nodes += t == (1 << 3 | 2);
    }
  }
  return nodes;
}

// LoadOptions::prefault_heap: maps `bytes` of fresh heap in one call (the
// free top of the heap, where the next allocations are carved: the parse's
// and the IR build's; the process frees little until it exits). Linux (5.14+,
// MADV_POPULATE_WRITE) with glibc; elsewhere, or where the call fails, the
// pages fault in as used.
void prefault_heap(size_t bytes) {
#if defined(__linux__) && defined(__GLIBC__)
  constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE, Linux 5.14
  constexpr size_t kPage = 4096;
  bytes = std::min(bytes, size_t(1) << 30);
  if (bytes < (size_t(1) << 20)) return;
  // A block larger than the heap's free top (and under the mmap threshold)
  // makes malloc grow the heap by it plus the pad; freed, it leaves a free
  // top of at least `bytes` where the next allocations are carved.
  mallopt(M_TOP_PAD, int(bytes));
  void* block = std::malloc(size_t(16) << 20);
  const auto at = reinterpret_cast<uintptr_t>(block);
  std::free(block);
  mallopt(M_TOP_PAD, 128 << 10);  // glibc's default again
  const uintptr_t begin = (at + kPage - 1) & ~uintptr_t(kPage - 1);
  const auto brk_end = reinterpret_cast<uintptr_t>(sbrk(0));
  if (at == 0 || brk_end == uintptr_t(-1) || begin >= brk_end) return;
  const uintptr_t end = std::min(brk_end & ~uintptr_t(kPage - 1), begin + bytes);
  if (begin < end) (void)madvise(reinterpret_cast<void*>(begin), end - begin, kPopulateWrite);
#else
  (void)bytes;
#endif
}

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
    // What the later stages fill, the parse, the IR and the analysis
    // together (the 100k-node chain and branched graphs: ~900 bytes a node
    // plus ~1.7 bytes a stripped byte; the table's text, 5-10 MB more, faults
    // in as written). A page mapped here and never used costs about as much
    // as a fault (~1.5 us against ~2 us on a VM): short rather than long.
    if (options.prefault_heap) prefault_heap(count_main_graph_nodes(stripped) * 900 + stripped.size() * 17 / 10);
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
