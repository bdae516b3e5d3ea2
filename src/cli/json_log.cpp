#include "json_log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "attnfc/train/progress.hpp"

namespace attnfc::cli {

namespace {

class JsonLinesSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    const nlohmann::ordered_json j{
        {"event", "log"},
        {"time", train::format_utc(msg.time)},
        {"level", std::string(level.data(), level.size())},
        {"message", std::string(msg.payload.data(), msg.payload.size())}};
    // Invalid UTF-8 in a message (a file name, a cell) is replaced rather than thrown.
    const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fputs(line.c_str(), stderr);
    std::fputc('\n', stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

void log_as_json_lines() {
  const auto logger = spdlog::default_logger();
  logger->sinks().clear();
  logger->sinks().push_back(std::make_shared<JsonLinesSink>());
}

}  // namespace attnfc::cli
