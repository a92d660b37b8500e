#!/usr/bin/env bash
# Install time of a 10 MB bundle (issue 27), in one run, interleaved, REPS repetitions of each:
#   install        context-host install --force: read + verify signature and every hash + inspect
#                  the libraries + unpack (fsync'd) + probe in a sandboxed worker + write the lock;
#   install-nosb   the same with --sandbox off (what the sandbox adds to the probe);
#   verify-unpack  the peer: what a shell installer does with the reference tools, minisign -V of
#                  the index, tar -xzf, sha256sum -c of every file (no probe, no fsync);
#   tar            tar -xzf alone (the floor: inflate and write 10 MB).
# The bundle: the Note provider's release library, 9 MB of random data (--include) and its manifest.
# Needs a release build of context-host and the bundled providers (NOBUILD=1 to skip building);
# on a shared machine: flock /tmp/ctxhost-build.lock Benchmarks/package-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPS=${REPS:-10}
if [[ -z "${NOBUILD:-}" ]]; then swift build -c release >/dev/null; fi
BIN=${BIN:-$(swift build -c release --show-bin-path)}
command -v minisign >/dev/null || { echo "needs minisign (apt install minisign)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK"; rm -rf "$WORK"' EXIT
export XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data
mkdir -p "$WORK/src"
cp "$ROOT/manifests/note.yaml" "$WORK/src/note.yaml"
cp "$BIN/libNoteProvider.so" "$WORK/src/"
head -c $((9 << 20)) /dev/urandom > "$WORK/src/data.bin"
"$BIN/context-host" keygen --output "$WORK/key" >/dev/null
"$BIN/context-host" package "$WORK/src/note.yaml" --include data.bin --sign "$WORK/key.key" --output "$WORK/note.ctxp" >/dev/null
PUB=$(tail -1 "$WORK/key.pub")
"$BIN/context-host" install "$WORK/note.ctxp" --trust-key "$PUB" >/dev/null  # records the key
size=$(stat -c %s "$WORK/note.ctxp")

now() { date +%s%N; }
declare -A samples
measure() { # name, command...
    local name=$1; shift
    local start end
    start=$(now); "$@" >/dev/null 2>&1; end=$(now)
    samples[$name]+="$(( (end - start) / 1000 )) "
}
peer() {
    local out=$WORK/peer; chmod -R u+w "$out" 2>/dev/null || true; rm -rf "$out"; mkdir -p "$out"
    tar -xzf "$WORK/note.ctxp" -C "$out"
    minisign -Vq -P "$PUB" -m "$out/ctxp-bundle.json" -x "$out/ctxp-bundle.json.minisig"
    python3 -c 'import json,sys; [print(f["sha256"]+"  "+f["path"]) for f in json.load(open(sys.argv[1]))["files"]]' "$out/ctxp-bundle.json" > "$WORK/sums"
    (cd "$out" && sha256sum --quiet -c "$WORK/sums")
}
floor() {
    local out=$WORK/floor; rm -rf "$out"; mkdir -p "$out"; tar -xzf "$WORK/note.ctxp" -C "$out"
}
clean() { "$BIN/context-host" uninstall com.contexthost.note >/dev/null; "$BIN/context-host" gc >/dev/null; }
for rep in $(seq "$REPS"); do
    clean; measure install "$BIN/context-host" install "$WORK/note.ctxp"
    clean; measure install-nosb "$BIN/context-host" install --sandbox off "$WORK/note.ctxp"
    measure verify-unpack peer
    measure tar floor
done
# Loading: the six bundled providers from the manifests folder vs the same six installed from
# bundles (lock hashes, ELF inspection), every one in a worker, `list` until all are loaded.
for name in note location calendar stock-quote health-metric device-info; do
    "$BIN/context-host" package "$ROOT/manifests/$name.yaml" --library-path "$BIN" --sign "$WORK/key.key" --output "$WORK/$name.ctxp" >/dev/null
    [[ $name == note ]] || "$BIN/context-host" install "$WORK/$name.ctxp" >/dev/null
done
mkdir -p "$WORK/empty"
for rep in $(seq "$REPS"); do
    measure list-manifests "$BIN/context-host" list --no-installed --isolation process --no-state --manifests "$ROOT/manifests"
    measure list-installed "$BIN/context-host" list --isolation process --no-state --manifests "$WORK/empty"
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "bundle: $size bytes (10 MB: Note library + 9 MB data), $REPS reps each, interleaved"
base=$(echo "${samples[verify-unpack]}" | median)
for name in install install-nosb verify-unpack tar; do
    m=$(echo "${samples[$name]}" | median)
    printf "%-14s median %7.1f ms   x%.2f of verify-unpack\n" "$name" "$(echo "$m/1000" | bc -l)" "$(echo "$m/$base" | bc -l)"
done
echo "loading the six bundled providers, each in a worker (context-host list), $REPS reps each, interleaved"
base=$(echo "${samples[list-manifests]}" | median)
for name in list-manifests list-installed; do
    m=$(echo "${samples[$name]}" | median)
    printf "%-14s median %7.1f ms   x%.2f of list-manifests\n" "$name" "$(echo "$m/1000" | bc -l)" "$(echo "$m/$base" | bc -l)"
done
