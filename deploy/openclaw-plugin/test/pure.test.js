import assert from "node:assert/strict";
import { test } from "node:test";

import { cortexAgent, eventStoreAgent, filedAgent, openclawAgent, personOf, sessionOf } from "../src/agent.js";
import { BRIEFING_HEADING, MEMORIES_HEADING, briefingBlock, memoriesBlock } from "../src/blocks.js";
import { resolveConfig } from "../src/config.js";
import { parseNatsUrl } from "../src/nats.js";
import { recallReply } from "./support.js";

test("defaults come from the manifest's schema", () => {
  const { config, problems } = resolveConfig(undefined, undefined);
  assert.deepEqual(problems, []);
  assert.equal(config.enabled, true);
  assert.equal(config.timeoutMs, 300);
  assert.equal(config.prefix, "cortex");
  assert.equal(config.hook, "before_prompt_build");
  assert.deepEqual(config.boot, { enabled: true, maxChars: 8000, placement: "system" });
  assert.equal(config.recall.budgetTokens, 500);
  assert.equal(config.recall.minSimilarity, 0.5);
  assert.equal(config.natsUrl, "nats://localhost:4222");
});

test("natsUrl falls back to the nats-eventstore plugin's, as the gateway is configured", () => {
  const gateway = { plugins: { entries: { "nats-eventstore": { config: { natsUrl: "nats://es:4222" } } } } };
  assert.equal(resolveConfig({}, gateway).config.natsUrl, "nats://es:4222");
  assert.equal(resolveConfig({ natsUrl: "nats://own:4222" }, gateway).config.natsUrl, "nats://own:4222");
});

test("a setting the schema refuses keeps its default and is reported", () => {
  const { config, problems } = resolveConfig(
    { timeoutMs: "fast", recall: { minScore: 7, limit: 3 }, boot: "off", agentId: "bad id", colour: "red" }, {});
  assert.equal(config.timeoutMs, 300);
  assert.equal(config.recall.minScore, 0.5);
  assert.equal(config.recall.limit, 3);
  assert.equal(config.boot.enabled, true);
  assert.equal(config.agentId, undefined);
  assert.equal(problems.length, 5, problems.join("\n"));
  assert.ok(problems.some((p) => p.includes("colour")));
});

test("the agent is named as the event store names it, unless told otherwise", () => {
  assert.equal(eventStoreAgent({ agentId: "viola", sessionKey: "agent:viola:main" }), "viola");
  assert.equal(eventStoreAgent({ agentId: "main", sessionKey: "agent:main:main" }), "agent");
  assert.equal(eventStoreAgent({ sessionKey: "main" }), "main");
  assert.equal(eventStoreAgent({ sessionKey: "albert:webchat" }), "albert");
  assert.equal(eventStoreAgent({}), "main");
  assert.equal(openclawAgent({ sessionKey: "agent:viola:telegram:42" }), "viola");
  assert.equal(openclawAgent({ agentId: "main", sessionKey: "agent:main:main" }), "main");
  assert.equal(cortexAgent({ agentId: "main", sessionKey: "agent:main:main" }, { agentIdFrom: "openclaw" }), "main");
  assert.equal(cortexAgent({ agentId: "main" }, { agentId: "albert", agentIdFrom: "eventstore" }), "albert");
  assert.equal(cortexAgent({ agentId: "ä.b" }, { agentIdFrom: "eventstore" }), null, "no valid subject token");
  // Cortex files the store's "agent" under the session key's <id> (shared/openclaw.py filed_agent: the same cases)
  assert.equal(filedAgent({ sessionKey: "agent:ops:telegram:direct:42" }), "ops");
  assert.equal(filedAgent({ agentId: "main", sessionKey: "agent:main:main" }), "main");
  assert.equal(filedAgent({ agentId: "viola", sessionKey: "agent:ops:main" }), "viola", "the store's word stands");
  for (const sessionKey of ["agent", "agent:", "agent:ops", "agent::main", "agents:ops:main"]) {
    assert.equal(filedAgent({ sessionKey }), sessionKey.startsWith("agents") ? "agents" : "agent", sessionKey);
  }
  assert.equal(cortexAgent({ agentId: "main", sessionKey: "agent:main:main" }, { agentIdFrom: "eventstore" }), "main");
  assert.equal(cortexAgent({ sessionKey: "agent:b@d:main" }, { agentIdFrom: "eventstore" }), null);
  assert.equal(sessionOf({ sessionId: "s-1", sessionKey: "agent:main:main" }), "s-1");
  assert.equal(sessionOf({ sessionKey: "agent:main:main" }), "agent:main:main");
});

test("the person of the turn is OpenClaw's sender id, as Cortex files the sender", () => {
  assert.equal(personOf({ senderId: "@albert:example.org" }), "@albert:example.org");
  assert.equal(personOf({ senderId: " 42 ", channelContext: { sender: { id: "x" } } }), "42");
  assert.equal(personOf({ channelContext: { sender: { id: "cli" } } }), "cli");
  for (const ctx of [{}, { senderId: "" }, { senderId: "   " }, { senderId: 42 }, { senderId: "x".repeat(257) }]) {
    assert.equal(personOf(ctx), undefined, JSON.stringify(ctx).slice(0, 40));
  }
});

test("the briefing block says where it comes from and names lagging workers", () => {
  const block = briefingBlock({ markdown: "# BOOTSTRAP\n\nhello", lagging: ["recall"] });
  assert.ok(block.startsWith(BRIEFING_HEADING));
  assert.ok(block.includes("# BOOTSTRAP\n\nhello"));
  assert.ok(block.includes("behind the latest events when this was assembled: recall"));
  assert.equal(briefingBlock({ markdown: "  " }), null);
  assert.equal(briefingBlock({}), null);
});

test("memories are quoted, each line, only those clearing both minimums", () => {
  const reply = recallReply(["The deploy key rotates every Friday.", 0.9], ["line one\nline two", 0.7, 0.8, "rule"],
    ["unrelated", 0.3], ["similar in score, not in meaning", 0.95, 0.1]);
  const block = memoriesBlock(reply, { minScore: 0.6, minSimilarity: 0.5 });
  assert.equal(block, [MEMORIES_HEADING,
    "> [fact] The deploy key rotates every Friday.", ">", "> [rule] line one", "> line two"].join("\n"));
  assert.equal(memoriesBlock(reply, { minScore: 0.99, minSimilarity: 0 }), null, "nothing clears: no block");
  assert.equal(memoriesBlock({ memories: "nonsense" }, { minScore: 0, minSimilarity: 0 }), null);
  assert.equal(memoriesBlock(null, { minScore: 0, minSimilarity: 0 }), null);
});

test("natsUrl in the event store's style: credentials, tokens, lists", () => {
  assert.deepEqual(parseNatsUrl("nats://u:p%40ss@h:4333"),
    { servers: ["h:4333"], user: "u", pass: "p@ss", token: undefined, shown: "h:4333" });
  assert.equal(parseNatsUrl("nats://s3cret@h").token, "s3cret");
  assert.deepEqual(parseNatsUrl("nats://a:1, nats://b:2").servers, ["a:1", "b:2"]);
  assert.deepEqual(parseNatsUrl("localhost:4222").servers, ["localhost:4222"]);
});
