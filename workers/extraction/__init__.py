"""Model-based extraction (issue 38): with a model configured, a model reads each session
window with the patterns' result as its prior, and the briefing shows what it found that the
patterns missed and leaves out what they took wrongly. ``model`` is the prompt and the
answer's validation, ``core`` the document, ``view`` the briefing's merge, ``worker`` the shell."""
