"""Boot worker: assembles the BOOTSTRAP briefing from an agent's documents (design section 4.3)."""

from workers.boot.assemble import assemble_boot
from workers.boot.budget import TRUNCATION_MARKER
from workers.boot.inputs import BootInputs
from workers.boot.state import execution_mode

__all__ = [
    "TRUNCATION_MARKER",
    "BootInputs",
    "assemble_boot",
    "execution_mode",
]
