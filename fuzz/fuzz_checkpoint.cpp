// libFuzzer target for the safetensors reader and the checkpoint checks that run
// before a model is built (scripts/fuzz.sh, `make fuzz`). Any input must end in a
// Checkpoint or an attnfc::InputError of one line: another exception, a crash, a
// sanitizer report, a hang or an allocation beyond the input's size is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "attnfc/base/error.hpp"
#include "attnfc/base/safetensors.hpp"
#include "attnfc/model/checkpoint.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    attnfc::safetensors::File file = attnfc::safetensors::parse(bytes, "fuzz.safetensors");
    // What the reader keeps is backed by the input's bytes.
    uint64_t values = 0;
    for (const auto& t : file.tensors) values += t.values.size();
    check(values * 4 <= size);
    const auto ck = attnfc::model::Checkpoint::from_file(std::move(file), "fuzz.safetensors");
    check(ck.members() >= 1 && ck.members() <= attnfc::model::kMaxEnsembleMembers);
    (void)attnfc::model::parameter_specs(ck.config());
    (void)ck.extra();
  } catch (const attnfc::InputError& e) {
    const std::string msg = e.what();
    check(!msg.empty() && msg.find('\n') == std::string::npos && msg.size() < 4096);
  }
  return 0;
}
