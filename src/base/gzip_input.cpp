// Data files that may be gzip-compressed: told by their first two bytes (1f 8b), inflated
// by zlib as they stream in, every member of a concatenation in turn (as gzip -d does),
// with the reader's limit on the compressed and on the decompressed bytes.
#include <zlib.h>

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "attnfc/base/error.hpp"
#include "attnfc/base/input_file.hpp"

namespace attnfc {
namespace {

constexpr uint64_t kChunk = 1 << 20;

// One z_stream for gzip members (16 + MAX_WBITS: the gzip wrapper, its CRC-32 and length
// checked), ended whatever happens.
class Inflater {
 public:
  Inflater() {
    if (::inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~Inflater() { ::inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream& z() { return z_; }

 private:
  z_stream z_{};
};

class Gunzip {
 public:
  // `in` holds the first compressed bytes already read (the magic number at least).
  Gunzip(InputFile& file, uint64_t max_bytes, std::string what, std::string in)
      : file_(file), max_(max_bytes), what_(std::move(what)), in_(std::move(in)) {}

  std::string run() {
    if (file_.regular() && file_.size() > max_) file_.too_large(file_.size(), max_);
    compressed_ = in_.size();
    bool eof = false, in_member = true;
    while (true) {
      if (pos_ == in_.size()) {
        if (!eof) eof = refill();
        if (pos_ == in_.size()) {
          if (in_member)
            fail("is truncated: it ends inside gzip member " + std::to_string(members_ + 1),
                 "unexpected end of file");
          break;
        }
      }
      if (!in_member) {  // another member follows: gzip -d reads it too
        if (static_cast<unsigned char>(in_[pos_]) != 0x1f) {
          after_last_member(eof);
          break;
        }
        ::inflateReset(&inf_.z());
        in_member = true;
      }
      if (inflate_some()) {
        in_member = false;
        ++members_;
      }
    }
    return joined();
  }

 private:
  // Replaces the consumed bytes with the next chunk; true at end of input.
  bool refill() {
    in_.clear();
    pos_ = 0;
    const uint64_t got = file_.read_into(in_, kChunk);
    compressed_ += got;
    if (compressed_ > max_) file_.too_large(compressed_, max_);
    return got < kChunk;
  }

  // What follows the last member: zero padding (from dd or a tape block) is read past, as
  // gzip -d does; anything else may be a damaged member or a file appended by mistake, so
  // it is refused rather than ignored with a warning as gzip -d does.
  void after_last_member(bool eof) {
    while (true) {
      for (; pos_ < in_.size(); ++pos_) {
        if (in_[pos_] == '\0') continue;
        const uint64_t at = compressed_ - (in_.size() - pos_);
        throw InputError(file_.name() + ": the " + what_ + " has bytes after gzip member " +
                         std::to_string(members_) + " that are neither a gzip member nor zero " +
                         "padding (from compressed byte " + std::to_string(at) +
                         "); expected a complete gzip file with nothing after its last member");
      }
      if (eof) return;
      eof = refill();
      if (in_.empty()) return;
    }
  }

  // One inflate() call into the last output part; true when a member ended.
  bool inflate_some() {
    if (parts_.empty() || parts_.back().size() == kChunk) {
      parts_.emplace_back();
      parts_.back().reserve(kChunk);
    }
    std::string& out = parts_.back();
    const size_t had = out.size();
    out.resize(kChunk);
    z_stream& z = inf_.z();
    z.next_in = reinterpret_cast<Bytef*>(in_.data() + pos_);
    z.avail_in = static_cast<uInt>(in_.size() - pos_);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + had);
    z.avail_out = static_cast<uInt>(kChunk - had);
    const int rc = ::inflate(&z, Z_NO_FLUSH);
    out.resize(kChunk - z.avail_out);
    total_ += out.size() - had;
    pos_ = in_.size() - z.avail_in;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      fail("is not valid gzip data in member " + std::to_string(members_ + 1),
           z.msg ? z.msg : ::zError(rc));
    if (total_ > max_)
      throw InputError(file_.name() + ": the " + what_ + " (gzip) decompresses to more than " +
                       std::to_string(max_) + " bytes, expected at most " + std::to_string(max_));
    return rc == Z_STREAM_END;
  }

  [[noreturn]] void fail(const std::string& what, const std::string& zlib_says) const {
    const uint64_t at = compressed_ - (in_.size() - pos_);
    throw InputError(file_.name() + ": the " + what_ + " " + what + " (compressed byte " +
                     std::to_string(at) + "; zlib: " + zlib_says +
                     "); expected a complete gzip file");
  }

  std::string joined() {
    std::string out;
    out.reserve(static_cast<size_t>(total_));
    for (std::string& part : parts_) {
      out += part;
      std::string().swap(part);
    }
    return out;
  }

  InputFile& file_;
  uint64_t max_;
  std::string what_;
  std::string in_;  // compressed bytes; in_[pos_, end) not inflated yet
  size_t pos_ = 0;
  Inflater inf_;
  // Fixed-size parts: the memory held stays within the limit (a string doubling as it
  // grows could ask for twice the limit), joined once the stream is read whole.
  std::vector<std::string> parts_;
  uint64_t compressed_ = 0, total_ = 0, members_ = 0;
};

}  // namespace

std::string read_input_data(const std::string& path, uint64_t max_bytes, const std::string& what,
                            int timeout_ms) {
  InputFile f(path, what, timeout_ms);
  std::string head;
  f.read_into(head, 2);
  if (head.size() == 2 && head[0] == '\x1f' && head[1] == '\x8b')
    return Gunzip(f, max_bytes, what, std::move(head)).run();
  f.read_rest(head, max_bytes);
  return head;
}

}  // namespace attnfc
