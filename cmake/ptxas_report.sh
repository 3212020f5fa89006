#!/bin/sh
# CUDA compiler launcher: runs the compile with ptxas's resource report (-Xptxas=-v) and keeps
# that report beside the object file, in <object>.ptxas, instead of on the console. The
# report (registers, stack frame, spill stores and loads, shared memory per kernel) is what
# reports/resources.py collects for the performance report. Everything else the compiler
# prints still reaches the console, and its exit status is returned.
obj=""
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && obj=$a
  prev=$a
done
[ -n "$obj" ] || exec "$@"
log="$obj.ptxas"
"$@" -Xptxas=-v 2>"$log.tmp"
rc=$?
grep -v -e '^ptxas info' -e '^ *[0-9]* bytes stack frame' "$log.tmp" >&2
mv -f "$log.tmp" "$log"
exit $rc
