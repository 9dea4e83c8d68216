// One turn: the briefing at a session's first turn, the memories that match the prompt at
// every turn, each asked of Cortex within the turn's deadline and left out when it is not
// there in time. Whatever happens, the turn goes on: this code never throws into the gateway.

import { cortexAgent, personOf, sessionOf } from "./agent.js";
import { briefingBlock, memoriesBlock } from "./blocks.js";
import { CortexError, FAILURES, isCortexError } from "./nats.js";

const STATE = Symbol.for("cortex-openclaw.state");
export const MAX_SESSIONS = 1000; // briefings kept; the oldest session's is dropped first
export const MAX_QUERY_CHARS = 2000; // the prompt's head is the query (the recall API embeds it)
export const WARN_EVERY_MS = 60_000; // one warning line per kind of failure per minute, with its count
const OUTCOMES = ["ok", "empty", ...FAILURES];

function newStats() {
  const per = () => Object.fromEntries(OUTCOMES.map((o) => [o, 0]));
  return { boot: per(), recall: per(), skipped: 0, errors: 0 };
}

/** The process-wide state every copy of the module shares (see src/nats.js for why): the
 * sessions' briefings, the counts, when each kind of warning was last logged. */
export function sharedState() {
  return (globalThis[STATE] ??= { sessions: new Map(), stats: newStats(), warned: new Map() });
}

export function resetSharedState() {
  delete globalThis[STATE];
}

/**
 * The turn logic over a link to Cortex (src/nats.js `linkFor`) and the gateway's logger.
 * `onPrompt(event, ctx)` is the prompt hook's handler; `onSessionEnd` forgets a briefing.
 */
export function createTurns({ config, link, logger, state = sharedState(), now = Date.now }) {
  const legacy = config.hook === "before_agent_start";
  const inSystem = config.boot.placement === "system" && !legacy; // before_agent_start cannot add to the system prompt

  function count(kind, outcome) {
    state.stats[kind][outcome] += 1;
  }

  function warn(kind, err) {
    const key = `${kind}:${err.kind}`;
    const last = state.warned.get(key) ?? -Infinity;
    if (now() - last < WARN_EVERY_MS) return;
    state.warned.set(key, now());
    const total = state.stats[kind][err.kind];
    logger.warn(`[cortex] ${kind}: ${err.message}; the turn went on without it (${total} ${err.kind} so far)`);
  }

  async function ask(kind, subject, body, deadline) {
    try {
      return await link.request(subject, body, deadline);
    } catch (err) {
      const failure = isCortexError(err) ? err : new CortexError("invalid", String(err?.message ?? err));
      count(kind, failure.kind);
      warn(kind, failure);
      return null;
    }
  }

  function remember(key, briefing) {
    state.sessions.delete(key);
    state.sessions.set(key, briefing);
    while (state.sessions.size > MAX_SESSIONS) state.sessions.delete(state.sessions.keys().next().value);
  }

  async function briefing(agent, person, ctx, key, deadline) {
    const doc = await ask("boot", `${config.prefix}.api.boot.${agent}`,
      { session: (ctx.sessionKey || ctx.sessionId || "").slice(0, 128) || undefined, max_chars: config.boot.maxChars,
        person },
      deadline);
    if (doc === null) return undefined; // asked again at the next turn
    const block = briefingBlock(doc);
    count("boot", block ? "ok" : "empty");
    remember(key, block);
    return block;
  }

  async function memories(agent, person, prompt, deadline) {
    const reply = await ask("recall", `${config.prefix}.api.recall.${agent}`,
      { query: prompt.slice(0, MAX_QUERY_CHARS), limit: config.recall.limit, budget_tokens: config.recall.budgetTokens,
        person },
      deadline);
    if (reply === null) return null;
    const block = memoriesBlock(reply, config.recall);
    count("recall", block ? "ok" : "empty");
    return block;
  }

  function promptOf(event) {
    const current = event?.currentUserMessage;
    const text = typeof current === "string" ? current : event?.prompt;
    return typeof text === "string" ? text.trim() : "";
  }

  async function turn(event, ctx) {
    const agent = cortexAgent(ctx, config);
    if (agent === null) {
      state.stats.skipped += 1;
      return undefined;
    }
    // the person's briefing and memories: theirs and the agent's shared ones, never another person's
    const person = config.perPerson ? personOf(ctx) : undefined;
    const key = `${agent}\u0000${sessionOf(ctx)}\u0000${person ?? ""}`;
    const prompt = promptOf(event);
    const deadline = now() + config.timeoutMs;
    const first = config.boot.enabled && !state.sessions.has(key);
    const recall = config.recall.enabled && prompt.length >= config.recall.minPromptChars;
    const [fresh, recalled] = await Promise.all([
      first ? briefing(agent, person, ctx, key, deadline) : undefined,
      recall ? memories(agent, person, prompt, deadline) : null,
    ]);
    const result = {};
    const known = state.sessions.get(key);
    if (inSystem && known) result.prependSystemContext = known;
    const inPrompt = [!inSystem && fresh, recalled].filter(Boolean);
    if (inPrompt.length) result.prependContext = inPrompt.join("\n\n");
    return Object.keys(result).length ? result : undefined;
  }

  return {
    state,
    async onPrompt(event, ctx) {
      try {
        return await turn(event, ctx ?? {});
      } catch (err) { // a bug here must not cost the user their turn
        state.stats.errors += 1;
        logger.error(`[cortex] the prompt hook failed: ${err?.stack ?? err}`);
        return undefined;
      }
    },
    onSessionEnd(_event, ctx) {
      const agent = cortexAgent(ctx ?? {}, config);
      if (agent === null) return;
      const session = `${agent}\u0000${sessionOf(ctx ?? {})}\u0000`; // every person's briefing of it
      for (const key of [...state.sessions.keys()]) if (key.startsWith(session)) state.sessions.delete(key);
    },
  };
}
