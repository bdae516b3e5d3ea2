#pragma once
// Write a whole file or nothing. The bytes go to a fresh temporary file in the target's
// directory, created with mkstemp (O_CREAT|O_EXCL: never an existing file, never
// through a planted symlink), named ".<name>.tmp.<pid>.XXXXXX"; it is fsync'ed, given
// the mode of the file it replaces (or 0644 & ~umask for a new one) and renamed over the
// target. A crash or Ctrl-C never leaves a half-written file. When <path> is a symlink,
// the file it points to is replaced (the link stays).
#include <cstddef>
#include <string>
#include <string_view>

namespace attnfc {

// Throws InputError when the directory does not exist (a wrong path), OutputError
// (exit 1) for every other failure: full disk, read-only or unwritable folder, I/O error.
// Stale temporaries of this target left by dead processes are removed first.
void write_file_atomic(const std::string& path, std::string_view bytes);

// Removes the temporaries ".<name>.tmp.<pid>.XXXXXX" in `dir` whose process <pid> no
// longer runs (kill(pid, 0) fails with ESRCH); only those of target `name` when it is
// not empty. Never follows symlinks and leaves other files alone. Returns how many.
size_t remove_stale_temp_files(const std::string& dir, const std::string& name = "");

}  // namespace attnfc
