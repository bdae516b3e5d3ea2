#pragma once
// The safetensors file format (as the safetensors project defines it), F32 only:
//   bytes [0, 8)        N, the header length, unsigned 64-bit little-endian
//   bytes [8, 8 + N)    a UTF-8 JSON object, padded with spaces to a multiple of 8:
//                       "<name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}
//                       "__metadata__": {"<key>": "<string value>", ...}  (optional)
//   bytes [8 + N, end)  the tensors' raw little-endian data; offsets are relative
//                       to this buffer, and the tensors tile it without gaps.
// Readers in any language (Python's safetensors, Rust, ...) read what we write.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnfc::safetensors {

struct TensorData {
  std::string name;
  std::vector<int64_t> shape;  // empty = scalar
  std::vector<float> values;   // product(shape) values, row-major
  std::string dtype = "F32";   // as read; only F32 is written or converted
};

struct File {
  std::map<std::string, std::string> metadata;
  std::vector<TensorData> tensors;  // written in this order

  const TensorData* find(const std::string& name) const;  // nullptr if absent
};

// Serialises (tensors in the given order; names must be unique and non-empty,
// values.size() must match the shape, else std::invalid_argument).
std::string serialize(const File& file);
// Parses and validates: header length within the file, JSON object, every entry's
// dtype/shape/data_offsets consistent (element and byte counts overflow-checked),
// offsets in range and tiling the buffer, header JSON bounded (json_parse.hpp: depth,
// duplicate names, number range). Every allocation is bounded by bytes.size().
// Errors are InputError "<source>: ..." saying what is wrong. Only F32 tensors
// are supported; another dtype is an InputError naming the tensor and its dtype.
File parse(std::string_view bytes, const std::string& source);

// A shape for messages: "[3, 4]"; past 8 dimensions "[..., ... (N dimensions)]".
std::string shape_str(const std::vector<int64_t>& shape);

// write_file_atomic(serialize(file)).
void write(const std::string& path, const File& file);
// The largest file read() accepts by default (a limit against runaway pipes, not models).
inline constexpr uint64_t kMaxFileBytes = uint64_t{64} << 30;  // 64 GiB
// Reads a file through base/input_file (regular files by fstat size, pipes with a cap
// and a timeout, devices refused), checks the header length against the file size
// before reading the data, and parses it. A missing file is an InputError.
File read(const std::string& path, uint64_t max_bytes = kMaxFileBytes);

}  // namespace attnfc::safetensors
