"""``cortex web``: what Cortex knows about each agent, in a browser, live — and the corrections
a person makes in the CLI, as the same FeedbackEvents.

``markdown`` and ``pages`` are pure (typed values → HTML text); ``reader`` reads through the
request APIs and the stored documents the CLI reads, and the stream for an item's source
events; ``app`` is the thin ASGI shell (routes, tokens, server-sent events from KV watches).
"""
