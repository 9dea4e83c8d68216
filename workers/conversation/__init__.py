"""Pattern registry and signal extraction shared by the threads and decisions workers.

Pure code: no I/O, no clock. ``get_patterns`` compiles the enabled languages once;
``extract_signals`` and ``detect_mood`` read one message.
"""

from workers.conversation.feedback import FeedbackError, feedback_target
from workers.conversation.ids import derive_id
from workers.conversation.patterns import Family, MatchText, Pattern, PatternSet, get_patterns, prepare_text
from workers.conversation.signals import (
    Signals,
    Words,
    detect_mood,
    extract_signals,
    is_noise_topic,
    matches_title,
    words_of,
)

__all__ = [
    "Family",
    "FeedbackError",
    "MatchText",
    "Pattern",
    "PatternSet",
    "Signals",
    "Words",
    "derive_id",
    "detect_mood",
    "extract_signals",
    "feedback_target",
    "get_patterns",
    "is_noise_topic",
    "matches_title",
    "prepare_text",
    "words_of",
]
