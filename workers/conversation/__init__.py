"""Pattern registry and signal extraction shared by the threads and decisions workers.

Pure code: no I/O, no clock. ``patterns.get_patterns`` compiles the enabled languages once;
``signals.extract_signals`` and ``signals.detect_mood`` read one message. Import each name
from the module that defines it.
"""
