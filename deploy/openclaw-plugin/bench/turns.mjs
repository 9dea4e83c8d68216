// cortex bench's driver of this plugin (workers/bench/pluginlatency.py): the prompt hook called
// as the gateway calls it, each call beside the bare NATS request it makes, in one Node process.
// Argument: a JSON file {natsUrl, agent, prefix, turns, warmUp, prompts, maxChars, budgetTokens,
// limit}. Output: one JSON line {node, boot, bootDirect, recall, recallDirect, firstTurn, stats},
// each a list of milliseconds:
//   boot        a session's first turn with recall off: the briefing asked (its added time)
//   recall      a later turn of a session with its briefing cached: the memories asked
//   firstTurn   a session's first turn with both: the two asks run side by side
//   *Direct     the same request sent on the same kind of connection, without the plugin
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { connect } from "nats";

import plugin from "../index.js";
import { closeAll } from "../src/nats.js";
import { sharedState } from "../src/turns.js";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const codec = { encode: (v) => new TextEncoder().encode(JSON.stringify(v)) };

function register(config) {
  const hooks = new Map();
  const api = {
    id: "cortex", registrationMode: "full", logger: silent, config: {},
    pluginConfig: { natsUrl: spec.natsUrl, prefix: spec.prefix, agentId: spec.agent, timeoutMs: 10000, ...config },
    on(name, handler) { hooks.set(name, handler); },
    registerService() {},
  };
  plugin.register(api);
  return hooks.get("before_prompt_build");
}

const recall = { budgetTokens: spec.budgetTokens, limit: spec.limit, minScore: 0, minSimilarity: -1 };
const bootOnly = register({ boot: { maxChars: spec.maxChars }, recall: { ...recall, enabled: false } });
const recallOnly = register({ boot: { enabled: false }, recall });
const both = register({ boot: { maxChars: spec.maxChars }, recall });
const nc = await connect({ servers: spec.natsUrl, name: "cortex-bench-direct" });
const subject = (service) => `${spec.prefix}.api.${service}.${spec.agent}`;

async function timed(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const ctx = (session) => ({ agentId: spec.agent, sessionKey: `agent:${spec.agent}:${session}`, sessionId: session });
const out = { node: process.version, boot: [], bootDirect: [], recall: [], recallDirect: [], firstTurn: [] };
await recallOnly({ prompt: "warm the cache" }, ctx("recall-session")); // this session's turns are later turns
for (let i = 0; i < spec.warmUp + spec.turns; i += 1) {
  const keep = i >= spec.warmUp;
  const prompt = spec.prompts[i % spec.prompts.length];
  const steps = [
    ["boot", () => bootOnly({ prompt }, ctx(`boot-${i}`))],
    ["bootDirect", () => nc.request(subject("boot"), codec.encode({ session: `agent:${spec.agent}:boot-${i}`, max_chars: spec.maxChars }), { timeout: 10000 })],
    ["recall", () => recallOnly({ prompt }, ctx("recall-session"))],
    ["recallDirect", () => nc.request(subject("recall"), codec.encode({ query: prompt, limit: spec.limit, budget_tokens: spec.budgetTokens }), { timeout: 10000 })],
    ["firstTurn", () => both({ prompt }, ctx(`first-${i}`))],
  ];
  if (i % 2) steps.reverse(); // each side first half the time
  for (const [name, step] of steps) {
    const ms = await timed(step);
    if (keep) out[name].push(ms);
  }
}
out.stats = sharedState().stats;
process.stdout.write(JSON.stringify(out) + "\n");
await nc.close();
await closeAll();
