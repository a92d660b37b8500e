#!/usr/bin/env bash
# Makes a throwaway test CA and a server certificate it signs, for the loopback HTTPS tests:
#   make-test-ca.sh DIR    → DIR/ca.pem, DIR/server.pem, DIR/server.key
# The server certificate names localhost, quotes.test, 127.0.0.1 and ::1. Nothing here is
# trusted anywhere but in the test that passes DIR/ca.pem as CONTEXT_HOST_EXTRA_CA_FILE.
set -euo pipefail
dir="$1"
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 \
    -subj "/CN=ContextHost Test CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,DNS:quotes.test,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext 2>/dev/null
