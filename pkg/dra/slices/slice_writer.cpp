#include "pkg/dra/slices/slice_writer.h"

#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {

using kube::Obj;
using kube::Str;

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string StatusMessage(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  const std::string message = Str(j, "message");
  return message.empty() ? body.substr(0, 200) : message;
}

std::string_view Verb(SliceWrite::Kind kind) {
  switch (kind) {
    case SliceWrite::Kind::kCreate:
      return "create";
    case SliceWrite::Kind::kUpdate:
      return "update";
    case SliceWrite::Kind::kDelete:
      return "delete";
  }
  return "?";
}

SliceWriter::SliceWriter(std::unique_ptr<kube::ApiTransport> client, std::string node_name)
    : client_(std::move(client)), node_name_(std::move(node_name)) {}

std::optional<std::string> SliceWriter::ReadOwnerOnce() {
  if (owner_read_) return std::nullopt;
  owner_read_ = true;
  auto r = client_->Call("GET", Cat("/api/v1/nodes/", PercentEncode(node_name_)));
  auto node =
      r.ok() && r->code == 200 ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  const std::string uid = Str(Obj(node, "metadata"), "uid");
  if (uid.empty()) {
    return Cat("reading Node ", node_name_, " for the slices' owner reference: ",
               !r.ok() ? std::string(r.status().message()) : Cat("HTTP ", r->code),
               "; slices are published without it (they outlive a deleted node: grant "
               "\"get\" on nodes, images/overlays/dra)");
  }
  // As the reference helper in k8s.io/dynamic-resource-allocation/resourceslice does.
  owner_ = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"name", node_name_},
            {"uid", uid},
            {"controller", true}};
  return std::nullopt;
}

SliceWriter::Answer SliceWriter::Send(const SliceWrite& w) {
  switch (w.kind) {
    case SliceWrite::Kind::kCreate: {
      nlohmann::json object = w.object;
      if (!owner_.is_null()) object["metadata"]["ownerReferences"] = {owner_};
      return client_->Call("POST", std::string(kSlicesPath), object.dump());
    }
    case SliceWrite::Kind::kUpdate:
      return client_->Call("PUT", Cat(kSlicesPath, "/", w.name), w.object.dump());
    case SliceWrite::Kind::kDelete: {
      const nlohmann::json options = {{"kind", "DeleteOptions"},
                                      {"apiVersion", "v1"},
                                      {"preconditions", {{"resourceVersion", w.resource_version}}}};
      return client_->Call("DELETE", Cat(kSlicesPath, "/", w.name), options.dump());
    }
  }
  return absl::InternalError("unknown write kind");
}

SliceWriter::Answer SliceWriter::Probe(const nlohmann::json& probe_slice) {
  return client_->Call("POST", Cat(kSlicesPath, "?dryRun=All"), probe_slice.dump());
}

std::string WriteProblem(const SliceWrite& w, const SliceWriter::Answer& r) {
  const std::string what = w.kind == SliceWrite::Kind::kCreate   ? "creating"
                           : w.kind == SliceWrite::Kind::kUpdate ? "updating"
                                                                 : "deleting";
  if (!r.ok()) return Cat(what, " a ResourceSlice: ", std::string(r.status().message()));
  return Cat(what, " ResourceSlice ", w.name.empty() ? "(new)" : w.name, ": HTTP ", r->code, ": ",
             StatusMessage(r->body),
             r->code == 403 ? Cat(" (grant the DaemonSet's service account \"", Verb(w.kind),
                                  "\" on resourceslices.resource.k8s.io: images/overlays/dra)")
                            : "");
}

}  // namespace rdmadp::dra
