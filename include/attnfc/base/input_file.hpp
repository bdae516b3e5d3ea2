#pragma once
// Bounded reads of input files (configs, checkpoints, CSVs, logs). The size is checked
// before the bytes are read: a regular file by fstat, a pipe or FIFO while it streams
// (with a cap and an idle timeout, so a FIFO without a writer cannot hang a run).
// Directories, character and block devices (/dev/zero, /dev/urandom, a terminal) and
// sockets are refused with one InputError line naming the file. The path "-" is standard
// input (named <stdin> in messages; read once per process).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnfc {

// How long a pipe or FIFO may stay silent before the read gives up.
inline constexpr int kDefaultReadTimeoutMs = 30'000;

// The path that means standard input, and how messages name a path ("<stdin>" for "-").
inline constexpr const char* kStdinPath = "-";
std::string input_name(const std::string& path);

class InputFile {
 public:
  // Opens without blocking (a FIFO with no writer yet) and checks the file type.
  // `what` names the file's role in messages ("config file", "model file", ...).
  InputFile(const std::string& path, std::string what, int timeout_ms = kDefaultReadTimeoutMs);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  bool regular() const { return regular_; }
  // The path as messages name it (input_name).
  const std::string& name() const { return path_; }
  // fstat size of a regular file (0 for a pipe).
  uint64_t size() const { return size_; }
  // Appends up to n bytes to out; fewer only at end of file. Returns the bytes read.
  uint64_t read_into(std::string& out, uint64_t n);
  // Appends everything up to end of file; an InputError once more than max_bytes arrive.
  void read_rest(std::string& out, uint64_t max_bytes);
  // "<path>: <what> ..." limit message shared by the readers.
  [[noreturn]] void too_large(uint64_t found, uint64_t max_bytes) const;
  int fd() const { return fd_; }
  // Where the input starts in the file (standard input redirected from a file may start
  // past its first byte); 0 for a path.
  uint64_t start() const { return start_; }

 private:
  void wait_readable() const;
  std::string path_, what_;
  int fd_ = -1;
  int timeout_ms_;
  bool regular_ = false;
  uint64_t size_ = 0, start_ = 0;
};

// A regular file's bytes mapped read-only, with no copy (the page cache backs them, and
// mapping reads ahead): for large binary inputs (model files) that are parsed in place.
// Empty (mapped() false) for a pipe, for standard input not at the file's start, or when
// the system refuses the mapping: read the file instead. The file must not shrink while
// mapped (attnfc replaces its files by renaming, never by truncating them).
class MappedInput {
 public:
  explicit MappedInput(const InputFile& file);
  ~MappedInput();
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;
  bool mapped() const { return data_ != nullptr; }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// The whole file, at most max_bytes (else an InputError naming the file, its size and
// the limit). Regular files are checked by fstat before any byte is read.
std::string read_input_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                            int timeout_ms = kDefaultReadTimeoutMs);

// A data file (CSVs): read_input_file, and a gzip stream (the magic bytes 1f 8b, whatever
// the name) is decompressed with zlib, its members one after another as gzip -d does.
// max_bytes bounds the compressed and the decompressed bytes (a gzip bomb is an InputError
// naming the limit); a corrupt or truncated stream is one InputError line with zlib's word.
// src/base/gzip_input.cpp.
std::string read_input_data(const std::string& path, uint64_t max_bytes, const std::string& what,
                            int timeout_ms = kDefaultReadTimeoutMs);

}  // namespace attnfc
