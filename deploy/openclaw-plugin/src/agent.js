// Which Cortex agent a turn belongs to, and which person it is with. Cortex files an OpenClaw
// gateway's events under the agent the @vainplex/nats-eventstore plugin names, but for the
// events that store files under `agent` (OpenClaw 2026.9's session keys), which Cortex files
// under the agent their session key names (shared/openclaw.py, filed_agent). By default the
// briefing and the memories are asked of that same agent.

export const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const SESSION_AGENT = "agent"; // the store's name for every agent of a 2026.9 gateway
export const MAX_PERSON_CHARS = 256; // Cortex's limit (RecallRequest.person)

/** The event store's rule: ctx.agentId unless it is "main", else the session key's first
 * segment, else "main" (@vainplex/nats-eventstore 0.2.x, src/util.ts extractAgentId). With
 * OpenClaw's session keys of the form `agent:<id>:<rest>` that segment is "agent". */
export function eventStoreAgent(ctx) {
  if (ctx.agentId && ctx.agentId !== "main") return ctx.agentId;
  if (ctx.sessionKey) return ctx.sessionKey === "main" ? "main" : ctx.sessionKey.split(":")[0] || "main";
  return "main";
}

/** The agent Cortex files the session's store events under: the store's, but where the store
 * said "agent", the `<id>` of the `agent:<id>:<rest>` session key. */
export function filedAgent(ctx) {
  const store = eventStoreAgent(ctx);
  if (store !== SESSION_AGENT) return store;
  const match = /^agent:([^:]+):/.exec(ctx.sessionKey ?? "");
  return match ? match[1] : store;
}

/** OpenClaw's own agent id: ctx.agentId, else the `<id>` of an `agent:<id>:…` session key. */
export function openclawAgent(ctx) {
  if (ctx.agentId) return ctx.agentId;
  const match = /^agent:([^:]+):/.exec(ctx.sessionKey ?? "");
  return match ? match[1] : "main";
}

/** The Cortex agent of a turn, or null when that name is no valid Cortex agent id. */
export function cortexAgent(ctx, config) {
  const agent = config.agentId ?? (config.agentIdFrom === "openclaw" ? openclawAgent(ctx) : filedAgent(ctx));
  return AGENT_ID.test(agent) ? agent : null;
}

/** The person of the turn: OpenClaw's sender id (ctx.senderId, else the channel's sender), the
 * same id the event store records on the message (metadata.senderId) and Cortex files as its
 * sender; undefined when the turn names none usable. */
export function personOf(ctx) {
  const id = ctx.senderId ?? ctx.channelContext?.sender?.id;
  const person = typeof id === "string" ? id.trim() : "";
  return person && person.length <= MAX_PERSON_CHARS ? person : undefined;
}

/** The session a briefing belongs to: OpenClaw's session id (a new one after /new or a reset),
 * else its key. */
export function sessionOf(ctx) {
  return ctx.sessionId || ctx.sessionKey || "";
}
