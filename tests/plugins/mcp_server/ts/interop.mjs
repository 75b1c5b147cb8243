// The TypeScript MCP SDK's client against `hermes mcp` over stdio (what Claude Code and Codex
// speak). Usage: node interop.mjs SCENARIO.json — the scenario names the command to start and
// the calls to make; every answer is printed as one JSON document on stdout for the Python test.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = new StdioClientTransport({
  command: scenario.command,
  args: scenario.args,
  env: scenario.env,
  stderr: "inherit",
});
const client = new Client({ name: "hermes-interop", version: "1.0.0" });
await client.connect(transport);

const answers = { server: client.getServerVersion(), tools: [], calls: [], reads: [] };
answers.tools = (await client.listTools()).tools;
for (const call of scenario.calls) {
  answers.calls.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
for (const uri of scenario.reads) {
  try {
    answers.reads.push({ uri, result: await client.readResource({ uri }) });
  } catch (error) {
    answers.reads.push({ uri, error: { code: error.code, message: error.message } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(answers));
