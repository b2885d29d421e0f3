// Drives `north acp` with the official TypeScript ACP SDK, as an editor
// would: initialize, a new session, one prompt whose edit needs permission
// (granted here), then checks the file on disk. Prints one JSON line with
// what it saw; exits non-zero when a check fails.
//
//   node client.mjs NORTH_BINARY SCRIPT_JSON PROJECT_DIR
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { ClientApp, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [north, script, project] = process.argv.slice(2);
const child = spawn(north, ["acp", "--script", script], {
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const asked = [];
const app = new ClientApp()
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    asked.push({
      title: params.toolCall.title,
      kinds: params.options.map((o) => o.kind),
      fileBefore: readFileSync(`${project}/a.txt`, "utf8"),
    });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

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
      prompt: [{ type: "text", text: "change one to two" }],
    });
    return { init, session, done };
  });
} finally {
  child.kill();
}

const text = updates
  .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
  .map((u) => u.content.text)
  .join("");
const after = readFileSync(`${project}/a.txt`, "utf8");
const checks = {
  agentName: result.init.agentInfo?.name === "north",
  loadSession: result.init.agentCapabilities?.loadSession === true,
  endTurn: result.done.stopReason === "end_turn",
  streamed: text.includes("EDITING") && text.includes("INTEROP-DONE"),
  askedOnce: asked.length === 1,
  nothingWrittenBeforePermission: asked[0]?.fileBefore === "one\n",
  written: after === "two\n",
  toolCallShown: updates.some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit"),
};
console.log(JSON.stringify({ checks, asked, text }));
process.exit(Object.values(checks).every(Boolean) ? 0 : 1);
