// cortex bench's TypeScript MCP host: the official SDK's Client on stdio, as a Node agent
// host (OpenClaw's) runs it, driving `cortex mcp` (the command and its arguments are this
// script's arguments). One JSON request a line on stdin ({"name", "arguments", "structured"}),
// one JSON answer a line on stdout, in the shape of workers/bench/mcplatency.py's Answer: the
// call's time in seconds inside this process (the SDK's callTool, its output-schema check
// included), whether it was a tool error, the error's text, and the structured content when
// asked for.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const sdk = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url)));
const out = (answer) => process.stdout.write(JSON.stringify(answer) + "\n");

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "cortex-bench", version: "1" });
await client.connect(transport);
await client.listTools(); // a host lists the tools first; the client then checks results against their output schemas
out({ ready: true, sdk: sdk.version, node: process.version, server_pid: transport.pid });

for await (const line of createInterface({ input: process.stdin })) {
  const { name, arguments: args_, structured } = JSON.parse(line);
  const started = performance.now();
  try {
    const result = await client.callTool({ name, arguments: args_ });
    const seconds = (performance.now() - started) / 1000;
    out({ seconds, is_error: Boolean(result.isError),
          text: result.isError ? String(result.content?.[0]?.text ?? "").slice(0, 300) : "",
          structured: structured ? (result.structuredContent ?? null) : null });
  } catch (err) {
    out({ seconds: (performance.now() - started) / 1000, is_error: true, text: String(err).slice(0, 300),
          structured: null });
  }
}
await client.close();
