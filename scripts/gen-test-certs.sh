#!/usr/bin/env bash
# Regenerates the throwaway TLS fixtures used by test/runtime/tcp-transport.test.ts.
#
#   ca.crt                    test CA ("shardkit test CA")
#   node-a.{crt,key}          node certificate signed by ca.crt
#   node-b.{crt,key}          node certificate signed by ca.crt
#   foreign-ca.crt            an unrelated CA
#   foreign-node.{crt,key}    node certificate signed by foreign-ca.crt
#
# Node certificates are valid for both server and client auth (mutual TLS) and carry
# SANs DNS:localhost, DNS:shardkit-node, IP:127.0.0.1, IP:::1. Validity is 100 years so
# the fixtures never expire under the tests. The CA private keys are deleted: nothing
# needs them, rerun this script to change anything. These keys protect nothing.
#
# Usage: scripts/gen-test-certs.sh [output-dir]   (default test/fixtures/tls)
set -euo pipefail

OUT="${1:-$(dirname "$0")/../test/fixtures/tls}"
DAYS=36500
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

make_ca() { # name subject
  new_key "$WORK/$1.key"
  openssl req -x509 -new -key "$WORK/$1.key" -sha256 -days "$DAYS" -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$OUT/$1.crt"
}

make_node() { # name ca common-name
  new_key "$OUT/$1.key"
  openssl req -new -key "$OUT/$1.key" -subj "/CN=$3" -out "$WORK/$1.csr"
  cat >"$WORK/$1.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:localhost,DNS:shardkit-node,IP:127.0.0.1,IP:::1
EXT
  openssl x509 -req -in "$WORK/$1.csr" -CA "$OUT/$2.crt" -CAkey "$WORK/$2.key" \
    -CAcreateserial -CAserial "$WORK/$2.srl" -sha256 -days "$DAYS" \
    -extfile "$WORK/$1.ext" -out "$OUT/$1.crt" 2>/dev/null
}

make_ca ca "shardkit test CA"
make_node node-a ca "node-a"
make_node node-b ca "node-b"
make_ca foreign-ca "foreign test CA"
make_node foreign-node foreign-ca "foreign-node"
chmod 644 "$OUT"/*.key "$OUT"/*.crt
echo "wrote $(ls "$OUT" | tr '\n' ' ')to $OUT"
