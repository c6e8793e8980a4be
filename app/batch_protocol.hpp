#pragma once
// The messages between `batch` and its warm workers (docs/batch.md, "Warm
// workers"): each a 4-byte little-endian length, then that many bytes of JSON,
// over a Unix socket pair. Parent to worker: {"type": "scan", "id", "file",
// "output"} and {"type": "quit"}; worker to parent: {"type": "started", "id"}
// when a scan's reconstruction begins and {"type": "row", "id", "row"} when it
// is done (ok or failed), in the order the scans were sent.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace fhd::app {

// No message is near this (a row is a few hundred bytes); a longer length
// means the stream is not ours or is corrupt.
constexpr std::size_t kMaxMessageBytes = std::size_t(1) << 20;

// Sends one message on `fd`, blocking until it is all written. Never raises
// SIGPIPE; returns false when the other side is gone.
bool send_message(int fd, const nlohmann::json& message);

// Collects bytes as they arrive and hands out whole messages.
class MessageReader {
 public:
  // Reads what `fd` has now (one read). False at end of file or on an error.
  bool read_from(int fd);
  void feed(const char* bytes, std::size_t n) { buffer_.append(bytes, n); }
  // The next whole message, or nothing yet. Throws std::runtime_error for a
  // length over kMaxMessageBytes or a body that is not JSON.
  std::optional<nlohmann::json> next();

 private:
  std::string buffer_;
};

// Blocks until the next whole message; nothing at end of file.
std::optional<nlohmann::json> receive_message(int fd, MessageReader& reader);

}  // namespace fhd::app
