// The JIT cache: compiled and linked code kept in memory for the life of the process and on
// disk across processes, so that a program pays NVRTC's compile time once per op, not once per
// run.
//
// Keys are the full text of everything that determines the code: the source (which names the
// embedded headers, whose digest is part of the key), the compiler options, the architecture
// and the compiler's version. On disk an entry lives in a file named by a hash of its key and
// holds the key itself, so a hash collision, a renamed file or a file from another build is
// recognised as the wrong entry, not trusted.
//
// The directory is $CDL_JIT_CACHE_DIR, else $XDG_CACHE_HOME/cuda-dispatch-lab/jit, else
// ~/.cache/cuda-dispatch-lab/jit, created with mode 0700 (compiled code is loaded into the
// process: other users must not be able to plant it). CDL_JIT_DISK_CACHE=0 turns the disk
// cache off. Entries are written to a temporary file in the same directory and renamed into
// place, so a reader sees a whole entry or none, and two processes storing the same entry at
// once both succeed. A corrupt, truncated or foreign entry is reported, removed and rebuilt;
// a directory that cannot be written is reported and the code is used uncached.
#pragma once

#include "jit.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cdl::jit {

// 64-bit FNV-1a: a file name and an integrity check, not a defence against an attacker (the
// 0700 directory is that).
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

// The digest of every embedded header, as 16 hex digits: part of every key.
const std::string& headers_digest();

class cache {
 public:
  struct options {
    std::optional<std::filesystem::path> dir;      // none: memory only
    std::function<void(const std::string&)> warn;  // where reports of bad entries go (default: stderr)
  };
  // From the environment, as described above.
  static options from_environment();

  explicit cache(options o);

  // The image stored under key, else make()'s result, which is then stored. make() may throw;
  // nothing is stored then.
  module_image get(const std::string& key, const std::function<module_image()>& make);

  struct counters {
    int memory_hits = 0, disk_hits = 0, misses = 0;
    int discarded = 0;       // entries on disk found corrupt, truncated, foreign or for another key
    int write_failures = 0;  // entries that could not be stored on disk
  };
  counters stats() const;

  void clear_memory();  // forget the in-memory entries (the disk keeps its own)
  const std::optional<std::filesystem::path>& dir() const { return options_.dir; }
  std::filesystem::path entry_path(const std::string& key) const;  // requires dir()

  // The disk layer alone (exposed for tests and the timing benchmarks).
  std::optional<module_image> read_disk(const std::string& key);
  void write_disk(const std::string& key, const module_image& image);

 private:
  void warn(const std::string& message);

  options options_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, module_image> memory_;
  counters counters_;
};

// The cache the NVRTC and link-time routes share, configured from the environment on first use.
cache& process_cache();

}  // namespace cdl::jit
