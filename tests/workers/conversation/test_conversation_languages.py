"""Parity: openclaw-cortex test/patterns-lang-{es,fr,it,pt,ru,ja,ko,zh}.test.ts.

Each language is loaded alone, as the reference's ``registry.load([code])`` does. The id
of every case is "<code>: <reference case name>"; the source file is
``patterns-lang-<code>.test.ts``.
"""

from __future__ import annotations

import pytest

from schemas.types import Mood
from workers.conversation.patterns import MOOD_ORDER, Family, PatternSet, get_patterns, prepare_text
from workers.conversation.signals import Signals, extract_signals


def lang(code: str) -> PatternSet:
    return get_patterns((code,))


def any_match(family: Family, text: str) -> bool:
    prepared = prepare_text(text)
    return any(p.search(prepared) is not None for p in family)


def capture_topics(family: Family, text: str) -> list[str]:
    prepared = prepare_text(text)
    return [text[m.start(1) : m.end(1)].strip() for p in family for m in p.finditer(prepared)]


def case(code: str, name: str, *values: object) -> object:
    return pytest.param(code, *values, id=f"{code}: {name}")


DECISIONS = [
    case("es", "matches 'decidido'", "Hemos decidido usar TypeScript"),
    case("es", "matches 'decisión'", "La decisión fue cambiar de enfoque"),
    case("es", "matches 'acordado'", "Ya está acordado con el equipo"),
    case("es", "matches 'vamos con'", "Vamos con la opción B"),
    case("fr", "matches 'décidé'", "On a décidé de migrer"),
    case("fr", "matches 'décision'", "La décision est prise"),
    case("fr", "matches 'convenu'", "C'est convenu avec l'équipe"),
    case("fr", "matches 'opté pour'", "On a opté pour TypeScript"),
    case("it", "matches 'deciso'", "Abbiamo deciso di usare Redis"),
    case("it", "matches 'decisione'", "La decisione è stata presa"),
    case("it", "matches 'facciamo'", "Facciamo così"),
    case("it", "matches 'andiamo con'", "Andiamo con la soluzione A"),
    case("pt", "matches 'decidido'", "Ficou decidido usar Postgres"),
    case("pt", "matches 'decisão'", "A decisão foi migrar"),
    case("pt", "matches 'combinado'", "Está combinado com a equipe"),
    case("pt", "matches 'ficou definido'", "Ficou definido que vamos refatorar"),
    case("ru", "matches 'решили' (decided)", "Мы решили использовать TypeScript"),
    case("ru", "matches 'решение' (decision)", "Решение принято вчера"),
    case("ru", "matches 'договорились' (agreed)", "Мы договорились на MIT лицензию"),
    case("ru", "matches 'утвердили' (approved)", "Архитектуру утвердили"),
    case("ja", "matches '決めた' (decided)", "TypeScriptに決めた"),
    case("ja", "matches '決定した' (decided/determined)", "方針を決定した"),
    case("ja", "matches 'にしよう' (let's go with)", "Reactにしよう"),
    case("ja", "matches '採用する' (adopt)", "この方法を採用する"),
    case("ko", "matches '결정' (decision)", "TypeScript로 결정했습니다"),
    case("ko", "matches '하기로' (decided to)", "이 방식으로 하기로 했어요"),
    case("ko", "matches '확정' (confirmed)", "일정이 확정되었습니다"),
    case("ko", "matches '이걸로' (let's go with this)", "이걸로 가겠습니다"),
    case("zh", "matches '决定' (decided)", "我们决定用TypeScript"),
    case("zh", "matches '已决定' (already decided)", "已决定下周上线"),
    case("zh", "matches '方案是' (the plan is)", "方案是先做数据迁移"),
    case("zh", "matches '敲定' (finalized)", "技术方案已经敲定"),
    case("zh", "matches '就这么定' (that's settled)", "好，就这么定了"),
]

NOT_DECISIONS = [
    case("es", "does not match unrelated Spanish text", "Hace buen tiempo hoy"),
    case("fr", "does not match unrelated French text", "Il fait beau aujourd'hui"),
    case("it", "does not match unrelated text", "Fa bel tempo oggi"),
    case("pt", "does not match unrelated text", "O tempo está bom hoje"),
    case("ru", "does not match unrelated Russian text", "Сегодня хорошая погода"),
    case("ja", "does not match unrelated Japanese text", "今日はいい天気ですね"),
    case("ko", "does not match unrelated Korean text", "오늘 날씨가 좋네요"),
    case("zh", "does not match unrelated Chinese text", "今天天气不错"),
]

CLOSURES = [
    case("es", "matches 'hecho'", "Ya está hecho"),
    case("es", "matches 'resuelto'", "El problema está resuelto"),
    case("es", "matches 'funciona'", "Ya funciona correctamente"),
    case("es", "matches 'listo'", "Todo listo!"),
    case("fr", "matches 'terminé'", "C'est terminé maintenant"),
    case("fr", "matches 'résolu'", "Le problème est résolu"),
    case("fr", "matches 'ça marche'", "Oui ça marche maintenant"),
    case("fr", "matches 'fini'", "C'est fini!"),
    case("it", "matches 'fatto'", "È già fatto"),
    case("it", "matches 'risolto'", "Il problema è risolto"),
    case("it", "matches 'funziona'", "Adesso funziona bene"),
    case("it", "matches 'finito'", "È finito!"),
    case("pt", "matches 'feito'", "Já está feito"),
    case("pt", "matches 'resolvido'", "O bug está resolvido"),
    case("pt", "matches 'funciona'", "Já funciona direitinho"),
    case("pt", "matches 'pronto'", "Está pronto!"),
    case("ru", "matches 'сделано' (done)", "Всё сделано!"),
    case("ru", "matches 'решено' (resolved)", "Проблема решено"),
    case("ru", "matches 'готово' (ready)", "Уже готово"),
    case("ru", "matches 'работает' (works)", "Теперь работает нормально"),
    case("ru", "matches 'исправлено' (fixed)", "Баг исправлено"),
    case("ja", "matches '完了' (completed)", "タスク完了しました"),
    case("ja", "matches '解決した' (solved)", "問題を解決した"),
    case("ja", "matches '直した' (fixed)", "バグを直した"),
    case("ja", "matches 'できた' (done)", "実装できた！"),
    case("ja", "matches '動いた' (it works)", "やっと動いた"),
    case("ko", "matches '완료' (completed)", "작업 완료했습니다"),
    case("ko", "matches '해결됐' (solved)", "문제가 해결됐어요"),
    case("ko", "matches '고쳤다' (fixed)", "버그를 고쳤다"),
    case("ko", "matches '끝났다' (finished)", "개발 끝났다"),
    case("zh", "matches '完成' (completed)", "任务完成了"),
    case("zh", "matches '搞定' (done)", "搞定了！"),
    case("zh", "matches '解决了' (solved)", "问题解决了"),
    case("zh", "matches '修好了' (fixed)", "Bug修好了"),
    case("zh", "matches '没问题了' (no problem anymore)", "现在没问题了"),
]

WAITS = [
    case("es", "matches 'esperando'", "Estamos esperando la respuesta"),
    case("es", "matches 'bloqueado por'", "Está bloqueado por el equipo de API"),
    case("es", "matches 'pendiente de'", "Pendiente de aprobación"),
    case("fr", "matches 'en attente de'", "On est en attente de la review"),
    case("fr", "matches 'bloqué par'", "C'est bloqué par l'API"),
    case("fr", "matches 'il faut d'abord'", "Il faut d'abord finir le module"),
    case("it", "matches 'aspettando'", "Stiamo aspettando la revisione"),
    case("it", "matches 'bloccato da'", "Bloccato da un problema di rete"),
    case("it", "matches 'in attesa di'", "In attesa di approvazione"),
    case("pt", "matches 'esperando'", "Estamos esperando a revisão"),
    case("pt", "matches 'bloqueado por'", "Está bloqueado por falta de acesso"),
    case("ru", "matches 'ждём' (waiting)", "Ждём ревью от команды"),
    case("ru", "matches 'заблокировано' (blocked)", "Заблокировано из-за API"),
    case("ru", "matches 'ожидаем' (expecting)", "Ожидаем утверждения"),
    case("ja", "matches '待って' (waiting)", "レビューを待ってます"),
    case("ja", "matches 'ブロック' (blocked)", "APIの変更でブロックされてる"),
    case("ja", "matches '待機中' (on standby)", "承認待機中です"),
    case("ko", "matches '기다려' (waiting)", "리뷰 기다려주세요"),
    case("ko", "matches '블로킹' (blocking)", "API 변경으로 블로킹됨"),
    case("ko", "matches '대기 중' (on standby)", "승인 대기 중입니다"),
    case("zh", "matches '等待' (waiting)", "等待代码审查"),
    case("zh", "matches '卡在' (stuck at)", "卡在权限配置上"),
    case("zh", "matches '依赖于' (depends on)", "这个依赖于后端接口"),
]

TOPICS = [
    case("es", "captures topic after 'respecto a'", "respecto a la migración de datos", "migración"),
    case("es", "captures topic after 'hablemos de'", "hablemos de la seguridad", None),
    case("fr", "captures topic after 'concernant'", "concernant la migration des données", "migration"),
    case("fr", "captures topic after 'parlons de'", "parlons de la sécurité du système", None),
    case("it", "captures topic after 'riguardo'", "riguardo la migrazione del database", None),
    case("it", "captures topic after 'parliamo di'", "parliamo di la sicurezza", None),
    case("pt", "captures topic after 'voltando a'", "voltando a o assunto da migração", None),
    case("pt", "captures topic after 'agora sobre'", "agora sobre a arquitetura do sistema", None),
    case("ru", "captures topic after 'по поводу' (about)", "по поводу миграции базы данных", "миграции"),
    case("ru", "captures topic after 'давайте обсудим' (let's discuss)", "давайте обсудим архитектуру системы", None),
    case("ja", "captures topic after 'について'", "セキュリティについて 認証システム", None),
    case("ja", "captures topic after 'の件'", "デプロイの件 本番環境", None),
    case("ko", "captures topic after '에 대해' (about)", "보안에 대해 인증시스템", None),
    case("ko", "captures topic after '관해서' (regarding)", "배포관해서 프로덕션", None),
    case("zh", "captures topic after '关于' (about)", "关于数据迁移的问题", "数据迁移"),
    case("zh", "captures topic after '讨论' (discuss)", "讨论架构设计方案", None),
    case("zh", "captures topic after '聊聊' (chat about)", "聊聊部署策略", None),
]

MOODS = [
    case("es", "detects frustrated: 'joder'", "frustrated", "joder, se rompió"),
    case("es", "detects excited: 'genial'", "excited", "¡Genial!"),
    case("fr", "detects frustrated: 'putain'", "frustrated", "putain c'est cassé"),
    case("fr", "detects excited: 'génial'", "excited", "C'est génial!"),
    case("fr", "detects tense: 'attention'", "tense", "Attention avec ça"),
    case("it", "detects frustrated: 'cavolo'", "frustrated", "cavolo, è rotto"),
    case("it", "detects excited: 'fantastico'", "excited", "Fantastico!"),
    case("pt", "detects frustrated: 'merda'", "frustrated", "Que merda, quebrou"),
    case("pt", "detects excited: 'show'", "excited", "Ficou show!"),
    case("ru", "detects frustrated: 'чёрт' (damn)", "frustrated", "чёрт, опять сломалось"),
    case("ru", "detects excited: 'круто' (cool)", "excited", "Это круто!"),
    case("ru", "detects tense: 'срочно' (urgently)", "tense", "Нужно срочно починить"),
    case("ru", "detects productive: 'задеплоил' (deployed)", "productive", "Задеплоил на прод"),
    case("ja", "detects frustrated: 'くそ' (damn)", "frustrated", "くそ、また壊れた"),
    case("ja", "detects excited: 'すごい' (amazing)", "excited", "すごい！動いた"),
    case("ja", "detects tense: '緊急' (urgent)", "tense", "緊急で対応必要"),
    case("ja", "detects productive: '修正済' (fixed)", "productive", "バグ修正済み"),
    case("ko", "detects frustrated: '짜증' (annoying)", "frustrated", "짜증나, 또 깨졌어"),
    case("ko", "detects excited: '대박' (awesome)", "excited", "대박! 됐다"),
    case("ko", "detects tense: '긴급' (urgent)", "tense", "긴급 대응 필요"),
    case("zh", "detects frustrated: '靠' (damn)", "frustrated", "靠，又挂了"),
    case("zh", "detects excited: '太好了' (great)", "excited", "太好了，上线成功"),
    case("zh", "detects tense: '小心' (careful)", "tense", "小心这个操作"),
    case("zh", "detects productive: '上线了' (deployed)", "productive", "新版本上线了"),
    case("zh", "detects exploratory: '试试' (try)", "exploratory", "试试这个方案"),
]

BLACKLISTS = [
    case("es", "blacklist contains Spanish articles", ("el", "la")),
    case("fr", "blacklist contains French articles", ("le", "la", "les")),
    case("fr", "blacklist contains French pronouns", ("il", "elle")),
    case("ru", "contains Russian noise words", ("это", "ничего")),
    case("ja", "contains Japanese noise words", ("これ", "それ")),
    case("ko", "contains Korean noise words", ("이것", "그것")),
    case("zh", "blacklist contains Chinese noise words", ("这个", "那个", "什么")),
]

KEYWORDS = [
    case("es", "contains Spanish keywords", ("seguridad", "arquitectura")),
    case("fr", "contains French keywords", ("sécurité", "production")),
    case("it", "contains Italian keywords", ("sicurezza", "architettura")),
    case("pt", "contains Portuguese keywords", ("segurança", "arquitetura")),
    case("ru", "contains Russian keywords", ("безопасность", "архитектура")),
    case("ja", "contains Japanese keywords", ("セキュリティ", "デプロイ")),
    case("ko", "contains Korean keywords", ("보안", "배포")),
    case("zh", "contains Chinese keywords", ("架构", "安全", "删除")),
]


@pytest.mark.parametrize(("code", "text"), DECISIONS)
def test_language_decision_patterns_match(code: str, text: str) -> None:
    """patterns-lang-<code>.test.ts › decision patterns (case in the id)."""
    assert any_match(lang(code).decision, text)


@pytest.mark.parametrize(("code", "text"), NOT_DECISIONS)
def test_language_decision_patterns_ignore_unrelated_text(code: str, text: str) -> None:
    """patterns-lang-<code>.test.ts › decision patterns › does not match unrelated text."""
    assert not any_match(lang(code).decision, text)


@pytest.mark.parametrize(("code", "text"), CLOSURES)
def test_language_close_patterns_match(code: str, text: str) -> None:
    """patterns-lang-<code>.test.ts › close patterns (case in the id)."""
    assert any_match(lang(code).close, text)


def test_french_close_patterns_ignore_ongoing_work() -> None:
    """patterns-lang-fr.test.ts › close patterns › does not match ongoing work."""
    assert not any_match(lang("fr").close, "Je travaille encore dessus")


@pytest.mark.parametrize(("code", "text"), WAITS)
def test_language_wait_patterns_match(code: str, text: str) -> None:
    """patterns-lang-<code>.test.ts › wait patterns (case in the id)."""
    assert any_match(lang(code).wait, text)


@pytest.mark.parametrize(("code", "text", "expected"), TOPICS)
def test_language_topic_patterns_capture_a_topic(code: str, text: str, expected: str | None) -> None:
    """patterns-lang-<code>.test.ts › topic patterns (case in the id)."""
    topics = capture_topics(lang(code).topic, text)
    assert topics
    if expected is not None:
        assert expected in topics[0]


@pytest.mark.parametrize(("code", "mood", "text"), MOODS)
def test_language_mood_patterns_match(code: str, mood: Mood, text: str) -> None:
    """patterns-lang-<code>.test.ts › mood patterns (case in the id)."""
    pattern = lang(code).mood.patterns[MOOD_ORDER.index(mood)]
    assert pattern.search(prepare_text(text)) is not None


@pytest.mark.parametrize(("code", "words"), BLACKLISTS)
def test_language_blacklists_hold_noise_words(code: str, words: tuple[str, ...]) -> None:
    """patterns-lang-<code>.test.ts › blacklist (case in the id)."""
    assert set(words) <= lang(code).topic_blacklist


@pytest.mark.parametrize(("code", "words"), KEYWORDS)
def test_language_high_impact_keywords(code: str, words: tuple[str, ...]) -> None:
    """patterns-lang-<code>.test.ts › high-impact keywords (case in the id)."""
    assert set(words) <= set(lang(code).high_impact_keywords)


def test_cjk_patterns_keep_the_references_case_sensitivity() -> None:
    """The reference's CJK packs had no ``i`` flag: "OK了" closes, "ok了" does not."""
    zh = lang("zh")
    assert any_match(zh.close, "OK了")
    assert not any_match(zh.close, "ok了")


def test_unicode_word_boundaries_work_after_accented_letters() -> None:
    """JavaScript's ASCII \\b never matched after "noté" or Cyrillic; Python's Unicode \\b does."""
    assert any_match(lang("fr").commitment, "C'est noté, merci")
    assert any_match(lang("ru").commitment, "Я сделаю это завтра")


# ── Cortex's own, beyond the reference's packs ──────────────────────────────────────


def signals(code: str, text: str) -> Signals:
    return extract_signals(prepare_text(text), lang(code))


@pytest.mark.parametrize(("code", "text", "closes"), [
    ("es", "La migración de la base de datos está hecha.", True),
    ("es", "Las incidencias están resueltas.", True),
    ("es", "La migración no está hecha todavía.", False),
    ("es", "Los hechos son claros.", False),
    ("es", "La lista de precios está en el wiki.", False),
    ("fr", "La tâche est faite.", True),
    ("fr", "Les tickets sont fermés.", True),
    ("fr", "Faites attention au déploiement.", False),
    ("it", "La migrazione è fatta.", True),
    ("it", "Le issue sono chiuse.", True),
    ("it", "Fatti non foste a viver come bruti.", False),
    ("pt", "A migração está feita.", True),
    ("pt", "As tarefas estão prontas.", True),
])
def test_a_romance_closure_agrees_with_what_it_closes(code: str, text: str, closes: bool) -> None:
    """The reference's Spanish, French, Italian and Portuguese closure words were masculine
    singular only: "La migración de la base de datos está hecha" left its thread open.
    Nouns and imperatives of the same stem ("los hechos", "faites attention", "fatti") are
    none."""
    assert signals(code, text).closes is closes


@pytest.mark.parametrize(("code", "text", "waited"), [
    ("en", "Waiting on legal to approve the contract.", "legal to approve the contract"),
    ("fr", "J'attends la réponse du client.", "la réponse du client"),
    ("fr", "J'attends que Marie envoie le fichier.", "Marie envoie le fichier"),
])
def test_a_wait_is_what_is_awaited(code: str, text: str, waited: str) -> None:
    """"waiting on" waited for nothing; "J'attends la réponse" waited for "attends la réponse"."""
    assert signals(code, text).waits == (waited,)


@pytest.mark.parametrize(("code", "text", "topic"), [
    ("de", "Zurück zum Thema Datenbank-Backup: läuft es?", "Datenbank-Backup"),
    ("pt", "Vamos falar sobre a fatura de março.", "fatura de março"),
    ("ru", "Давай обсудим миграцию базы данных.", "миграцию базы данных"),
])
def test_everyday_topic_cues_open_their_topic(code: str, text: str, topic: str) -> None:
    """"zum Thema X" titled the thread "Thema X"; "vamos falar sobre" and the informal
    "давай обсудим" opened none."""
    assert signals(code, text).topics == (topic,)
