#!/usr/bin/env bash
# The files of the stdio `items/preview` path (issue 36: ≤ 15 over stdio), counted from a profile
# rather than by hand: a release `serve --isolation in-process` with the Note provider answers
# N previews (64 in flight) from rpcload under `perf record -F 500 -g`; every frame of every sample
# of the host process (its threads, not rpcload's) is mapped to its source line (`perf script`,
# then `llvm-symbolizer`: inlined code under the file it was written in, as `perf script -F
# srcline` says it) and the distinct `Sources/` files of the host's own binary are listed, with
# their frame counts. A file in one or two frames can be missed by one run: count a few (the
# stacks are walked by frame pointers, so a function that calls libc's `write` or `read`, which
# make no frame, is skipped in every sample taken inside that system call: the output's
# `writeAll` and the reader loop show only when a sample lands in their own instructions). The
# provider library (its own .so), the Swift runtime, Foundation and the C library are other
# binaries and do not count; the first second (start-up, `initialize`) is not recorded (`-D`).
#
# Prints the ContextHost files (the figure the issue tracks), then the other Sources/ modules the
# host's binary runs on the path (ContextWire's JSON, the CLI's `serve`), each with its count.
#
# Usage (from a clone; perf must be allowed to profile: root or perf_event_paranoid ≤ 1):
#   flock /tmp/heavy.lock Benchmarks/path-files.sh           builds what is missing
#   NOBUILD=1 BIN=DIR Benchmarks/path-files.sh               another build (DIR: context-host, libNoteProvider.so)
#   N=… W=… FREQ=… KEEP=DIR Benchmarks/path-files.sh         load, sampling rate; KEEP keeps perf.data and the frames
set -euo pipefail
[[ -d /opt/swift/usr/bin ]] && export PATH=/opt/swift/usr/bin:$PATH
if [[ "${NOBUILD:-0}" != 1 ]]; then
    (cd "$(dirname "$0")/.." && swift build -c release --product context-host > /dev/null \
        && swift build -c release --product NoteProvider > /dev/null && mkdir -p .build/bench \
        && gcc -O2 -Wall -Wextra -o "${RPCLOAD:-.build/bench/rpcload}" Benchmarks/rpcload/rpcload.c -lm)
fi
N=${N:-300000}; W=${W:-64}; FREQ=${FREQ:-500}
# ROOT, BIN, REQ, LOAD (and the package root as the working folder).
source "$(dirname "${BASH_SOURCE[0]}")/rpcload-env.sh"
command -v perf > /dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 1; }
command -v llvm-symbolizer > /dev/null || { echo "llvm-symbolizer is missing (apt-get install llvm)" >&2; exit 1; }
SCRATCH=${KEEP:-$(mktemp -d)}
mkdir -p "$SCRATCH"
[[ -n "${KEEP:-}" ]] || trap 'rm -rf "$SCRATCH"' EXIT
PRE=$REQ/preamble.jsonl
CALL=$REQ/preview-note.jsonl
HOST_FLAGS=(--manifests "$ROOT/manifests" --isolation in-process --no-state --no-installed --registry-cache none)

perf record -q -F "$FREQ" -g -D 1000 -o "$SCRATCH/perf.data" -- \
    "$LOAD" -m throughput -t "$CALL" -p "$PRE" -n "$N" -w "$W" -W $((N / 10)) -T 60 -l stdio -- \
    "$BIN/context-host" serve "${HOST_FLAGS[@]}" > "$SCRATCH/rpcload.txt" 2> "$SCRATCH/rpcload.stderr"
cat "$SCRATCH/rpcload.txt"
grep -q ' errors=0' "$SCRATCH/rpcload.txt" || { echo "rpcload saw errors:" >&2; cat "$SCRATCH/rpcload.stderr" >&2; exit 1; }

# Frames of the host's samples (every thread of the process whose main thread is context-host;
# rpcload's are left out), then each frame's address in the host binary mapped to the line it
# was compiled from (llvm-symbolizer without inlining: the innermost inlined code's file, as
# `perf script -F srcline` says it, but with the full path and much faster than addr2line).
perf script -i "$SCRATCH/perf.data" -F pid,tid,comm,ip,sym,dso 2> /dev/null > "$SCRATCH/frames.txt"
HOST_PID=$(awk '$1 == "context-host" { split($2, p, "/"); print p[1]; exit }' "$SCRATCH/frames.txt")
[[ -n "$HOST_PID" ]] || { echo "no sample of context-host" >&2; exit 1; }
HOST_BIN=$(readlink -f "$BIN/context-host")
awk -v pid="$HOST_PID" '
    # A sample header: comm pid/tid (comm may hold spaces; pid/tid is the first field with a slash).
    /^[^ \t]/ { host = 0; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, p, "/"); host = (p[1] == pid); break }; next }
    # A frame: "ip sym (dso)"; kept when it is in the host binary.
    host && $NF ~ /\/context-host\)$/ { count["0x" $1]++ }
    END { for (a in count) print a, count[a] }
' "$SCRATCH/frames.txt" > "$SCRATCH/addresses.txt"
cut -d' ' -f1 "$SCRATCH/addresses.txt" | llvm-symbolizer --obj="$HOST_BIN" --no-inlines --output-style=GNU -f=none > "$SCRATCH/lines.txt"
# Distinct Sources/ files with their frame counts; line 0 is a compiler-made location, not a line.
paste -d' ' "$SCRATCH/addresses.txt" "$SCRATCH/lines.txt" | awk -v root="$ROOT/Sources/" '
    { n = split($3, a, ":"); if (a[n] == 0 || index($3, root) != 1) next
      file = substr($3, length(root) + 1, length($3) - length(root) - length(a[n]) - 1); seen[file] += $2 }
    END { for (f in seen) printf "%6d %s\n", seen[f], f }
' | sort -k2 > "$SCRATCH/files.txt"
echo
echo "host samples: $(awk -v pid="$HOST_PID" '/^[^ \t]/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, p, "/"); if (p[1] == pid) n++; break } } END { print n + 0 }' "$SCRATCH/frames.txt")"
echo "ContextHost files on the path: $(grep -c ' ContextHost/' "$SCRATCH/files.txt" || true)"
grep ' ContextHost/' "$SCRATCH/files.txt" || true
echo
echo "other Sources/ files of the host binary: $(grep -vc ' ContextHost/' "$SCRATCH/files.txt" || true)"
grep -v ' ContextHost/' "$SCRATCH/files.txt" || true
