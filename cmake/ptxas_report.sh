#!/bin/sh
# CUDA compiler launcher: runs the compile with ptxas's resource report (-Xptxas=-v) and keeps
# that report beside the object file, in <object>.ptxas, instead of on the console. The
# report (registers, stack frame, spill stores and loads, shared memory per kernel) is what
# reports/resources.py collects for the performance report. Everything else the compiler
# prints still reaches the console, and its exit status is returned.
#
# With CDL_KEEP_SASS=1 in the build's environment (scripts/bench.sh sets it) and cuobjdump on
# PATH, the lines of the object's SASS that resources.py reads (each function's name, its calls
# and its indirect branches) are written beside it too, in <object>.sass, while the rest of the
# build runs: the crowded objects' SASS runs to tens of megabytes, which the facts phase would
# otherwise disassemble and read after the build. The variable is not on the command line, so
# setting it rebuilds nothing.
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
rm -f "$obj.sass"  # never an earlier object's SASS beside this one
if [ $rc -eq 0 ] && [ "${CDL_KEEP_SASS:-}" = 1 ] && command -v cuobjdump > /dev/null; then
  cuobjdump -sass "$obj" > "$obj.sass.all" \
    && { grep -E 'Function : |CALL\.|BRX' "$obj.sass.all" > "$obj.sass.tmp"; [ $? -le 1 ]; } \
    && mv -f "$obj.sass.tmp" "$obj.sass"
  rm -f "$obj.sass.all" "$obj.sass.tmp"
fi
exit $rc
