// The TypeScript ACP SDK's client (the reference implementation editors build on) against
// `hermes acp` over stdio. Usage: node interop.mjs SCENARIO.json — the scenario names the
// command to start, its environment, the editor's folder and the prompt; everything received
// is printed as one JSON document on stdout for the Python test.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { PROTOCOL_VERSION, client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const agentProcess = spawn(scenario.command, scenario.args, {
  env: scenario.env,
  cwd: scenario.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => agentProcess.on("exit", (code) => resolve(code)));
const stream = ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

const updates = [];
const editor = client({ name: "hermes-interop" }).onNotification(
  methods.client.session.update,
  ({ params }) => {
    updates.push(params);
  },
);

const answers = await editor.connectWith(stream, async (agent) => {
  const initialized = await agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "hermes-interop", version: "1.0.0" },
  });
  const created = await agent.request(methods.agent.session.new, {
    cwd: scenario.cwd,
    mcpServers: [],
  });
  const prompted = await agent.request(methods.agent.session.prompt, {
    sessionId: created.sessionId,
    prompt: [{ type: "text", text: scenario.prompt }],
  });
  const listed = await agent.request(methods.agent.session.list, {});
  let unknown = null;
  try {
    await agent.request(methods.agent.session.load, {
      sessionId: scenario.unknownSession,
      cwd: scenario.cwd,
      mcpServers: [],
    });
  } catch (error) {
    unknown = { code: error.code, message: error.message };
  }
  return { initialized, created, prompted, listed, unknown };
});
agentProcess.stdin.end();
const exitCode = await exited;
process.stdout.write(JSON.stringify({ ...answers, updates, exitCode }));
