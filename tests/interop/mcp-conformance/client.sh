#!/bin/sh
# North as the client of the MCP conformance suite. The suite runs
# `client.sh URL` (the scenario's server URL last) with MCP_CONFORMANCE_SCENARIO
# set, and MCP_CONFORMANCE_CONTEXT for scenarios with a pre-registered client.
# Each run gets a home of its own (config, tokens), so parallel scenarios never
# share tokens; the "browser" follows the authorization URL's redirects back to
# North's loopback callback (browser.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for url in "$@"; do :; done
north=${NORTH_BIN:?set NORTH_BIN to the north binary}
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT INT TERM
export HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_STATE_HOME="$home/state" XDG_DATA_HOME="$home/data"
mkdir -p "$XDG_CONFIG_HOME/north" "$home/project"
export BROWSER="$here/browser.sh"
# The entry's oauth block: the context's pre-registered client (its secret
# through a variable, as North requires), else a Client ID Metadata Document
# (used only where the authorization server takes them), else registration.
node -e '
const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const oauth = ctx.client_id
  ? { clientId: ctx.client_id, clientSecret: "${CONFORMANCE_CLIENT_SECRET}" }
  : { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" };
const entry = { type: "http", url: process.argv[1], oauth };
process.stdout.write(JSON.stringify({ mcpServers: { conf: entry } }));
' "$url" > "$XDG_CONFIG_HOME/north/mcp.json"
CONFORMANCE_CLIENT_SECRET=$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}").client_secret || "")')
export CONFORMANCE_CLIENT_SECRET
cd "$home/project"
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  initialize) "$north" mcp get conf ;;
  tools_call) "$north" mcp call conf add_numbers --args '{"a": 2, "b": 3}' ;;
  elicitation-sep1034-client-defaults) "$north" mcp call conf test_client_elicitation_defaults --yes ;;
  sse-retry) "$north" mcp call conf test_reconnection ;;
  *) "$north" mcp call conf test-tool ;;
esac
