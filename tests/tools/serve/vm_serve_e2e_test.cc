// The built vm_serve end to end: started on a free loopback port, driven over real HTTP
// with httplib::Client. Tiny BERT's answers, as JSON and as binary tensors, must equal
// an in-process VirtualMachine's (the path vm_run takes) and the PyTorch goldens; bad
// requests get a 4xx with a message and the server serves on; a full queue gets 503;
// SIGTERM with requests in flight answers them all and exits 0.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "nlohmann/json.hpp"
#include "serializer/executable_file.h"
#include "serializer/npy.h"
#include "tests/models/bert_mini.h"
#include "tools/run/compare.h"
#include "tools/serve/batch_plan.h"
#include "tools/serve/batcher.h"
#include "tools/serve/inference_protocol.h"
#include "tools/serve/metrics.h"
#include "tools/serve/served_model.h"
#include "tools/serve/server.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools::serve {
namespace {


using ::testing::HasSubstr;
using nlohmann::json;

constexpr const char* kInputs[] = {"input_ids", "attention_mask", "token_type_ids"};
constexpr const char* kOutputs[] = {"last_hidden_state", "pooler_output"};
constexpr CompareOptions kTolerance{/*atol=*/1e-4, /*rtol=*/0};

// vm_serve in a child process; killed at destruction if still running.
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> flags) {
    std::vector<std::string> args = {DYNVM_VM_SERVE, bert_mini::ExePath(), "--port=0"};
    args.insert(args.end(), flags.begin(), flags.end());
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[256] = {};
    if (std::fgets(line, sizeof(line), stdout_) != nullptr) {
      std::sscanf(line, "vm_serve: listening on http://127.0.0.1:%d", &port_);
    }
    EXPECT_GT(port_, 0) << "vm_serve printed: " << line;
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ != nullptr) std::fclose(stdout_);
  }

  int port() const { return port_; }
  httplib::Client Client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(120);
    client.set_write_timeout(120);
    return client;
  }
  void Signal(int signal) const { kill(pid_, signal); }
  // The exit status once the process ends (-1 if it was killed by a signal, which
  // goes in `*killed_by`).
  int Wait(int* killed_by = nullptr) {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (killed_by != nullptr) *killed_by = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  int port_ = 0;
};

std::shared_ptr<Allocator> TestAllocator() {
  static const auto* allocator = new std::shared_ptr<Allocator>(MakePooledAllocator());
  return *allocator;
}

// The infer request body for BERT inputs: JSON data, or binary data after the JSON
// (whose length goes in `json_length`).
std::string InferBody(const std::vector<Value>& inputs, bool binary, size_t* json_length = nullptr,
                      json outputs = nullptr) {
  json request = {{"id", "e2e"}, {"inputs", json::array()}};
  std::string bytes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NDArrayObj& t = *inputs[i].As<NDArrayObj>();
    json input = {{"name", kInputs[i]}, {"datatype", "INT64"}, {"shape", t.shape()}};
    if (binary) {
      input["parameters"] = {{"binary_data_size", t.nbytes()}};
      bytes.append(static_cast<const char*>(t.data()), t.nbytes());
    } else {
      input["data"] = std::vector<int64_t>(t.data_as<int64_t>(), t.data_as<int64_t>() + t.num_elements());
    }
    request["inputs"].push_back(std::move(input));
  }
  if (!outputs.is_null()) request["outputs"] = std::move(outputs);
  std::string body = request.dump();
  if (json_length != nullptr) *json_length = body.size();
  return body + bytes;
}

// The outputs of an infer response, read back with the request codec (outputs have the
// form of inputs), by name.
std::map<std::string, Value> ResponseOutputs(const httplib::Result& result) {
  std::map<std::string, Value> outputs;
  const std::string& body = result->body;
  size_t length = body.size();
  if (result->has_header(kHeaderLengthHeader)) length = std::stoul(result->get_header_value(kHeaderLengthHeader));
  const json root = json::parse(body.substr(0, length));
  EXPECT_EQ(root["model_name"], "bert_mini");
  EXPECT_EQ(root["id"], "e2e");
  const std::string header = json{{"inputs", root["outputs"]}}.dump();
  absl::StatusOr<InferRequest> parsed =
      ParseInferRequest(header + body.substr(length), header.size(), TestAllocator());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return outputs;
  for (InferInput& output : parsed->inputs) outputs[output.name] = Value(std::move(output.tensor));
  return outputs;
}

std::vector<Value> RunInProcess(const std::vector<Value>& inputs) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::LoadExecutable(bert_mini::ExePath(), kernels::DefaultRegistry());
  EXPECT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  absl::StatusOr<Value> result = machine.Invoke("main", inputs);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? FlattenValue(*result) : std::vector<Value>{};
}

std::vector<Value> ReadGolden(const std::string& set, absl::Span<const char* const> names) {
  std::vector<Value> values;
  for (const char* name : names) {
    absl::StatusOr<NDArray> t = serializer::ReadNpyFile(
        absl::StrFormat("%s/%s_%s.npy", DYNVM_BERT_GOLDEN, set, name), TestAllocator());
    EXPECT_TRUE(t.ok()) << t.status();
    values.emplace_back(t.ok() ? *t : NDArray());
  }
  return values;
}

void ExpectOutputs(const std::map<std::string, Value>& got, const std::vector<Value>& expected,
                   std::string_view against) {
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(got.count(kOutputs[i])) << kOutputs[i];
    EXPECT_EQ(CompareValue(expected[i], got.at(kOutputs[i]), kTolerance), std::nullopt)
        << kOutputs[i] << " against " << against;
  }
}

httplib::Result PostInfer(httplib::Client& client, const std::string& body, std::optional<size_t> json_length,
                          const std::string& model = "bert_mini") {
  httplib::Headers headers;
  if (json_length) headers.emplace(kHeaderLengthHeader, std::to_string(*json_length));
  return client.Post(absl::StrFormat("/v2/models/%s/infer", model), headers, body,
                     json_length ? "application/octet-stream" : "application/json");
}

// Sends `request` (raw HTTP) to 127.0.0.1:`port` and returns the server's first
// response (headers and Content-Length bytes of body), or what came before it closed
// the connection or `seconds` passed without data.
std::string RawExchange(int port, const std::string& request, int seconds = 10) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  timeval timeout{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  EXPECT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
    answer.append(buffer, n);
    const size_t end = answer.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const size_t at = answer.find("Content-Length: ");
    const size_t length = at < end ? std::stoul(answer.substr(at + 16)) : 0;
    if (answer.size() >= end + 4 + length) {
      answer.resize(end + 4 + length);
      break;
    }
  }
  close(fd);
  return answer;
}

std::string ErrorOf(const httplib::Result& result) {
  const json root = json::parse(result->body, nullptr, false);
  return root.is_object() && root.contains("error") ? root["error"].get<std::string>() : "<no error field>";
}

// Polls /metrics until one scrape holds every line of `lines` (a metric and its value),
// true, or `patience` passes, false.
bool WaitForMetrics(ServeProcess& server, const std::vector<std::string>& lines,
                    std::chrono::milliseconds patience = std::chrono::seconds(30)) {
  httplib::Client probe = server.Client();
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (std::chrono::steady_clock::now() < deadline) {
    httplib::Result r = probe.Get("/metrics");
    if (r && absl::c_all_of(lines, [&](const std::string& line) {
          return r->body.find(absl::StrCat("\n", line, "\n")) != std::string::npos;
        })) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// Polls /metrics until `n` infer requests are in flight at once (true), or 30 s pass.
bool WaitUntilInFlight(ServeProcess& server, int n) {
  return WaitForMetrics(server, {absl::StrCat("dynvm_inflight_requests ", n)});
}

TEST(VmServeTest, MetadataEndpoints) {
  ServeProcess server({});
  httplib::Client client = server.Client();
  httplib::Result r = client.Get("/v2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json meta = json::parse(r->body);
  EXPECT_EQ(meta["name"], "dynvm");
  EXPECT_EQ(meta["extensions"], json::array({"binary_tensor_data"}));
  for (const char* path : {"/v2/health/live", "/v2/health/ready", "/v2/models/bert_mini/ready"}) {
    r = client.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
  }
  r = client.Get("/v2/models/bert_mini");
  ASSERT_TRUE(r);
  meta = json::parse(r->body);
  EXPECT_EQ(meta["name"], "bert_mini");
  EXPECT_EQ(meta["platform"], "dynvm");
  EXPECT_EQ(meta["inputs"][0], json({{"name", "input_ids"}, {"datatype", "INT64"}, {"shape", {-1, -1}}}));
  EXPECT_EQ(meta["outputs"][0],
            json({{"name", "last_hidden_state"}, {"datatype", "FP32"}, {"shape", {-1, -1, 64}}}));
  EXPECT_EQ(meta["outputs"][1], json({{"name", "pooler_output"}, {"datatype", "FP32"}, {"shape", {-1, 64}}}));
  r = client.Get("/v2/models/other");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(ErrorOf(r), HasSubstr("unknown model 'other'"));
  r = client.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_THAT(r->body, HasSubstr("# TYPE dynvm_infer_request_duration_seconds histogram"));
}

TEST(VmServeTest, InferMatchesInProcessVmAndGoldens) {
  ServeProcess server({"--max-batch=1"});
  httplib::Client client = server.Client();
  for (const char* set : {"b1_s1", "b2_s7", "b8_s2", "b3_s128"}) {
    SCOPED_TRACE(set);
    const std::vector<Value> inputs = ReadGolden(set, kInputs);
    const std::vector<Value> in_process = RunInProcess(inputs);
    const std::vector<Value> golden = ReadGolden(set, kOutputs);
    for (bool binary : {false, true}) {
      SCOPED_TRACE(binary ? "binary" : "json");
      size_t json_length = 0;
      // Binary inputs ask for binary outputs too: one output by request, one by default.
      const json outputs = binary ? json::array({{{"name", "last_hidden_state"}, {"parameters", {{"binary_data", true}}}},
                                                 {{"name", "pooler_output"}, {"parameters", {{"binary_data", true}}}}})
                                  : json(nullptr);
      const std::string body = InferBody(inputs, binary, &json_length, outputs);
      httplib::Result r = PostInfer(client, body, binary ? std::optional(json_length) : std::nullopt);
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body.substr(0, 300);
      EXPECT_EQ(r->has_header(kHeaderLengthHeader), binary);
      const std::map<std::string, Value> got = ResponseOutputs(r);
      ExpectOutputs(got, in_process, "the in-process VM");
      ExpectOutputs(got, golden, "PyTorch");
    }
  }
  // Asking for one output returns that one.
  const std::vector<Value> inputs = ReadGolden("b1_s1", kInputs);
  httplib::Result r = PostInfer(client, InferBody(inputs, false, nullptr, json::array({{{"name", "pooler_output"}}})),
                                std::nullopt);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["outputs"].size(), 1u);
}

TEST(VmServeTest, BadRequestsGet4xxAndTheServerServesOn) {
  ServeProcess server({"--max-body-bytes=65536"});
  httplib::Client client = server.Client();
  const std::vector<Value> good = bert_mini::RandomInputs(1, 4, 7, TestAllocator());
  const std::string good_body = InferBody(good, false);
  json wrong_type = json::parse(good_body);
  wrong_type["inputs"][0]["datatype"] = "FP32";
  json wrong_rank = json::parse(good_body);
  wrong_rank["inputs"][1]["shape"] = {4};
  json wrong_length = json::parse(good_body);
  wrong_length["inputs"][2]["shape"] = {2, 2};
  json missing = json::parse(good_body);
  missing["inputs"].erase(1);
  json unknown_output = json::parse(good_body);
  unknown_output["outputs"] = {{{"name", "logits"}}};
  const std::vector<Value> huge = bert_mini::RandomInputs(64, 512, 7, TestAllocator());  // ~260 KB of JSON

  struct Case {
    std::string what, body, model;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"malformed JSON", R"({"inputs": [)", "bert_mini", 400, "malformed JSON"},
      {"wrong datatype", wrong_type.dump(), "bert_mini", 400,
       "argument 0 ('input_ids') of 'main': expected tensor i64[batch, sequence], got f32[1, 4]: wrong dtype"},
      {"wrong rank", wrong_rank.dump(), "bert_mini", 400, "argument 1 ('attention_mask') of 'main'"},
      {"wrong shape", wrong_length.dump(), "bert_mini", 400, "argument 2 ('token_type_ids') of 'main'"},
      {"missing input", missing.dump(), "bert_mini", 400, "missing input for 'main': 'attention_mask' (argument 1, tensor i64"},
      {"unknown output", unknown_output.dump(), "bert_mini", 400, "unknown output 'logits'"},
      {"unknown model", good_body, "gpt", 404, "unknown model 'gpt'"},
      {"body over the limit", InferBody(huge, false), "bert_mini", 413, "over the limit of 65536 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    httplib::Result r = PostInfer(client, c.body, std::nullopt, c.model);
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, c.status);
    EXPECT_THAT(ErrorOf(r), HasSubstr(c.message));
    httplib::Client fresh = server.Client();  // a 413 may close the connection
    r = PostInfer(fresh, good_body, std::nullopt);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "after " << c.what;
  }
  // Binary data that overruns the body.
  size_t json_length = 0;
  std::string body = InferBody(good, true, &json_length);
  body.resize(body.size() - 8);
  httplib::Result r = PostInfer(client, body, json_length);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(ErrorOf(r), HasSubstr("overruns the body"));
  r = client.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_THAT(r->body, HasSubstr("dynvm_infer_requests_total{code=\"400\"} 7"));
  EXPECT_THAT(r->body, HasSubstr("dynvm_infer_requests_total{code=\"404\"} 1"));
}

// Requests of `inputs` from `count` threads at once; the HTTP statuses and bodies.
std::vector<std::pair<int, std::string>> Concurrently(const ServeProcess& server, const std::vector<Value>& inputs,
                                                      int count) {
  size_t json_length = 0;
  const std::string body = InferBody(inputs, true, &json_length);
  std::vector<std::future<std::pair<int, std::string>>> answers;
  for (int i = 0; i < count; ++i) {
    answers.push_back(std::async(std::launch::async, [&] {
      httplib::Client client = server.Client();
      httplib::Result r = PostInfer(client, body, json_length);
      return r ? std::pair{r->status, ErrorOf(r)} : std::pair{-1, httplib::to_string(r.error())};
    }));
  }
  std::vector<std::pair<int, std::string>> out;
  for (auto& a : answers) out.push_back(a.get());
  return out;
}

TEST(VmServeTest, BodiesAreBoundedBeforeTheyAreRead) {
  ServeProcess server({"--max-body-bytes=65536"});
  const std::string post = "POST /v2/models/bert_mini/infer HTTP/1.1\r\nHost: localhost\r\n"
                           "Content-Type: application/json\r\n";
  struct Case {
    std::string what, request, status, message;
  };
  const std::vector<Case> cases = {
      // httplib would read a chunked body whole, whatever its size.
      {"chunked", post + "Transfer-Encoding: chunked\r\n\r\n10000\r\n" + std::string(1000, '[') , "411",
       "Transfer-Encoding 'chunked' is not accepted: send the body with a Content-Length"},
      // Without a length httplib reads a POST's body until the connection closes.
      {"no length", post + "\r\n" + std::string(1000, '['), "411", "a POST needs a Content-Length header"},
      // A gzip or br body would be inflated into memory past the limit.
      {"gzip", post + "Content-Encoding: gzip\r\nContent-Length: 20\r\n\r\n", "415",
       "Content-Encoding 'gzip' is not accepted"},
      {"br", post + "Content-Encoding: br\r\nContent-Length: 20\r\n\r\n", "415", "Content-Encoding 'br'"},
      // Over the limit: answered from the headers, with none of the body sent.
      {"too long", post + "Content-Length: 1000000000\r\n\r\n", "413",
       "request body of 1000000000 bytes over the limit of 65536 bytes (--max-body-bytes)"},
      {"bad length", post + "Content-Length: 12x\r\n\r\n", "400", "Content-Length must be one byte count"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string answer = RawExchange(server.port(), c.request);
    EXPECT_THAT(answer, ::testing::StartsWith("HTTP/1.1 " + c.status)) << answer.substr(0, 200);
    EXPECT_THAT(answer, HasSubstr("Connection: close"));
    EXPECT_THAT(answer, HasSubstr(R"({"error":)"));
    EXPECT_THAT(answer, HasSubstr(c.message));
  }
  // identity is no encoding, and the server serves on.
  httplib::Client client = server.Client();
  const std::string body = InferBody(bert_mini::RandomInputs(1, 4, 7, TestAllocator()), false);
  httplib::Result r = client.Post("/v2/models/bert_mini/infer", {{"Content-Encoding", "identity"}}, body,
                                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST(VmServeTest, NumbersPastDoubleGet400AndTheRequestIsCounted) {
  ServeProcess server({});
  httplib::Client client = server.Client();
  json body = json::parse(InferBody(bert_mini::RandomInputs(1, 4, 7, TestAllocator()), false));
  body["inputs"][0]["data"][0] = 0;
  std::string text = body.dump();
  text.replace(text.find(R"("data":[0)"), 9, R"("data":[1e400)");
  httplib::Result r = PostInfer(client, text, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(ErrorOf(r), HasSubstr("malformed JSON: number overflow parsing '1e400'"));
  r = client.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_THAT(r->body, HasSubstr("dynvm_inflight_requests 0\n"));
  EXPECT_THAT(r->body, HasSubstr("dynvm_infer_requests_total{code=\"400\"} 1\n"));
}

// Runs vm_serve with `flags` (no executable needed past the flags) to its exit; its
// exit status and stderr.
std::pair<int, std::string> RunToExit(const std::string& flags) {
  const std::string command = absl::StrFormat("%s %s %s 2>&1", DYNVM_VM_SERVE, bert_mini::ExePath(), flags);
  FILE* out = popen(command.c_str(), "r");
  std::string text;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), out) != nullptr) text += buffer;
  const int status = pclose(out);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

TEST(VmServeTest, BadCommandLinesExitWithStatus2) {
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--workers=0", "--workers must be an integer in [1, 1024], got '0'"},
           {"--pad=input_ids", "--pad must be INPUT:AXIS:VALUE, got 'input_ids'"},
           {"--name=a/b", "--name must not contain '/', got 'a/b'"},
           {"--port=8000 --port=70000", "--port must be an integer in [0, 65535], got '70000'"},
           {"--host", "flag '--host' needs a value: --host=HOST"}}) {
    const auto [status, text] = RunToExit(flags);
    EXPECT_EQ(status, 2) << flags;
    EXPECT_THAT(text, HasSubstr(message));
  }
}

// The fixture has native code: vm_serve runs it only with --trust-native, and says so
// in one line when it does not (here before failing on an unknown function).
TEST(VmServeTest, NativeCodeRunsOnlyWhenTrusted) {
  const std::string notice = "vm_serve: notice: the executable's native code is not trusted";
  auto [status, text] = RunToExit("--port=0 --function=nope");
  EXPECT_EQ(status, 1) << text;
  EXPECT_THAT(text, HasSubstr(notice));
  EXPECT_THAT(text, HasSubstr("nope"));
  std::tie(status, text) = RunToExit("--port=0 --function=nope --trust-native");
  EXPECT_EQ(status, 1) << text;
  EXPECT_THAT(text, ::testing::Not(HasSubstr(notice)));
}

// Every limit is printed at start, defaulted or set (here before the server fails to
// bind an address that does not exist).
TEST(VmServeTest, LimitsArePrintedAtStart) {
  const auto [status, text] = RunToExit("--port=0 --host=256.256.256.256 --timeout-ms=250 --max-queue=7");
  EXPECT_EQ(status, 1) << text;
  EXPECT_THAT(text, HasSubstr("vm_serve: limits: --timeout-ms=250 --max-memory-bytes=none --max-queue=7 "
                              "--max-body-bytes=16777216 --http-threads=64\n"));
  // Tiny BERT's executable has main_packed: requests are packed by default.
  EXPECT_THAT(text, HasSubstr("vm_serve: packing packed tokens through 'main_packed' for requests with only "
                              "ones in attention_mask, up to 128 tokens and 8 rows per invocation\n"));
  const auto [off_status, off] = RunToExit("--port=0 --host=256.256.256.256 --max-batch-tokens=0");
  EXPECT_THAT(off, HasSubstr("vm_serve: packing off: --max-batch-tokens=0\n"));
}

TEST(VmServeTest, AQueueThatCouldNeverFillIsRefusedAtStart) {
  // 64 queued + 1 worker x 8 rows running would need 72 of the 64 threads.
  auto [status, text] = RunToExit("--port=0 --max-queue=64");
  EXPECT_EQ(status, 2);
  EXPECT_THAT(text, HasSubstr("--http-threads=64 must exceed --max-queue=64 plus --workers=1 x --max-batch=8"));
  std::tie(status, text) = RunToExit("--port=0 --max-queue=100 --workers=2 --max-batch=4 --http-threads=108");
  EXPECT_EQ(status, 2);
  EXPECT_THAT(text, HasSubstr("raise --http-threads to at least 109"));
}

TEST(VmServeTest, StopBeforeServeListensStopsIt) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::LoadExecutable(bert_mini::ExePath(), kernels::DefaultRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  absl::StatusOr<ServedModel> model = ServedModel::Create("bert_mini", *exe, "main");
  ASSERT_TRUE(model.ok()) << model.status();
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    Metrics metrics;
    Batcher batcher(*exe, model->function_index(), *BatchPlan::Create(model->function(), {}), {}, &metrics);
    ServerOptions options;
    options.port = 0;
    options.http_threads = 4;
    Server server(*model, batcher, metrics, options);
    ASSERT_TRUE(server.Bind().ok());
    // Round 0: Stop() strictly before Serve(), which must then not listen at all (a
    // stop() of httplib's before its loop runs is lost). Later rounds race the two.
    if (round == 0) server.Stop();
    std::thread stopper([&] {
      if (round > 0) server.Stop();
    });
    EXPECT_TRUE(server.Serve().ok());  // returns: a lost Stop() would hang here
    stopper.join();
  }
}

TEST(VmServeTest, ASecondSignalKillsAServerThatIsDraining) {
  ServeProcess server({"--workers=1", "--threads-per-worker=1", "--max-batch=1"});
  const std::vector<Value> inputs = bert_mini::RandomInputs(4, 384, 5, TestAllocator());
  std::future<std::vector<std::pair<int, std::string>>> answers =
      std::async(std::launch::async, [&] { return Concurrently(server, inputs, 3); });
  EXPECT_TRUE(WaitUntilInFlight(server, 3)) << "the three requests were never in flight together";
  server.Signal(SIGTERM);
  // The drain of three [4, 384] requests on one thread takes far longer than this.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.Signal(SIGINT);
  int killed_by = 0;
  EXPECT_EQ(server.Wait(&killed_by), -1);
  // The second signal to be taken kills. On a loaded host both may be pending before the
  // server takes the first, and pending signals are taken lowest number first: SIGINT
  // drains and SIGTERM kills.
  EXPECT_TRUE(killed_by == SIGINT || killed_by == SIGTERM) << killed_by;
  answers.get();  // the clients see their connections close
}

TEST(VmServeTest, FullQueueGets503) {
  // With one worker running one request and one request waiting, a queue of one is
  // full and the next request is refused at once. The running request is large so that
  // the others arrive while it runs; on a host fast or loaded enough to miss that, the
  // round is tried again.
  ServeProcess server({"--workers=1", "--threads-per-worker=1", "--max-batch=1", "--max-queue=1"});
  const std::vector<Value> slow = bert_mini::RandomInputs(32, 384, 3, TestAllocator());
  const std::vector<Value> quick = bert_mini::RandomInputs(1, 4, 1, TestAllocator());
  bool refused = false;
  for (int round = 0; round < 5 && !refused; ++round) {
    SCOPED_TRACE(round);
    auto running = std::async(std::launch::async, [&] { return Concurrently(server, slow, 1); });
    ASSERT_TRUE(WaitUntilInFlight(server, 1));
    auto waiting = std::async(std::launch::async, [&] { return Concurrently(server, quick, 1); });
    if (WaitForMetrics(server, {"dynvm_inflight_requests 2", "dynvm_queue_depth 1"}, std::chrono::seconds(5))) {
      const auto [status, error] = Concurrently(server, quick, 1).front();
      ASSERT_TRUE(status == 200 || status == 503) << status << " " << error;
      if (status == 503) {
        refused = true;
        EXPECT_THAT(error, HasSubstr("the queue is full (1 requests waiting)"));
      }
    }
    for (auto* answer : {&running, &waiting}) EXPECT_EQ(answer->get().front().first, 200);
  }
  EXPECT_TRUE(refused) << "no request was refused in five rounds";
  // Refusing loses nothing: the server answers the next request.
  httplib::Client client = server.Client();
  httplib::Result r = PostInfer(client, InferBody(quick, false), std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(VmServeTest, InvocationLimitsFailTheirRequestsOnly) {
  // A [1, 64] request needs more than 64 KiB of activations; a [1, 2] one does not.
  ServeProcess server({"--max-memory-bytes=65536", "--max-batch=1"});
  httplib::Client client = server.Client();
  httplib::Result big =
      PostInfer(client, InferBody(bert_mini::RandomInputs(1, 64, 5, TestAllocator()), false), std::nullopt);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 503);
  EXPECT_THAT(big->body, HasSubstr("memory limit of 65536 bytes for this invocation exceeded"));
  httplib::Result small =
      PostInfer(client, InferBody(bert_mini::RandomInputs(1, 2, 6, TestAllocator()), false), std::nullopt);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
}

TEST(VmServeTest, SigtermAnswersRequestsInFlightAndExitsZero) {
  ServeProcess server({"--workers=1", "--threads-per-worker=1", "--max-batch=1"});
  const std::vector<Value> inputs = bert_mini::RandomInputs(4, 384, 5, TestAllocator());
  std::future<std::vector<std::pair<int, std::string>>> answers =
      std::async(std::launch::async, [&] { return Concurrently(server, inputs, 3); });
  // Wait until the server holds all three, then ask it to stop.
  EXPECT_TRUE(WaitUntilInFlight(server, 3)) << "the three requests were never in flight together";
  server.Signal(SIGTERM);
  for (const auto& [status, error] : answers.get()) EXPECT_EQ(status, 200) << error;
  EXPECT_EQ(server.Wait(), 0);
}

}  // namespace
}  // namespace dynvm::tools::serve
