"""The signal language packs: the reference's pack and registry tests
(``test/trace-analyzer/signals/lang/signal-langs.test.ts``, ``registry.test.ts``,
``multilang-detectors.test.ts``) ported.

Not applicable: the registry's synchronous/asynchronous loading and cache invalidation
(``get_signal_patterns`` compiles a language tuple once, cached, and all ten packs are
always available) and ``registerSignalLanguagePack`` (packs are data in
``workers.conversation.signal_languages``; a new language is a new pack there).
"""

from __future__ import annotations

import re

import pytest
from trace_testkit import Agent, End, User, fail, findings, signals_of

from shared.config import ALL_LANGUAGES
from workers.conversation.patterns import prepare_text
from workers.conversation.signal_languages import SIGNAL_PACKS, SignalPack
from workers.conversation.signal_patterns import get_signal_patterns

CJK = {"zh", "ja", "ko"}


def test_there_are_ten_packs_one_per_language() -> None:
    """registry.test.ts: BUILTIN_SIGNAL_LANGUAGES has 10 entries."""
    assert sorted(SIGNAL_PACKS) == sorted(ALL_LANGUAGES)


@pytest.mark.parametrize("code", sorted(SIGNAL_PACKS))
def test_each_pack_meets_the_minimum_and_compiles(code: str) -> None:
    """signal-langs.test.ts: meets minimum pattern requirements (+ no \\b for CJK)."""
    pack: SignalPack = SIGNAL_PACKS[code]
    minimum = {"correction": 3, "short_negative": 1, "question": 1, "dissatisfied": 3, "satisfied": 1,
               "resolution": 1, "completion": 3 if code not in CJK else 1, "state_claim": 2, "opinion": 2}
    for family, least in minimum.items():
        sources = getattr(pack, family)
        assert len(sources) >= least, (code, family)
        for source in sources:
            re.compile(source)
            assert source == source.lower() or code in CJK, (code, source)  # they search the lowered text
            if code in CJK:
                assert "\\b" not in source, (code, source)


REPRESENTATIVE = {
    "en": ("wrong", "forget it", "done"), "de": ("das ist falsch", "vergiss es", "erledigt"),
    "fr": ("c'est faux", "laisse tomber", "terminé"), "es": ("eso está mal", "olvídalo", "completado"),
    "pt": ("isso está errado", "deixa pra lá", "pronto"), "it": ("è sbagliato", "lascia perdere", "fatto"),
    "zh": ("这个错了", "算了吧", "已经完成了"), "ja": ("それは違うよ", "もういいです", "完了しました"),
    "ko": ("그건 틀렸어", "됐어 그만", "완료했습니다"), "ru": ("это неправильно", "забудь это", "готово"),
}


@pytest.mark.parametrize("code", sorted(REPRESENTATIVE))
def test_each_pack_matches_its_representative_phrases(code: str) -> None:
    """signal-langs.test.ts: matches representative <language> phrases."""
    patterns = get_signal_patterns((code,))
    correction, dissatisfied, completion = REPRESENTATIVE[code]
    assert patterns.is_correction(prepare_text(correction), after_question=False)
    assert patterns.is_dissatisfied(prepare_text(dissatisfied))
    assert patterns.completion_claim(prepare_text(completion)) is not None


def test_opinions_in_french_and_chinese_hedge() -> None:
    """signal-langs.test.ts: French 'je crois' and Chinese '我觉得可能是' are opinion exclusions."""
    assert get_signal_patterns(("fr",)).state_claim(prepare_text("je crois que le service est actif")) is None
    assert get_signal_patterns(("zh",)).state_claim(prepare_text("我觉得可能是服务正在运行")) is None


def test_universal_signs_need_no_language() -> None:
    """registry.test.ts: includes universal question mark pattern, completion emoji, satisfaction emoji."""
    none = get_signal_patterns(())
    assert none.is_question(prepare_text("Deploy now?"))
    assert none.completion_claim(prepare_text("✅")) is not None
    assert none.is_dissatisfied(prepare_text("👍")) is False


def test_the_patterns_of_a_language_tuple_are_compiled_once() -> None:
    """registry.test.ts: caches merged patterns — same object on repeated getPatterns()."""
    assert get_signal_patterns(("en", "de")) is get_signal_patterns(("en", "de"))
    assert get_signal_patterns(("en", "xx")).languages == ("en",)


def test_only_enabled_languages_match() -> None:
    """registry.test.ts: loadSync ignores languages not loaded (a French correction is no
    correction for an English-only agent)."""
    assert not get_signal_patterns(("en",)).is_correction(prepare_text("c'est faux"), after_question=False)
    assert get_signal_patterns(("en", "fr")).is_correction(prepare_text("c'est faux"), after_question=False)


@pytest.mark.parametrize("code", ["zh", "ja", "ko"])
def test_cjk_patterns_match_inside_running_text(code: str) -> None:
    """registry.test.ts: CJK patterns (ZH/JA/KO) match without word boundaries."""
    text = {"zh": "我看了一下这个错了吧", "ja": "あの、それは違うと思う", "ko": "음 그건 틀렸어요"}[code]
    assert get_signal_patterns((code,)).is_correction(prepare_text(text), after_question=False)


CORRECTIONS = [
    ("fr", "Quelle est la capitale?", "La capitale est Berlin.", "C'est faux, c'est Paris."),
    ("es", "¿Cuánto es 2+2?", "2+2 es 5.", "Eso está mal, es 4."),
    ("pt", "Qual é a capital?", "A capital é Madrid.", "Isso está errado, é Lisboa."),
    ("it", "Quanto fa 2+2?", "2+2 fa 5.", "È sbagliato, fa 4."),
    ("zh", "2+2等于多少?", "2+2等于5。", "错了，是4。"),
    ("ja", "2+2は？", "2+2は5です。", "違う、4だよ。"),
    ("ko", "2+2는?", "2+2는 5입니다.", "틀렸어, 4야."),
    ("ru", "Сколько будет 2+2?", "2+2 будет 5.", "Неправильно, это 4."),
]


@pytest.mark.parametrize(("code", "ask", "answer", "correction"), CORRECTIONS)
def test_corrections_in_eight_more_languages(code: str, ask: str, answer: str, correction: str) -> None:
    """multilang-detectors.test.ts: SIG-CORRECTION — multi-language."""
    found = findings(User(text=ask), Agent(text=answer), User(text=correction), language="all", signals="default")
    assert signals_of(found) == ["correction"]


DISSATISFIED = [
    ("fr", "Laisse tomber, je fais moi-même."), ("es", "Olvídalo."), ("pt", "Deixa pra lá."),
    ("ja", "もういいよ。"), ("zh", "算了吧。"), ("ru", "Забудь, я сам сделаю."),
]


@pytest.mark.parametrize(("code", "text"), DISSATISFIED)
def test_dissatisfaction_in_six_more_languages(code: str, text: str) -> None:
    """multilang-detectors.test.ts: SIG-DISSATISFIED — multi-language."""
    found = findings(User(text="deploy"), Agent(text="…"), User(text=text), End(), language=code)
    assert signals_of(found) == ["dissatisfied"]


def test_french_thanks_is_no_dissatisfaction() -> None:
    """multilang-detectors.test.ts: does NOT detect French satisfaction: "merci"."""
    assert findings(User(text="deploy"), Agent(text="Fait!"), User(text="Merci, parfait!"), End(), language="fr") == []


CLAIMS = [("fr", "Terminé, l'app est déployée."), ("ja", "完了しました。"), ("ko", "완료했습니다."),
          ("es", "Completado con éxito."), ("ru", "Готово, всё задеплоено.")]


@pytest.mark.parametrize(("code", "text"), CLAIMS)
def test_completion_claims_after_a_failure_in_five_languages(code: str, text: str) -> None:
    """multilang-detectors.test.ts: SIG-HALLUCINATION — multi-language."""
    found = findings(User(text="deploy"), fail("exec", {"command": "deploy"}, "Error"), Agent(text=text), language=code)
    assert "hallucination" in signals_of(found)


@pytest.mark.parametrize(("code", "text", "claims"), [
    ("de", "Es gibt 5 Fehler in der Logdatei.", True), ("fr", "Il y a 3 erreurs dans les logs.", True),
    ("es", "Hay 5 errores en el log.", True), ("fr", "Je crois que le service est actif.", False),
    ("ru", "Наверное сервис работает нормально.", False),
])
def test_state_claims_and_their_hedges_in_four_languages(code: str, text: str, claims: bool) -> None:
    """multilang-detectors.test.ts: SIG-UNVERIFIED-CLAIM — multi-language (and its exclusions)."""
    found = findings(User(text="?"), Agent(text=text), language=code)
    assert signals_of(found) == (["unverified_claim"] if claims else [])


# Issue 37: the threads' mood detector and the trace analyzer disagreed about frustration.
FRUSTRATED = [
    ("en", "This is really frustrating, it keeps failing and you keep saying it works."),
    ("de", "Das ist echt frustrierend, es schlägt immer wieder fehl."),
    ("fr", "C'est vraiment frustrant, ça échoue encore."), ("es", "Esto es muy frustrante, sigue fallando."),
    ("it", "È davvero frustrante, continua a fallire."), ("pt", "Isso é muito frustrante, continua falhando."),
    ("ru", "Это так раздражает, опять не работает."), ("ja", "イライラする、また失敗した。"),
    ("ko", "짜증나, 계속 실패해."), ("zh", "太烦了，又失败了。"),
]


@pytest.mark.parametrize(("code", "text"), FRUSTRATED)
def test_a_frustrated_user_at_the_end_is_dissatisfied_in_every_language(code: str, text: str) -> None:
    found = findings(User(text="deploy it"), Agent(text="Deployed."), User(text=text), End(), language=code)
    assert "dissatisfied" in signals_of(found)


def test_dissatisfaction_knows_the_mood_detectors_frustrated_words() -> None:
    """Every word the conversation packs' mood detector reads as frustrated is the user's
    frustration to the trace analyzer too ("schon wieder", "che palle", "бесит"); negated, none."""
    from workers.conversation.languages import PACKS

    examples = {"en": "damn", "de": "schon wieder", "es": "qué asco", "fr": "fait chier", "it": "che palle",
                "pt": "que saco", "ru": "бесит", "ja": "最悪", "ko": "최악", "zh": "崩溃"}
    assert set(examples) == set(PACKS)
    for code, word in examples.items():
        patterns = get_signal_patterns((code,))
        assert patterns.is_dissatisfied(prepare_text(f"Ugh, {word}. The export is broken again")), code
    assert not get_signal_patterns(("en",)).is_dissatisfied(prepare_text("Nothing frustrating, it works fine now."))
