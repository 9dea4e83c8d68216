"""Query APIs over the derived documents (``cortex.api.<service>.<agent>``)."""
