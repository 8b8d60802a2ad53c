// test/support/fake_slice_api.h: the in-process fake of the API server's slice endpoints
// answers as test/manifests/fake_apiserver.mjs does (revisions, conflicts, the watch window,
// injected faults, outages), and at the times of the clock the test holds: a watch ends at
// its timeoutSeconds, a silent one at the transport's idle limit, a held answer at Release().
#include "test/support/fake_slice_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/text/cat.h"
#include "test/support/manual_clock.h"

namespace rdmadp::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

json Slice(const std::string& name, const std::string& node = "n1",
           const std::string& driver = "rdma.example.com") {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"nodeName", node},
            {"driver", driver},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", json::array()}}}};
}

// The answer of a call that reaches the server.
kube::HttpResponse Answer(absl::StatusOr<kube::HttpResponse> r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : kube::HttpResponse{};
}

json Body(const kube::HttpResponse& r) { return json::parse(r.body, nullptr, false); }

// A Stream() on a thread of its own, one of the clock's participants (the test's clock
// counts it), read after clock.Settle(). Its thread leaves the participants as its Stream()
// returns. The transport is shut down at the end, so a test that failed early never hangs.
class StreamThread {
 public:
  StreamThread(ManualClock& clock, kube::ApiTransport& transport, std::string path)
      : clock_(clock), transport_(transport), thread_([this, p = std::move(path)] { Run(p); }) {}
  ~StreamThread() {
    transport_.Shutdown();
    Join();
  }
  StreamThread(const StreamThread&) = delete;
  StreamThread& operator=(const StreamThread&) = delete;

  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::vector<json> events() const {
    std::vector<json> out;
    for (const std::string& line : lines()) out.push_back(json::parse(line, nullptr, false));
    return out;
  }
  bool opened() const {
    std::lock_guard lock(mu_);
    return opened_;
  }
  bool done() const {
    std::lock_guard lock(mu_);
    return done_;
  }
  absl::StatusOr<long> result() const {
    std::lock_guard lock(mu_);
    return result_;
  }
  // The HTTP code it returned, or -1 for an error (or still running).
  long code() const {
    const auto r = result();
    return r.ok() ? *r : -1;
  }
  ManualClock::time_point ended_at() const {
    std::lock_guard lock(mu_);
    return ended_at_;
  }

 private:
  void Run(const std::string& path) {
    auto got = transport_.Stream(
        path,
        [this](std::string_view line) {
          std::lock_guard lock(mu_);
          lines_.emplace_back(line);
          return true;
        },
        [this] {
          std::lock_guard lock(mu_);
          opened_ = true;
        });
    std::lock_guard lock(mu_);
    result_ = std::move(got);
    ended_at_ = clock_.Now();
    done_ = true;
    clock_.AddParticipants(-1);  // it waits on the clock no more
  }

  ManualClock& clock_;
  kube::ApiTransport& transport_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  bool opened_ = false;
  bool done_ = false;
  absl::StatusOr<long> result_ = absl::UnknownError("running");
  ManualClock::time_point ended_at_;
  std::thread thread_;  // last: it starts once the rest is built
};

// A Call() on a thread of its own (a held answer), as StreamThread.
class CallThread {
 public:
  CallThread(ManualClock& clock, kube::ApiTransport& transport, std::string method,
             std::string path, std::string body)
      : clock_(clock),
        transport_(transport),
        thread_([this, m = std::move(method), p = std::move(path), b = std::move(body)] {
          auto got = transport_.Call(m, p, b);
          std::lock_guard lock(mu_);
          answer_ = std::move(got);
          clock_.AddParticipants(-1);
        }) {}
  ~CallThread() {
    transport_.Shutdown();
    Join();
  }
  CallThread(const CallThread&) = delete;
  CallThread& operator=(const CallThread&) = delete;

  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::optional<absl::StatusOr<kube::HttpResponse>> answer() const {
    std::lock_guard lock(mu_);
    return answer_;
  }

 private:
  ManualClock& clock_;
  kube::ApiTransport& transport_;
  mutable std::mutex mu_;
  std::optional<absl::StatusOr<kube::HttpResponse>> answer_;
  std::thread thread_;  // last
};

TEST(FakeSliceApi, ANodeIsAnsweredWithTheUidOfItsName) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  const auto r = Answer(t->Call("GET", "/api/v1/nodes/n1"));
  EXPECT_EQ(r.code, 200);
  const json node = Body(r);
  EXPECT_EQ(node["kind"], "Node");
  EXPECT_EQ(node["metadata"]["name"], "n1");
  // MD5("n1"), as fake_apiserver.mjs answers it (e2e/slice_publisher_test.cpp reads it).
  EXPECT_EQ(node["metadata"]["uid"], "c82561ec215a6e31807ceedf3b3bd25e");
}

TEST(FakeSliceApi, AListHoldsTheSelectedSlicesAtTheServersRevision) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("a", "n1").dump())).code, 201);
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("b", "n2").dump())).code, 201);
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("c", "n1", "other.example.com").dump())).code,
            201);
  const auto r = Answer(t->Call(
      "GET", Cat(kSlices, "?fieldSelector=spec.nodeName%3Dn1%2Cspec.driver%3Drdma.example.com")));
  EXPECT_EQ(r.code, 200);
  const json list = Body(r);
  EXPECT_EQ(list["kind"], "ResourceSliceList");
  EXPECT_EQ(list["metadata"]["resourceVersion"], "103");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(Body(Answer(t->Call("GET", kSlices)))["items"].size(), 3u);  // no selector: all
  EXPECT_EQ(api.stats().lists, 2u);
}

TEST(FakeSliceApi, CreateUpdateAndDeleteEachMakeARevision) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  EXPECT_EQ(api.resource_version(), "100");
  const auto created = Answer(t->Call("POST", kSlices, Slice("a").dump()));
  EXPECT_EQ(created.code, 201);
  json a = Body(created);
  EXPECT_EQ(a["metadata"]["resourceVersion"], "101");
  EXPECT_EQ(a["metadata"]["generation"], 1);
  const std::string uid = a["metadata"]["uid"].get<std::string>();
  EXPECT_EQ(uid.size(), 36u);
  // The clock's time as Unix time (ManualClock starts 1000 h after its epoch).
  EXPECT_EQ(a["metadata"]["creationTimestamp"], "1970-02-11T16:00:00.000Z");
  EXPECT_EQ(api.Slices().at("a"), a) << "what is stored is what was answered";

  a["spec"]["pool"]["generation"] = 2;
  auto updated = Answer(t->Call("PUT", Cat(kSlices, "/a"), a.dump()));
  EXPECT_EQ(updated.code, 200);
  a = Body(updated);
  EXPECT_EQ(a["metadata"]["resourceVersion"], "102");
  EXPECT_EQ(a["metadata"]["generation"], 2);
  EXPECT_EQ(a["metadata"]["uid"], uid);
  EXPECT_EQ(a["metadata"]["creationTimestamp"], "1970-02-11T16:00:00.000Z");

  // Without a resourceVersion an update is unconditional; the generation still moves.
  a["metadata"].erase("resourceVersion");
  updated = Answer(t->Call("PUT", Cat(kSlices, "/a"), a.dump()));
  EXPECT_EQ(updated.code, 200);
  EXPECT_EQ(Body(updated)["metadata"]["resourceVersion"], "103");
  EXPECT_EQ(Body(updated)["metadata"]["generation"], 3);

  const auto deleted = Answer(t->Call("DELETE", Cat(kSlices, "/a")));
  EXPECT_EQ(deleted.code, 200);
  EXPECT_EQ(Body(deleted)["metadata"]["name"], "a");
  EXPECT_EQ(api.resource_version(), "104");
  EXPECT_TRUE(api.Slices().empty());
  const auto s = api.stats();
  EXPECT_EQ(s.writes, 4u);
  EXPECT_EQ(s.creates, 1u);
  EXPECT_EQ(s.updates, 2u);
  EXPECT_EQ(s.deletes, 1u);
  EXPECT_EQ(s.conflicts, 0u);
}

TEST(FakeSliceApi, AnUpdateFromAStaleVersionIsAConflict) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  const json a = Body(Answer(t->Call("POST", kSlices, Slice("a").dump())));
  ASSERT_EQ(a["metadata"]["resourceVersion"], "101");
  EXPECT_EQ(Answer(t->Call("PUT", Cat(kSlices, "/a"), a.dump())).code, 200);
  const auto stale = Answer(t->Call("PUT", Cat(kSlices, "/a"), a.dump()));  // still "101"
  EXPECT_EQ(stale.code, 409);
  EXPECT_EQ(Body(stale)["reason"], "Conflict");
  EXPECT_EQ(api.stats().conflicts, 1u);
  EXPECT_EQ(api.stats().updates, 1u);
  EXPECT_EQ(api.Slices().at("a")["metadata"]["resourceVersion"], "102");
  EXPECT_EQ(api.resource_version(), "102");
}

TEST(FakeSliceApi, AMissingNameIs404AndATakenOne409) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  const auto update = Answer(t->Call("PUT", Cat(kSlices, "/a"), Slice("a").dump()));
  EXPECT_EQ(update.code, 404);
  EXPECT_EQ(Body(update)["reason"], "NotFound");
  EXPECT_EQ(Answer(t->Call("DELETE", Cat(kSlices, "/a"))).code, 404);
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("a").dump())).code, 201);
  const auto again = Answer(t->Call("POST", kSlices, Slice("a").dump()));
  EXPECT_EQ(again.code, 409);
  EXPECT_EQ(Body(again)["reason"], "AlreadyExists");
  EXPECT_EQ(api.stats().creates, 1u);
  EXPECT_EQ(api.stats().conflicts, 0u);
  EXPECT_EQ(api.resource_version(), "101");
}

TEST(FakeSliceApi, AGeneratedNameIsTheBaseAndFiveCharacters) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  json s = Slice("");
  s["metadata"] = {{"generateName", "n1-rdma-"}};
  const json first = Body(Answer(t->Call("POST", kSlices, s.dump())));
  const json second = Body(Answer(t->Call("POST", kSlices, s.dump())));
  const std::string name = first["metadata"]["name"].get<std::string>();
  EXPECT_TRUE(name.starts_with("n1-rdma-")) << name;
  EXPECT_EQ(name.size(), 13u) << name;
  EXPECT_NE(second["metadata"]["name"], name);
  EXPECT_EQ(api.Slices().size(), 2u);
  EXPECT_TRUE(api.Slices().contains(name));
}

TEST(FakeSliceApi, ADryRunStoresNothingAndSendsNoEvent) {
  ManualClock clock(1);  // the watch's thread
  FakeSliceApi api(clock);
  auto writes = api.Connect();
  auto watch = api.Connect();
  const auto probe =
      Answer(writes->Call("POST", Cat(kSlices, "?dryRun=All"), Slice("probe").dump()));
  EXPECT_EQ(probe.code, 201);
  EXPECT_FALSE(Body(probe)["metadata"]["uid"].get<std::string>().empty());
  EXPECT_TRUE(api.Slices().empty());
  EXPECT_EQ(api.resource_version(), "100");
  EXPECT_EQ(api.stats().dry_runs, 1u);
  EXPECT_EQ(api.stats().creates, 0u);
  EXPECT_EQ(api.stats().writes, 0u);

  // A watch from before the probe gets no event of it; the next create's, it does.
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true&resourceVersion=100"));
  clock.Settle();
  EXPECT_TRUE(stream.opened());
  EXPECT_TRUE(stream.lines().empty());
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("a").dump())).code, 201);
  clock.Settle();
  const auto events = stream.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "a");
  watch->Cancel();
  clock.Settle();
  stream.Join();
  EXPECT_EQ(stream.code(), 200);
}

TEST(FakeSliceApi, AWatchReplaysFromItsVersionThenGetsLiveEvents) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto writes = api.Connect();
  auto watch = api.Connect();
  const json a = Body(Answer(writes->Call("POST", kSlices, Slice("a").dump())));   // 101
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("b").dump())).code, 201);   // 102
  EXPECT_EQ(Answer(writes->Call("PUT", Cat(kSlices, "/a"), a.dump())).code, 200);  // 103

  StreamThread stream(
      clock, *watch,
      Cat(kSlices, "?watch=true&resourceVersion=101&fieldSelector=spec.nodeName%3Dn1"));
  clock.Settle();
  auto events = stream.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(events[0]["object"]["metadata"]["resourceVersion"], "102");
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "a");
  EXPECT_EQ(events[1]["object"]["metadata"]["resourceVersion"], "103");

  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("c", "n2").dump())).code, 201);
  EXPECT_EQ(Answer(writes->Call("DELETE", Cat(kSlices, "/b"))).code, 200);
  clock.Settle();
  events = stream.events();
  ASSERT_EQ(events.size(), 3u) << "another node's slice is not selected";
  EXPECT_EQ(events[2]["type"], "DELETED");
  EXPECT_EQ(events[2]["object"]["metadata"]["name"], "b");
  const auto s = api.stats();
  EXPECT_EQ(s.watches_opened, 1u);
  EXPECT_EQ(s.open_watches, 1);
  EXPECT_EQ(s.last_watch_from, "101");

  watch->Cancel();
  clock.Settle();
  stream.Join();
  EXPECT_EQ(stream.code(), 200);
  EXPECT_EQ(api.stats().open_watches, 0);
}

TEST(FakeSliceApi, AWatchFromBeforeACompactionIsExpired) {
  ManualClock clock(0);  // the expired watch ends at once: the test's thread reads it
  FakeSliceApi api(clock);
  auto t = api.Connect();
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("a").dump())).code, 201);
  api.Compact();
  EXPECT_EQ(api.resource_version(), "102");
  std::vector<std::string> lines;
  bool opened = false;
  const auto code = t->Stream(
      Cat(kSlices, "?watch=true&resourceVersion=101"),
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      },
      [&] { opened = true; });
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 200);
  EXPECT_TRUE(opened);
  ASSERT_EQ(lines.size(), 1u);
  const json event = json::parse(lines[0], nullptr, false);
  EXPECT_EQ(event["type"], "ERROR");
  EXPECT_EQ(event["object"]["code"], 410);
  EXPECT_EQ(event["object"]["reason"], "Expired");
  EXPECT_EQ(event["object"]["message"], "too old resource version: 101 (102)");
  EXPECT_EQ(api.Requests().back().code, 200);
  EXPECT_EQ(api.stats().open_watches, 0);
}

TEST(FakeSliceApi, AWipeDeletesBySelectorWithAnEventEach) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto writes = api.Connect();
  auto watch = api.Connect();
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("a", "n1").dump())).code, 201);
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("b", "n1").dump())).code, 201);
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("c", "n2").dump())).code, 201);
  StreamThread stream(
      clock, *watch,
      Cat(kSlices, "?watch=true&resourceVersion=103&fieldSelector=spec.nodeName%3Dn1"));
  clock.Settle();
  EXPECT_TRUE(stream.lines().empty());
  EXPECT_EQ(api.Wipe({{"spec.nodeName", "n1"}}), 2);
  clock.Settle();
  const auto events = stream.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "DELETED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "a");
  EXPECT_EQ(events[1]["type"], "DELETED");
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "b");
  const auto slices = api.Slices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices.contains("c"));
  EXPECT_EQ(api.resource_version(), "105");
  EXPECT_EQ(api.stats().deletes, 0u) << "a delete-collection is not a client's delete";
  EXPECT_EQ(api.stats().writes, 3u);
  watch->Cancel();
  clock.Settle();
}

TEST(FakeSliceApi, AFaultAnswersCountTimesThenTheRouteDoes) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  api.AddFault({.method = "GET", .match = "resourceslices", .code = 500, .count = 2});
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("a").dump())).code, 201) << "another method";
  const auto first = Answer(t->Call("GET", kSlices));
  EXPECT_EQ(first.code, 500);
  EXPECT_EQ(Body(first)["reason"], "InternalError");
  EXPECT_EQ(Body(first)["message"], "injected 500");
  EXPECT_EQ(first.retry_after_seconds, 0);
  EXPECT_EQ(Answer(t->Call("GET", kSlices)).code, 500);
  EXPECT_EQ(Answer(t->Call("GET", kSlices)).code, 200);
  EXPECT_EQ(api.stats().faults_served, 2u);
  EXPECT_EQ(api.stats().lists, 1u) << "only the routed list";
}

TEST(FakeSliceApi, A429FaultCarriesItsRetryAfter) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  api.AddFault({.method = "POST", .match = "", .code = 429, .retry_after = 7});
  const auto throttled = Answer(t->Call("POST", kSlices, Slice("a").dump()));
  EXPECT_EQ(throttled.code, 429);
  EXPECT_EQ(throttled.retry_after_seconds, 7);
  EXPECT_EQ(Body(throttled)["reason"], "TooManyRequests");
  EXPECT_TRUE(api.Slices().empty());

  // A stream's refusal: its body to on_line whole, no on_open, its Retry-After kept.
  api.AddFault({.method = "", .match = "watch=true", .code = 429, .retry_after = 3});
  std::vector<std::string> lines;
  bool opened = false;
  const auto on_line = [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  };
  auto code = t->Stream(Cat(kSlices, "?watch=true"), on_line, [&] { opened = true; });
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 429);
  EXPECT_FALSE(opened);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(json::parse(lines[0], nullptr, false)["code"], 429);
  EXPECT_EQ(t->stream_retry_after_seconds(), 3);
  // Only a 429 carries one.
  api.AddFault({.method = "", .match = "watch=true", .code = 503});
  code = t->Stream(Cat(kSlices, "?watch=true"), on_line);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 503);
  EXPECT_EQ(t->stream_retry_after_seconds(), 0);
  EXPECT_EQ(api.stats().faults_served, 3u);
}

// fake_apiserver.mjs brokenAnswer: a body sent as it is, with the code given; a watch's
// broken body is read as a stream's lines.
TEST(FakeSliceApi, ABrokenAnswerIsSentAsItIs) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  api.AddFault({.method = "GET", .match = "fieldSelector", .code = 200, .body = "<html>"});
  const auto list = Answer(t->Call("GET", Cat(kSlices, "?fieldSelector=x")));
  EXPECT_EQ(list.code, 200);
  EXPECT_EQ(list.body, "<html>");
  api.AddFault({.method = "GET", .match = "watch=true", .code = 200, .body = "a\n\nb\n"});
  std::vector<std::string> lines;
  bool opened = false;
  auto code = t->Stream(
      Cat(kSlices, "?watch=true"),
      [&](std::string_view line) {
        lines.emplace_back(line);
        return true;
      },
      [&] { opened = true; });
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 200);
  EXPECT_TRUE(opened);
  EXPECT_THAT(lines, ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(api.stats().faults_served, 2u);
}

TEST(FakeSliceApi, AnOutageAnswers503AndCutsTheOpenWatches) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true"));
  clock.Settle();
  ASSERT_TRUE(stream.opened());
  api.Outage(true);
  clock.Settle();
  EXPECT_TRUE(stream.done());
  EXPECT_EQ(stream.code(), 200) << "a cut watch ends as RestClient's does";

  const auto refused = Answer(t->Call("GET", kSlices));
  EXPECT_EQ(refused.code, 503);
  EXPECT_EQ(refused.retry_after_seconds, 0) << "fake_apiserver.mjs sends no Retry-After then";
  EXPECT_EQ(Body(refused)["reason"], "ServiceUnavailable");
  EXPECT_EQ(api.Requests().back().code, 503);
  std::vector<std::string> lines;
  const auto code = t->Stream(Cat(kSlices, "?watch=true"), [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  });
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 503);
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_EQ(t->stream_retry_after_seconds(), 0);
  EXPECT_EQ(api.stats().refused, 2u);
  EXPECT_EQ(api.stats().lists, 0u);

  api.Outage(false);
  EXPECT_EQ(Answer(t->Call("GET", kSlices)).code, 200);
}

TEST(FakeSliceApi, DownIsATransportFailureUntilUp) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true"));
  clock.Settle();
  api.Down();
  clock.Settle();
  EXPECT_TRUE(stream.done());
  EXPECT_EQ(stream.code(), 200) << "the open watch is cut";

  const auto r = t->Call("GET", kSlices);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(r.status().message());
  EXPECT_TRUE(message.starts_with("GET /apis/resource.k8s.io/v1/resourceslices: ")) << message;
  EXPECT_NE(message.find("Connection refused"), std::string::npos) << message;
  EXPECT_EQ(api.Requests().back().code, 0) << "logged, never answered";
  const auto s = t->Stream(Cat(kSlices, "?watch=true"), [](std::string_view) { return true; });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(std::string(s.status().message()).starts_with("watch /apis/")) << s.status();

  api.Up();
  EXPECT_EQ(Answer(t->Call("GET", kSlices)).code, 200);
}

TEST(FakeSliceApi, ShortWatchesEndAtOnce) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true"));
  clock.Settle();
  api.ShortWatches(true);  // the open watch ends too
  clock.Settle();
  EXPECT_TRUE(stream.done());
  EXPECT_EQ(stream.code(), 200);

  bool opened = false;
  int lines = 0;
  const auto code = t->Stream(
      Cat(kSlices, "?watch=true"),
      [&](std::string_view) {
        ++lines;
        return true;
      },
      [&] { opened = true; });
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 200);
  EXPECT_TRUE(opened);
  EXPECT_EQ(lines, 0);
  EXPECT_EQ(api.Requests().back().code, 200);
  EXPECT_EQ(api.stats().watches_opened, 2u);
  EXPECT_EQ(api.stats().open_watches, 0);
  EXPECT_EQ(clock.Now(), clock.start());
}

TEST(FakeSliceApi, ABlackHoledWatchEndsAtTheIdleLimitAfterItsLastLine) {
  ManualClock clock(1);
  FakeSliceApi api(clock, 90s);
  auto writes = api.Connect();
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true&allowWatchBookmarks=true"));
  clock.Settle();
  clock.Advance(30s);
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("a").dump())).code, 201);
  clock.Settle();
  ASSERT_EQ(stream.lines().size(), 1u);
  const auto last_line = clock.Now();

  api.BlackHoleWatches(true);
  EXPECT_EQ(Answer(writes->Call("POST", kSlices, Slice("b").dump())).code, 201);
  api.Bookmark();
  clock.Advance(89s);
  EXPECT_FALSE(stream.done());
  EXPECT_EQ(stream.lines().size(), 1u) << "silent: neither the event nor the bookmark";
  EXPECT_EQ(api.stats().open_watches, 1);
  clock.Advance(1s);
  ASSERT_TRUE(stream.done());
  EXPECT_EQ(stream.ended_at() - last_line, 90s);
  const auto result = stream.result();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(std::string(result.status().message()),
            "watch /apis/resource.k8s.io/v1/resourceslices: nothing for 90 s (not even a "
            "bookmark): the connection is dead");
  EXPECT_EQ(api.stats().open_watches, 0);
}

TEST(FakeSliceApi, AWatchEndsAtItsTimeoutSeconds) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true&timeoutSeconds=60"));
  clock.Settle();
  clock.Advance(59s);
  EXPECT_FALSE(stream.done());
  clock.Advance(1s);
  ASSERT_TRUE(stream.done());
  EXPECT_EQ(stream.code(), 200);
  EXPECT_EQ(stream.ended_at() - clock.start(), 60s);
  const auto requests = api.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].t, clock.start());
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].code, 200);
}

TEST(FakeSliceApi, AHeldWriteIsStoredAndSentBeforeItsAnswerComesAtRelease) {
  ManualClock clock(1);  // the watch's thread
  FakeSliceApi api(clock);
  auto writes = api.Connect();
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true"));
  clock.Settle();
  api.Hold();
  clock.AddParticipants(1);  // the held call's thread
  CallThread create(clock, *writes, "POST", kSlices, Slice("a").dump());
  clock.Settle();
  EXPECT_FALSE(create.answer().has_value()) << "answered while held";
  EXPECT_EQ(api.Slices().size(), 1u) << "stored before its answer";
  auto events = stream.events();
  ASSERT_EQ(events.size(), 1u) << "its event sent before its answer";
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(api.stats().held, 1u);
  EXPECT_EQ(api.Requests().back().method, "POST");
  EXPECT_EQ(api.Requests().back().code, 0) << "not answered yet";
  clock.Advance(5s);
  EXPECT_FALSE(create.answer().has_value());

  api.Release();
  clock.Settle();
  create.Join();
  const auto answer = create.answer();
  ASSERT_TRUE(answer.has_value());
  const auto r = Answer(*answer);
  EXPECT_EQ(r.code, 201);
  EXPECT_EQ(Body(r)["metadata"]["resourceVersion"], "101");
  EXPECT_EQ(api.stats().held, 0u);
  EXPECT_EQ(api.Requests().back().code, 201);
  EXPECT_EQ(api.Requests().back().t, clock.start()) << "logged at its arrival";
  watch->Cancel();
  clock.Settle();
}

// The client's own timeout still runs while the server holds its answer (RestClient's
// CURLOPT_TIMEOUT, 20 s by default): the write is stored, the caller hears an error.
TEST(FakeSliceApi, AHeldAnswerEndsAtTheCallersTimeout) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto writes = api.Connect();
  api.Hold();
  CallThread create(clock, *writes, "POST", kSlices, Slice("a").dump());
  clock.Settle();
  clock.Advance(kube::kCallTimeout - 1ms);
  EXPECT_FALSE(create.answer().has_value());
  clock.Advance(1ms);
  create.Join();
  const auto answer = create.answer();
  ASSERT_TRUE(answer.has_value());
  ASSERT_FALSE(answer->ok());
  EXPECT_EQ(answer->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(answer->status().message()).find("timed out"), std::string::npos)
      << answer->status();
  EXPECT_EQ(api.Slices().size(), 1u);
  EXPECT_EQ(api.stats().held, 0u);
  EXPECT_EQ(api.Requests().back().code, 0) << "never answered";
}

TEST(FakeSliceApi, CancelEndsABlockedStreamAndShutdownEveryLaterCall) {
  ManualClock clock(1);
  FakeSliceApi api(clock);
  auto watch = api.Connect();
  StreamThread stream(clock, *watch, Cat(kSlices, "?watch=true"));
  clock.Settle();
  ASSERT_TRUE(stream.opened());
  watch->Cancel();
  clock.Settle();
  stream.Join();
  EXPECT_EQ(stream.code(), 200) << "as RestClient's cancelled 200 stream";
  EXPECT_EQ(clock.Now(), clock.start()) << "at once, no time passed";

  watch->ResetCancel();
  EXPECT_EQ(Answer(watch->Call("GET", kSlices)).code, 200);

  watch->Shutdown();
  watch->ResetCancel();  // cannot undo a Shutdown
  const size_t sent = api.Requests().size();
  bool opened = false;
  const auto code = watch->Stream(
      Cat(kSlices, "?watch=true"), [](std::string_view) { return true; }, [&] { opened = true; });
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0) << "as RestClient's cancelled transfer: no status line";
  EXPECT_FALSE(opened);
  const auto r = watch->Call("GET", kSlices);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(api.Requests().size(), sent) << "nothing was sent";
}

TEST(FakeSliceApi, BookmarksGoToTheWatchesThatAskedForThem) {
  ManualClock clock(2);
  FakeSliceApi api(clock);
  auto a = api.Connect();
  auto b = api.Connect();
  StreamThread asked(clock, *a, Cat(kSlices, "?watch=true&allowWatchBookmarks=true"));
  StreamThread plain(clock, *b, Cat(kSlices, "?watch=true"));
  clock.Settle();
  api.Tick();  // another object's write: the revision moves, no event of ours
  api.Bookmark();
  clock.Settle();
  const auto events = asked.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], (json{{"type", "BOOKMARK"},
                             {"object",
                              {{"kind", "ResourceSlice"},
                               {"apiVersion", "resource.k8s.io/v1"},
                               {"metadata", {{"resourceVersion", "101"}}}}}}));
  EXPECT_TRUE(plain.lines().empty());
  EXPECT_EQ(api.stats().open_watches, 2);

  api.DropWatches();
  clock.Settle();
  EXPECT_EQ(asked.code(), 200);
  EXPECT_EQ(plain.code(), 200);
  EXPECT_EQ(api.stats().open_watches, 0);
}

TEST(FakeSliceApi, EachRequestIsLoggedAtTheClocksTimeWithItsCode) {
  ManualClock clock(0);
  FakeSliceApi api(clock);
  auto t = api.Connect();
  EXPECT_EQ(Answer(t->Call("GET", kSlices)).code, 200);
  clock.Advance(30s);
  EXPECT_EQ(Answer(t->Call("POST", kSlices, Slice("a").dump())).code, 201);
  clock.Advance(9500ms);
  EXPECT_EQ(Answer(t->Call("DELETE", Cat(kSlices, "/b"))).code, 404);
  const auto requests = api.Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].t, clock.start());
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].url, kSlices);
  EXPECT_EQ(requests[0].code, 200);
  EXPECT_EQ(requests[1].t - clock.start(), 30s);
  EXPECT_EQ(requests[1].method, "POST");
  EXPECT_EQ(requests[1].code, 201);
  EXPECT_EQ(requests[2].t - requests[1].t, 9500ms);
  EXPECT_EQ(requests[2].url, Cat(kSlices, "/b"));
  EXPECT_EQ(requests[2].code, 404);
}

}  // namespace
}  // namespace rdmadp::testing
