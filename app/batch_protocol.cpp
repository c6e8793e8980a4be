#include "app/batch_protocol.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace fhd::app {

bool send_message(int fd, const nlohmann::json& message) {
  // Never a throw for bytes that are not UTF-8 (the other side would wait for
  // this message for ever): they become U+FFFD. No path a worker opens goes
  // through that: the batch fails a scan whose name is not UTF-8 up front.
  const std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (body.size() > kMaxMessageBytes) throw std::runtime_error("batch: a message of " + std::to_string(body.size()) + " bytes");
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string frame = {char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff), char((n >> 24) & 0xff)};
  frame += body;
  for (std::size_t at = 0; at < frame.size();) {
    const ssize_t w = ::send(fd, frame.data() + at, frame.size() - at, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    at += std::size_t(w);
  }
  return true;
}

bool MessageReader::read_from(int fd) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    feed(buf, std::size_t(n));
    return true;
  }
}

std::optional<nlohmann::json> MessageReader::next() {
  if (buffer_.size() < 4) return std::nullopt;
  const auto byte = [&](int i) { return std::size_t(static_cast<unsigned char>(buffer_[i])); };
  const std::size_t n = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
  if (n > kMaxMessageBytes) throw std::runtime_error("batch: a message claims " + std::to_string(n) + " bytes");
  if (buffer_.size() < 4 + n) return std::nullopt;
  nlohmann::json m = nlohmann::json::parse(buffer_.begin() + 4, buffer_.begin() + 4 + std::ptrdiff_t(n), nullptr, false);
  buffer_.erase(0, 4 + n);
  if (m.is_discarded() || !m.is_object()) throw std::runtime_error("batch: a message is not a JSON object");
  return m;
}

std::optional<nlohmann::json> receive_message(int fd, MessageReader& reader) {
  for (;;) {
    if (auto m = reader.next()) return m;
    if (!reader.read_from(fd)) return std::nullopt;
  }
}

}  // namespace fhd::app
