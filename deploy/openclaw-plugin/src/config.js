// The plugin's settings: openclaw.plugin.json's schema is the one definition of every knob and
// its default; this module reads the defaults from it and resolves what the gateway passed.
import { readFileSync } from "node:fs";

export const MANIFEST = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));

const SCHEMA = MANIFEST.configSchema.properties;
const FALLBACK_NATS_URL = "nats://localhost:4222";

/** The defaults of one level of the schema (nested objects get their own). */
function defaults(properties) {
  const out = {};
  for (const [name, spec] of Object.entries(properties)) {
    if (spec.type === "object" && spec.properties) out[name] = defaults(spec.properties);
    else if ("default" in spec) out[name] = spec.default;
  }
  return out;
}

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `value` fits `spec` (the subset of JSON Schema the manifest uses). */
function fits(spec, value) {
  switch (spec.type) {
    case "boolean": return typeof value === "boolean";
    case "string":
      return typeof value === "string" && (!spec.enum || spec.enum.includes(value))
        && (!spec.pattern || new RegExp(spec.pattern).test(value));
    case "integer":
    case "number":
      return typeof value === "number" && Number.isFinite(value) && (spec.type === "number" || Number.isInteger(value))
        && (spec.minimum === undefined || value >= spec.minimum) && (spec.maximum === undefined || value <= spec.maximum);
    default: return false;
  }
}

/** `given` over the defaults, level by level; a value the schema refuses keeps the default and
 * is reported (old gateways do not validate plugin config against the manifest). */
function merge(properties, given, path, problems) {
  const out = defaults(properties);
  if (!isObject(given)) return out;
  for (const [name, value] of Object.entries(given)) {
    const spec = properties[name];
    const where = path ? `${path}.${name}` : name;
    if (!spec) problems.push(`unknown setting ${where} ignored`);
    else if (spec.type === "object") {
      if (isObject(value)) out[name] = merge(spec.properties, value, where, problems);
      else problems.push(`${where} must be an object; defaults kept`);
    } else if (fits(spec, value)) out[name] = value;
    else problems.push(`${where}=${JSON.stringify(value)} is not allowed (${spec.description ?? spec.type}); default kept`);
  }
  return out;
}

/**
 * The resolved settings and what was wrong with the given ones.
 * @param {unknown} pluginConfig  `plugins.entries.cortex.config`
 * @param {unknown} gatewayConfig the gateway's whole config (for the event store's natsUrl)
 */
export function resolveConfig(pluginConfig, gatewayConfig) {
  const problems = [];
  const config = merge(SCHEMA, pluginConfig, "", problems);
  config.natsUrl ??= eventStoreNatsUrl(gatewayConfig) ?? FALLBACK_NATS_URL;
  return { config, problems };
}

/** The nats-eventstore plugin's natsUrl: the gateway's NATS settings, reused. */
export function eventStoreNatsUrl(gatewayConfig) {
  const url = gatewayConfig?.plugins?.entries?.["nats-eventstore"]?.config?.natsUrl;
  return typeof url === "string" && url.trim() ? url : undefined;
}
