// The reference cache (reference_cache.hpp says why and how): an entry per problem, seed and
// executable in CDL_REFERENCE_CACHE, written whole under a lock, read back or recomputed.
#include "reference_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

namespace cdl {
namespace {

namespace fs = std::filesystem;

constexpr char magic[8] = {'c', 'd', 'l', 'r', 'e', 'f', '0', '1'};

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The executable that computes the references: a rebuild changes its size or time.
std::optional<std::string> build_stamp() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return std::nullopt;
  return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// This build's folder of the cache; the first process of a build to create it removes the others'.
std::optional<fs::path> build_folder(const fs::path& root, const std::string& stamp) {
  std::error_code ec;
  const fs::path mine = root / hex(fnv1a(stamp));
  const bool created = fs::create_directories(mine, ec);
  if (ec) return std::nullopt;
  if (created)
    for (const auto& other : fs::directory_iterator(root, ec))
      if (other.is_directory() && other.path() != mine) fs::remove_all(other.path(), ec);
  return mine;
}

// An exclusive lock on a file, held while it lives: the first process computes, the others wait.
class file_lock {
 public:
  explicit file_lock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~file_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

// The entry's layout: magic, the key's length and bytes, the count, then count records.
bool read_entry(const fs::path& path, const std::string& key, std::vector<reference_value>& out) {
  std::ifstream f(path, std::ios::binary);
  char m[sizeof magic];
  std::uint64_t key_size = 0, count = 0;
  if (!f.read(m, sizeof m) || std::memcmp(m, magic, sizeof m) != 0) return false;
  if (!f.read(reinterpret_cast<char*>(&key_size), sizeof key_size) || key_size != key.size()) return false;
  std::string stored(key_size, '\0');
  if (!f.read(stored.data(), std::streamsize(key_size)) || stored != key) return false;
  if (!f.read(reinterpret_cast<char*>(&count), sizeof count)) return false;
  std::error_code ec;
  const std::uintmax_t expected =
      sizeof magic + 2 * sizeof(std::uint64_t) + key_size + count * sizeof(reference_value);
  if (fs::file_size(path, ec) != expected || ec) return false;
  out.resize(count);
  return bool(f.read(reinterpret_cast<char*>(out.data()), std::streamsize(count * sizeof(reference_value))));
}

bool write_entry(const fs::path& path, const std::string& key, const std::vector<reference_value>& v) {
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    const std::uint64_t key_size = key.size(), count = v.size();
    f.write(magic, sizeof magic);
    f.write(reinterpret_cast<const char*>(&key_size), sizeof key_size);
    f.write(key.data(), std::streamsize(key.size()));
    f.write(reinterpret_cast<const char*>(&count), sizeof count);
    f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(reference_value)));
    if (!f.flush()) {
      f.close();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);  // readers see a whole entry or none
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

void warn(const std::string& what) {
  std::fprintf(stderr, "reference cache: %s; the reference is computed in this process\n", what.c_str());
}

}  // namespace

std::vector<reference_value> shared_reference(const std::string& problem, std::uint64_t seed, double work,
                                              const std::function<std::vector<reference_value>()>& compute) {
  const char* root = std::getenv("CDL_REFERENCE_CACHE");
  if (!root || !*root || work < reference_cache_min_work) return compute();
  const std::optional<std::string> stamp = build_stamp();
  const std::optional<fs::path> folder = stamp ? build_folder(root, *stamp) : std::nullopt;
  if (!folder) {
    warn(std::string("cannot use ") + root);
    return compute();
  }
  const std::string key = *stamp + " " + problem + " seed=" + std::to_string(seed);
  const fs::path entry = *folder / (hex(fnv1a(key)) + ".ref");
  const file_lock lock(entry.string() + ".lock");
  std::vector<reference_value> v;
  if (lock.held() && read_entry(entry, key, v)) return v;
  v = compute();
  if (lock.held() && !write_entry(entry, key, v)) warn("cannot write " + entry.string());
  return v;
}

}  // namespace cdl
