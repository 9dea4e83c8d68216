"""Boot worker: assembles the BOOTSTRAP briefing from an agent's documents (design section 4.3)."""

from workers.boot.assemble import assemble_boot
from workers.boot.budget import DESIGN_BUDGETS, TRUNCATION_MARKER, Budgets, scaled_budgets
from workers.boot.inputs import BootInputs
from workers.boot.state import execution_mode

__all__ = [
    "DESIGN_BUDGETS",
    "TRUNCATION_MARKER",
    "BootInputs",
    "Budgets",
    "assemble_boot",
    "execution_mode",
    "scaled_budgets",
]
