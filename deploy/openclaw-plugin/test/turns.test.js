// The plugin registered through a stand-in of the gateway's plugin API and its prompt hook
// called as OpenClaw calls it, against a real nats-server and a stand-in of Cortex's APIs.

import assert from "node:assert/strict";
import { after, afterEach, before, test } from "node:test";

import { BRIEFING_HEADING, MEMORIES_HEADING } from "../src/blocks.js";
import { closeAll } from "../src/nats.js";
import { resetSharedState, sharedState } from "../src/turns.js";
import { BOOT_DOC, freePort, recallReply, standInApi, standInCortex, startNats } from "./support.js";

let server;
let cortex;
let answers;

before(async () => {
  server = await startNats();
  cortex = await standInCortex(server.url, (kind, agent, body) => answers[kind](agent, body));
});

after(async () => {
  await cortex.close();
  await closeAll();
  await server.stop();
});

afterEach(async () => {
  cortex.asked.length = 0;
  resetSharedState();
  await closeAll();
});

async function registered(pluginConfig, options = {}) {
  const { default: plugin } = await import(`../index.js?copy=${options.copy ?? 0}`);
  // a generous deadline: these tests are about what the plugin does, not how fast (see the timeout test)
  const stand = standInApi({ pluginConfig: { natsUrl: server.url, timeoutMs: 5000, ...pluginConfig }, ...options });
  plugin.register(stand.api);
  return stand;
}

const main = (sessionId = "s-1") => ({ agentId: "main", sessionKey: "agent:main:main", sessionId, trigger: "user" });
const turn = (stand, prompt, ctx = main(), hook = "before_prompt_build") =>
  stand.hooks.get(hook).handler({ prompt, messages: [] }, ctx);

function answering({ boot = () => BOOT_DOC, recall = () => recallReply(["The deploy key rotates every Friday.", 0.9]) } = {}) {
  answers = { boot, recall };
}

test("the first turn gets the briefing and the memories; later turns the memories, the briefing from cache", async () => {
  answering();
  const stand = await registered({});
  const first = await turn(stand, "When does the deploy key rotate?");
  assert.ok(first.prependSystemContext.startsWith(BRIEFING_HEADING));
  assert.ok(first.prependSystemContext.includes("billing migration to Postgres 16"));
  assert.equal(first.prependContext, `${MEMORIES_HEADING}\n> [fact] The deploy key rotates every Friday.`);
  const second = await turn(stand, "And the billing migration?");
  assert.equal(second.prependSystemContext, first.prependSystemContext, "the briefing stays in front all session");
  assert.ok(cortex.asked.every((a) => a.agent === "main"), "asked of the agent Cortex files the session's events under");
  assert.equal(cortex.asked.filter((a) => a.kind === "boot").length, 1, "boot asked once per session");
  assert.equal(cortex.asked.filter((a) => a.kind === "recall").length, 2, "recall asked every turn");
  const boot = cortex.asked.find((a) => a.kind === "boot");
  assert.deepEqual(boot.body, { session: "agent:main:main", max_chars: 8000 });
  const recall = cortex.asked.find((a) => a.kind === "recall");
  assert.deepEqual(recall.body, { query: "When does the deploy key rotate?", limit: 5, budget_tokens: 500 });
  assert.deepEqual(sharedState().stats.boot.ok, 1);
});

test("the person of the turn: their briefing and their memories, each person of a session their own", async () => {
  answering();
  const stand = await registered({});
  const albert = { ...main(), senderId: "@albert:example.org" };
  const viola = { ...main(), channelContext: { sender: { id: " 42 " } } };
  await turn(stand, "When does the deploy key rotate?", albert);
  await turn(stand, "When does the deploy key rotate?", albert);
  await turn(stand, "When does the deploy key rotate?", viola);
  const asked = (kind) => cortex.asked.filter((a) => a.kind === kind).map((a) => a.body.person);
  assert.deepEqual(asked("boot"), ["@albert:example.org", "42"], "a briefing per person, not another's from the cache");
  assert.deepEqual(asked("recall"), ["@albert:example.org", "@albert:example.org", "42"]);
  stand.hooks.get("session_end").handler({}, main());
  await turn(stand, "When does the deploy key rotate?", albert);
  assert.equal(asked("boot").length, 3, "session_end forgets every person's briefing of the session");
  // no usable sender id: the agent's whole memory, as before; perPerson: false never asks for one
  for (const ctx of [{ ...main("s-2"), senderId: "" }, { ...main("s-3"), senderId: "x".repeat(257) }]) {
    await turn(stand, "When does the deploy key rotate?", ctx);
  }
  const off = await registered({ perPerson: false });
  await turn(off, "When does the deploy key rotate?", { ...main("s-4"), senderId: "@albert:example.org" });
  assert.deepEqual(asked("recall").slice(4), [undefined, undefined, undefined]);
});

test("a new session (a new session id) gets a fresh briefing; session_end forgets the old one", async () => {
  answering();
  const stand = await registered({});
  await turn(stand, "hello there", main("s-1"));
  await turn(stand, "hello again", main("s-2"));
  assert.equal(cortex.asked.filter((a) => a.kind === "boot").length, 2);
  stand.hooks.get("session_end").handler({}, main("s-2"));
  await turn(stand, "still there?", main("s-2"));
  assert.equal(cortex.asked.filter((a) => a.kind === "boot").length, 3);
});

test("memories that clear no minimum make no block: a top-ranked memory that is not similar is not relevant", async () => {
  // measured on the demo conversation: 'Tell me a joke about penguins' got back a rule at score 0.98, similarity 0.35
  answering({ recall: () => recallReply(["never deploy to production on Fridays", 0.98, 0.35, "rule"], ["barely related", 0.31, 0.6]) });
  const stand = await registered({ boot: { enabled: false } });
  assert.equal(await turn(stand, "What is the weather like?"), undefined);
  assert.equal(sharedState().stats.recall.empty, 1);
});

test("a Cortex that does not answer in time costs the turn its timeout, no more, and a counted warning", async () => {
  let release;
  const held = new Promise((r) => { release = r; });
  let answered = false;
  answering({ boot: () => held.then(() => { answered = true; return BOOT_DOC; }), recall: () => held });
  const stand = await registered({ timeoutMs: 50 });
  const result = await turn(stand, "Where were we?");
  assert.equal(answered, false, "the turn went on before Cortex answered");
  assert.equal(result, undefined, "no block");
  assert.equal(sharedState().stats.boot.timeout, 1);
  assert.equal(sharedState().stats.recall.timeout, 1);
  assert.equal(stand.logged.warn.length, 2);
  assert.match(stand.logged.warn[0], /did not answer within \d+ ms; the turn went on without it \(1 timeout so far\)/);
  await turn(stand, "Anyone?");
  assert.equal(sharedState().stats.recall.timeout, 2);
  assert.equal(stand.logged.warn.length, 2, "one line per kind of failure per minute");
  release();
  assert.equal(cortex.asked.filter((a) => a.kind === "boot").length, 2, "a briefing that timed out is asked again");
});

test("no Cortex service, an error reply, a reply that is not JSON: no block, counted by kind", async () => {
  const stand = await registered({ prefix: "elsewhere" });
  assert.equal(await turn(stand, "anyone home?"), undefined);
  assert.equal(sharedState().stats.boot.unavailable, 1);
  assert.equal(sharedState().stats.recall.unavailable, 1);

  answering({ boot: () => ({ error: { code: 400, message: "bad agent id" } }), recall: () => ({ raw: new TextEncoder().encode("{not json") }) });
  const other = await registered({});
  assert.equal(await turn(other, "anyone home?"), undefined);
  assert.equal(sharedState().stats.boot.refused, 1);
  assert.equal(sharedState().stats.recall.invalid, 1);
  assert.ok(other.logged.warn.some((w) => w.includes("refused: bad agent id")));
});

test("a failure raised by another copy of the module is counted by its kind (OpenClaw evaluates modules per importer)", async () => {
  const { CortexError } = await import("../src/nats.js?another-copy");
  const { createTurns } = await import("../src/turns.js");
  const { config } = (await import("../src/config.js")).resolveConfig({ boot: { enabled: false } }, {});
  const warned = [];
  const link = { request: async () => { throw new CortexError("unavailable", "nothing answers"); } };
  const turns = createTurns({ config, link, logger: { warn: (m) => warned.push(m), error: () => {} } });
  assert.equal(await turns.onPrompt({ prompt: "anyone?" }, main()), undefined);
  assert.equal(sharedState().stats.recall.unavailable, 1);
  assert.match(warned[0], /1 unavailable so far/);
});

test("NATS down: the turn goes on without Cortex, and nothing is logged as an error", async () => {
  const port = await freePort();
  const stand = await registered({ natsUrl: `nats://127.0.0.1:${port}` });
  assert.equal(await turn(stand, "is anyone there?"), undefined);
  assert.ok(sharedState().stats.recall.unavailable + sharedState().stats.recall.timeout >= 1);
  assert.equal(stand.logged.error.length, 0);
});

test("every copy of the module shares one connection and one session cache (OpenClaw loads plugins more than once)", async () => {
  answering();
  const full = await registered({}, { copy: 1, registrationMode: "full" });
  const discovery = await registered({}, { copy: 2, registrationMode: "discovery" });
  assert.equal(full.services.length, 1, "the gateway's own registration owns the service");
  assert.equal(discovery.services.length, 0);
  await turn(discovery, "first turn, dispatched to the discovery copy");
  const again = await turn(full, "second turn, another copy");
  assert.ok(again.prependSystemContext.includes("Postgres 16"));
  assert.equal(cortex.asked.filter((a) => a.kind === "boot").length, 1);
  await full.services[0].stop();
  const reconnected = await turn(discovery, "after the service stopped, a hook connects again");
  assert.ok(reconnected.prependContext.includes("deploy key"));
});

test("before_agent_start (older gateways): the briefing in front of the first prompt only", async () => {
  answering();
  const stand = await registered({ hook: "before_agent_start" });
  assert.equal(stand.hooks.has("before_prompt_build"), false);
  const first = await turn(stand, "When does the deploy key rotate?", main(), "before_agent_start");
  assert.equal(first.prependSystemContext, undefined);
  assert.ok(first.prependContext.startsWith(BRIEFING_HEADING));
  assert.ok(first.prependContext.endsWith("> [fact] The deploy key rotates every Friday."));
  const second = await turn(stand, "and then?", main(), "before_agent_start");
  assert.ok(second.prependContext.startsWith(MEMORIES_HEADING));
});

test("each part turns off: boot, recall, the whole plugin", async () => {
  answering();
  const noBoot = await registered({ boot: { enabled: false } });
  assert.equal((await turn(noBoot, "deploy key?")).prependSystemContext, undefined);
  const noRecall = await registered({ recall: { enabled: false } });
  assert.equal((await turn(noRecall, "deploy key?", main("s-9"))).prependContext, undefined);
  const off = await registered({ enabled: false });
  assert.equal(off.hooks.size, 0);
  assert.deepEqual(cortex.asked.map((a) => a.kind).sort(), ["boot", "recall"]);
});

test("a prompt too short, a session key that makes no agent id: nothing asked", async () => {
  answering();
  const stand = await registered({ boot: { enabled: false } });
  assert.equal(await turn(stand, "ok"), undefined);
  assert.equal(await turn(stand, "a real question", { agentId: "not.an.agent" }), undefined);
  assert.equal(cortex.asked.length, 0);
  assert.equal(sharedState().stats.skipped, 1);
});

test("a hostile prompt is bounded: only its head is the query", async () => {
  answering();
  const stand = await registered({ boot: { enabled: false } });
  await turn(stand, "x".repeat(100_000));
  assert.equal(cortex.asked[0].body.query.length, 2000);
});
