#include "attnfc/base/error.hpp"

namespace attnfc {

std::string locate(const std::string& file, long line, long column, const std::string& what) {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s + ": " + what;
}

}  // namespace attnfc
