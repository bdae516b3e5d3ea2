#pragma once
// Write a whole file or nothing: data goes to "<path>.tmp.<pid>", is fsync'ed,
// then renamed over <path>. A crash or Ctrl-C never leaves a half-written file.
#include <string>
#include <string_view>

namespace attnfc {

// Throws InputError naming the path when the directory is not writable.
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace attnfc
