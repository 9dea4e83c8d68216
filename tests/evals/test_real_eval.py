"""``cortex eval briefing --real``: the loaders and their split guard, the labels, the lenient
matching, the reader checks and the scoring, on small fixtures in LoCoMo's and QMSum's
formats written here (never corpus excerpts). One test runs a fixture conversation through
every worker; the numbers on the real corpora live in docs/briefing-eval.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared.config import load_settings
from workers.evals import cli as eval_cli
from workers.evals.locomo import DatasetError
from workers.evals.real_checks import (
    always_never_rule,
    caption_as_text,
    overdue_without_due,
    pleasantry_commitment,
    thread_title_defect,
    when_only_narrative,
)
from workers.evals.real_corpora import (
    SplitError,
    clean_transcript,
    locomo_conversation,
    qmsum_conversation,
    qmsum_root,
    read_locomo,
)
from workers.evals.real_eval import (
    RealOptions,
    as_conversation,
    briefing_candidates,
    format_report,
    load_real_set,
    report,
    run_real_eval,
)
from workers.evals.real_labels import (
    REAL_LABELS,
    CommitmentLabel,
    DecisionLabel,
    FactLabel,
    ThreadLabel,
    check_refs,
    expected_in_briefing,
    label_texts,
    load_labels,
)
from workers.evals.real_match import Candidate, coverage, match, name_words, same_word, words

# --- fixtures in the corpora's formats ------------------------------------------------------

CHAT = [
    ("Ana", "Hi Ben! I finally signed the lease for the flat on Harbour Street."),
    ("Ben", "Congrats! When do you move in?"),
    ("Ana", "On the first of June. I'll send you the new address by Friday."),
    ("Ben", "Great. We decided to book the cabin in Tromsø for our August trip, by the way."),
]
CHAT_TWO = [
    ("Ben", "Hey Ana, how is the flat?"),
    ("Ana", "Lovely, and I sent you the address yesterday. My sister Carla starts at the hospital next week."),
    ("Ben", "Keep me posted!"),
]


def _sample(i: int) -> dict[str, Any]:
    conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben",
                            "session_1_date_time": "6:05 pm on 3 May, 2024",
                            "session_2_date_time": "9:30 am on 10 May, 2024"}
    conv["session_1"] = [{"speaker": s, "dia_id": f"D1:{n}", "text": t} for n, (s, t) in enumerate(CHAT, 1)]
    conv["session_1"][1]["blip_caption"] = "a photo of a set of keys on a table"
    conv["session_2"] = [{"speaker": s, "dia_id": f"D2:{n}", "text": t} for n, (s, t) in enumerate(CHAT_TWO, 1)]
    return {"sample_id": f"fixture-{i}", "conversation": conv, "qa": []}


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([_sample(i) for i in range(10)]))
    return path


MEETING = [
    {"speaker": "Project Manager", "content": "Okay , so we have to decide on the T_V_ remote today . {vocalsound}"},
    {"speaker": "Marketing", "content": "{vocalsound}"},
    {"speaker": "Marketing", "content": "I think uh {disfmarker} we should go with a yellow case , yeah ."},
    {"speaker": "Industrial Designer", "content": "Agreed . I'll send the cost sheet by tomorrow ."},
]


@pytest.fixture
def qmsum_dir(tmp_path: Path) -> Path:
    root = tmp_path / "QMSum" / "data" / "ALL"
    for split in ("train", "val", "test"):
        (root / split).mkdir(parents=True)
    for meeting in ("ES9001a", "ES9001b"):
        (root / "train" / f"{meeting}.json").write_text(json.dumps({"meeting_transcripts": MEETING}))
    (root / "val" / "ES9002a.json").write_text(json.dumps({"meeting_transcripts": MEETING}))
    (root / "test" / "ES9003a.json").write_text("this file must never be read")
    return tmp_path / "QMSum"


# --- the loaders and the split guard --------------------------------------------------------


def test_a_locomo_conversation_loads_only_in_its_own_split(locomo_file: Path) -> None:
    data = read_locomo(locomo_file)
    conv = locomo_conversation(data, 2, "dev")
    assert conv.name == "locomo-2" and conv.speakers == ("Ana", "Ben") and conv.split == "dev"
    assert [t.ref for t in conv.turns][:2] == ["D1:1", "D1:2"]
    assert conv.turns[1].text.endswith("[shares a photo of a set of keys on a table]")
    assert [t.session for t in conv.turns] == [1] * 4 + [2] * 3
    assert conv.turns[0].ts == datetime(2024, 5, 3, 18, 5, tzinfo=UTC)
    assert conv.morning == datetime(2024, 5, 11, 9, 0, tzinfo=UTC)
    assert locomo_conversation(data, 6, "heldout").split == "heldout"
    with pytest.raises(SplitError, match="heldout split, not dev"):
        locomo_conversation(data, 5, "dev")
    for index in (7, 8, 9):
        with pytest.raises(SplitError, match="acceptance set: refused without --acceptance"):
            locomo_conversation(data, index, "acceptance")
    assert locomo_conversation(data, 9, "acceptance", allow_acceptance=True).name == "locomo-9"
    with pytest.raises(DatasetError, match="no such conversation"):
        locomo_conversation(data, 10, "dev")


def test_qmsum_meetings_are_cleaned_and_read_from_their_split_only(qmsum_dir: Path) -> None:
    root = qmsum_root(qmsum_dir)  # the repository around data/ALL will do
    assert root == qmsum_dir / "data" / "ALL" and qmsum_root(root) == root
    conv = qmsum_conversation(root, "ES9001", ["ES9001a", "ES9001b"], "dev")
    assert conv.name == "qmsum-ES9001" and conv.source == "qmsum"
    assert [t.text for t in conv.turns[:3]] == [
        "Okay, so we have to decide on the TV remote today.",
        "I think uh we should go with a yellow case, yeah.",
        "Agreed. I'll send the cost sheet by tomorrow."]
    assert [t.ref for t in conv.turns[:3]] == ["ES9001a:0", "ES9001a:2", "ES9001a:3"]  # a markup-only turn goes
    assert {t.session for t in conv.turns} == {1, 2}
    assert (conv.turns[3].ts - conv.turns[0].ts).days == 1  # one meeting a day
    with pytest.raises(SplitError, match="not in train/"):
        qmsum_conversation(root, "ES9002", ["ES9002a"], "dev")
    # the test split's directory is refused before anything there is read
    with pytest.raises(SplitError, match="acceptance set"):
        qmsum_conversation(root, "ES9003", ["ES9003a"], "acceptance")
    with pytest.raises(DatasetError, match="not an AMI or ICSI meeting id"):
        qmsum_conversation(root, "covid", ["covid_1"], "dev")


def test_transcript_markup_is_cleaned() -> None:
    assert clean_transcript("Um , the L_C_D_ {disfmarker} screen ? {gap}") == "Um, the LCD screen?"
    assert clean_transcript("{vocalsound} , yeah .") == "yeah."


def test_a_missing_or_wrong_path_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"^--locomo .*nope\.json: cannot read"):
        read_locomo(tmp_path / "nope.json")
    (tmp_path / "other.json").write_text('{"not": "locomo"}')
    with pytest.raises(DatasetError, match="not a LoCoMo file"):
        read_locomo(tmp_path / "other.json")
    with pytest.raises(DatasetError, match="no such directory"):
        qmsum_root(tmp_path / "missing")
    with pytest.raises(DatasetError, match="expected QMSum's data/ALL"):
        qmsum_root(tmp_path)


def _cli_args(**overrides: Any) -> argparse.Namespace:
    args = {"file": "sample", "core_only": False, "conversation": None, "embedder": "hashing", "examples": False,
            "out": None, "real": True, "split": "dev", "locomo": None, "qmsum": None, "acceptance": False,
            "labels": None, "quiet": True, "llm": False}
    return argparse.Namespace(**{**args, **overrides})


def test_the_cli_says_in_one_line_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings({})
    assert asyncio.run(eval_cli.cmd_eval_briefing(_cli_args(), settings)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--real needs --locomo PATH" in err
    assert asyncio.run(eval_cli.cmd_eval_briefing(_cli_args(locomo=str(tmp_path / "x.json")), settings)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x.json: cannot read" in err
    assert asyncio.run(eval_cli.cmd_eval_briefing(_cli_args(split="acceptance", qmsum=str(tmp_path)), settings)) == 1
    assert "refused without --acceptance" in capsys.readouterr().err


# --- the labels -----------------------------------------------------------------------------


def _write_labels(root: Path, labels: dict[str, Any]) -> Path:
    folder = root / labels["split"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{labels['source']}-{labels['conversation']}.json").write_text(json.dumps(labels))
    return root


FIXTURE_LABELS: dict[str, Any] = {
    "source": "locomo", "conversation": "0", "split": "dev",
    "threads": [{"title": "Ana's new flat", "aka": ["flat on Harbour Street"], "refs": ["D1:1", "D2:2"]}],
    "decisions": [{"what": "book the cabin in Tromsø for the August trip", "refs": ["D1:4"]}],
    "commitments": [{"owner": "Ana", "what": "send Ben the new address", "due": "2024-05-03", "status": "done",
                     "refs": ["D1:3", "D2:2"]}],
    "facts": [{"about": "Ana", "text": "Ana signed the lease for a flat on Harbour Street", "refs": ["D1:1"]},
              {"about": "Carla", "text": "Carla, Ana's sister, starts at the hospital", "refs": ["D2:2"]}],
    "rules": [],
}


def test_labels_name_turns_of_their_conversation(tmp_path: Path, locomo_file: Path) -> None:
    root = _write_labels(tmp_path / "labels", FIXTURE_LABELS)
    (labels,) = load_labels("dev", root)
    conv = locomo_conversation(read_locomo(locomo_file), 0, "dev")
    check_refs(labels, conv)
    broken = {**FIXTURE_LABELS, "decisions": [{"what": "x", "refs": ["D9:9"]}]}
    with pytest.raises(DatasetError, match="refs not in the conversation: D9:9"):
        check_refs(load_labels("dev", _write_labels(tmp_path / "broken", broken))[0], conv)
    misplaced = _write_labels(tmp_path / "misplaced", {**FIXTURE_LABELS, "split": "heldout"})
    (misplaced / "heldout" / "locomo-0.json").rename(misplaced / "heldout" / "other.json")
    with pytest.raises(DatasetError, match=r"must be named locomo-0\.json"):
        load_labels("heldout", misplaced)
    with pytest.raises(DatasetError, match="no labels for the acceptance split"):
        load_labels("acceptance", root)


def test_what_the_morning_briefing_should_show(locomo_file: Path) -> None:
    conv = locomo_conversation(read_locomo(locomo_file), 0, "dev")  # morning: 2024-05-11 09:00
    assert expected_in_briefing(ThreadLabel(title="flat", refs=["D1:1"]), conv, 14)
    assert not expected_in_briefing(ThreadLabel(title="flat", refs=["D1:1"], state="closed"), conv, 14)
    assert expected_in_briefing(DecisionLabel(what="cabin", refs=["D1:4"]), conv, 14)
    assert not expected_in_briefing(DecisionLabel(what="cabin", refs=["D1:4"]), conv, 7)  # 8 days before
    promise = CommitmentLabel(owner="Ana", what="send the address", status="open", refs=["D1:3"])
    assert expected_in_briefing(promise, conv, 14)  # undated, a week old
    assert not expected_in_briefing(CommitmentLabel(owner="Ana", what="x", status="done", refs=["D1:3"]), conv, 14)
    assert not expected_in_briefing(CommitmentLabel(owner="Ana", what="x", status="open", refs=["D1:3"],
                                                    briefing=False), conv, 14)
    assert expected_in_briefing(FactLabel(text="Ana moved", refs=["D1:1"]), conv, 14)


REF = re.compile(r"^(?:D\d+:\d+|(?:ES|IS|TS|EN)\d{4}[a-d]:\d+|B[a-z]{2}\d{3}:\d+)$")


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_the_shipped_labels_are_well_formed_and_keep_to_their_split(split: str) -> None:
    """Every item names turns and has words to match (a promise two, so that "send it" matches
    nothing by chance); LoCoMo 0-4 are dev, 5-6 held out, and no label touches the
    acceptance set (LoCoMo 7-9)."""
    if not (REAL_LABELS / split).is_dir():
        pytest.skip(f"no {split} labels yet")
    every = load_labels(split)
    allowed = {"dev": {0, 1, 2, 3, 4}, "heldout": {5, 6}}[split]
    for labels in every:
        if labels.source == "locomo":
            assert int(labels.conversation) in allowed, labels.name
        else:
            assert labels.meetings and all(m.startswith(labels.conversation) for m in labels.meetings), labels.name
        unmatched = name_words([*labels.names, *labels.common])
        for item in labels.items():
            assert item.refs and all(REF.match(r) for r in item.refs), (labels.name, item)
            least = 2 if isinstance(item, CommitmentLabel) else 1
            assert all(len(words(text, unmatched)) >= least for text in label_texts(item)), (labels.name, item)
    assert len({lab.name for lab in every}) == len(every)


# --- lenient matching -----------------------------------------------------------------------


def test_words_are_content_words_stemmed_without_names() -> None:
    assert words("Caroline's adoption agencies, yeah!", name_words(["Caroline"])) == {"adopt", "agenc"}
    assert same_word("counsel", "counselor") and same_word("design", "designer")
    assert not same_word("art", "artist") and not same_word("plan", "planetarium")
    assert coverage(words("send the new address"), words("I'll send you the address by Friday")) == 1.0
    assert coverage(words("send the new address"), words("keep ya posted")) == 0.0


def test_matching_pairs_one_to_one_required_first_and_names_the_person() -> None:
    names = name_words(["Ana", "Ben"])
    labels = [ThreadLabel(title="Ana's new flat", refs=["D1:1"]),
              ThreadLabel(title="cabin trip", refs=["D1:4"], optional=True)]
    cands = [Candidate("flat"), Candidate("new flat on Harbour Street"), Candidate("Hey Ben"),
             Candidate("cabin trip in August")]
    found = match(labels, [True, False], cands, names)
    assert [(lab.title, c.text) for lab, c in found.pairs] == [("Ana's new flat", "flat")]  # the first of equals
    assert [c.text for _, c in found.absorbed] == ["cabin trip in August"]  # an optional label absorbs
    assert [c.text for c in found.extra] == ["new flat on Harbour Street", "Hey Ben"]  # a second flat: extra
    fact = FactLabel(about="Carla", text="Carla starts at the hospital", refs=["D2:2"])
    assert not match([fact], [True], [Candidate("Ana starts at the hospital")], names).pairs
    assert match([fact], [True], [Candidate("Carla starts at hospital")], names).pairs
    assert match([fact], [True], [Candidate("Carla likes tea")], names).missed == [fact]


# --- reader checks --------------------------------------------------------------------------


@pytest.mark.parametrize(("title", "defect"), [
    ("Hey Joanna", "greeting_title"), ("Good morning team", "greeting_title"), ("Caroline", "name_only_title"),
    ("simpler times but it", "fragment_title"), ("you on the pricing question tomorrow", "fragment_title"),
    ("adoption agency interviews", None), ("Caroline's adoption", None),
])
def test_thread_titles_a_reader_cannot_use(title: str, defect: str | None) -> None:
    assert thread_title_defect(title, ["Caroline", "Joanna"]) == defect


def test_pleasantries_rules_narratives_captions_and_overdue_lines() -> None:
    for task in ("keep ya posted", "let you know", "be ok", "do that", "give you a shout whenever I run out"):
        assert pleasantry_commitment(task), task
    assert not pleasantry_commitment("send the cost sheet")
    assert always_never_rule("That's a memory I'll never forget.")
    assert not always_never_rule("Never deploy on Fridays.") and not always_never_rule("Use staging first.")
    assert when_only_narrative(["*Sunday, 22. October 2023 — Narrative*", "", "**Timeline:**",
                                "- 09:54–10:02 Session: s19"])
    assert not when_only_narrative(["**Completed:**", "- ✅ flat: Ana moved into the flat on Harbour Street"])
    assert caption_as_text("Summary: [shares a photo of a living room with a tv].")
    assert overdue_without_due("- 🔴 **OVERDUE**: keep ya posted (Caroline; promised 2023-07-03, 112 days ago)")
    assert not overdue_without_due("- 🔴 **OVERDUE**: send the report (Ana; due 2024-05-03, 8 days ago)")


BOOT = """# Context Briefing

## 🧵 Active Threads

### 🟡 new flat [positive]
Priority: medium | Last: 2024-05-10 09:31
Summary: Ana signed the lease.

## 🎯 Recent Decisions
- 🟡 **We decided to book the cabin in Tromsø** (2024-05-03)
  Why: the August trip

## 📋 Commitments (2 open)
- 🔴 **OVERDUE**: keep me posted (Ben; promised 2024-05-10, 1 day ago)
- 🟡 Due 2024-05-17: send the cost sheet (Ana)

## 🧠 Known Facts
- Ana lives in Harbour Street

## 📌 Rules & Key Memories
- Never share the address
"""


def test_the_briefing_is_read_section_by_section() -> None:
    shown = briefing_candidates(BOOT)
    assert [c.text for c in shown["threads"]] == ["new flat"]
    assert [c.text for c in shown["decisions"]] == ["We decided to book the cabin in Tromsø"]
    assert [(c.text, c.status) for c in shown["commitments"]] == [("keep me posted", "overdue"),
                                                                  ("send the cost sheet", "open")]
    assert [c.text for c in shown["facts"]] == ["Ana lives in Harbour Street"]
    assert [c.text for c in shown["rules"]] == ["Never share the address"]


def test_sessions_become_cortex_sessions_and_a_morning_follows(locomo_file: Path) -> None:
    conv = as_conversation(locomo_conversation(read_locomo(locomo_file), 0, "dev"))
    kinds = [t.kind for t in conv.turns]
    assert kinds == ["session.start", *["msg"] * 4, "session.end", "session.start", *["msg"] * 3, "session.end",
                     "session.start"]
    assert [t.sender for t in conv.turns if t.kind == "msg"][:2] == ["Ana", "Ben"]
    assert sum(t.gap_s for t in conv.turns) == int((datetime(2024, 5, 11, 9, tzinfo=UTC) - conv.start)
                                                   .total_seconds())


# --- the whole path -------------------------------------------------------------------------


async def test_a_fixture_conversation_runs_through_every_worker_and_is_scored(
        tmp_path: Path, locomo_file: Path, qmsum_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A LoCoMo-format chat through an embedded nats-server and every worker (hashing
    embedder): the promise with a due and the decision are found in the stored documents,
    both levels are reported, the morning BOOTSTRAP is kept, and the CLI writes the report."""
    root = _write_labels(tmp_path / "labels", FIXTURE_LABELS)
    options = RealOptions(split="dev", locomo=str(locomo_file), qmsum=str(qmsum_dir), embedder="hashing",
                          labels=str(root))
    loaded, skipped = load_real_set(options)
    assert [x.labels.name for x in loaded] == ["locomo-0"] and skipped == []
    result = await run_real_eval(options, load_settings({}))
    rep = report(result)
    assert rep["conversations"] == ["locomo-0"]
    stored = rep["stored"]
    assert stored["commitments"]["tp"] == 1 and stored["decisions"]["tp"] == 1, rep["examples"]["stored"]
    assert stored["due_n"] == 1
    assert set(rep["briefing"]) >= {"threads", "decisions", "commitments", "facts", "rules", "defects"}
    assert "## " in rep["briefings"]["locomo-0"]
    assert "real-conversation briefing eval: dev split, 1 conversations" in format_report(rep)


def test_one_shared_word_is_no_match_and_a_promise_is_its_owners() -> None:
    assert coverage(words("company yellow"), words("company strategy")) == 0.0  # one of two words
    assert coverage(words("teletext"), words("no teletext please")) == 1.0  # a one-word wording
    label = CommitmentLabel(owner="Nate", what="send Joanna his ice cream recipe", status="open", refs=["D1:1"])
    speakers = frozenset({"nate", "joanna"})
    names = name_words(["Nate", "Joanna"])
    assert not match([label], [True], [Candidate("send you the ice cream recipe", who="Joanna")], names,
                     speakers).pairs
    assert match([label], [True], [Candidate("send you the ice cream recipe", who="Nate")], names, speakers).pairs
    # a promiser who is none of the speakers ("you": the agent) is not judged
    assert match([label], [True], [Candidate("send you the ice cream recipe", who="you")], names, speakers).pairs
    (line,) = briefing_candidates(BOOT)["commitments"][1:]
    assert line.who == "Ana"


async def test_the_real_set_runs_through_a_model_beside_the_structured_path(
        tmp_path: Path, locomo_file: Path, qmsum_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--real --llm``: the structured run, then the same conversations with the configured
    model (a small OpenAI-compatible server with canned answers: the path, no quality), both
    reported; the model was asked to read the conversation."""
    from llm_fakes import ChatServer

    root = _write_labels(tmp_path / "labels", FIXTURE_LABELS)
    out = tmp_path / "report.json"
    with ChatServer() as server:
        settings = load_settings({"CORTEX_LLM_PROVIDER": "openai", "CORTEX_LLM_BASE_URL": server.url,
                                  "CORTEX_LLM_MODEL": "local-model", "CORTEX_EMBEDDER": "hashing"})
        args = _cli_args(locomo=str(locomo_file), qmsum=str(qmsum_dir), labels=str(root), llm=True, out=str(out))
        assert await eval_cli.cmd_eval_briefing(args, settings) == 0
        asked = {body["tools"][0]["function"]["name"] for _, _, body in server.requests if body.get("tools")}
    rep = json.loads(out.read_text())
    assert rep["conversations"] == rep["llm"]["conversations"] == ["locomo-0"]
    assert rep["llm"]["model"] == "openai local-model"
    assert set(rep["llm"]["stored"]) >= {"threads", "decisions", "commitments"}
    assert "record_reading" in asked  # the extraction worker read the session windows
    assert "with the model (openai local-model)" in capsys.readouterr().out
