// safetensors writer and validating reader (F32).
#include "attnfc/base/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attnfc/base/atomic_file.hpp"
#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"
#include "attnfc/base/json_parse.hpp"

namespace attnfc::safetensors {
namespace {

// The safetensors project refuses headers above 100 MB; so do we (a corrupt
// length must not make us allocate gigabytes).
constexpr uint64_t kMaxHeader = 100'000'000;
// attnfc's tensors have at most 2 dimensions; the format allows more, not thousands.
constexpr size_t kMaxDims = 8;

void put_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_u64_le(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void append_f32_le(std::string& out, const std::vector<float>& values) {
  const size_t at = out.size();
  out.resize(at + values.size() * 4);
  char* dst = out.data() + at;
  if constexpr (std::endian::native == std::endian::little) {
    if (!values.empty()) std::memcpy(dst, values.data(), values.size() * 4);
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
      for (int b = 0; b < 4; ++b) dst[4 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
  }
}

void read_f32_le(const char* src, size_t n, std::vector<float>& out) {
  out.resize(n);
  if constexpr (std::endian::native == std::endian::little) {
    if (n) std::memcpy(out.data(), src, n * 4);
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint32_t bits = 0;
      for (int b = 3; b >= 0; --b) bits = (bits << 8) | static_cast<unsigned char>(src[4 * i + b]);
      out[i] = std::bit_cast<float>(bits);
    }
  }
}

int dtype_size(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2")
    return 1;
  return 0;
}

// Element count of a header shape, refusing negative or non-integer dimensions,
// more than kMaxDims of them and any product that would wrap around 2^64.
uint64_t checked_numel(const nlohmann::json& shape, const std::string& where,
                       std::vector<int64_t>& dims,
                       const std::function<InputError(const std::string&)>& fail) {
  if (!shape.is_array()) throw fail(where + "shape is not an array");
  if (shape.size() > kMaxDims)
    throw fail(where + "shape has " + std::to_string(shape.size()) +
               " dimensions, expected at most " + std::to_string(kMaxDims));
  uint64_t numel = 1;
  for (const auto& d : shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t{INT64_MAX})
      throw fail(where + "shape has an invalid dimension " + json_excerpt(d) +
                 ", expected a non-negative integer");
    dims.push_back(d.get<int64_t>());
    if (__builtin_mul_overflow(numel, d.get<uint64_t>(), &numel))
      throw fail(where + "shape " + json_excerpt(shape) + " has more than 2^64 elements");
  }
  return numel;
}

}  // namespace

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size() && i < kMaxDims; ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() > kMaxDims) s += ", ... (" + std::to_string(shape.size()) + " dimensions)";
  return s + "]";
}

const TensorData* File::find(const std::string& name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string serialize(const File& file) {
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) {
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& t : file.tensors) {
    if (t.name.empty() || t.name == "__metadata__") {
      throw std::invalid_argument("safetensors: invalid tensor name '" + t.name + "'");
    }
    if (header.contains(t.name)) {
      throw std::invalid_argument("safetensors: duplicate tensor name '" + t.name + "'");
    }
    if (t.dtype != "F32") {
      throw std::invalid_argument("safetensors: tensor '" + t.name + "' must be F32");
    }
    uint64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0) throw std::invalid_argument("safetensors: negative dimension in " + t.name);
      numel *= static_cast<uint64_t>(d);
    }
    if (numel != t.values.size()) {
      throw std::invalid_argument("safetensors: tensor '" + t.name + "' has shape " +
                                  shape_str(t.shape) + " but " + std::to_string(t.values.size()) +
                                  " values");
    }
    const uint64_t end = offset + numel * 4;
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string json = header.dump();
  // Pad with spaces so the data buffer starts 8-byte aligned (as the reference writer does).
  while ((8 + json.size()) % 8 != 0) json.push_back(' ');
  std::string out;
  out.reserve(8 + json.size() + offset);
  put_u64_le(out, json.size());
  out += json;
  for (const auto& t : file.tensors) append_f32_le(out, t.values);
  return out;
}

namespace {

using Fail = std::function<InputError(const std::string&)>;

struct Entry {
  TensorData tensor;  // values not read yet
  uint64_t begin = 0, end = 0;
};

// One header entry: dtype, shape and data_offsets checked against the buffer size.
Entry parse_entry(const std::string& name, const nlohmann::json& e, uint64_t buffer_size,
                  const std::string& source, const Fail& fail) {
  const std::string shown = printable_excerpt(name);
  const std::string where = "tensor '" + shown + "': ";
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") ||
      !e.contains("data_offsets")) {
    throw fail(where + "expected an object with dtype, shape and data_offsets");
  }
  const auto& dtype = e["dtype"];
  const auto& offsets = e["data_offsets"];
  if (!dtype.is_string()) throw fail(where + "dtype is not a string");
  if (dtype.get_ref<const std::string&>().size() > 16)
    throw fail(where + "unknown dtype " + json_excerpt(dtype, 16));
  Entry entry;
  TensorData& t = entry.tensor;
  t.name = name;
  t.dtype = dtype.get<std::string>();
  const int elem = dtype_size(t.dtype);
  if (elem == 0) throw fail(where + "unknown dtype \"" + t.dtype + "\"");
  const uint64_t numel = checked_numel(e["shape"], where, t.shape, fail);
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(elem), &nbytes))
    throw fail(where + "shape " + shape_str(t.shape) + " of " + t.dtype +
               " needs more than 2^64 bytes");
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    throw fail(where + "data_offsets is not a pair of non-negative integers");
  }
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.begin > entry.end || entry.end > buffer_size) {
    throw fail(where + "data_offsets [" + std::to_string(entry.begin) + ", " +
               std::to_string(entry.end) + "] lie outside the " + std::to_string(buffer_size) +
               "-byte data buffer");
  }
  if (entry.end - entry.begin != nbytes) {
    throw fail(where + "data_offsets span " + std::to_string(entry.end - entry.begin) +
               " bytes but shape " + shape_str(t.shape) + " of " + t.dtype + " needs " +
               std::to_string(nbytes));
  }
  if (t.dtype != "F32") {
    throw InputError(source + ": tensor '" + shown + "' has dtype " + t.dtype +
                     ", expected F32 (attnfc stores and reads float32 only)");
  }
  return entry;
}

// The tensors must tile the buffer: no overlap (aliasing) and no unexplained bytes.
// Checked before any value is copied, so aliased entries cannot multiply the memory.
void check_tiling(std::vector<Entry>& entries, uint64_t buffer_size, const Fail& fail) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expect = 0;
  for (const auto& s : entries) {
    if (s.begin != expect) {
      const std::string& name = s.tensor.name;
      throw fail("tensor '" + printable_excerpt(name) + "' starts at byte " +
                 std::to_string(s.begin) + " of the data buffer, expected " +
                 std::to_string(expect) + " (tensors must not overlap or leave gaps)");
    }
    expect = s.end;
  }
  if (expect != buffer_size) {
    throw fail("the data buffer has " + std::to_string(buffer_size) +
               " bytes but the tensors cover " + std::to_string(expect));
  }
}

}  // namespace

File parse(std::string_view bytes, const std::string& source) {
  const Fail fail = [&](const std::string& what) -> InputError {
    return InputError(source + ": not a valid safetensors file: " + what);
  };
  if (bytes.size() < 8) {
    throw fail("it has " + std::to_string(bytes.size()) +
               " bytes, fewer than the 8-byte header length");
  }
  const uint64_t n = get_u64_le(bytes.data());
  if (n > kMaxHeader || n > bytes.size() - 8) {
    throw fail("header length " + std::to_string(n) + " exceeds the file's " +
               std::to_string(bytes.size() - 8) + " remaining bytes");
  }
  const std::string_view header_text = bytes.substr(8, n);
  if (header_text.empty() || header_text.front() != '{') {
    throw fail("the header does not start with a JSON object '{'");
  }
  // Bounded parse: depth, duplicate tensor names and number range (messages name the key).
  const nlohmann::json header =
      parse_json_bounded(header_text, source + ": header JSON", {kMaxHeader, 64});
  if (!header.is_object()) throw fail("the header is not a JSON object");
  const std::string_view buffer = bytes.substr(8 + n);

  File file;
  std::vector<Entry> entries;
  for (const auto& item : header.items()) {
    const std::string& name = item.key();
    const auto& e = item.value();
    if (name != "__metadata__") {
      entries.push_back(parse_entry(name, e, buffer.size(), source, fail));
      continue;
    }
    if (!e.is_object()) throw fail("__metadata__ is not an object of strings");
    for (const auto& m : e.items()) {
      if (!m.value().is_string()) {
        throw fail("__metadata__ entry '" + m.key().substr(0, 200) + "' is not a string");
      }
      file.metadata[m.key()] = m.value().get<std::string>();
    }
  }
  check_tiling(entries, buffer.size(), fail);
  // Tensors in file order (the header object itself is unordered); each value is read
  // once, so the memory is bounded by the buffer.
  file.tensors.reserve(entries.size());
  for (auto& s : entries) {
    read_f32_le(buffer.data() + s.begin, (s.end - s.begin) / 4, s.tensor.values);
    file.tensors.push_back(std::move(s.tensor));
  }
  return file;
}

void write(const std::string& path, const File& file) {
  write_file_atomic(path, serialize(file));
}

namespace {

// The 8-byte length and the start of the header, checked against the file size before
// the rest is read: a random or truncated file is refused after 9 bytes. `head` holds
// the file's first 8 or 9 bytes.
void check_start(std::string_view head, uint64_t available_after_length, const std::string& path) {
  if (head.size() < 8) return;  // parse() says it is too short
  const uint64_t n = get_u64_le(head.data());
  if (n > kMaxHeader || n > available_after_length) {
    throw InputError(path + ": not a valid safetensors file: header length " + std::to_string(n) +
                     " exceeds the file's " + std::to_string(available_after_length) +
                     " remaining bytes");
  }
  if (head.size() >= 9 && head[8] != '{')
    throw InputError(path + ": not a valid safetensors file: the header does not start " +
                     "with a JSON object '{'");
}

}  // namespace

File read(const std::string& path, uint64_t max_bytes) {
  InputFile in(path, "safetensors file");
  if (in.regular() && in.size() > max_bytes) in.too_large(in.size(), max_bytes);
  std::string bytes;
  in.read_into(bytes, 8);
  if (bytes.size() == 8) {
    check_start(bytes, in.regular() ? in.size() - 8 : max_bytes, path);
    in.read_into(bytes, 1);
    check_start(bytes, in.regular() ? in.size() - 8 : max_bytes, path);
  }
  if (in.regular()) {  // parsed in place from the page cache: no copy of the file
    const MappedInput map(in);
    if (map.mapped()) return parse(map.bytes(), path);
  }
  in.read_rest(bytes, max_bytes);
  return parse(bytes, path);
}

}  // namespace attnfc::safetensors
