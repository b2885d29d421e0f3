// A hand-written MCP stdio server that misbehaves on purpose, for North's
// robustness tests. No SDK: it must be able to break the protocol.
//
// Usage: node fake-server.mjs MODE [--mark FILE] [--count N] [--mb N] [--state FILE]
//   many    lists --count tools (default 100) with realistic descriptions
//   crash   `work` exits mid-call the first time (--state FILE remembers), answers after
//   flood   `flood` writes --mb megabytes of non-protocol text on stdout, then answers
//   silent  `wait` never answers
// --mark FILE is created at start (proves the server was started).
// --probe FILE writes, at start, JSON with the server's environment and
//   whether it could write --outside PATH (the sandbox should stop it).
import { writeFileSync, existsSync } from "node:fs";
import { createInterface } from "node:readline";

const args = process.argv.slice(2);
const mode = args[0];
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const mark = opt("--mark");
if (mark) writeFileSync(mark, `started ${mode}\n`);
const probe = opt("--probe");
if (probe) {
  let wrote = false;
  const outside = opt("--outside");
  if (outside) {
    try {
      writeFileSync(outside, "escaped the sandbox\n");
      wrote = true;
    } catch {
      wrote = false;
    }
  }
  writeFileSync(probe, JSON.stringify({ env: process.env, wrote }));
}

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const reply = (id, result) => send({ jsonrpc: "2.0", id, result });

function tools() {
  switch (mode) {
    case "many": {
      const n = Number(opt("--count", "100"));
      return Array.from({ length: n }, (_, i) => {
        const k = String(i).padStart(3, "0");
        return {
          name: `tool_${k}`,
          description: `Tool number ${k} of the many-tools server: looks up record ${k} in the inventory and returns its fields, history and owners as JSON.`,
          inputSchema: {
            type: "object",
            properties: {
              id: { type: "string", description: `The record id within collection ${k}` },
              verbose: { type: "boolean", description: "Include the full history" },
            },
            required: ["id"],
          },
        };
      });
    }
    case "crash":
      return [{ name: "work", description: "Does work (crashes the first time).", inputSchema: { type: "object" } }];
    case "flood":
      return [{ name: "flood", description: "Floods stdout, then answers.", inputSchema: { type: "object" } }];
    case "silent":
      return [{ name: "wait", description: "Never answers.", inputSchema: { type: "object" } }];
    default:
      return [];
  }
}

function writeJunk(mb, done) {
  const line = "this is not JSON-RPC, just a chatty server " + "x".repeat(980) + "\n";
  let left = mb * 1024;
  const pump = () => {
    while (left > 0) {
      left--;
      if (!process.stdout.write(line)) {
        process.stdout.once("drain", pump);
        return;
      }
    }
    // One endless line with no newline for a while, then a newline.
    process.stdout.write("{" + "y".repeat(2 * 1024 * 1024) + "\n", done);
  };
  pump();
}

async function call(id, params) {
  const name = params?.name;
  if (mode === "many") {
    return reply(id, { content: [{ type: "text", text: `record ${params?.arguments?.id ?? "?"} from ${name}` }] });
  }
  if (mode === "crash") {
    const state = opt("--state");
    if (state && !existsSync(state)) {
      writeFileSync(state, "crashed once\n");
      process.stderr.write("fatal: simulated crash in the middle of a call\n");
      process.exit(3);
    }
    return reply(id, { content: [{ type: "text", text: "recovered and done" }] });
  }
  if (mode === "flood") {
    return writeJunk(Number(opt("--mb", "100")), () =>
      reply(id, { content: [{ type: "text", text: "flood over" }] }),
    );
  }
  if (mode === "silent") return; // never answers
  send({ jsonrpc: "2.0", id, error: { code: -32601, message: "no such tool" } });
}

if (mode === "flood") process.stdout.write("Starting the chatty server...\n");
const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return; // notifications
  switch (msg.method) {
    case "initialize":
      return reply(msg.id, {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: `fake-${mode}`, version: "1.0.0" },
      });
    case "ping":
      return reply(msg.id, {});
    case "tools/list":
      return reply(msg.id, { tools: tools() });
    case "tools/call":
      return call(msg.id, msg.params);
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `unknown method ${msg.method}` } });
  }
});
rl.on("close", () => process.exit(0));
