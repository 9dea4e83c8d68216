// A stand-in of OpenClaw's plugin API that registers the REAL @vainplex/nats-eventstore
// plugin (installed from npm by `npm ci` in this folder) and fires hooks at it, the way an
// OpenClaw gateway would. Used by tests/e2e/test_openclaw.py and `cortex bench`'s ingest row.
//
//   node driver.mjs SCENARIO.json
//
// SCENARIO: { natsUrl, config?: {streamName, subjectPrefix, ...},
//             hooks: [ { hook, event, ctx, at? } ] }   (at: the gateway clock, epoch ms)
//
// The gateway's clock is the scenario's: Date.now() returns the current hook's `at` (the
// previous one plus a second when absent), so the events' `ts` are known to the test. After
// the last hook the driver waits for every JetStream publish the plugin made to be
// acknowledged (it tracks the nats client's requests), stops the plugin's service (drain)
// and prints one JSON line: { fired, acknowledged, failed, warnings }. Exit 1 on a failure.
import { readFileSync } from "node:fs";
import { connect } from "nats";
import plugin from "@vainplex/nats-eventstore";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));

// Every request a nats connection makes (the plugin's js.publish is one) is remembered, so
// the driver can wait for their acknowledgements instead of sleeping.
const probe = await connect({ servers: scenario.natsUrl });
const proto = Object.getPrototypeOf(probe);
const original = proto.request;
const inflight = [];
proto.request = function request(...args) {
  const reply = original.apply(this, args);
  inflight.push(reply);
  return reply;
};
await probe.close();

let clock = scenario.start ?? Date.UTC(2026, 1, 17, 9, 0, 0);
Date.now = () => clock;

const warnings = [];
const logger = {
  info: () => {},
  debug: () => {},
  warn: (msg) => warnings.push(msg),
  error: (msg) => warnings.push(msg),
};
const config = { natsUrl: scenario.natsUrl, ...(scenario.config ?? {}) };
const handlers = new Map();
const services = [];
const api = {
  id: "nats-eventstore",
  pluginConfig: config, // a full inline config: the plugin uses it as is (no config file)
  logger,
  config: {},
  registerService: (service) => services.push(service),
  registerCommand: () => {},
  registerGatewayMethod: () => {},
  on: (hookName, handler) => {
    const list = handlers.get(hookName) ?? [];
    list.push(handler);
    handlers.set(hookName, list);
  },
};
plugin.register(api);
const ctx = { logger, config: { plugins: { entries: { "nats-eventstore": { config } } } } };
for (const service of services) await service.start(ctx);
inflight.length = 0; // the plugin's own set-up requests (stream info, creation) are not events

let fired = 0;
for (const step of scenario.hooks) {
  clock = step.at ?? clock + 1000;
  for (const handler of handlers.get(step.hook) ?? []) {
    handler(step.event ?? {}, step.ctx ?? {});
    fired += 1;
  }
}

const settled = await Promise.allSettled(inflight);
const failed = settled.filter((s) => s.status === "rejected").length;
for (const service of services) await service.stop(ctx);
console.log(JSON.stringify({ fired, acknowledged: settled.length - failed, failed, warnings }));
process.exit(failed || warnings.length ? 1 : 0);
