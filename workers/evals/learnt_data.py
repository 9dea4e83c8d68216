"""Training rows for the learnt reader, made from the dev split's hand labels (issue 37, seventh round).

Every sentence of every labelled development conversation (``real_labels``, split ``dev`` only:
this module never asks for another split) is a row, and each kind gets a label per row, by the
eval's own matcher (``real_match``), so what the reader learns is what the eval credits:

* **1** — the sentence is said in one of a label's ``refs`` turns and matches that label (the
  item "Caroline is a transgender woman" and Caroline's "I'm a transgender woman" at D3:1);
* **0** — it matches no label of the kind anywhere, and no ``refs`` turn of the kind holds it;
* **None** (left out of training) — the rest: it matches a label but outside that label's turns
  (said again, or by chance), or it is in a label's turn without matching it (the vote "No-one
  does." of a decision; the "Yeah" that accepts an assignment). Neither is clean evidence.

A sentence is matched as the item it would make: its text, its speaker as the promiser (a
promise matches only its owner's label) and, for a fact, its speaker's name before it — a
first-person fact is about the speaker, and a fact label must be named (``about``).

The rows hold the conversations' sentences, so they are made from the corpora at run time and
never stored in the repository (``reader_train`` takes the corpora's paths, as the eval does).
Beside them, the commitment filter's hand-labelled sentences that are not from the dev split
(``learnt_labels.json``: the main written set's candidates and the everyday probes — "I'll
keep you posted", "remind me to renew the SSL certificate") are rows of their kind, always
trained on: the dev conversations are chats and design meetings, and these are the work talk a
user has with an agent. The labels file's dev rows are left out (their sentences are rows here,
labelled by the matcher).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from workers.conversation.sentences import sentence_spans
from workers.evals.real_corpora import RealConversation
from workers.evals.real_eval import Loaded, RealOptions, load_real_set
from workers.evals.real_labels import ConversationLabels, Label, unmatched_words
from workers.evals.real_match import TRAINED_READING, Candidate, match, name_words

# The kinds a sentence can be. Threads are topics said over many sentences (a title is a noun
# phrase, not a sentence): no sentence head reads them.
KINDS: Final = ("decisions", "commitments", "facts")
DEV: Final = "dev"


@dataclass(frozen=True)
class SentenceRow:
    conversation: str  # "locomo-0", "qmsum-ES2005"
    ref: str  # the turn it was said in
    turn: int  # that turn's index in the conversation (its message's index in the stream)
    speaker: str
    sentence: str
    position: int  # the turn's position in its session
    session_turns: int  # turns in that session
    labels: dict[str, int | None]  # per kind: 1, 0, or None (left out of training)
    reply: str | None = None  # the next turn of the session (None: it ends here)


def load_dev(locomo: str | None, qmsum: str | None) -> list[Loaded]:
    """The labelled dev conversations of the corpora given (the dev split only)."""
    loaded, _ = load_real_set(RealOptions(split=DEV, locomo=locomo, qmsum=qmsum))
    return loaded


def item_text(kind: str, speaker: str, sentence: str) -> str:
    """The text a sentence makes as an item of ``kind``: a fact names its speaker."""
    return f"{speaker}: {sentence}" if kind == "facts" else sentence


def labels_of(labels: ConversationLabels, kind: str) -> list[Label]:
    found: dict[str, list[Label]] = {"decisions": [*labels.decisions], "commitments": [*labels.commitments],
                                     "facts": [*labels.facts]}
    return found[kind]


def _speakers(loaded: Loaded) -> frozenset[str]:
    return frozenset(s.strip().lower() for s in loaded.conv.speakers)


def matcher_names(loaded: Loaded) -> frozenset[str]:
    return name_words(unmatched_words(loaded.labels, loaded.conv))


def matches(loaded: Loaded, kind: str, label: Label, text: str, speaker: str) -> bool:
    """Whether the eval's matcher pairs ``text`` (said by ``speaker``) with ``label``."""
    return bool(match([label], [True], [Candidate(text, who=speaker)], matcher_names(loaded),
                      _speakers(loaded), TRAINED_READING).pairs)


def _sessions(conv: RealConversation) -> dict[int, int]:
    sizes: dict[int, int] = {}
    for t in conv.turns:
        sizes[t.session] = sizes.get(t.session, 0) + 1
    return sizes


def _label_for(loaded: Loaded, kind: str, ref: str, text: str, speaker: str, names: frozenset[str],
               speakers: frozenset[str]) -> int | None:
    kind_labels = labels_of(loaded.labels, kind)
    found = match(kind_labels, [True] * len(kind_labels), [Candidate(text, who=speaker)], names, speakers,
                  TRAINED_READING)  # the reading the shipped reader was trained with (``real_match``)
    matched = [label for label, _ in found.pairs]
    if any(ref in label.refs for label in matched):
        return 1
    if matched or any(ref in label.refs for label in kind_labels):
        return None
    return 0


def _reply(conv: RealConversation, i: int) -> str | None:
    """The turn after turn ``i`` in its session."""
    if i + 1 >= len(conv.turns) or conv.turns[i + 1].session != conv.turns[i].session:
        return None
    return conv.turns[i + 1].text


def conversation_rows(loaded: Loaded) -> list[SentenceRow]:
    """Every sentence of one conversation, labelled per kind, with the turn that answers it."""
    conv = loaded.conv
    names = matcher_names(loaded)
    speakers = _speakers(loaded)
    sizes = _sessions(conv)
    rows: list[SentenceRow] = []
    position = 0
    for i, turn in enumerate(conv.turns):
        position = 0 if i == 0 or turn.session != conv.turns[i - 1].session else position + 1
        reply = _reply(conv, i)
        for start, end in sentence_spans(turn.text):
            sentence = turn.text[start:end]
            labels = {kind: _label_for(loaded, kind, turn.ref, item_text(kind, turn.speaker, sentence),
                                       turn.speaker, names, speakers) for kind in KINDS}
            rows.append(SentenceRow(conv.name, turn.ref, i, turn.speaker, sentence, position, sizes[turn.session],
                                    labels, reply))
    return rows


def hand_rows() -> list[SentenceRow]:
    """The hand-labelled sentences from outside the dev split, each a row of its own kind."""
    from workers.evals.learnt_train import load_rows

    return [SentenceRow(r.group, "", -1, "", r.sentence, 0, 1,
                        {kind: (r.label if kind == r.kind else None) for kind in KINDS})
            for r in load_rows() if not r.group.startswith(f"{DEV}:") and r.kind in KINDS]


def training_rows(loaded: Sequence[Loaded]) -> list[SentenceRow]:
    """Every sentence of the dev conversations, then the hand-labelled ones (``hand_rows``)."""
    return [*(row for one in loaded for row in conversation_rows(one)), *hand_rows()]

