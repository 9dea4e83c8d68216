// Which Cortex agent a turn belongs to. Cortex files an OpenClaw gateway's events under the
// agent the @vainplex/nats-eventstore plugin names (CONTRACT: "Cortex uses whatever the store
// says"), so by default the briefing and the memories are asked of that same name.

export const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The event store's rule: ctx.agentId unless it is "main", else the session key's first
 * segment, else "main" (@vainplex/nats-eventstore 0.2.x, src/util.ts extractAgentId). With
 * OpenClaw's session keys of the form `agent:<id>:<rest>` that segment is "agent". */
export function eventStoreAgent(ctx) {
  if (ctx.agentId && ctx.agentId !== "main") return ctx.agentId;
  if (ctx.sessionKey) return ctx.sessionKey === "main" ? "main" : ctx.sessionKey.split(":")[0] || "main";
  return "main";
}

/** OpenClaw's own agent id: ctx.agentId, else the `<id>` of an `agent:<id>:…` session key. */
export function openclawAgent(ctx) {
  if (ctx.agentId) return ctx.agentId;
  const match = /^agent:([^:]+):/.exec(ctx.sessionKey ?? "");
  return match ? match[1] : "main";
}

/** The Cortex agent of a turn, or null when that name is no valid Cortex agent id. */
export function cortexAgent(ctx, config) {
  const agent = config.agentId ?? (config.agentIdFrom === "openclaw" ? openclawAgent(ctx) : eventStoreAgent(ctx));
  return AGENT_ID.test(agent) ? agent : null;
}

/** The session a briefing belongs to: OpenClaw's session id (a new one after /new or a reset),
 * else its key. */
export function sessionOf(ctx) {
  return ctx.sessionId || ctx.sessionKey || "";
}
