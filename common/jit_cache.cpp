// jit_cache.hpp's memory and disk cache: the entry format, the checks that refuse a corrupt or
// foreign entry, and the write-then-rename that keeps entries whole. Read the header first.
#include "jit_cache.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

namespace cdl::jit {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (const char c : bytes) h = (h ^ std::uint8_t(c)) * 0x100000001b3ull;
  return h;
}

namespace {

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

constexpr std::string_view entry_format = "cdl-jit-cache 1";

std::uint64_t checksum(const json& entry) {
  const std::vector<std::uint8_t> bytes = json::to_cbor(entry);
  return fnv1a(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Creates dir and any missing parents with mode 0700, never a moment more open.
void make_private_dir(const fs::path& dir) {
  if (fs::is_directory(dir)) return;
  if (dir.has_parent_path() && dir.parent_path() != dir) make_private_dir(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw error("cannot create " + dir.string() + ": " + std::strerror(errno));
  if (!fs::is_directory(dir)) throw error(dir.string() + " exists and is not a directory");
}

bool disabled(const char* value) {
  const std::string v = value ? value : "";
  return v == "0" || v == "off" || v == "false" || v == "no";
}

}  // namespace

const std::string& headers_digest() {
  static const std::string digest = [] {
    std::uint64_t h = fnv1a("");
    for (const source_file& f : embedded_sources()) h = fnv1a(f.text, fnv1a(f.name, h));
    return hex(h);
  }();
  return digest;
}

cache::options cache::from_environment() {
  options o;
  if (disabled(std::getenv("CDL_JIT_DISK_CACHE"))) return o;
  if (const char* d = std::getenv("CDL_JIT_CACHE_DIR"); d && *d)
    o.dir = fs::path(d);
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    o.dir = fs::path(x) / "cuda-dispatch-lab" / "jit";
  else if (const char* home = std::getenv("HOME"); home && *home)
    o.dir = fs::path(home) / ".cache" / "cuda-dispatch-lab" / "jit";
  return o;
}

cache::cache(options o) : options_(std::move(o)) {
  if (!options_.warn) options_.warn = [](const std::string& m) { std::cerr << m << '\n'; };
}

void cache::warn(const std::string& message) { options_.warn("JIT cache: " + message); }

fs::path cache::entry_path(const std::string& key) const {
  return *options_.dir / (hex(fnv1a(key)) + hex(fnv1a(key, 0x84222325cbf29ce4ull)) + ".entry");
}

std::optional<module_image> cache::read_disk(const std::string& key) {
  const std::lock_guard lock(mutex_);
  if (!options_.dir) return std::nullopt;
  const fs::path path = entry_path(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // a plain miss
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());

  auto discard = [&](const std::string& why) -> std::optional<module_image> {
    warn("discarding " + path.string() + " (" + why + "); rebuilding it");
    ++counters_.discarded;
    std::error_code ignored;
    fs::remove(path, ignored);
    return std::nullopt;
  };
  json doc;
  try {
    doc = json::from_cbor(bytes);
  } catch (const json::exception& e) {
    return discard(std::string("not a cache entry, or truncated: ") + e.what());
  }
  try {
    if (!doc.is_object() || doc.value("format", "") != entry_format) return discard("unknown format");
    const json& entry = doc.at("entry");
    if (doc.at("checksum").get<std::uint64_t>() != checksum(entry))
      return discard("checksum mismatch: corrupt");
    if (entry.at("key").get<std::string>() != key) return discard("entry for another key");
    module_image image;
    const auto& code = entry.at("code").get_binary();
    image.code.assign(code.begin(), code.end());
    image.kernel_names = entry.at("kernel_names").get<std::map<std::string, std::string>>();
    return image;
  } catch (const json::exception& e) {
    return discard(std::string("malformed entry: ") + e.what());
  }
}

void cache::write_disk(const std::string& key, const module_image& image) {
  const std::lock_guard lock(mutex_);
  if (!options_.dir) return;
  static std::atomic<unsigned> serial{0};
  const fs::path path = entry_path(key);
  const fs::path temporary =
      path.string() + "." + std::to_string(::getpid()) + "." + std::to_string(serial++) + ".tmp";
  try {
    make_private_dir(*options_.dir);
    json entry{{"key", key},
               {"code", json::binary_t(std::vector<std::uint8_t>(image.code.begin(), image.code.end()))},
               {"kernel_names", image.kernel_names}};
    const json doc{{"format", entry_format}, {"checksum", checksum(entry)}, {"entry", std::move(entry)}};
    const std::vector<std::uint8_t> bytes = json::to_cbor(doc);
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
      out.close();
      if (!out) throw error("cannot write " + temporary.string());
    }
    fs::rename(temporary, path);  // atomic: readers see the old entry, or the whole new one
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    ++counters_.write_failures;
    warn("cannot store an entry in " + options_.dir->string() + " (" + e.what() + "); continuing uncached");
  }
}

module_image cache::get(const std::string& key, const std::function<module_image()>& make) {
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = memory_.find(key); found != memory_.end()) {
      ++counters_.memory_hits;
      return found->second;
    }
  }
  if (std::optional<module_image> image = read_disk(key)) {
    const std::lock_guard lock(mutex_);
    ++counters_.disk_hits;
    return memory_.emplace(key, std::move(*image)).first->second;
  }
  module_image image = make();
  write_disk(key, image);
  const std::lock_guard lock(mutex_);
  ++counters_.misses;
  return memory_.emplace(key, std::move(image)).first->second;
}

cache::counters cache::stats() const {
  const std::lock_guard lock(mutex_);
  return counters_;
}

void cache::clear_memory() {
  const std::lock_guard lock(mutex_);
  memory_.clear();
}

cache& process_cache() {
  static cache c(cache::from_environment());
  return c;
}

}  // namespace cdl::jit
