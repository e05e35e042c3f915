#include "gpu/model/safetensors.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_safetensors {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using courier::gpu::dtype;
using courier::model::model_error;
using courier::model::safetensors_file;
using courier::model::weight_store;

namespace {

const std::string models_dir = COURIER_TEST_DATA "/models";

// A fresh folder under /tmp, removed with everything in it when the test ends.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "courier_safetensors_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One tensor for make_safetensors: its bytes are appended to the data region in list order, and
// the header says they sit there unless `offsets` says otherwise (for broken files).
struct fake_tensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;
  std::optional<std::pair<std::int64_t, std::int64_t>> offsets;
};

std::string with_header(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

std::string make_safetensors(const std::vector<fake_tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const auto& t : tensors) {
    const auto begin = static_cast<std::int64_t>(data.size());
    data += t.bytes;
    auto offsets = t.offsets.value_or(std::pair{begin, static_cast<std::int64_t>(data.size())});
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offsets.first, offsets.second}}};
  }
  std::string text = header.dump();
  // As the reference writer does: pad with spaces so the data region is 8-byte aligned.
  while ((8 + text.size()) % 8 != 0) text += ' ';
  return with_header(text, data);
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The message of the model_error that f throws; fails the test when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const model_error& e) {
    return e.what();
  }
  FAIL("expected a model_error");
  return {};
}

// Every error is one line that starts with the file it is about and names the problem.
void check_error(const std::string& message, const std::string& path, const std::string& problem) {
  INFO("message: " << message);
  CHECK_THAT(message, StartsWith(path + ":"));
  CHECK_THAT(message, Contains(problem));
  CHECK(message.find('\n') == std::string::npos);
}

// A small valid file: several dtypes, a scalar and an empty tensor.
std::vector<fake_tensor> small_tensors() {
  return {
      {"a.f32", "F32", {2, 3}, bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6}), {}},
      {"b.i32", "I32", {3}, bytes_of(std::vector<std::int32_t>{-1, 0, 7}), {}},
      {"c.bf16", "BF16", {2}, bytes_of(std::vector<std::uint16_t>{0x3f80, 0xc000}), {}},
      {"d.f16", "F16", {}, bytes_of(std::vector<std::uint16_t>{0x3c00}), {}},
      {"e.empty", "F32", {0, 4}, "", {}},
  };
}

struct fixture_tensor {
  const char* name;
  std::vector<std::int64_t> shape;
};

void check_fixture(const std::string& model, std::size_t num_tensors,
                   const std::vector<fixture_tensor>& expected) {
  INFO("model: " << model);
  const std::string dir = models_dir + "/" + model;
  const std::string path = dir + "/model.safetensors";
  auto file = safetensors_file::open(path);
  const auto names = file.names();
  CHECK(names.size() == num_tensors);
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(file.size_bytes() == fs::file_size(path));

  auto store = weight_store::open(dir);
  CHECK(store.total_bytes() == fs::file_size(path));
  for (const auto& e : expected) {
    INFO("tensor: " << e.name);
    REQUIRE(store.contains(e.name));
    const auto& t = store.tensor(e.name);
    CHECK(t.type == dtype::bf16);
    CHECK(t.shape == e.shape);
    CHECK(t.size_bytes == static_cast<std::size_t>(t.numel()) * 2);
    CHECK(store.file_of(e.name) == path);
  }
  std::size_t total = 0;
  for (const auto& name : names) total += file.tensor(name).size_bytes;
  CHECK(total < file.size_bytes());
}

}  // namespace

TEST_CASE("safetensors: every fixture model opens with its tensors, shapes and dtypes", "[model]") {
  check_fixture("tiny-qwen3", 35,
                {{"model.embed_tokens.weight", {151936, 64}},
                 {"model.layers.0.self_attn.q_proj.weight", {256, 64}},
                 {"model.layers.2.self_attn.k_norm.weight", {64}},
                 {"model.layers.1.mlp.down_proj.weight", {64, 128}},
                 {"model.norm.weight", {64}}});
  check_fixture("tiny-llama3", 21,
                {{"lm_head.weight", {2048, 256}},
                 {"model.embed_tokens.weight", {2048, 256}},
                 {"model.layers.1.self_attn.k_proj.weight", {128, 256}},
                 {"model.layers.0.mlp.gate_proj.weight", {512, 256}}});
  check_fixture("tiny-qwen2", 26,
                {{"model.layers.0.self_attn.q_proj.bias", {128}},
                 {"model.layers.1.self_attn.v_proj.bias", {64}},
                 {"model.layers.0.self_attn.k_proj.weight", {64, 128}}});
  check_fixture("tiny-hybrid", 29,
                {{"backbone.layers.0.mixer.conv1d.weight", {320, 1, 4}},
                 {"backbone.layers.0.mixer.A_log", {8}},
                 {"lm_head.weight", {2048, 128}}});
}

TEST_CASE("safetensors: a tensor's view points at its own bytes in the file", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  write_file(path, make_safetensors(small_tensors()));
  auto file = safetensors_file::open(path);

  CHECK(file.names() == std::vector<std::string>{"a.f32", "b.i32", "c.bf16", "d.f16", "e.empty"});
  CHECK_FALSE(file.contains("__metadata__"));

  const auto& a = file.tensor("a.f32");
  CHECK(a.type == dtype::f32);
  CHECK(a.shape == std::vector<std::int64_t>{2, 3});
  REQUIRE(a.size_bytes == 24);
  std::vector<float> floats(6);
  std::memcpy(floats.data(), a.data, 24);
  CHECK(floats == std::vector<float>{1, 2, 3, 4, 5, 6});

  const auto& b = file.tensor("b.i32");
  CHECK(b.type == dtype::i32);
  std::vector<std::int32_t> ints(3);
  std::memcpy(ints.data(), b.data, 12);
  CHECK(ints == std::vector<std::int32_t>{-1, 0, 7});

  const auto& c = file.tensor("c.bf16");
  CHECK(c.type == dtype::bf16);
  std::uint16_t halves[2];
  std::memcpy(halves, c.data, 4);
  CHECK(courier::gpu::bf16_to_f32(halves[0]) == 1.0f);
  CHECK(courier::gpu::bf16_to_f32(halves[1]) == -2.0f);

  const auto& d = file.tensor("d.f16");
  CHECK(d.type == dtype::f16);
  CHECK(d.shape.empty());
  CHECK(d.numel() == 1);
  CHECK(d.size_bytes == 2);

  const auto& e = file.tensor("e.empty");
  CHECK(e.numel() == 0);
  CHECK(e.size_bytes == 0);

  check_error(error_of([&] { file.tensor("nope"); }), path, "missing tensor nope");
}

TEST_CASE("safetensors: moving a file keeps its views valid", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  write_file(path, make_safetensors(small_tensors()));
  auto file = safetensors_file::open(path);
  const void* data = file.tensor("a.f32").data;

  safetensors_file moved = std::move(file);
  CHECK(moved.path() == path);
  CHECK(moved.tensor("a.f32").data == data);
  float first;
  std::memcpy(&first, moved.tensor("a.f32").data, 4);
  CHECK(first == 1.0f);

  auto other = safetensors_file::open(path);
  other = std::move(moved);
  CHECK(other.tensor("a.f32").data == data);
}

TEST_CASE("safetensors: a truncated file is an error naming the file", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  const std::string full = read_file(models_dir + "/tiny-qwen2/model.safetensors");

  SECTION("cut in the data region") {
    write_file(path, full.substr(0, full.size() / 2));
    check_error(error_of([&] { safetensors_file::open(path); }), path,
                "extends past the end of the file (truncated?)");
  }
  SECTION("one byte short") {
    write_file(path, full.substr(0, full.size() - 1));
    check_error(error_of([&] { safetensors_file::open(path); }), path,
                "tensor model.norm.weight extends past the end of the file (truncated?)");
  }
  SECTION("cut in the header") {
    write_file(path, full.substr(0, 100));
    check_error(error_of([&] { safetensors_file::open(path); }), path, "header length 2728");
  }
  SECTION("shorter than the length prefix") {
    write_file(path, full.substr(0, 5));
    check_error(error_of([&] { safetensors_file::open(path); }), path, "file is 5 bytes");
  }
  SECTION("empty") {
    write_file(path, "");
    check_error(error_of([&] { safetensors_file::open(path); }), path, "file is 0 bytes");
  }
}

TEST_CASE("safetensors: a missing file is an error naming the file", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("absent.safetensors");
  check_error(error_of([&] { safetensors_file::open(path); }), path, "No such file");
  check_error(error_of([&] { safetensors_file::open(tmp.path.string()); }), tmp.path.string(),
              "not a regular file");
}

TEST_CASE("safetensors: a header length larger than the file is an error", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  std::string bytes = make_safetensors(small_tensors());
  bytes[5] = 1;  // length now about 2^40
  write_file(path, bytes);
  check_error(error_of([&] { safetensors_file::open(path); }), path, "is larger than the");

  // All ones: a length that overflows any naive "8 + N" arithmetic.
  std::fill(bytes.begin(), bytes.begin() + 8, '\xff');
  write_file(path, bytes);
  check_error(error_of([&] { safetensors_file::open(path); }), path, "header length");
}

TEST_CASE("safetensors: a header that is not a JSON object is an error naming the file",
          "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  write_file(path, with_header("{\"a\": [1, 2,\n", std::string(16, '\0')));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "header is not valid JSON");

  write_file(path, with_header("[1, 2, 3]", ""));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "not an object");

  write_file(path, with_header(R"({"x": 3})", ""));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "tensor x is not an object");

  // Invalid UTF-8 inside a name is a JSON error, not a name.
  write_file(path, with_header("{\"\xff\xfe\": {}}", ""));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "header is not valid JSON");
}

TEST_CASE("safetensors: an unsupported dtype is an error naming the tensor and the dtype",
          "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  for (const auto& [name, size] : std::vector<std::pair<std::string, int>>{
           {"F64", 8}, {"I64", 8}, {"U8", 1}, {"F8_E4M3", 1}, {"BOOL", 1}, {"f32", 4}}) {
    write_file(path, make_safetensors({{"w", name, {2}, std::string(2 * size, '\0'), {}}}));
    check_error(error_of([&] { safetensors_file::open(path); }), path,
                "tensor w has unsupported dtype " + name);
  }
  write_file(path, with_header(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", "abcd"));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "tensor w has no dtype");
}

TEST_CASE("safetensors: a byte range that does not match the shape is an error", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  // 3 x 2 BF16 needs 12 bytes; the range holds 16.
  write_file(path, make_safetensors({{"w", "BF16", {3, 2}, std::string(16, '\0'), {}}}));
  check_error(error_of([&] { safetensors_file::open(path); }), path,
              "tensor w has 16 bytes, but shape [3,2] of BF16 needs 6 elements of 2 bytes");

  write_file(path, make_safetensors({{"w", "F32", {0}, std::string(4, '\0'), {}}}));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "tensor w has 4 bytes");
}

TEST_CASE("safetensors: malformed shapes and offsets are errors, never overflows", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  const std::string data(16, '\0');
  struct bad_case {
    const char* header;
    const char* problem;
  };
  const bad_case cases[] = {
      {R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", "non-negative"},
      {R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", "non-negative"},
      {R"({"w": {"dtype": "F32", "shape": "4", "data_offsets": [0, 4]}})", "no shape array"},
      {R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", "no shape array"},
      // 2^32 * 2^32 wraps to 0 in 64 bits.
      {R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
       "too many elements"},
      {R"({"w": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 4]}})",
       "non-negative"},
      // 2^62 elements of 4 bytes: the byte count overflows even though the count fits.
      {R"({"w": {"dtype": "F32", "shape": [4611686018427387904], "data_offsets": [0, 0]}})",
       "tensor w has 0 bytes"},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", "begin <= end"},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", "begin <= end"},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", "begin <= end"},
      {R"({"w": {"dtype": "F32", "shape": [1]}})", "tensor w has no data_offsets"},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [16, 20]}})",
       "extends past the end of the file"},
      {R"({"w": {"dtype": "F32", "shape": [1],
           "data_offsets": [18446744073709551612, 18446744073709551615]}})",
       "extends past the end of the file"},
      // A name with a newline must not break the one-line message.
      {R"({"a\nb": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})", "unsupported dtype"},
  };
  for (const auto& c : cases) {
    INFO("header: " << c.header);
    write_file(path, with_header(c.header, data));
    check_error(error_of([&] { safetensors_file::open(path); }), path, c.problem);
  }
}

TEST_CASE("safetensors: overlapping tensors are an error naming both", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  write_file(path, make_safetensors({{"first", "F32", {2}, std::string(8, '\0'), {}},
                                     {"second", "F32", {2}, std::string(8, '\0'), {{4, 12}}}}));
  check_error(error_of([&] { safetensors_file::open(path); }), path,
              "tensors first and second overlap");

  // The same range twice is an overlap too; an empty tensor inside another is not.
  write_file(path, make_safetensors({{"x", "I32", {2}, std::string(8, '\0'), {}},
                                     {"y", "I32", {2}, "", {{0, 8}}}}));
  check_error(error_of([&] { safetensors_file::open(path); }), path, "tensors x and y overlap");
  write_file(path, make_safetensors({{"x", "I32", {2}, std::string(8, '\0'), {}},
                                     {"y", "I32", {0}, "", {{4, 4}}}}));
  CHECK(safetensors_file::open(path).names().size() == 2);
}

TEST_CASE("weight store: a folder with no weights is an error naming the folder", "[model]") {
  temp_dir tmp;
  const std::string dir = tmp.path.string();
  check_error(error_of([&] { weight_store::open(dir); }), dir,
              "no model.safetensors or model.safetensors.index.json");
}

TEST_CASE("weight store: a missing tensor is an error naming the folder and the tensor",
          "[model]") {
  const std::string dir = models_dir + "/tiny-qwen2";
  auto store = weight_store::open(dir);
  CHECK_FALSE(store.contains("lm_head.weight"));
  check_error(error_of([&] { store.tensor("lm_head.weight"); }), dir,
              "missing tensor lm_head.weight");
  check_error(error_of([&] { store.file_of("lm_head.weight"); }), dir,
              "missing tensor lm_head.weight");
}

namespace {

// Two shards and the index that maps a, b to the first and c to the second.
void write_two_shards(const temp_dir& tmp, const nlohmann::json& weight_map) {
  write_file(tmp.file("model-00001-of-00002.safetensors"),
             make_safetensors({{"a", "F32", {1}, bytes_of(std::vector<float>{1}), {}},
                               {"b", "F32", {1}, bytes_of(std::vector<float>{2}), {}}}));
  write_file(tmp.file("model-00002-of-00002.safetensors"),
             make_safetensors({{"c", "F32", {1}, bytes_of(std::vector<float>{3}), {}}}));
  nlohmann::json index = {{"metadata", {{"total_size", 12}}}, {"weight_map", weight_map}};
  write_file(tmp.file("model.safetensors.index.json"), index.dump(2));
}

const nlohmann::json good_weight_map = {{"a", "model-00001-of-00002.safetensors"},
                                        {"b", "model-00001-of-00002.safetensors"},
                                        {"c", "model-00002-of-00002.safetensors"}};

}  // namespace

TEST_CASE("weight store: a two-shard index loads every tensor from its shard", "[model]") {
  temp_dir tmp;
  write_two_shards(tmp, good_weight_map);
  auto store = weight_store::open(tmp.path.string());
  float values[3];
  const char* names[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(store.contains(names[i]));
    std::memcpy(&values[i], store.tensor(names[i]).data, 4);
  }
  CHECK(values[0] == 1.0f);
  CHECK(values[1] == 2.0f);
  CHECK(values[2] == 3.0f);
  CHECK(store.file_of("a") == tmp.file("model-00001-of-00002.safetensors"));
  CHECK(store.file_of("c") == tmp.file("model-00002-of-00002.safetensors"));
  CHECK(store.total_bytes() == fs::file_size(tmp.file("model-00001-of-00002.safetensors")) +
                                   fs::file_size(tmp.file("model-00002-of-00002.safetensors")));
}

TEST_CASE("weight store: an index naming a missing shard is an error naming the shard", "[model]") {
  temp_dir tmp;
  auto weight_map = good_weight_map;
  weight_map["c"] = "model-00003-of-00002.safetensors";
  write_two_shards(tmp, weight_map);
  check_error(error_of([&] { weight_store::open(tmp.path.string()); }),
              tmp.file("model.safetensors.index.json"),
              "names shard model-00003-of-00002.safetensors (for c), which does not exist");
}

TEST_CASE("weight store: an index mapping a tensor its shard lacks is an error naming it",
          "[model]") {
  temp_dir tmp;
  auto weight_map = good_weight_map;
  weight_map["c"] = "model-00001-of-00002.safetensors";
  write_two_shards(tmp, weight_map);
  check_error(error_of([&] { weight_store::open(tmp.path.string()); }),
              tmp.file("model.safetensors.index.json"),
              "tensor c is mapped to shard model-00001-of-00002.safetensors, which does not "
              "contain it");
}

TEST_CASE("weight store: a malformed index is an error naming the index", "[model]") {
  temp_dir tmp;
  const std::string index = tmp.file("model.safetensors.index.json");
  write_two_shards(tmp, good_weight_map);
  write_file(index, "{\"weight_map\": {");
  check_error(error_of([&] { weight_store::open(tmp.path.string()); }), index, "malformed JSON");
  write_file(index, R"({"metadata": {}})");
  check_error(error_of([&] { weight_store::open(tmp.path.string()); }), index, "weight_map");
  write_file(index, R"({"weight_map": {"a": 3}})");
  check_error(error_of([&] { weight_store::open(tmp.path.string()); }), index,
              "weight_map entry for a must be a file name");
  write_file(index, R"({"weight_map": {"a": "../model-00001-of-00002.safetensors"}})");
  check_error(error_of([&] { weight_store::open(tmp.path.string()); }), index, "not a file in");
}

TEST_CASE("safetensors: a corrupted header is an error or a valid file, never a crash", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("model.safetensors");
  const std::string good = make_safetensors(small_tensors());
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) {
    header_bytes = (header_bytes << 8) | static_cast<unsigned char>(good[static_cast<size_t>(i)]);
  }
  const std::size_t header_end = 8 + static_cast<std::size_t>(header_bytes);
  std::vector<std::size_t> digits;  // where a changed byte keeps the JSON valid but lies
  for (std::size_t i = 8; i < header_end; ++i) {
    if (good[i] >= '0' && good[i] <= '9') digits.push_back(i);
  }

  std::mt19937_64 rng(20240613);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  int num_ok = 0;
  int num_errors = 0;
  for (int iter = 0; iter < 500; ++iter) {
    std::string bytes = good;
    const int num_changes = 1 + static_cast<int>(pick(3));
    bool truncate = false;
    for (int k = 0; k < num_changes; ++k) {
      switch (pick(4)) {
        case 0:
          bytes[pick(header_end)] = static_cast<char>(rng());
          break;
        case 1:
          bytes[digits[pick(digits.size())]] = static_cast<char>('0' + pick(10));
          break;
        case 2:
          bytes[pick(8)] = static_cast<char>(rng());
          break;
        case 3:
          truncate = true;
          break;
      }
    }
    if (truncate) bytes.resize(pick(bytes.size() + 1));
    write_file(path, bytes);
    try {
      auto file = safetensors_file::open(path);
      // Touch every byte a view claims: a view outside the mapping would fault here.
      unsigned sum = 0;
      for (const auto& name : file.names()) {
        const auto& t = file.tensor(name);
        const auto* p = static_cast<const unsigned char*>(t.data);
        for (std::size_t i = 0; i < t.size_bytes; ++i) sum += p[i];
        CHECK(t.size_bytes == static_cast<std::size_t>(t.numel()) * dtype_size(t.type));
      }
      (void)sum;
      ++num_ok;
    } catch (const model_error& e) {
      const std::string message = e.what();
      CHECK_THAT(message, StartsWith(path + ":"));
      CHECK(message.find('\n') == std::string::npos);
      ++num_errors;
    }
  }
  // Both outcomes happen, so the loop exercises more than the JSON parser's error path.
  CHECK(num_ok > 0);
  CHECK(num_errors > 0);
}

}  // namespace courier_test_gpu_model_safetensors
