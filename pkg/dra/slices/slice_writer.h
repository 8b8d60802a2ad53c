// The publisher's writes as HTTP: creates, updates and deletes of this node's slices, the
// capability probe's dry-run create, and this node as the owner of every slice created
// (when the node object is deleted, by an autoscaler, the garbage collector deletes its
// slices). It sends and reads; what an answer means is the publisher's.
//
// Threads: the publisher's writer thread, except Shutdown (any thread).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pkg/dra/slices/slice_reconciler.h"
#include "pkg/kube/api_transport.h"

namespace rdmadp::dra {

inline constexpr std::string_view kSlicesPath = "/apis/resource.k8s.io/v1/resourceslices";

// `s` as one component of a URL (RFC 3986: unreserved characters stay).
std::string PercentEncode(std::string_view s);
// The `message` of a Status answer, else the body's first 200 bytes.
std::string StatusMessage(const std::string& body);
// "create", "update", "delete": the RBAC verb, and the label of the write metrics.
std::string_view Verb(SliceWrite::Kind kind);

class SliceWriter {
 public:
  using Answer = absl::StatusOr<kube::HttpResponse>;

  SliceWriter(std::unique_ptr<kube::ApiTransport> client, std::string node_name);

  // Reads this node's object for the owner reference, the first time it is called only.
  // Returns the problem when that failed (slices then go without it).
  std::optional<std::string> ReadOwnerOnce();
  // One write: a create carries the owner reference once it is known; a delete carries the
  // resourceVersion it was planned for as a precondition.
  Answer Send(const SliceWrite& write);
  // The capability probe's dry-run create.
  Answer Probe(const nlohmann::json& probe_slice);
  // Ends a request in flight, and every later one, at once.
  void Shutdown() { client_->Shutdown(); }

 private:
  const std::unique_ptr<kube::ApiTransport> client_;
  const std::string node_name_;
  nlohmann::json owner_;  // null until the node is read
  bool owner_read_ = false;
};

// The one-line problem of a write that failed.
std::string WriteProblem(const SliceWrite& write, const SliceWriter::Answer& answer);

}  // namespace rdmadp::dra
