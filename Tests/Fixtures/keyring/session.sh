#!/usr/bin/env bash
# A real Secret Service for Tests/IntegrationTests/SecretKeyringTests.swift. Run as
#   dbus-run-session -- bash session.sh FOLDER OWNER_PID
# it starts gnome-keyring-daemon (secrets component only) on that private session bus, its login
# keyring made and unlocked with a throwaway password, all its files under FOLDER. Once
# org.freedesktop.secrets answers on the bus it writes the bus address to FOLDER/address, then
# waits until FOLDER/stop exists or OWNER_PID (the test process) is gone, and stops the daemon
# (dbus-run-session then ends the bus).
set -euo pipefail
folder="$1"
owner="$2"
export HOME="$folder/home" XDG_DATA_HOME="$folder/home/data" XDG_CONFIG_HOME="$folder/home/config" XDG_RUNTIME_DIR="$folder/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
printf 'throwaway-test-keyring-password' | gnome-keyring-daemon --foreground --unlock --components=secrets >"$folder/daemon.out" 2>"$folder/daemon.err" &
daemon=$!
# A throwaway daemon: SIGKILL (it can take seconds to act on SIGTERM, which kept this script and
# the bus alive after the test and left both behind).
trap 'kill -KILL "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
for _ in $(seq 200); do
    if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
        string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
        printf '%s\n' "$DBUS_SESSION_BUS_ADDRESS" >"$folder/address.tmp"
        mv "$folder/address.tmp" "$folder/address"
        while [[ ! -e "$folder/stop" ]] && kill -0 "$owner" 2>/dev/null && kill -0 "$daemon" 2>/dev/null; do sleep 0.1; done
        exit 0
    fi
    if ! kill -0 "$daemon" 2>/dev/null; then
        echo "session.sh: gnome-keyring-daemon exited; its stderr: $(cat "$folder/daemon.err")" >&2
        exit 1
    fi
    sleep 0.1
done
echo "session.sh: org.freedesktop.secrets did not appear on the bus within 20 s; daemon stderr: $(cat "$folder/daemon.err")" >&2
exit 1
