// Drives `north serve` with the official TypeScript ACP SDK as an editor
// would, over the server's unix socket (the token on the first line, then
// newline-delimited JSON) or its WebSocket (the SDK's own WebSocket
// transport, the token as a bearer header): initialize, a new session, one
// prompt whose turn runs a tool and proposes an edit that needs permission
// (granted here), then checks the file on disk. Prints one JSON line with
// what it saw; exits non-zero when a check fails.
//
//   node [--experimental-websocket] client-serve.mjs ADDRESS TOKEN_FILE PROJECT_DIR
//   ADDRESS: unix:PATH or ws://127.0.0.1:PORT
import { createConnection } from "node:net";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { ClientApp, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const [address, tokenFile, project] = process.argv.slice(2);
const token = readFileSync(tokenFile, "utf8").trim();

async function open() {
  if (address.startsWith("unix:")) {
    const socket = createConnection(address.slice("unix:".length));
    await new Promise((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.write(JSON.stringify({ token }) + "\n");
    return { stream: ndJsonStream(Writable.toWeb(socket), Readable.toWeb(socket)), close: () => socket.destroy() };
  }
  // Node's WebSocket takes headers in its init object; the SDK passes them
  // as a third argument, as the `ws` package takes them.
  class WithHeaders extends WebSocket {
    constructor(url, protocols, init) {
      super(url, { protocols, headers: init?.headers });
    }
  }
  const stream = createWebSocketStream(address, {
    WebSocket: WithHeaders,
    headers: { Authorization: `Bearer ${token}` },
    cookies: "omit",
  });
  return { stream, close: () => {} };
}

const updates = [];
const asked = [];
const app = new ClientApp()
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    asked.push({
      title: params.toolCall.title,
      fileBefore: readFileSync(`${project}/a.txt`, "utf8"),
    });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

const { stream, close } = await open();
let result;
try {
  result = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const session = await ctx.request("session/new", { cwd: project, mcpServers: [] });
    const done = await ctx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "look, then change one to two" }],
    });
    return { init, session, done };
  });
} finally {
  close();
}

const text = updates
  .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
  .map((u) => u.content.text)
  .join("");
const after = readFileSync(`${project}/a.txt`, "utf8");
const checks = {
  agentName: result.init.agentInfo?.name === "north",
  endTurn: result.done.stopReason === "end_turn",
  streamed: text.includes("LOOKING") && text.includes("SERVED-DONE"),
  toolCallShown: updates.some((u) => u.sessionUpdate === "tool_call" && u.kind === "search"),
  toolCallCompleted: updates.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"),
  askedOnce: asked.length === 1,
  nothingWrittenBeforePermission: asked[0]?.fileBefore === "one\n",
  written: after === "two\n",
};
console.log(JSON.stringify({ checks, asked, text }));
process.exit(Object.values(checks).every(Boolean) ? 0 : 1);
