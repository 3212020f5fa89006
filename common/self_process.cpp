// How self_process.hpp starts this program again: posix_spawn with a pipe for its standard output.
#include "self_process.hpp"

#include "check.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace cdl {

std::string run_self(const std::vector<std::string>& args) {
  int out[2];
  if (::pipe(out) != 0) throw error(std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> all{"/proc/self/exe"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t got; (got = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, std::size_t(got));
  ::close(out[0]);
  if (spawned != 0)
    throw error("cannot start " + args.front() + " in a new process: " + std::strerror(spawned));
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw error("the new process (" + args.front() + ") failed" +
                (WIFEXITED(status) ? " with exit status " + std::to_string(WEXITSTATUS(status)) : "") +
                (text.empty() ? "" : ": " + text));
  return text;
}

}  // namespace cdl
