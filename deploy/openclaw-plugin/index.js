// OpenClaw gateway plugin "cortex": Cortex's BOOTSTRAP briefing at a session's first turn and
// the memories that match each prompt, in front of the model. See README.md.

import { resolveConfig, MANIFEST } from "./src/config.js";
import { closeAll, linkFor } from "./src/nats.js";
import { createTurns } from "./src/turns.js";

const plugin = {
  id: MANIFEST.id,
  name: MANIFEST.name,
  description: MANIFEST.description,
  version: MANIFEST.version,

  register(api) {
    const { config, problems } = resolveConfig(api.pluginConfig, api.config);
    for (const problem of problems) api.logger.warn(`[cortex] ${problem}`);
    if (!config.enabled) {
      api.logger.info("[cortex] disabled by config");
      return;
    }
    const turns = createTurns({ config, link: linkFor(config), logger: api.logger });
    api.on(config.hook, turns.onPrompt, { priority: 10 });
    api.on("session_end", turns.onSessionEnd);
    // Connections are made by the hooks that need them (src/nats.js); the gateway's own
    // registration closes them when the gateway stops.
    if ((api.registrationMode ?? "full") === "full") {
      api.registerService({ id: "cortex", start() {}, async stop() { await closeAll(); } });
    }
  },
};

export default plugin;
