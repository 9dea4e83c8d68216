"""Cortex infrastructure: settings, connection, provisioning, the consume loop, KV helpers,
metrics, health and logging. No conversation logic lives here."""

CORTEX_SHARED_PACKAGE = True  # marker: proves `import shared` resolved to Cortex's package
