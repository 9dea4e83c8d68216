// The plugin's one way to Cortex: request/reply on cortex.api.<service>.<agent> over one NATS
// connection per process, each request bounded by the turn's deadline.
//
// OpenClaw (2026.9) evaluates a plugin's module more than once — the gateway's own registry
// starts the plugin's service, while the agent runs dispatch hooks to a registry loaded in
// "discovery" mode from another copy of the module, whose service never starts. So nothing a
// hook needs may live in module scope or wait for a service: the connection is made by the
// first hook that asks, and kept on globalThis, where every copy of the module finds it.

import { readFileSync } from "node:fs";
import { connect, credsAuthenticator } from "nats";

const SHARED = Symbol.for("cortex-openclaw.connections");
const RETRY_AFTER_MS = 2000; // after a failed connect, the next turns go without until this has passed
const SERVICE_ERROR = "Nats-Service-Error";

export const FAILURES = ["timeout", "unavailable", "refused", "invalid"];

/** Why a request gave no usable answer; `kind` is the counted outcome. Recognise one with
 * `isCortexError`, not `instanceof`: OpenClaw may evaluate this module once per importer, so
 * the class a caller sees need not be the class that threw. */
export class CortexError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "CortexError";
    this.kind = kind;
  }
}

export function isCortexError(err) {
  return err?.name === "CortexError" && FAILURES.includes(err.kind);
}

/** Servers and credentials of a natsUrl in the nats-eventstore style: one URL or a comma-separated
 * list, `nats://user:pass@host:port` or `nats://token@host:port`. */
export function parseNatsUrl(natsUrl) {
  const servers = [];
  let user;
  let pass;
  let token;
  for (const part of natsUrl.split(",").map((s) => s.trim()).filter(Boolean)) {
    let url;
    try {
      url = new URL(part.includes("://") ? part : `nats://${part}`);
    } catch {
      servers.push(part);
      continue;
    }
    if (url.username && url.password) [user, pass] = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
    else if (url.username) token = decodeURIComponent(url.username);
    servers.push(`${url.hostname.includes(":") ? `[${url.hostname}]` : url.hostname}:${url.port || "4222"}`);
  }
  return { servers, user, pass, token, shown: servers.join(",") };
}

function connectionOptions(options) {
  const { servers, user, pass, token } = parseNatsUrl(options.natsUrl);
  const opts = {
    servers, user, pass, token,
    name: "cortex-openclaw",
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    waitOnFirstConnect: false,
    timeout: 5000,
  };
  if (options.inboxPrefix) opts.inboxPrefix = options.inboxPrefix;
  if (options.natsCredsFile) opts.authenticator = credsAuthenticator(readFileSync(options.natsCredsFile));
  return opts;
}

function registry() {
  return (globalThis[SHARED] ??= new Map());
}

/** The process's link to one NATS system (per URL, credentials and inbox prefix). */
export function linkFor(options) {
  const key = JSON.stringify([options.natsUrl, options.natsCredsFile ?? null, options.inboxPrefix ?? null]);
  const links = registry();
  let link = links.get(key);
  if (!link) {
    link = new Link(options);
    links.set(key, link);
  }
  return link;
}

/** Close every connection of the process (the gateway stops). The links stay: a hook that
 * runs later (a reloaded plugin) connects again. */
export async function closeAll() {
  await Promise.allSettled([...registry().values()].map((link) => link.close()));
}

class Link {
  constructor(options) {
    this.options = options;
    this.shown = parseNatsUrl(options.natsUrl).shown;
    this.pending = null; // the connect in flight, shared by every turn that waits for it
    this.nc = null;
    this.failedAt = -Infinity;
    this.lastFailure = "";
  }

  /** The connection, or a CortexError when it is not there within `deadline` (ms since epoch).
   * A connect that outlives the deadline goes on for the next turn. */
  async connection(deadline) {
    if (this.nc && !this.nc.isClosed()) return this.nc;
    if (!this.pending) {
      if (Date.now() - this.failedAt < RETRY_AFTER_MS) {
        throw new CortexError("unavailable", `NATS at ${this.shown} is unreachable (${this.lastFailure})`);
      }
      this.pending = connect(connectionOptions(this.options)).then(
        (nc) => { this.nc = nc; this.pending = null; return nc; },
        (err) => {
          this.pending = null;
          this.failedAt = Date.now();
          this.lastFailure = String(err?.message ?? err);
          throw new CortexError("unavailable", `cannot connect to NATS at ${this.shown}: ${this.lastFailure}`);
        });
      this.pending.catch(() => {}); // a turn that gave up waiting must not leave it unhandled
    }
    return await within(this.pending, deadline, `no NATS connection to ${this.shown}`);
  }

  /** The decoded JSON reply of `subject`, or a CortexError; never longer than until `deadline`. */
  async request(subject, body, deadline) {
    const nc = await this.connection(deadline);
    const left = Math.max(1, deadline - Date.now());
    let msg;
    try {
      msg = await nc.request(subject, new TextEncoder().encode(JSON.stringify(body)), { timeout: left });
    } catch (err) {
      const code = String(err?.code ?? "");
      if (code === "503") throw new CortexError("unavailable", `nothing answers ${subject} (is Cortex running?)`);
      if (code === "TIMEOUT") throw new CortexError("timeout", `${subject} did not answer within ${left} ms`);
      throw new CortexError("unavailable", `${subject}: ${err?.message ?? err}`);
    }
    const refused = msg.headers?.get(SERVICE_ERROR);
    if (refused) throw new CortexError("refused", `${subject} refused: ${errorMessage(msg) ?? refused}`);
    try {
      return JSON.parse(new TextDecoder().decode(msg.data));
    } catch (err) {
      throw new CortexError("invalid", `${subject} sent a reply that is not JSON (${err.message})`);
    }
  }

  async close() {
    const nc = this.nc ?? (this.pending ? await this.pending.catch(() => null) : null);
    this.nc = null;
    if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
  }
}

function errorMessage(msg) {
  try {
    return JSON.parse(new TextDecoder().decode(msg.data))?.error?.message;
  } catch {
    return undefined;
  }
}

/** `promise`'s value, or a "timeout" CortexError at `deadline`. */
export function within(promise, deadline, what) {
  const left = deadline - Date.now();
  if (left <= 0) return Promise.reject(new CortexError("timeout", `${what} in time`));
  let timer;
  const expiry = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CortexError("timeout", `${what} within ${Math.round(left)} ms`)), left);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}
