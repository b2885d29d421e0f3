// Drives `north acp` with the official TypeScript ACP SDK as an editor that
// passes an MCP server in `session/new` (the reference server-everything,
// over stdio) and shows servers' forms (`elicitation/create`): the prompt's
// turn calls the server's tools, the form is filled in here, and North's
// recorded model requests must carry the server's answers. Prints one JSON
// line with what it saw; exits non-zero when a check fails.
//
//   node client-mcp.mjs NORTH SCRIPT_JSON PROJECT_DIR REQUESTS_JSONL NODE SERVER_ENTRY
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { ClientApp, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [north, script, project, requests, node, entry] = process.argv.slice(2);
const child = spawn(north, ["acp", "--script", script, "--record-requests", requests], {
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const forms = [];
const asked = [];
const app = new ClientApp()
  .onNotification("session/update", () => {})
  .onRequest("session/request_permission", ({ params }) => {
    asked.push(params.toolCall.title);
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest("elicitation/create", ({ params }) => {
    forms.push(params);
    return { action: "accept", content: { name: "Ada Lovelace", check: true, integer: 7 } };
  });

let result;
try {
  result = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { elicitation: { form: {} } },
    });
    const session = await ctx.request("session/new", {
      cwd: project,
      mcpServers: [{ name: "everything", command: node, args: [entry, "stdio"], env: [] }],
    });
    const done = await ctx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "use the everything server" }],
    });
    return { init, session, done };
  });
} finally {
  child.kill();
}

const sent = readFileSync(requests, "utf8");
const form = forms[0] ?? {};
const checks = {
  httpServersOffered: result.init.agentCapabilities?.mcpCapabilities?.http === true,
  endTurn: result.done.stopReason === "end_turn",
  toolsAskedFor: asked.length === 2,
  formShown: forms.length === 1,
  formIsForTheSession: form.sessionId === result.session.sessionId && form.mode === "form",
  formHasTheServersFields: form.requestedSchema?.required?.includes("name") === true,
  answerReachedTheModel: sent.includes("Ada Lovelace"),
  rootsAreTheProject: sent.includes(`file://${project}`),
};
console.log(JSON.stringify({ checks, asked, forms: forms.length }));
process.exit(Object.values(checks).every(Boolean) ? 0 : 1);
