// A census of the kernels a process runs, for scripts/sanitize.sh. compute-sanitizer checks every
// kernel launch it sees but does not list them; preloaded into the same process (the tool's
// --preload-library, or LD_PRELOAD), this library does, through CUPTI's activity API: one record
// per kernel run, with its (mangled) name, whichever way it was launched (<<<>>>, a library, or a
// kernel loaded at run time).
//
// With CDL_KERNEL_CENSUS=PATH set, the process writes PATH.<pid> at exit: a "<runs> <kernel>" line per
// kernel, or one "census failed: ..." line when CUPTI could not be used or lost records, so that
// a count is never silently short. Without the variable it does nothing.
#include <cupti.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

namespace {

class census {
 public:
  census() {
    const char* path = std::getenv("CDL_KERNEL_CENSUS");
    if (!path) return;
    path_ = std::string(path) + "." + std::to_string(::getpid());
    ::unsetenv("CDL_KERNEL_CENSUS");  // this process only: not the host compiler it may start
    check(cuptiActivityRegisterCallbacks(give_buffer, take_buffer), "cuptiActivityRegisterCallbacks") &&
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
  }
  ~census() {
    if (path_.empty()) return;
    if (failure_.empty())
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    const std::lock_guard lock(mutex_);
    std::ofstream out(path_);
    if (!failure_.empty()) out << "census failed: " << failure_ << '\n';
    for (const auto& [name, runs] : runs_) out << runs << ' ' << name << '\n';
  }

 private:
  bool check(CUptiResult result, const char* call) {
    if (result == CUPTI_SUCCESS) return true;
    const char* text = "unknown error";
    cuptiGetResultString(result, &text);
    const std::lock_guard lock(mutex_);
    if (failure_.empty()) failure_ = std::string(call) + ": " + text;
    return false;
  }

  static void CUPTIAPI give_buffer(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *size = std::size_t(8) << 20;
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, *size));
    *max_records = 0;  // as many as fit
  }
  static void CUPTIAPI take_buffer(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                   std::size_t valid);

  std::string path_, failure_;
  std::mutex mutex_;
  std::map<std::string, std::uint64_t> runs_;
} the_census;

void CUPTIAPI census::take_buffer(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                  std::size_t valid) {
  CUpti_Activity* record = nullptr;
  {
    const std::lock_guard lock(the_census.mutex_);
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const char* name = reinterpret_cast<const CUpti_ActivityKernel10*>(record)->name;
        ++the_census.runs_[name ? name : "(no name)"];
      }
  }
  std::size_t dropped = 0;
  if (the_census.check(cuptiActivityGetNumDroppedRecords(context, stream, &dropped),
                       "cuptiActivityGetNumDroppedRecords") &&
      dropped != 0) {
    const std::lock_guard lock(the_census.mutex_);
    if (the_census.failure_.empty())
      the_census.failure_ = std::to_string(dropped) + " kernel records dropped";
  }
  std::free(buffer);
}

}  // namespace
