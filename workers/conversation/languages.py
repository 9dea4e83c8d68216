"""Language packs: the pattern sources of every supported language, as data.

Sources are the reference's (openclaw-cortex ``src/patterns/lang-*.ts`` and
``src/commitment-patterns.ts``). For English and German the design (section 7) has older
versions: its decision, wait and mood words and its high-impact keywords are the same
here, but its close patterns matched substrings ("abandoned", "frameworks" and "prefixed"
closed threads) and its topics kept the article ("the auth migration"); the reference's
word-bounded close patterns and article-skipping topics replace them. All are rewritten
for Python ``re`` with these deliberate changes:

* Packs whose reference patterns carried the ``i`` flag are written in lower case and run
  against the lower-cased message (``patterns.MatchText``) instead of ``re.IGNORECASE``;
  the CJK packs had no flag and still run case-sensitively against the original text.
* Every unbounded ``.*`` between two words (``need.*first``) is bounded to ``GAP`` so a
  64 KiB message costs linear time (see ``GAP``).
* ``\\w`` and ``\\b`` are Python's Unicode classes, not JavaScript's ASCII ones. That is on
  purpose: "zurück zu der Datenbankmigration für Äpfel" keeps its umlauts, and boundaries
  after "noté", "farò" or Cyrillic words work (in the reference they never matched). The
  reference's explicit accented-letter classes are therefore folded into ``\\w``.
* Apostrophes accept the typographic ``’`` as well, which LLM output uses constantly.
* German topics skip a leading article only when it is a whole word: the reference's
  ``dem?`` turned "zu der Migration" into the topic "r Migration". "zum"/"zur" are accepted.
* A topic cue's own words stay out of its topic, which the reference kept: "Let's talk about
  the frontend build" is "frontend build" (there "about the frontend build"; and "Let's talk
  about it" opened a thread "about it"), "Lass uns mal über das Release reden" is "Release"
  (there "über das Release reden"; "Lass uns über das Release reden": "Release reden") — the
  German topic ends before a verb of the cue (``_TOPIC_VERBS_DE``: "reden", "sprechen", …).
* The design's "yes!" (excited) is kept; ⚠ and ‼ match with or without the emoji selector.
* Commitment phrases that are closure words of the same pack ("erledigt", "hecho",
  "feito") are dropped: here a closure marks commitments done, so reporting completion
  must not open a new promise.
* A mood word right after a negation word of English or German counts for no mood ("Nothing
  urgent.", "not urgent", "nicht dringend" are not tense; ``mood_negation``): the reference
  ignored negation, so "Nothing urgent; all pipelines are green" set the session's mood to
  tense. Only a negation word just before it (whitespace between): "not too urgent" still
  reads as tense.
* ``due`` phrases are Cortex's own (the reference never fills ``Commitment.due``). A day
  takes the preposition before it ("by tomorrow", "bis morgen", "pour vendredi", "entro
  domani", "к пятнице"), so that the task keeps none ("send the report by").
* The Spanish, French, Italian and Portuguese closure words agree with what they close
  ("la migración está hecha", "les tickets sont fermés", "le issue sono chiuse", "as
  tarefas estão prontas"; the reference's were masculine singular only), but not as a noun
  or an imperative of the same stem ("los hechos", "faites attention", "fatti").
* Waits and topics said the everyday way: "waiting on legal", "j'attends la réponse" (the
  wait is "la réponse", not "attends la réponse"), "zurück zum Thema X" (the topic is X),
  "vamos falar sobre X", the informal "давай обсудим X".
* English decisions include a choice said as one, as the Spanish, French and Italian packs'
  "vamos con", "opté pour", "andiamo con" do: "let's go with", "we'll go with" (not with a
  person: "let's go with them"), "we chose", "we opted for", "we settled on".
* ``frame`` phrases are Cortex's own: a sentence that opens on what it is about ("Beim
  Onboarding-Flow liegt es …", "Bei der Migration …", "For the quarterly report export …",
  "Regarding X"), whose topic a promise made in the message keeps (``Commitment.topic``). They
  open no thread, and only a sentence's start counts ("I looked for the bug" has none).
* A closure word may be followed by ``,``, ``;``, ``:`` or ``)`` as well as by a space, "." or
  "!": the reference's "is fixed, the reindex takes 20 minutes" closed nothing, so in weeks of
  use a thread fixed in such a sentence stayed open and a kept promise turned OVERDUE. A
  closure word inside a hyphenated word ("fixed-size") still closes nothing.
* English and German have a closure family of a passing or green outcome the reference
  lacks ("passes locally", "passes.", "works again", "is green again"; "läuft wieder",
  "funktioniert jetzt", "die Pipeline ist grün"): "after a clean npm ci the build passes locally and on
  CI" is how a fix is reported, and without it the thread a correction reopened
  (``workers.threads.corrections``) stayed open for days. Narrow on purpose: "passes" needs
  an end of clause or "again", "now", "locally", "everywhere", "on ci" after it ("passes the
  token" closes nothing), "green" a build, CI, pipeline, test, check or job before it or
  "again" after it ("the grass is green" closes nothing); negated ("is not
  green", "doesn't pass locally") it closes nothing, and it closes only the threads whose
  title words the message names, as every closure.
* English and German have a closure family of a renewal the reference lacks: "Regarding the
  staging registry credentials: the token expired, I renewed it." left its thread open for
  good. A token, key, certificate, license, lease, … renewed, re-issued, rotated or extended
  ("I renewed it", "Jonas has rotated the staging keys", "the certificate is renewed until
  …", "the license was extended by 30 days", "Token renewed."; "ich habe das Token erneuert",
  "wurde bis Juni verlängert", "Token erneuert.") closes. Narrow on purpose: the verb in the
  past, in its clause after at most four words none of which is a condition, a modal or a
  negation ("we should renew it", "renew it tomorrow", "not renewed yet", "once it is
  renewed", "we should have renewed it", "muss verlängert werden", "wenn es erneuert ist"
  close nothing), nor "the renewed certificate", a routine ("rotated daily"), an extension
  without its new end ("extended the registry with a mirror") or a question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from schemas.types import Mood

# JavaScript's "." excludes all four line terminators; Python's only excludes "\n".
_ANY: Final = r"[^\n\r\u2028\u2029]"

# Bound for the reference's ``.*`` between two words. Two hundred characters is well past
# one sentence, so real matches are kept, while a message full of "need" and without
# "first" costs at most 200 steps per "need" instead of a rescan to the end of the line
# from every one of them (quadratic on a 64 KiB line). Greedy like the reference, so the
# match still ends at the last "first" within reach.
GAP: Final = _ANY + "{0,200}"

# English phrases start after anything but a letter: "\b" fails between CJK and Latin
# letters (both are \w), so "好的I'll fix the build" was no promise (issue 15, item 20).
_NOT_AFTER_LETTER: Final = r"(?<![a-z0-9_'’])"

def _returns_to(cue: str, lead: tuple[str, ...]) -> str:
    """A return cue ("back to", "zurück zu") where a clause starts — the text's start, after a
    clause mark, on a line of its own: not right after a word — or right after one of ``lead``
    ("ok", "let's get"): "I'll get back to you", "going back to school", "roll back to version
    2.3" return to no topic (issue 37). The checks follow the cue (fixed-width look-behinds): a
    pattern that opens on a literal is scanned by ``re`` ~200× faster than one that opens on a
    look-behind, which is tried at every position of every message."""
    checks = [rf"(?<![\w'’] {cue})(?<![\w'’]{cue})"]
    checks += [rf"(?<=^{word} {cue})|(?<=[^\w'’]{word} {cue})" for word in lead]
    return f"{cue}(?:{'|'.join(checks)})"


_RETURN_LEAD_EN: Final = ("ok", "okay", "so", "anyway", "alright", "now", *(
    f"{let} {verb}" for let in ("let['’]s", "lets") for verb in ("get", "go", "come")))
_RETURN_LEAD_DE: Final = ("ok", "okay", "also", "so", "gut", "lass uns", "lass uns mal", "kommen wir",
                          "kommen wir mal", "gehen wir", "gehen wir mal")


# A request or an offer starts its clause, alone or after a word that asks ("please remind me",
# "can you remind me", "ok let me"): "these moments remind me to …", "they let me take a break"
# ask for nothing.
_REQUEST_START: Final = (r"(?:^|(?<=[.!?,;:—–(\n])\s*|(?<![a-z])(?:please|pls|can you|could you|would you|will you"
                         r"|and|also|ok|okay|hey|so|then|now|sure|yes|yeah|well)\s+)")

# A transcript's hesitation between the words of a phrase ("you have to uh work on …").
_FILLER_EN: Final = r"(?:(?:uh|um|erm|er|just|also|then|please)\s+)*"
# What one is asked to do: a deed with an object, not advice ("you have to try it", "you need to
# relax") nor a state ("you have to be careful").
_ASSIGNED_EN: Final = (r"(?:work on|do(?!\s+(?:it|that|this|so|the same|what)\b)|prepare|look (?:at|into)|go through"
                       r"|come up with|send|write|draft|review|fix|make(?!\s+sure\b)|build|design|model|research"
                       r"|find out|investigate|update|finish|set up|organi[sz]e|schedule|contact|email|book|submit"
                       r"|present|test|take care of|handle|bring|sort out|figure out|plan|create|collect|gather"
                       r"|deploy|install|configure|document|ship|publish|order|arrange)")

_ASSIGNED_REST_EN: Final = (r"\b(?!\s+the follow|(?:\s+(?:uh|um|er|y))*\s+you\s+(?:have|need)\b)"
                            rf"(?:(?!,?\s+(?:and|but|so)\s+{_FILLER_EN}you\b)[^\n.!?]){{2,160}}")

# The reference captures ``.{5,80}`` after a commitment phrase.
_PROMISE: Final = f"({_ANY}{{5,80}})"

# A frame opens its sentence (or the message, or a line); its topic is the next few words.
_FRAME_START: Final = r"(?:^|(?<=[.!?…:;]\s)|(?<=\n))"
_FRAME_WORDS: Final = r"([^\W\d_][\w-]*(?:[ \t]+[^\W\d_][\w-]*){0,3})"

# The verb that ends a German topic cue ("lass uns über das Release *reden*"): not the topic's.
_TOPIC_VERBS_DE = ("reden|sprechen|quatschen|diskutieren|besprechen|nachdenken|unterhalten|schauen|anschauen"
                   "|ansehen|angucken|durchgehen|klären")

_WEEKDAYS_EN = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WEEKDAYS_DE = "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag"


# Cortex's own closure family of a renewal ("the token expired, I renewed it", "the staging
# certificate is renewed until 2026-06-09", "Token erneuert.", "ich habe das Zertifikat
# verlängert"): see the module doc. A clause starts at the message's start, after ".!?,;:" and
# a space, or at a line break; up to four words may stand before the verb, none of them a
# condition, a modal or a negation ("once it is renewed", "we should have renewed it", "I
# haven't renewed it" close nothing), the last not an article ("the renewed certificate").
_CLAUSE_START: Final = r"(?:^|(?<=[.!?,;:]\s)|(?<=\n))"
_NOT_RENEWAL_WORD_EN: Final = (r"(?!(?:once|when|whenever|if|after|until|unless|before|as|should|would|could|must"
                               r"|might|will|shall|can|to|need|needs|wish|hope|not|never)\b|[\w'’-]*n['’]t\b"
                               r"|[\w'’-]*['’]ll\b)")
_RENEW_SUBJECT_EN: Final = rf"(?:{_NOT_RENEWAL_WORD_EN}[\w'’-]+\s+){{0,4}}"
_NOT_AFTER_DETERMINER_EN: Final = r"(?<!the )(?<!\ba )(?<!\ban )(?<!our )(?<!its )(?<!this )(?<!their )(?<!your )"
_RENEWED_EN: Final = r"(?:renewed|re-?issued|rotated|extended)"
_RENEWABLE_EN: Final = (r"(?:tokens?|certificates?|certs?|keys?|licen[cs]es?|leases?|subscriptions?|credentials?"
                        r"|passwords?|secrets?|domains?|contracts?)")
_RENEWED_OBJECT_EN: Final = (rf"(?:it|them|(?:(?:the|our|its|their|all|both|an?|my|your)\s+)?(?:[\w-]+\s+){{0,3}}?"
                             rf"{_RENEWABLE_EN})")
_RENEWED_AUX_EN: Final = (r"(?:is|are|was|were|it['’]s|has been|have been|got)"
                          r"(?:\s+(?:now|just|already|finally|also))?\s+")
_ROUTINE_EN: Final = (r"(?!\s+(?:daily|weekly|monthly|hourly|nightly|yearly|every|each|automatically|regularly"
                      r"|periodically)\b)")
_ENDS: Final = r"(?:\s|[.!,;:)]|$)"
_RENEWAL_EN: Final = (
    # "I renewed it", "Jonas has rotated the staging keys", "we extended the license"
    rf"{_CLAUSE_START}{_RENEW_SUBJECT_EN}{_NOT_AFTER_DETERMINER_EN}{_RENEWED_EN}\s+{_RENEWED_OBJECT_EN}{_ENDS}",
    # "the certificate is renewed until …", "the keys are rotated." (not "… rotated daily")
    rf"{_CLAUSE_START}{_RENEW_SUBJECT_EN}{_RENEWED_AUX_EN}(?:renewed|re-?issued|rotated){_ROUTINE_EN}{_ENDS}",
    # "the license was extended until June" (an extension needs its new end)
    rf"{_CLAUSE_START}{_RENEW_SUBJECT_EN}{_RENEWED_AUX_EN}extended\s+(?:until|till|through|by\s+\d+"
    r"|for\s+(?:another|an?|one|two|three|six|twelve|\d+)\s+(?:more\s+)?(?:days?|weeks?|months?|years?))\b",
    # "Token renewed.", "Staging keys rotated, deploying now"
    rf"{_CLAUSE_START}(?:[\w-]+\s+){{0,3}}?{_RENEWABLE_EN}\s+{_RENEWED_EN}(?:[.!,;:)]|$)",
)
_RENEWED_DE: Final = r"(?:verlängert|erneuert|rotiert|neu ausgestellt)"
_RENEWAL_DE: Final = (
    # "ich habe es erneuert.", "das Zertifikat wurde bis Juni verlängert", "ist erneuert" — the
    # participle ends its clause ("muss verlängert werden", "wenn es erneuert ist" close nothing)
    r"(?:^|\s)(?:habe|hab|hab['’]s|haben|hat|ist|sind|wurde|wurden)\s+"
    rf"(?:(?!(?:sich|nicht|nie|niemals|kein\w*|noch|erst)\b)[\w'’-]+\s+){{0,5}}{_RENEWED_DE}(?:[.!,;:)]|$)",
    # "Token erneuert.", "Staging-Zertifikat verlängert, deploye jetzt"
    r"(?:^|\s)[\w-]*(?:token|zertifikat|schlüssel|lizenz|vertrag|passwort|zugangsdaten|secret|domain)(?:s|e|en)?"
    rf"\s+{_RENEWED_DE}(?:[.!,;:)]|$)",
)


@dataclass(frozen=True, slots=True)
class LanguagePack:
    """One language's pattern sources. ``mood`` lists (mood, source) pairs."""

    code: str
    decision: tuple[str, ...]
    close: tuple[str, ...]
    wait: tuple[str, ...]
    topic: tuple[str, ...]  # group 1 is the topic
    topic_blacklist: tuple[str, ...]
    high_impact_keywords: tuple[str, ...]
    mood: tuple[tuple[Mood, str], ...]
    noise_prefixes: tuple[str, ...]
    commitment: tuple[str, ...]  # group 1, when present, is the promise
    due: tuple[str, ...] = ()
    # Reasons (Cortex's own, on the lowered text): ``reason`` markers are followed by the
    # reason ("because …"), ``reason_before`` markers follow it ("…ので"), ``consequence``
    # connectors follow it and lead to what was done about it ("…, so let's …", "So …").
    reason: tuple[str, ...] = ()
    reason_before: tuple[str, ...] = ()
    consequence: tuple[str, ...] = ()
    keeps_reason_marker: bool = False  # "weil …" reads as a reason; a bare verb-final clause does not
    # Words that negate a decision or closure word shortly after them in the same clause
    # ("in review, not closed", "noch nicht entschieden"); Cortex's own, on the lowered text.
    negation: tuple[str, ...] = ()
    # Words that make what follows them in their clause a condition, not yet so ("once the
    # login bug is fixed, we deploy", "sobald Jonas die Logs geschickt hat"): a closure or an
    # arrival word after one closes nothing (``PatternSet.is_conditional``). Cortex's own,
    # on the lowered text; the reference closed the thread. Not "after": "after a clean `npm
    # ci` the build passes" tells what happened. The CJK packs have none: their conditionals
    # follow the verb ("修正したら").
    condition: tuple[str, ...] = ()
    # Words that, right before a mood word, take it back ("nothing urgent", "nicht dringend"):
    # Cortex's own, on the lowered text; the reference read every mood word as said.
    mood_negation: tuple[str, ...] = ()
    # Fixed commitment phrases that only agree ("de acuerdo", "договорились"): alone in their
    # sentence they promise nothing. Lowered.
    agreement: tuple[str, ...] = ()
    # A promise whose task reads as a wish or an aspiration ("do my best to …", "always
    # remember …", "immer versuchen …") is none. Searched in the lowered task.
    aspiration: tuple[str, ...] = ()
    # Cortex's own (issue 37), what makes a promise phrase no promise, on the lowered text:
    # ``hedge`` — a word of doubt or condition in the promise's clause or task ("maybe I'll",
    # "who knows if I'll ever", "… sometime", "… if I need anything"); ``idle`` — a task, its
    # ``task_lead`` words left out, that is a pleasantry, politeness or no action ("keep you
    # posted", "definitely check it out", "add it to my list", "be ok", "keep pushing");
    # ``vague`` — a task that is one only with a day ("do that", "let you know", "get back to
    # you") or what a speaker does right then in a meeting ("go first", "just check that",
    # "walk you through them", "show you"): no promise without a due.
    hedge: tuple[str, ...] = ()
    idle: tuple[str, ...] = ()
    vague: tuple[str, ...] = ()
    task_lead: tuple[str, ...] = ()
    # A promise of a named third person ("Sarah will send the signed contract by Friday"):
    # group 1 the person, group 2 the task; case-sensitive, on the original text (a name is
    # capitalised). A request to the agent ("remind me to renew the SSL certificate") is the
    # agent's promise: group 1 the task. Cortex's own (issue 37), on the lowered text.
    delegated: tuple[str, ...] = ()
    requested: tuple[str, ...] = ()
    # A task given to the one addressed ("you have to work on the component concept", "I'd like you
    # to draft the release notes", "so you look into the pricing"; group 1 the task): theirs, asked
    # by the speaker — a meeting's assignment, a user's task for the agent. Cortex's own (issue 37,
    # tenth round), on the lowered text; the verb opens the task, so "you have to try it" and "you
    # can see it" give none.
    assigned: tuple[str, ...] = ()
    # A first-person arrangement ("I'm hosting a dance workshop next month", "we're off to Lisbon
    # this weekend"; group 1 the task): a promise only when its sentence names a day — without
    # one it is what the speaker is doing now. Cortex's own (issue 37, sixth round), lowered.
    plan: tuple[str, ...] = ()
    # A proposal ("How about we use Postgres for the event store?"; group 1 what it proposes) and
    # a ratification of it — a message's first sentence that only agrees ("Agreed.", "Absolutely,
    # let's do that", "Beschlossen.") — which decides what the message before proposed. Cortex's
    # own (issue 37), on the lowered text; a ratification source is matched whole.
    proposal: tuple[str, ...] = ()
    ratification: tuple[str, ...] = ()
    # A yes that answers a question ("Yeah, yeah.", "Yep.", "Okay.", "Ja, genau."), matched at a lowered
    # message's start, with no objection after it in its sentence ("Yeah, but …", "Ja, aber …"): it
    # agrees only with a choice asked as a question ("So, let's go for Mando?", "Wir nehmen Postgres?";
    # ``statements.find_asked_choice``) — after a proposal or a statement it is the listener's
    # back-channel (twenty-first round: over QMSum train's AMI meetings 411 proposals were followed by
    # one, nearly none of them agreed). Cortex's own (issue 37), lowered.
    assent: tuple[str, ...] = ()
    # An approval of a proposal said a few messages before ("We could make two buttons out of that." …
    # "Yeah. That's really a good idea, I think."; "I agree."; "Ich finde, das ist eine gute Idee."): the
    # first sentence of a message that is more than a yes judges the idea good or agrees with it, with no
    # objection, hedge or condition after that in its sentence. Unlike a bare yes (``assent``, the
    # meetings' back-channel) it agrees with the idea, so it decides the proposal of another speaker made
    # up to ``core.APPROVAL_MESSAGES`` messages before. Cortex's own (issue 37, twenty-fifth round),
    # matched at a lowered sentence's start.
    approval: tuple[str, ...] = ()
    # A proposal only to go on as before ("Let's keep spreading positivity", "Lass uns weiter so machen"),
    # matched at the lowered proposal's start: no choice, so an approval of it decides nothing (twenty-fifth
    # round: between friends "I totally agree!" answers a cheer). Cortex's own (issue 37).
    going_on: tuple[str, ...] = ()
    # The speaker's own opinion before a choice ("I think we can then keep the single curved one", "Ich
    # denke, wir nehmen Postgres"): a hedge that puts the choice to the group — made when another speaker
    # agrees with it (``assent``), none when nobody does. Cortex's own (issue 37, twenty-first round),
    # lowered words.
    opinion: tuple[str, ...] = ()
    # A person's own step taken, with what it binds them to ("I just signed with the Minnesota
    # Wolves", "I applied to adoption agencies", "I'm starting a dance studio"): a decision of the
    # speaker's own life, read by the decisions core only (a chat's step is no work a thread opens
    # on). Cortex's own (issue 37, fourteenth round), on the lowered text.
    step: tuple[str, ...] = ()
    # Cortex's own (issue 37), lowered: a tag that asks only for assent ("So we'll go with speech
    # recognition, yeah?", "Wir nehmen Postgres, oder?"): a decision said with one is said, not asked.
    question_tag: tuple[str, ...] = ()
    # Cortex's own (issue 37, eighteenth round), fullmatch on a lowered sentence without its closing
    # mark: a verbless fragment that goes on with the decision before it in the same message ("We'll
    # use the basic functions for a television. No teletext.", "we've just chosen for rubber buttons.
    # With a different colour than the case.") — what was decided holds it too.
    decision_tail: tuple[str, ...] = ()
    # A request to the one addressed ("could you send us a copy of your slides?"; group 1 the task)
    # and an acceptance of it — the next message's first sentence opening on a first-person yes
    # ("Yes, I will.", "Sure thing! I can …", "Mach ich."): the task becomes the accepter's
    # commitment, said only in the request. Cortex's own (issue 37, thirteenth round), on the
    # lowered text; an acceptance source is matched at the message's start. A bare "yes" or
    # "okay" accepts nothing (in a meeting it is the back-channel).
    request: tuple[str, ...] = ()
    acceptance: tuple[str, ...] = ()
    # A question asking the one addressed for a thing ("Can I get the recipe for it?", "Kann ich das
    # Rezept haben?"; group 1 the thing): no task of the one addressed, so no answer accepts it as
    # one — but an answer's promise that names its object only by a pronoun ("Sure thing! I can write
    # it down for you and mail it to you") acts on it, as on a request's object ("Will you show me
    # this presentation?" — "I will send it to you later"). Cortex's own (issue 37, twentieth
    # round), on the lowered text.
    object_request: tuple[str, ...] = ()
    # The pronouns a task names a thing said before by ("send it to you later", "schicke es dir"):
    # such a task, answering a request, acts on what the request named. Lowered words.
    referring: tuple[str, ...] = ()
    # Function words: no topic is made of them, and a task is not named by them. Lowered.
    stopwords: tuple[str, ...] = ()
    # Cortex's own (issue 37), lowered: words a topic nobody announced (``workers.threads.topics``)
    # neither starts nor ends on — common verbs in their forms ("keep going", "take care", "sign
    # reminds", "feels like") — and adjectives of praise or comfort it does not start on ("kind
    # words", "safe trip", "hard work"): a title is a noun phrase.
    verbs: tuple[str, ...] = ()
    praise: tuple[str, ...] = ()
    # A sentence opening on what it is about ("Beim Onboarding-Flow …", "For the quarterly
    # report export …"): group 1 holds the words after the frame, of which
    # ``signals.message_topics`` keeps the topic's. Cortex's own, on the lowered text: the
    # topic a promise was made in (``Commitment.topic``); no thread opens on it.
    frame: tuple[str, ...] = ()
    # What was waited for is here ("the sandbox keys arrived", "Jonas hat die Crash-Logs
    # geschickt"): Cortex's own, on the lowered text; ``workers.threads.waits`` ends a
    # thread's wait on it when the sentence names what the thread waits for.
    arrival: tuple[str, ...] = ()
    # Cortex's own (issue 37), on the lowered clause before a decision cue: a decision recalled,
    # not made ("as we decided in the last meeting, …", "we had decided on roles"); a hedge
    # there (``hedge``: "I guess we decided on material") makes it no decision either
    recap: tuple[str, ...] = ()
    # Cortex's own (issue 37), on the lowered sentence of a topic nobody announced: someone's own
    # stake in it — a first-person subject with an ongoing, planned or chosen action ("I've been
    # looking into counseling and mental health", "we'll go with speech recognition", "let's …"),
    # or ``owners``, a possessive right before the phrase ("my dance studio"). A phrase only
    # talked about ("I still have that stuffed animal", "the big screen") is no thread. A
    # language without ``engaged`` opens such topics as before.
    engaged: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    # Cortex's own (issue 37, twelfth round): the definite articles; with ``owners`` (and an
    # English "'s") they are how a speaker refers to a particular thing ("the dance studio", "my
    # online store", "Jon's investors"), which a thread is. A subject only ever said as a kind ("a
    # big impact", "dairy-free desserts", "elderly people") is talked of in general
    # (``workers.threads.briefing``). A language without either counts nothing.
    articles: tuple[str, ...] = ()
    # … or the phrase is the subject of a state still going on, matched on the lowered text
    # where the phrase ends ("the billing rewrite is behind schedule", "the staging cluster keeps
    # running out of memory", "the payment webhook failures are back", "how's the dance studio
    # going?"; not "the pride event was amazing")
    ongoing: tuple[str, ...] = ()
    # The reference's CJK packs had no ``i`` flag: keep their exact case behaviour ("OK").
    case_sensitive: bool = field(default=False)


# Emoji and interjections every language shares (the reference's BASE_MOOD).
UNIVERSAL_MOOD: Final[tuple[tuple[Mood, str], ...]] = (
    ("frustrated", "(?:wtf|argh)"),
    ("excited", "(?:🎯|🚀)"),
    ("tense", "(?:\u26a0\ufe0f?|\u203c\ufe0f?)"),
    ("productive", "(?:✅)"),
    ("exploratory", "(?:🤔|💡)"),
)

# An ISO date is a due date in every language.
UNIVERSAL_DUE: Final = r"\b\d{4}-\d{2}-\d{2}\b"

# Cortex's own (issue 37): a cue topic ends before the first of its language's conjunctions,
# pronouns, auxiliaries and time words ("simpler times but it", "our bonuses and the raises we",
# "acting someday" are "simpler times", "bonuses", "acting"), and is none when it starts on one
# ("back to you on …"). Per language, in its own pattern: French "on" is a pronoun, English "on" a
# preposition ("the disk pressure on db-2").
_TOPIC_END_EN: Final = (
        "and", "but", "or", "nor", "so", "because", "since", "while", "if", "when", "whenever", "that", "which",
        "who", "whom", "whose", "where", "as", "than", "though", "although", "until", "unless", "whether",
        "i", "you", "he", "she", "it", "we", "they", "me", "him", "us", "them", "my", "your", "our", "their",
        "his", "its", "is", "are", "was", "were", "am", "be", "been", "being", "has", "have", "had", "do",
        "does", "did", "will", "would", "can", "could", "should", "shall", "may", "might", "must", "today",
        "tomorrow", "tonight", "yesterday", "now", "soon", "someday", "sometime", "later", "again", "then",
        "please", "too", "anyway", "ever",
)
_TOPIC_END_DE: Final = (
        "und", "aber", "oder", "denn", "weil", "dass", "ob", "wenn", "als", "wie", "ich", "du", "er", "sie", "es",
        "wir", "ihr", "mich", "dich", "uns", "euch", "mein", "dein", "unser", "ist", "sind", "war", "waren", "bin",
        "bist", "hat", "haben", "hatte", "wird", "werden", "wurde", "kann", "können", "muss", "müssen", "soll",
        "sollen", "will", "wollen", "heute", "morgen", "gestern", "jetzt", "bald", "später", "nochmal", "wieder",
        "bitte",
)
_TOPIC_END_ES: Final = (
        "y", "e", "o", "u", "pero", "porque", "que", "cuando", "si", "como", "yo", "tú", "él", "ella", "nosotros",
        "ellos", "me", "te", "se", "nos", "es", "son", "está", "están", "fue", "era", "ha", "han", "hay", "va",
        "vamos", "hoy", "mañana", "ayer", "ahora", "luego", "pronto",
)
_TOPIC_END_FR: Final = (
        "et", "ou", "mais", "donc", "car", "parce", "que", "qui", "quand", "si", "comme", "je", "tu", "il", "elle",
        "on", "nous", "vous", "ils", "elles", "est", "sont", "était", "a", "ont", "va", "aujourd'hui", "demain",
        "hier", "maintenant", "bientôt",
)
_TOPIC_END_IT: Final = (
        "e", "ed", "o", "ma", "perché", "che", "quando", "se", "come", "io", "tu", "lui", "lei", "noi", "voi",
        "loro", "è", "sono", "era", "ha", "hanno", "va", "oggi", "domani", "ieri", "adesso", "ora", "presto",
)
_TOPIC_END_PT: Final = (
        "e", "ou", "mas", "porque", "que", "quando", "se", "como", "eu", "tu", "ele", "ela", "nós", "eles", "elas",
        "é", "são", "era", "foi", "tem", "têm", "vai", "hoje", "amanhã", "ontem", "agora", "logo",
)
_TOPIC_END_RU: Final = (
        "и", "а", "но", "или", "потому", "что", "когда", "если", "как", "я", "ты", "он", "она", "мы", "вы",
        "они", "это", "есть", "был", "была", "будет", "сегодня", "завтра", "вчера", "сейчас",
)


def _topic_until(ends: tuple[str, ...]) -> str:
    """The topic group of a cue pattern: up to 40 characters of words, starting on none of
    ``ends`` and stopping before the first of them (a whole word: "Reden-Training" is no "reden")."""
    stop = "|".join(ends)
    return rf"(?!(?:{stop})(?![\w-]))(\w(?:(?!\s+(?:{stop})(?![\w-]))[\w\s-]){{3,40}})"


_FLOOR_TOKENS_EN: Final = r"(?:pen|marker|floor|word|mic|microphone|ball|baton|mouse|pointer|clicker)"
"""What a meeting passes to its next speaker (the floor, the whiteboard's pen): handing it on is a move
of the moment, no task (issue 37, seventeenth round)."""


EN: Final = LanguagePack(
    code="en",
    # (and "since we're going for the company colours, …": a choice made before, given as a reason)
    recap=(r"(?:\bhad|\bas (?:we|i|you|they)(?: have|['’]ve| had)?|\bsince)\s+(?:\w+\s+)?$",),
    ongoing=(r"\s*(?:(?:is|are|has been|have been|keeps?|kept|still)\s+(?:still\s+|now\s+|again\s+)?)?"
             r"(?:(?!(?:amaz|interest|excit|bor|inspir|relax|annoy|charm|stunn|touch|refresh|fascinat|reward"
             r"|challeng|satisfy|encourag|thrill|outstand|disappoint|frustrat|appeal|surpris|th|k|spr|r|br|s|w"
             r"|morn|even|dur)ing\b)\w+ing\b|behind\b|back\b|down\b|broken\b|blocked\b|stuck\b|delayed\b"
             r"|on hold\b|over budget\b)",),
    engaged=(r"\b(?:i|we)(?:(?:['’]m| am|['’]re| are|['’]ve been| have been)\s+(?:\w+\s+)?\w+ing|['’]ll| will"
             r"| plan to| want to| need to| have to| going to| gonna| wanna|['’]d like to| would like to| decided"
             r"| chose| started| applied| signed| joined| opened| launched| built| finished| submitted)\b"
             r"|\blet['’]?s\b",),
    owners=("my", "our", "your", "his", "her", "their"),
    articles=("the",),
    question_tag=("yeah", "yes", "right", "okay", "ok", "alright", "agreed", "eh", "no"),
    # a fragment going on with the decision before it ("No teletext.", "With a different colour than
    # the case."): no subject, no verb of its own, not a pleasantry ("No problem.", "With pleasure.")
    decision_tail=(r"(?:no|with|without|plus) (?!(?:problem|problems|idea|worries|worry|way|doubt|one|thanks|need"
                   r"|matter|kidding|offen[cs]e|rush|pressure|more|longer|pleasure|luck)\b)"
                   r"(?:(?!\b(?:i|we|you|it|they|he|she|there|is|are|was|were|will|would|can|could|do|does|did"
                   r"|have|has|had|should|must|am)\b)[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*|\bso\s+|\bmaybe\s+|\bi think\s+)"
              r"(?:how about (?:we\s+|if we\s+)?|what about (?:we\s+)?|"
              r"what if we\s+|why don['’]t we\s+|shall we\s+|should we\s+|we could\s+|we should\s+|we can\s+|"
              r"i suggest (?:that\s+)?(?:we\s+)?|i propose (?:that\s+)?(?:we\s+)?|"
              r"i['’]d suggest (?:that\s+)?(?:we\s+)?|my suggestion is (?:to\s+|that we\s+)?|"
              r"(?:let's|let’s|lets) (?!do (?:it|"
              r"that|this)\b|go for it\b|talk\b|discuss\b|get back\b|go back\b))([^.!?\n]{4,160})",),
    request=(r"\b(?:can you|could you|would you|will you)(?: please)?\s+(?!(?:mind|like|be|say|see|hear|repeat|go|"
             r"tell me|imagine|believe|explain|give us a|guess)\b)([a-z][^.!?\n]{6,160})",),
    acceptance=(r"(?:(?:yes|yeah|yep|okay|ok|sure thing|of course|certainly|no problem|good idea|"
                r"great idea)[,.!]*\s*)*(?:i will|i['’]ll|i can|will do|sure)\b",),
    referring=("it", "that", "this", "them", "those", "these"),
    # (each form spelt out: the message pre-check needs "can i get", not " i ")
    object_request=(r"\b(?:can i get|can i have|can i borrow|could i get|could i have|could i borrow|may i have"
                    r"|may i borrow|can i please get|can i please have|could i please have|may i please have)"
                    r"(?: please)?\s+((?!(?:it|that|this|them|one"
                    r"|some|any|a (?:look|word|minute|second|moment|question))\b)[a-z][^.!?\n]{2,120})",),
    ratification=(r"(?:(?:ok(?:ay)?|yes|yeah|yep|sure|great|perfect|absolutely|definitely|right|good idea|sounds good|"
                  r"fine|alright|cool)[,.!]*\s+)*(?:agreed|deal|let['’]?s do (?:it|that|this)|let['’]?s go with (?:it|"
                  r"that|this)|let['’]?s go for it|approved|done deal|so be it|do it"
                  # the choice proposed taken as it stands ("We'll go for that.", "Let's go with this one")
                  r"|(?:let['’]?s|we['’]ll|we will) go (?:for|with) (?:that|this)(?: one)?"
                  # an acceptance of what was just proposed ("We could plan something special this
                  # summer" — "Sounds great, Caroline!"; issue 37): alone in its sentence, and only
                  # after another speaker's proposal (``find_proposal``) does it decide anything
                  r"|sounds (?:good|great|perfect|fun|awesome|like a (?:plan|deal|(?:good |great )?idea))"
                  r"|(?:that['’]s|that is|there['’]s|what) a (?:good|great|brilliant) idea|good idea|great idea"
                  r"|count me in|i['’]m (?:in|down)(?!\s+[a-z])|for sure|works for me"
                  r"|that (?:will|would|['’]ll|['’]d) be great"
                  r"|i['’]m (?:with you|all for it|up for it))(?:[,.!]*\s*[a-z]+)?",),
    # (twenty-first round) a yes answering a choice asked, with no "but" / "not" / "no" after it
    assent=(r"(?:yeah|yes|yep|yup|okay|ok|sure|right|agreed|exactly|definitely|absolutely|fine|sounds good"
            r"|good idea|that['’]s fine)\b(?![^.!?]*\b(?:but|not|no|nope|don['’]t|doesn['’]t|isn['’]t|wouldn['’]t"
            r"|can['’]t|never|though|although|unless|or|maybe|perhaps)\b)(?![^.!?]*[?])",),
    opinion=("i think", "i believe", "i reckon", "i'd say", "i’d say", "i would say"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:yeah|yes|yep|okay|ok|oh|right|well|mm-hmm|absolutely|definitely)[,.!]*\s+)*"
              r"(?:(?:i think|i reckon|i believe)\s+)?(?:(?:that['’]s|that is|that['’]d be|that would be|it['’]s|it is"
              r"|it would be|there['’]s|this is|that sounds like)\s+)?(?:definitely\s+|actually\s+|really\s+)?(?:a\s+)?"
              r"(?:really\s+|very\s+|pretty\s+|quite\s+)?(?:good|great|brilliant|excellent|fantastic)(?:,?\s+good)?"
              r"\s+(?:idea|option|suggestion|solution|plan)\b"
              r"(?![^.!?]*\b(?:but|though|although|however|if|unless|maybe|perhaps|not)\b)(?![^.!?]*[?])",
              r"(?:(?:yeah|yes|yep|okay|ok|oh|right|well|absolutely|definitely)[,.!]*\s+)*"
              r"(?:i (?:totally |completely |fully |really |do )?agree(?: with (?:you|that|this|it))?"
              r"|i like (?:that|this"
              r"|the|your) idea|i['’]m all for (?:it|that)|sounds (?:good|great|perfect|like a (?:plan|good idea|great"
              r" idea)))\b"
              r"(?![^.!?]*\b(?:but|though|although|however|if|unless|maybe|perhaps|not)\b)(?![^.!?]*[?])",),
    going_on=(r"(?:keep|continue|carry on|go on)\s+(?:on\s+)?(?!(?:using|running|working)\b)\w+ing\b"
              r"|keep (?:it|this|that) up\b|keep up the\b",),
    decision=(
        # "agreed" with what was agreed ("we agreed to …", "as agreed", "agreed on …"); "Agreed, nature
        # has a way of being so inspiring" agrees with a remark, and a bare "Agreed." or "let's do
        # it" ratifies the proposal before it (``ratification``)
        r"(?<![a-z])(?:decided|decision(?=\s+(?:is|was|has been|to)\b|\s*:)|the plan is|approach:"
        r"|(?:we|we['’]ve|we have|we all|all|everyone|both|they|i)\s+(?:\w+\s+)?agreed\b|agreed (?:on|upon|to|that)\b"
        r"|(?:it['’]s|it is|it was|as) agreed\b"
        r"|let['’]?s do(?!\s+(?:it|that|this|so)\b(?!\s+(?:this|that|the|my|our|a|an|with|by|on|via|using)\b)))",
        # Cortex's own: a choice said the everyday way (issue 37): "We're going with Stripe", "Let's
        # use Postgres", "We'll use Terraform", "We picked Grafana over Datadog", "OK, Postgres it
        # is", "We'll stick with MySQL", "From now on we deploy only on Tuesdays"; a meeting's "so we're
        # going for a stylish shape", "we stick to plastic" — not a meal, a break or the next talk
        # (each "go with"/"go for" spelt out: the message pre-check needs literals longer than "for")
        r"(?<![a-z])(?:(?:we['’]re going with|we['’]re going for|we are going with|we are going for"
        r"|(?:let['’]?s|we['’]ll|we will|we['’]re going to) go with"
        r"|(?:let['’]?s|we['’]ll|we will|we['’]re going to) go for"
        # (eighteenth round) the going-to choice said uncontracted or with "gonna": "so we're gonna go
        # with type pushbuttons", "we are going to use LCD", "we're gonna use the simple chip"
        r"|(?:we are going to|we are gonna|we['’]re gonna) go with"
        r"|(?:we are going to|we are gonna|we['’]re gonna) go for)"
        r"(?=\s+\w)(?!\s+(?:it|that|this|me|you|him|her|us|them|my|your|his|our|their|lunch|dinner|breakfast|coffee"
        r"|a (?:(?:small|quick|short) )?(?:walk|drink|coffee|run|break|lunch)"
        r"|the (?:\w+ )?(?:presentations?|break|next)|(?:a |the )?(?:quick |short )?round)\b)"
        r"|(?:let['’]?s|we['’]ll|we will|we['’]re going to) (?:use|stick (?:with|to)|switch to|adopt|standardi[sz]e on)"
        # (what is used named after it, eighteenth round: "the materials we're going to use", "the
        # tools we are going to use during all this project" name it before)
        r"(?<!use(?=\s+(?:to|for|as|during|all|in|on|at|with|is|are|was|were|now|then|here|there|anyway)\b))"
        r"(?<!use(?=\s*(?:[.!?,;:…]|$)))"
        r"|(?:we are going to|we are gonna|we['’]re gonna) (?:use|stick (?:with|to)|switch to)"
        r"(?<!use(?=\s+(?:to|for|as|during|all|in|on|at|with|is|are|was|were|now|then|here|there|anyway)\b))"
        r"(?<!use(?=\s*(?:[.!?,;:…]|$)))"
        r"|we (?:picked|selected|went for|stick to)"
        r"|from now on,? (?:we|all|every|no) )",
        # the chosen word opens its clause ("OK, Postgres it is"): "I love how uncomplicated it is",
        # "Oh here it is", "Yes it is" choose nothing (issue 37)
        r"(?<![\w'’])(?<![\w'’] )(?!(?:how|that|what|as|where|so|if|who|when|why|think|hope|know|guess|say|is"
        r"|believe|here|there|yes|yeah|yep|no|nope|this|it|which|whatever|whichever|however|wherever|whoever)\s)"
        r"[\w.+#-]+ it is(?=\s*[.!]|\s*$)",
        # Cortex's own: a choice said as one (the Romance packs' "vamos con", "opté pour"); going
        # with someone is company, not a choice
        r"(?<![a-z])(?:(?:let['’]?s|we['’]ll) go with(?!\s+(?:me|you|him|her|us|them|my|your|his|our|their)\b)"
        r"|we (?:chose|opted for|settled on))\b",
        # Cortex's own (issue 37, eighteenth round): the group's choice said as made, in the perfect
        # ("for the materials we've just chosen for rubber buttons", "so the case, we've gone for the
        # double curved", "we have gone for a regular chip"), and a chair's own pick ("let me just
        # choose for the battery") — not "opted out", nothing picked up
        # (each form spelt out, so that the message pre-check reads "we've chosen", not "we've"); a
        # choice yet to come ("once we've chosen a concept"), named before ("the function that we've
        # opted out of") or given as the reason of something else ("that's why we have gone for a
        # regular chip", "'cause we have gone with the fashion focus": a choice told again) is none
        r"(?<![a-z])(?<!once )(?<!when )(?<!after )(?<!until )(?<!that )(?<!which )(?<!why )(?<!cause )(?<!since )"
        r"(?:we['’]ve|we have) (?:chosen|gone for|gone with|opted for|settled on|picked|selected)"
        r"\b(?!\s+(?:up|it|that|this|one|something|anything)\b)",
        r"(?<![a-z])(?<!once )(?<!when )(?<!after )(?<!until )(?<!that )(?<!which )(?<!why )(?<!cause )(?<!since )"
        r"(?:we['’]ve|we have) (?:just|already|finally) (?:chosen|gone for|gone with|opted for|settled on"
        r"|picked|selected)\b(?!\s+(?:up|it|that|this|one|something|anything)\b)",
        r"(?<![a-z])let me (?:choose|pick|just choose|just pick)\b(?!\s+(?:up|it|that|this|one|something|anything)\b)",
        # Cortex's own (issue 37, eleventh round): a group's recap keeping what it has ("No? Then we
        # just keep the teletext", "we can then keep the single curved one") — not a state kept
        # ("we keep the memories alive", "keep the good times going", "in mind", "in touch")
        r"(?<![a-z])we (?:(?:can|will|['’]ll|just|then|still|simply) )*keep (?:the|our) "
        r"(?!(?:faith|peace|secret|spirit|memor)|[^.!?,;]*\b(?:going|alive|in mind|in touch|crossed|safe|busy"
        r"|happy|warm|running|coming|moving|flowing|rolling)\b)",
    ),
    step=(
        # Cortex's own (issue 37, fourteenth round): a person's own step taken, with what it binds
        # them to ("I just signed with the Minnesota Wolves", "I applied to adoption agencies", "I'm
        # starting a dance studio", "I'm teaming up with a local organization") — not an enrolment
        # in an activity ("I signed up for a pottery class") nor a step that names nothing ("I
        # applied for it", "the program I applied for!")
        r"(?<![a-z])i (?:(?:just|finally|recently|yesterday|already|have|['’]ve) )*"
        r"(?:signed (?:with|on with|up(?! for)|a)|applied (?:to|for))"
        r" (?!(?:it|that|this|them|one|something|anything|so)\b)[a-z]"
        r"|(?<![a-z])i['’]m (?:teaming up with|starting (?:a|an|my own)) (?!(?:new )?(?:day|week|month|year|build|run"
        r"|test|job|deploy\w*|migration|session|meeting|call|review|sync|conversation|thread)\b)[a-z]",
    ),
    close=(
        r"(?:^|\s)(?:is |it['’]s |that['’]s |all )?(?:done|fixed|solved|closed)(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:it |that )works(?:\s|[.!,;:)]|$)",
        "✅",
        # Cortex's own: a passing or green outcome ("the build passes locally and on CI")
        r"(?:^|\s)(?:pass(?:es|ed)?|works) (?:again|now|locally|everywhere|on ci)(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:passes|passed)(?:[.!,;:)]|$)",
        r"(?:^|\s)(?:(?:builds?|ci|pipelines?|tests?|checks?|jobs?) (?:is|are) (?:now |all |back )?green"
        r"|green again|back to green)(?:\s|[.!,;:)]|$)",
        *_RENEWAL_EN,  # Cortex's own: a renewal ("the token expired, I renewed it")
    ),
    wait=(f"(?:waiting (?:for|on)|blocked by|need{GAP}first)",),
    # (a space before the short words, so "forgot", "present", "designed", "already" are none)
    arrival=(
        r"\b(?:arrived|came in|received|delivered|replied|answered|responded|approved|merged|released)\b",
        r"(?: got| sent| landed| signed|(?:has|have) come)\b",
        r"(?:is|are)(?: now| finally)?(?: here| available| ready)\b",
    ),
    topic=(
        # "back to X" returns to a topic only where a clause starts ("Back to the payment gateway: …",
        # "OK, back to pricing") or after "let's get/go/come": "I'll get back to you on the pricing",
        # "going back to school", "roll back to version 2.3", "they take us back to simpler times"
        # return to nothing (issue 37)
        rf"(?:{_returns_to('back to', _RETURN_LEAD_EN)}|now about(?<![\w'’]now about)"
        r"|regarding(?<![\w'’]regarding)"
        r"|let['’]s (?:talk\s+about|talk(?!\s+about\b)|discuss|look at))\s+"
        r"(?:(?:the|my|your|our|their|his|her)\s+)?" + _topic_until(_TOPIC_END_EN),
    ),
    topic_blacklist=(
        "it", "that", "this", "the", "them", "what", "which", "there",
        "nothing", "something", "everything",
        "me", "you", "him", "her", "us",
        "today", "tomorrow", "yesterday",
    ),
    high_impact_keywords=(
        "architecture", "security", "migration", "delete",
        "production", "deploy", "breaking", "major",
        "critical", "strategy", "budget", "contract",
    ),
    mood=(
        ("frustrated", "(?:fuck|shit|damn|sucks)"),
        ("excited", "(?:nice|awesome|brilliant|sick|yes!)"),
        ("tense", "(?:careful|risky|urgent)"),
        ("productive", "(?:done|fixed|works|deployed|shipped)"),
        ("exploratory", "(?:what if|idea|maybe|experiment)"),
    ),
    noise_prefixes=("i", "we", "he", "she", "it", "nothing", "something"),
    plan=(
        # a progressive of doing, not of feeling or saying ("I'm feeling better this week"), nor a
        # pastime without an object ("I'm hiking with some friends this weekend": nobody is owed it)
        rf"{_NOT_AFTER_LETTER}(?:i'm|i’m|i am|we're|we’re|we are)\s+(?:(?:also|finally|actually|really|even|officially"
        r"|currently|just)\s+)?(?!going to\b|(?:feeling|doing|thinking|loving|enjoying|hoping|trying|wondering"
        r"|missing|struggling|dealing|kidding|joking|guessing|saying|telling|asking|talking|looking|getting|being"
        r"|having (?:a (?:great|good|blast|hard|tough|rough|lot)|so|such|fun|trouble|issues|problems)|living"
        r"|working on (?:myself|it)|taking (?:some )?time off)\b)"
        # a deed with an object ("hosting a …", "planning to take a …"), not a pastime ("hiking with friends")
        r"(?=[a-z]+ing\s+(?:(?:together|up|out|on)\s+|to\s+[a-z]+\s+)?(?:a|an|the|my|our|his|her|their|this|that"
        r"|some|two|three|four|\d+)\s)"
        rf"{_PROMISE}",
        rf"{_NOT_AFTER_LETTER}(?:i'm|i’m|i am|we're|we’re|we are)\s+off to\s+{_PROMISE}",
    ),
    commitment=(
        rf"{_NOT_AFTER_LETTER}(?:i['’]ll|i will|i['’]m going to)\b\s+{_PROMISE}",
        # (twentieth round) an answer's first sentence opening on a yes and "I can", saying its task:
        # "Sure thing! I can write it down for you and mail it to you" (a request's answer; "I can"
        # elsewhere says what one is able to do)
        r"^\s*(?:(?:yes|yeah|yep|sure thing|sure|of course|certainly|absolutely|okay|ok)[,.!]*\s+)+"
        rf"i can\b\s+((?:(?!,\s*(?:how|what|is that|does that|would that|if that)\b){_ANY}){{5,80}})",
        # (a clause of its own: "Playing and singing let me express myself" promises nothing)
        rf"{_REQUEST_START}(?:let me(?!\s+(?:know|guess)\b)|allow me to)\b\s+{_PROMISE}",
        rf"{_NOT_AFTER_LETTER}(?:i can do that|i['’]ll handle|i['’]ll take care)\b",
        rf"{_NOT_AFTER_LETTER}(?:i promise(?: to)?|i commit to|i guarantee)\b\s+{_PROMISE}",
        rf"{_NOT_AFTER_LETTER}(?:consider it done|i['’]m on it)\b",
    ),
    due=(
        rf"\b(?:(?:(?:by|until|before) )?(?:today|tonight|tomorrow|(?:later )?this (?:morning|afternoon|evening|week"
        rf"|weekend|month)|next (?:week|weekend|month|{_WEEKDAYS_EN}))|(?:by|on|until|before) (?:{_WEEKDAYS_EN})"
        r"|(?:by )?end of (?:the )?(?:day|week|month)|eod|in \d{1,3} (?:hours?|days?|weeks?)"
        r"|in (?:a|one|two|three|four) (?:days?|weeks?))\b",
    ),
    reason=(
        r"\b(?:because|given that|due to|so that|in order to)\b",
        r"\bsince\b(?!\s+(?:then|when|last|yesterday|today|early|this|the (?:start|beginning)|\d"
        rf"|{_WEEKDAYS_EN}|january|february|march|april|may|june|july|august|september|october"
        r"|november|december))",
    ),
    consequence=(r"(?:^|,\s*)(?:so(?!\s+that)|therefore|hence|thus|that['’]s why|which is why)\b", r"\btherefore\b"),
    negation=(r"\b(?:not|never|no longer)\b|n['’]t\b",),
    condition=(r"\b(?:once|when|whenever|if|as soon as|until|unless)\b",),
    mood_negation=(r"\b(?:not|no|nothing|never)", r"n['’]t"),
    agreement=(),
    aspiration=(
        r"^(?:always|never|forever|someday|one day|miss|love|remember|cherish|be (?:happy|glad|grateful|there for))\b"
        r"|\b(?:try(?:ing)?\b|do (?:my|our) best|hopefully|from now on|(?:my|our) (?:dreams?|goals?)\b)",
    ),
    hedge=(
        r"\b(?:maybe|perhaps|probably|possibly|might|hopefully|someday|sometime|one day|one of these (?:days|times)"
        r"|at some point|eventually|unless|whenever|who knows|not sure|i think|i guess|i suppose|i hope|i wish"
        r"|there['’]?s (?:\w+ )?a chance|chances are|next time|wait and see"
        r"|in the future"
        r"|if (?:i|we) (?:ever|can|could|need|get|have|find|feel)|if you (?:want|like|need))\b",
        r"(?<!check )(?<!see )(?<!ask )(?<!out )(?<!confirm )(?<!verify )(?<!test )\bif (?:i|we|you|it|they)\b",
    ),
    task_lead=(
        r"^(?:(?:definitely|certainly|surely|also|really|totally|gladly|happily|then|actually|absolutely|personally"
        r"|of course|for sure|make sure (?:to |that )?(?=\w)|be sure to|try and|go ahead and|have to|need to"
        r"|be able to|i['’]ll|i will)\s*)+",
    ),
    idle=(
        # pleasantries: "keep you posted", "see you soon", "reach out if …"
        r"^(?:keep (?:you|ya|u|y['’]all|everyone|you all|you guys) (?:posted|updated|informed|in the loop|up to date)"
        r"|(?:see|catch|talk to|speak to|chat with) (?:you|ya|u)\b|talk (?:soon|later)|reach out\b|be in touch"
        r"|give (?:you|ya) a (?:shout|holler)|let (?:you|ya|u) know (?:how|what|if|when|once|whether|my thoughts))",
        # politeness: "definitely check it out", "add it to my list", "keep that in mind", "give it a go"
        r"^(?:(?:check|look) (?:it|them|that|this|those|these) (?:out|up)|(?:keep|bear) (?:that|this|it) in mind"
        r"|think (?:about it|it over)|consider (?:it|that|this)\b|add (?:it|them|that|this|those|these) to (?:my|the) "
        r"(?:\w+ )?list|give (?:it|that|this) a (?:go|try|shot|whirl)|try (?:it|that|this)\b"
        r"|have (?:a blast|fun|a great time|a safe trip)|be tuning in|go with (?:that|this|it)\b"
        r"|start (?:thinking|to think)\b)",
        # no task at all: "I will, yeah", "I'll not …", a sentence broken off in a transcript
        r"^(?:yeah|yes|yep|yup|ok|okay|sure|no|right|not)\b|\{disfmarker\}|\{gap\}",
        # no action: "be ok", "ever get a pet", "need the recipe", "keep pushing", "enjoy writing them"
        r"^(?:be\b(?!\s+\w+ing\b)|(?:have|had)\b(?!\s+to\b)|need\b|ever\b|enjoy|love|like|miss|feel|hope|wish"
        r"|remember|never|always|stay|continue|understand|bet|guess|admit|keep\b|stick up|be (?:right|there|rooting"
        r"|cheering|thinking|hoping|waiting|looking forward|missing|praying))",
    ),
    vague=(
        # a task only with a day: "do that", "let you know", "get back to you"
        r"^(?:(?:do|try) (?:it|that|this|so)$|go$|let (?:you|ya|u) know$|get back to (?:you|ya)$"
        # what a speaker does right then: "go first", "just check that", "walk you through them", "show you"
        r"|just\b|(?:go|going) (?:first|next|ahead|on)\b|(?:show|tell|walk|give) (?:you|u|ya|everyone|everybody|them)\b"
        # (seventeenth round) a speaker guiding the room through what is shown right then ("direct you
        # through the project", "take you all through the slides")
        r"|(?:take|lead|guide|direct|talk) (?:you|u|ya|everyone|everybody|them|us)(?: all| guys)? (?:\w+ )?through\b"
        r"|(?:explain|present|recap|summari[sz]e|draw|read out)\b|talk (?:a (?:little )?bit )?about\b|say\b"
        r"|start (?:with|by|off|this|that)\b|move on\b|go (?:back|through|over|into|on to)\b|come back to\b"
        r"|(?:get|set|put|pull|bring) (?:this|that|it) (?:up|going|on)\b"
        r"|take (?:notes|some notes|minutes|some minutes|the minutes)\b"
        r"|(?:check|confirm) (?:that|this)\b|see\b|clear\b|move this\b|fill (?:it|this|that) in\b)",
        # a task whose only object is a pronoun, moved about right then ("take that back", "take this
        # out now", "find it myself") or deferred ("get back to you on that"; issue 37); "I'll fix it"
        # and "I'll look into it" stay promises, as in the reference
        r"^(?:have to |need to )?\w+(?: (?:into|at|to|about|over|up|out|on|back|with|through|for))?"
        r" (?:it|that|this|them|those|these)(?: (?:back|out|up|over|on|off|in|down|again|now|then|later|too|first"
        r"|myself|ourselves))+"
        r"(?=\s*(?:[,.;:!?]|$))|^get back to (?:you|ya|u)\b(?: (?:on|about) (?:it|that|this))?\s*(?:[,.;:!?]|$)",
        # a choice said as one's own ("I'll go with two", "I'll go for the red one"): a vote, a
        # decision, no task; the floor passed on in a meeting ("hand over to Agnes", "invite Christine
        # to present", "let me interrupt you"); a talk given right then ("discuss the trend watching")
        r"^(?:go (?:with|for)|pick|vote for|hand(?: it)? over|pass (?:it )?(?:on |over )?to|interrupt\b|discuss\b"
        # (seventeenth round) the meeting's tokens of the floor passed on ("pass the pen to our User
        # Interface Designer", "hand over the marker"); "pass the message on to Sarah" is a task
        rf"|(?:pass|hand)(?: over)? (?:the |my |this )?{_FLOOR_TOKENS_EN}(?: (?:on|over|back))?(?: to\b|$)"
        r"|invite\b[^.!?]{0,60}?\bto (?:discuss|present|talk|speak|say|show)\b|invite \w+,|get to (?:that|this|it)\b)",
        # a score given in an evaluation round ("I'll give it a six", "I'll put two"): a number is
        # no task (issue 37, AMI's product evaluations); the floor given, or a talk given right then
        # ("I'll give the floor to Marco", "I'll give a brief overview of the survey")
        r"^(?:give|put|say|rate)(?: (?:it|this|that|them|him|her))?(?: (?:a|an))? (?:\d+(?:[.,]\d+)?|zero|one|two"
        r"|three|four|five|six|seven|eight|nine|ten)(?: (?:point|and a half)\b[^.!?,;]{0,12})?"
        r"(?: (?:too|again|then|now))?(?=\s*(?:[,.;:!?]|$))"
        r"|^give (?:(?:you|him|her|them) )?the floor\b|^give (?:you )?(?:a|an|my|the) (?:(?:brief|short|quick|little)"
        r" )?(?:outline|overview|summary|introduction|intro)\b",
        # a sentence broken off and begun again: the speaker's "I" within the task's first words
        # ("put any I'm I'm putting", "first I would like to have your views"), or its verb cut off
        # by a comma ("copy, uh let us keep all the emails")
        r"^\w+,\s+(?!and\b|then\b)"
        r"|^(?:\S+ ){0,2}(?<!what )(?<!how )(?<!when )(?<!where )(?<!if )(?<!that )(?<!as )(?<!once )(?<!after )"
        r"(?<!before )(?<!because )(?:i|i['’]m|i['’]d|i['’]ll|i would|i will|won['’]t|will not)\b",
    ),
    delegated=(
        # "Sarah will send the signed contract by Friday", "Maria is going to review the PR"
        r"([A-Z][a-z]+)(?:'ll| will| is going to| is gonna) (?:(?:definitely|also|then|probably)\s+)?"
        r"((?:send|review|write|prepare|call|email|check|fix|deploy|update|draft|book|share|finish|handle|take care of"
        r"|set up|organi[sz]e|schedule|contact|bring|pick up|buy|order|sign|submit|present|test|upload|follow up"
        r"|look into|investigate|ask|confirm|deliver|ship|merge|publish|post|create|build|run|migrate|move|clean up"
        r"|pay|file|renew|rotate|restart|install|configure|document|plan|talk to|reach out to|get back to"
        r"|forward|approve|cover|arrange|sort out|go through)\b"
        r"(?:(?!,?\s+(?:and|but|so)\s+\w+(?:['’]ll| will)\b)[^\n.!?]){2,160})",
        # (nineteenth round) a task the chair gives a titled role: "the Industrial Designer will do the
        # components concept", "our Marketing Expert is going to work on the evaluation" — two or three
        # capitalised words after "the" / "our" ("the Team will …" is one: no title); the task ends
        # where the next role's begins (", User Interface Designer the user interface concept")
        r"(?<![A-Za-z])(?:[Tt]he|[Oo]ur) ((?:[A-Z][a-z]+ ){1,2}[A-Z][a-z]+)(?: [Ee]xpert)?"
        r" (?:will|is going to|is gonna|has to) ((?:do|work on|look at|look into|take a look at|work out|prepare"
        r"|design|build)\b"
        r"(?:(?!,?\s+(?:and\s+)?(?:the\s+)?[A-Z][a-z]+ [A-Z][a-z]+)[^\n.!?]){2,160})",
    ),
    requested=(
        rf"{_REQUEST_START}((?:remind me|don['’]t let me forget) (?:to|about|that)\s+[^\n.!?]{{3,160}})",
    ),
    assigned=(
        # "you have to work on the component concept", "you guys need to prepare the evaluation",
        # "you're supposed to keep the minutes"; "I'd like you (guys) to (do is) work on a model in
        # clay" — a second "and you have to …" is a second task; not a list still to come ("prepare
        # the following things") nor a sentence begun again ("do uh um y you have to have …")
        rf"(?:(?<![a-z'’])(?:you|y['’]all)(?: guys| two| all| both)?\s+{_FILLER_EN}"
        rf"(?:(?:will |['’]ll )?have to|need to|['’]re supposed to|are supposed to)\s+{_FILLER_EN}"
        rf"|(?<![a-z'’])(?:i['’]d|i would|we['’]d|we would) like (?:you|everyone|everybody)(?: guys| two| all| both)?"
        rf" to\s+(?:do is\s+)?{_FILLER_EN})({_ASSIGNED_EN}{_ASSIGNED_REST_EN})",
        # "(so|and) you look into the materials" (the verb spelt out: a message's "you" alone asks
        # nothing of the scan)
        rf"(?:^|(?<=[.!?,;:\n])\s*|(?<![a-z'’])(?:so|and|then|now)\s+){_FILLER_EN}"
        rf"you ((?:look at|look into|work on|take care of|handle){_ASSIGNED_REST_EN})",
    ),
    stopwords=(
        "the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "from", "by", "about",
        "as", "into", "over", "after", "before", "is", "are", "was", "were", "be", "been", "being", "it", "its",
        "this", "that", "these", "those", "there", "here", "we", "you", "they", "he", "she", "i", "me", "my",
        "our", "your", "their", "his", "her", "them", "us", "what", "which", "who", "when", "where", "how", "why",
        "not", "no", "yes", "do", "does", "did", "done", "have", "has", "had", "will", "would", "can", "could",
        "should", "shall", "may", "might", "must", "just", "also", "still", "very", "really", "so", "then", "than",
        "too", "again", "now", "today", "tomorrow", "yesterday", "some", "any", "all", "more", "most", "other",
        "such", "only", "own", "same", "few", "each", "both", "up", "down", "out", "off", "new", "old", "good",
        "great", "thanks", "thank", "hi", "hello", "morning", "okay", "ok", "sure", "let", "lets", "one", "two",
        "first", "next", "last",
        # chat's function words and fillers (issue 37): "like yoga", "even though", "need anything
        # else", "acting someday", "Uh-huh" were topics
        "like", "even", "though", "although", "else", "anything", "everything", "something", "nothing", "anyone",
        "everyone", "someone", "someday", "sometime", "sometimes", "soon", "sooner", "later", "ever", "never",
        "always", "often", "usually", "ago", "yet", "every", "much", "many", "lot", "lots", "bit", "well", "way",
        "thing", "things", "stuff", "pretty", "quite", "kinda", "sorta", "gonna", "wanna", "gotta", "hey", "yeah",
        "yep", "yup", "nope", "wow", "oh", "ah", "uh", "um", "hmm", "mm", "huh", "uh-huh", "mm-hmm", "uh-oh",
        "definitely", "totally", "absolutely", "actually", "probably", "finally", "literally", "especially",
        "recently", "lately", "currently", "honestly", "seriously", "basically", "since", "while", "if",
        "because", "through", "without", "during", "around", "tonight", "anyway", "others", "another",
        # closed classes a phrase nobody announced must not hold (issue 37): reflexive pronouns
        # ("express myself"), "together" ("work together"), the number words ("twenty five"), and
        # "time", said of everything ("long time", "free time")
        "myself", "yourself", "yourselves", "himself", "herself", "itself", "ourselves", "themselves", "together",
        "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
        "fifteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred",
        "thousand", "million", "billion", "time", "times",
    ),
    verbs=(
        "feel", "feels", "felt", "feeling", "take", "takes", "took", "taken", "taking", "keep", "keeps", "kept",
        "keeping", "stay", "stays", "stayed", "staying", "need", "needs", "needed", "make", "makes", "made",
        "making", "remind", "reminds", "reminded", "reminding", "go", "goes", "going", "went", "gone", "come",
        "comes", "came", "coming", "get", "gets", "got", "gotten", "getting", "see", "sees", "saw", "seen",
        "seeing", "know", "knows", "knew", "known", "knowing", "think", "thinks", "thought", "thinking", "want",
        "wants", "wanted", "love", "loves", "loved", "loving", "hope", "hopes", "hoped", "hoping", "try",
        "tries", "tried", "trying", "sound", "sounds", "sounded", "seem", "seems", "seemed", "mean", "means",
        "meant", "say", "says", "said", "saying", "tell", "tells", "told", "telling", "give", "gives", "gave",
        "given", "giving", "put", "puts", "putting", "enjoy", "enjoys", "enjoyed", "enjoying", "appreciate",
        "appreciated", "believe", "believes", "believed", "guess", "wish", "wishes", "wished", "miss", "missed",
        "hear", "heard", "hearing", "find", "finds", "found", "finding", "become", "became", "becoming",
        "bring", "brings", "brought", "bringing", "happen", "happens", "happened", "happening", "remember",
        "remembered", "forget", "forgot", "pushing", "chasing", "paying", "doing", "having", "rock", "rocks",
        "inspire", "inspires", "inspired", "inspiring", "motivated", "excited", "thrilled", "glad", "proud",
        "sorry", "stoked", "amazed", "impressed", "blessed", "grateful", "thankful", "looks", "looked",
        "looking", "check", "checking", "catch", "talk", "talking", "chat", "chatting", "hang", "hanging",
        # (twenty-fourth round) the bench's "customer asked", "numbers look better", "staging right now",
        # "the fix behind a flag", "a different approach": a verb, an adverb, a preposition
        "ask", "asks", "asked", "asking", "look", "better", "right", "behind", "using", "different",
    ),
    praise=(
        "kind", "hard", "safe", "favorite", "favourite", "amazing", "wonderful", "beautiful", "lovely", "fun",
        "happy", "sweet", "best", "special", "tough", "awesome", "cool", "fantastic", "incredible", "perfect",
        "exciting", "positive", "nice", "fond", "precious", "cute", "little", "true", "warm", "huge",
    ),
    frame=(
        rf"{_FRAME_START}(?:for|as for|regarding|concerning)\s+(?!example\b|instance\b|now\b)"
        rf"(?:(?:the|our|this|that)\s+)?{_FRAME_WORDS}",
    ),
)

DE: Final = LanguagePack(
    code="de",
    recap=(r"(?:\bhatten|\bhatte|\bwie (?:wir|ich) (?:es )?(?:schon )?)\s*(?:\w+\s+)?$",),
    ongoing=(r"\s*(?:ist|sind|war|waren|hängt|hängen|läuft|laufen|bleibt|bleiben|steckt|stecken|stockt|wird|werden)\b",),
    engaged=(r"\b(?:ich|wir)\s+(?:bin|sind|habe|haben|werde|werden|will|wollen|plane|planen|muss|müssen|möchte|möchten"
             r"|arbeite|arbeiten|starte|starten|nehme|nehmen)\b|\b(?:bin|sind|habe|haben|werde|werden|will|wollen|muss"
             r"|müssen|möchte|möchten)\s+(?:ich|wir)\b|\blass(?:t)? uns\b",),
    owners=("mein", "meine", "meinen", "meinem", "meiner", "unser", "unsere", "unseren", "unserem", "unserer",
            "dein", "deine", "deinen", "euer", "eure", "sein", "seine", "ihr", "ihre"),
    articles=("der", "die", "das", "den", "dem", "des"),
    question_tag=("ja", "oder", "ne", "gell", "okay", "ok", "nicht wahr", "einverstanden"),
    # a fragment going on with the decision before it (eighteenth round): "Kein Videotext.", "Mit einer
    # anderen Farbe als das Gehäuse." — not "Kein Problem.", "Mit Vergnügen."
    decision_tail=(r"(?:kein|keine|keinen|ohne|mit|plus) (?!(?:problem|problemo|ahnung|sorge|ursache|ding|frage|zweifel"
                   r"|vergnügen|freude|dank|stress)\b)"
                   r"(?:(?!\b(?:ich|wir|du|sie|er|es|ihr|man|ist|sind|war|waren|wird|werden|kann|können|hat|haben"
                   r"|habe|soll|sollen|muss|müssen)\b)[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*)(?:wie wäre es,? wenn wir\s+|sollen wir\s+|wir könnten\s+|wir sollten\s+|"
              r"ich schlage vor,?\s+(?:dass wir\s+)?|lass(?:t)? uns\s+(?!mal\s+über|über))([^.!?\n]{4,160})",),
    request=(r"\b(?:kannst du|könntest du|können sie|könnten sie|würdest du|"
             r"würden sie)(?: bitte)?\s+([^\W\d][^.!?\n]{6,160})",),
    acceptance=(r"(?:(?:ja|klar|okay|ok|gerne?|sicher)[,.!]*\s*)*(?:mach ich|mache ich|wird gemacht|"
                r"kann ich|ich mache das|ich kümmere mich|klar|gerne?)\b",),
    referring=("es", "das", "sie", "ihn", "diese", "dieses", "diesen"),
    object_request=(r"\b(?:kann ich|könnte ich|darf ich) (?:bitte |mal )*"
                    r"([^\W\d][^.!?\n]{2,80}?)\s+(?:haben|bekommen|kriegen|ausleihen)\b",),
    ratification=(r"(?:(?:ok(?:ay)?|ja|gut|super|klar|prima|perfekt|alles klar)[,.!]*\s+)*(?:beschlossen|einverstanden|"
                  r"abgemacht|machen wir(?: so)?|so machen wir(?:['’]s| es)?|gebongt"
                  r"|klingt (?:gut|super|toll|nach einem plan)|(?:gute|super|tolle) idee|(?:ich )?bin dabei"
                  r"|passt (?:mir|für mich))(?:[,.!]*\s*\w+)?",),
    # (twenty-first round) a yes answering a choice asked, with no "aber" / "nicht" / "nein" after it
    assent=(r"(?:ja|jawohl|jep|jo|okay|ok|genau|klar|einverstanden|passt|gut|richtig|stimmt|sicher|gerne?)\b"
            r"(?![^.!?]*\b(?:aber|nicht|nein|kein\w*|doch|oder|vielleicht|eher|lieber)\b)(?![^.!?]*[?])",),
    opinion=("ich denke", "ich glaube", "ich finde", "ich würde sagen"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:ja|okay|ok|gut|genau|klar|oh)[,.!]*\s+)*(?:(?:ich (?:finde|denke|glaube)),?\s+)?"
              r"(?:(?:das ist|das wäre|das klingt nach|es ist|klingt nach)\s+)?(?:wirklich\s+"
              r"|echt\s+)?(?:eine?\s+|ein\s+)?"
              r"(?:sehr\s+|wirklich\s+|richtig\s+)?(?:gute|guter|super|tolle|toller|prima|klasse|großartige|ausgezeichnete)"
              r"\s+(?:idee|lösung|option|vorschlag|plan)\b"
              r"(?![^.!?]*\b(?:aber|nicht|doch|allerdings|wenn|falls|vielleicht|jedoch)\b)(?![^.!?]*[?])",
              r"(?:(?:ja|okay|ok|gut|genau|klar)[,.!]*\s+)*(?:ich stimme (?:dir|ihnen|euch|dem"
              r"|da)? ?zu|(?:da )?bin ich "
              r"(?:dafür|einverstanden)|(?:das )?finde ich gut|(?:das )?klingt gut|(?:die idee )?gefällt mir)\b"
              r"(?![^.!?]*\b(?:aber|nicht|doch|allerdings|wenn|falls|vielleicht|jedoch)\b)(?![^.!?]*[?])",),
    going_on=(r"(?:so\s+)?weiter(?:hin|\s+so)?\b(?![^.!?]*\b(?:nutzen|verwenden|benutzen|einsetzen)\b)",),
    decision=(
        r"(?:entschieden|beschlossen|machen wir|wir machen|der plan ist|ansatz:)",
        # Cortex's own: "Wir nehmen Postgres", "wir bleiben bei MySQL", "ab jetzt deployen wir …"
        r"\bwir (?:nehmen|nutzen|verwenden|bleiben bei|gehen mit|setzen auf|wechseln (?:zu|auf))\b"
        # (what is taken named after it: "die Materialien, die wir verwenden." names it before;
        # eighteenth round, as English "the materials we're going to use")
        r"(?!\s*(?:[.!?,;:…]|$))"
        r"|\bab (?:jetzt|sofort|heute),? (?:\w+ )?wir\b"
        # what the group keeps (eleventh round, as English "we keep the teletext"): "dann behalten wir
        # den Videotext" — not "im Kopf", "im Auge", "im Blick"
        r"|\b(?:wir behalten|behalten wir) (?:den|die|das|unseren|unsere|unser)\b"
        r"(?![^.!?,;]*\bim (?:kopf|auge|blick)\b)",
        # the group's choice said as made or as what it will take (eighteenth round, as English "we've
        # just chosen rubber buttons", "we're gonna use the simple chip"): "wir haben uns den
        # Gummi ausgesucht", "wir werden den einfachen Chip verwenden" — not a clause that only
        # points back at it ("was wir ausgewählt haben")
        r"\b(?:wir haben|haben wir) (?:uns )?[^.!?,;]{2,60} (?:ausgesucht|ausgewählt|gewählt)\b",
        r"\b(?:wir werden|werden wir) [^.!?,;]{2,60} (?:nehmen|verwenden|benutzen|nutzen|einsetzen)\b",
    ),
    step=(
        # a person's own step taken (fourteenth round, as English "I just signed with …"): "ich habe bei
        # den Wolves unterschrieben", "ich habe mich bei drei Agenturen beworben", "ich gründe ein Studio"
        r"\bich habe (?:(?:gerade|endlich|gestern|jetzt) )*(?:bei|mit) [^.!?,;]{2,60} unterschrieben\b"
        r"|\bich habe mich (?:(?:gerade|endlich|gestern|jetzt) )*(?:bei|um|an) [^.!?,;]{2,60} beworben\b"
        r"|\bich gründe (?:ein|eine|einen|meine eigene|mein eigenes|meinen eigenen) \w",
    ),
    close=(
        r"(?:^|\s)(?:ist |schon )?(?:erledigt|gefixt|gelöst|fertig)(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:es |das )funktioniert(?:\s|[.!,;:)]|$)",
        # Cortex's own: a passing or green outcome ("der Build läuft wieder", "CI ist grün")
        r"(?:^|\s)(?:(?:läuft|funktioniert|geht|klappt) wieder|(?:funktioniert|klappt) jetzt)(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:(?:build|ci|pipeline|tests?|checks?|job)s? (?:ist|sind) (?:jetzt |alle )?grün"
        r"|wieder grün)(?:\s|[.!,;:)]|$)",
        *_RENEWAL_DE,  # Cortex's own: a renewal ("ich habe das Token erneuert")
    ),
    wait=(f"(?:warte auf|blockiert durch|brauche{GAP}erst)",),
    # ("bekommen", "erhalten" are infinitives too: "wir bekommen die Logs morgen")
    arrival=(
        r"\b(?:angekommen|eingetroffen|(?:ge|ver)schickt|gesendet|geliefert|geantwortet|freigegeben|gemergt"
        r"|unterschrieben)\b",
        r"(?:ist|sind)(?: jetzt| endlich)?(?: da| verfügbar| fertig)(?:[.!,;:)]|$)",
    ),
    topic=(
        # "zurück zu X" only where a clause starts or after "lass uns", "kommen wir", "gehen wir": "ich
        # gehe zurück zur Schule" returns to no topic (issue 37)
        rf"(?:{_returns_to('zurück zu', _RETURN_LEAD_DE)}[mr]?|jetzt zu[mr]?|bzgl\.?|wegen"
        r"|lass uns (?:mal\s+über|über|mal))\s+"
        r"(?:(?:dem|den|der|die|das)\s+)?(?:thema\s+)?" + _topic_until((*_TOPIC_END_DE, _TOPIC_VERBS_DE)),
    ),
    topic_blacklist=(
        "das", "die", "der", "es", "was", "hier", "dort",
        "nichts", "etwas", "alles",
        "mir", "dir", "ihm", "uns",
        "heute", "morgen", "gestern",
        "noch", "schon", "jetzt", "dann", "also", "aber", "oder",
    ),
    high_impact_keywords=(
        "architektur", "sicherheit", "migration", "löschen",
        "produktion", "kritisch", "strategie", "vertrag",
    ),
    mood=(
        ("frustrated", "(?:mist|nervig|genervt|schon wieder|zum kotzen)"),
        ("excited", "(?:geil|krass|boom|läuft|perfekt|mega)"),
        ("tense", "(?:vorsicht|heikel|kritisch|dringend|achtung|gefährlich)"),
        ("productive", "(?:erledigt|fertig|gebaut|läuft)"),
        ("exploratory", "(?:was wäre wenn|könnte man|idee|vielleicht)"),
    ),
    noise_prefixes=("ich", "wir", "du", "er", "sie", "es", "nichts", "etwas"),
    commitment=(
        rf"\b(?:ich werde|ich mach|ich kümmere mich)\b\s+{_PROMISE}",
        # (twentieth round) an answer opening on a yes and "ich kann" / "kann ich": "Klar, ich kann es dir
        # morgen schicken"
        rf"^\s*(?:(?:ja|klar|okay|ok|sicher|gerne?|natürlich)[,.!]*\s+)+(?:ich kann|kann ich)\b\s+{_PROMISE}",
        r"\b(?:mach ich|wird gemacht|klar mach ich)\b",
        r"\b(?:versprochen|abgemacht|geht klar)\b",
        r"\b(?:ich übernehme|das übernehm ich)\b",
    ),
    due=(
        rf"\b(?:(?:bis )?(?:heute(?: abend| nachmittag)?|übermorgen|morgen(?: früh)?|(?:diese|nächste) woche"
        rf"|(?:dieses|nächstes) wochenende|am wochenende|(?:diesen|nächsten) monat)"
        rf"|(?:bis|am|nächsten) (?:{_WEEKDAYS_DE})|bis ende der woche|(?:bis )?ende des monats"
        r"|in \d{1,3} (?:stunden|tagen|wochen))\b",
    ),
    reason=(r"\b(?:weil|aufgrund)\b", r"(?:^|,\s*)(?:da|denn|damit)\b"),
    consequence=(r"(?:^|,\s*)(?:deshalb|daher|darum|deswegen)\b", r"\b(?:deshalb|daher|darum|deswegen)\b"),
    keeps_reason_marker=True,
    negation=(r"\b(?:nicht|nie|niemals|kein\w*)\b",),
    condition=(r"\b(?:sobald|wenn|falls|sofern|bis)\b",),
    mood_negation=(r"\b(?:nicht|nichts|nie|kein\w*)",),
    agreement=("versprochen", "abgemacht", "geht klar"),
    aspiration=(r"^(?:immer|nie|niemals)\b|\b(?:versuchen|(?:mein|unser) bestes|hoffentlich)\b",),
    hedge=(r"\b(?:vielleicht|wahrscheinlich|eventuell|evtl|irgendwann|falls|mal sehen|ich glaube|ich denke"
           r"|wer weiß|womöglich|demnächst mal)\b",),
    task_lead=(r"^(?:(?:auf jeden fall|bestimmt|sicher|gerne|gern|auch|dann|natürlich|ganz sicher)\s+)+",),
    idle=(r"auf dem laufenden halten|darüber nachdenken|(?:es|das|sie) genießen|^(?:es|das|sie) mir (?:mal )?"
          r"(?:anschauen|ansehen|angucken|merken)$"
          # (twentieth round) what one can feel with, no task: "Ja, ich kann das gut verstehen"
          r"|\b(?:verstehen|nachvollziehen|nachempfinden|vorstellen|glauben)$",),
    vague=(r"^(?:(?:dir|euch|ihnen|dich) )?bescheid (?:geben|sagen)$|^(?:mich|uns) (?:melden|wieder melden)$"
           r"|^(?:das|es) (?:machen|tun)$"
           # (seventeenth round, as English "direct you through the project", "pass the pen to …"): the
           # room guided through what is shown right then, the meeting's floor passed on
           r"|^(?:euch|sie|dich)(?: alle)?(?: (?:kurz|schnell|einmal|mal))? durch\b"
           r"|^(?:das wort|den stift|den marker|das mikro(?:fon)?|die maus|den ball)\b[^.!?]{0,40}?"
           r"\b(?:weiter|über)geben$",),
    requested=(r"((?:erinnere?|erinnern sie) mich\b[^\n.!?]{3,160})",
               r"((?:kannst|könntest) du mich\b[^\n.!?]{0,80}?\berinnern\b[^\n.!?]{0,120})"),
    # a task given to the one addressed ("Du musst den Bericht bis Freitag schicken"; tenth round)
    assigned=(r"(?<![\wäöüß])(?:du musst|ihr müsst)\s+(?:(?:bitte|noch|dann|auch)\s+)*([^\n.!?]{2,120}?(?<![\wäöüß])"
              r"(?:schicken|senden|schreiben|vorbereiten|prüfen|überprüfen|erstellen|bauen|fertigstellen|überarbeiten"
              r"|erledigen|übernehmen|organisieren|planen|recherchieren|ausarbeiten|entwerfen|testen|einrichten"
              r"|buchen|bestellen))(?![\wäöüß])",),
    delegated=(r"([A-ZÄÖÜ][a-zäöüß]+)"
               r"(?: wird| will) ([^\n.!?,]{2,120}?\b(?:schicken|senden|prüfen|schreiben|vorbereiten|übernehmen|fixen"
               r"|erledigen|anrufen|erstellen|liefern|aktualisieren|reviewen|testen|deployen|klären|besorgen|buchen"
               r"|bestellen|unterschreiben|einreichen|verschicken|nachschauen|kümmern))\b",
               # (nineteenth round) a titled role's task: "Die Industriedesignerin wird das Komponentenkonzept
               # ausarbeiten", "Unser Marketing-Experte wird die Produktbewertung vorbereiten" — a role noun
               # after its article ("Der Server wird …" names none)
               r"(?<![\wäöüß])(?:[Dd]er|[Dd]ie|[Uu]nser|[Uu]nsere) ((?:[A-ZÄÖÜ][a-zäöüß]+-)?"
               r"(?:[A-ZÄÖÜ][a-zäöüß]*(?:designer|leiter|experte|expertin|manager|entwickler|berater)"
               r"|Designer|Leiter|Experte|Expertin|Manager|Entwickler|Berater)(?:in)?) (?:wird|muss)"
               r" ([^\n.!?,]{2,120}?\b(?:machen|erledigen|übernehmen|ausarbeiten|vorbereiten|erstellen|entwerfen"
               r"|bauen|prüfen|schreiben))\b",),
    stopwords=(
        "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "aber",
        "von", "zu", "zum", "zur", "im", "in", "am", "an", "auf", "für", "mit", "aus", "bei", "nach", "vor", "ist",
        "sind", "war", "waren", "sein", "wird", "werden", "wurde", "hat", "haben", "hatte", "ich", "du", "er",
        "sie", "es", "wir", "ihr", "mich", "mir", "dich", "dir", "uns", "euch", "nicht", "kein", "keine", "noch",
        "schon", "auch", "nur", "sehr", "so", "dann", "als", "wie", "was", "wer", "wo", "wann", "warum", "ob",
        "dass", "heute", "morgen", "gestern", "jetzt", "hier", "da", "dort", "gut", "danke", "hallo", "mal", "ja",
        "nein",
    ),
    # Cortex's own (issue 37, twenty-fourth round): what a topic nobody announced is not made of —
    # modal and common verbs in their forms, adverbs, quantifiers, question words, prepositions and
    # time words ("Vielleicht könnte man …", "ein paar Kleinigkeiten", "Die Zahlen sehen besser aus",
    # "nach dem Exportformat gefragt", "auf nächste Woche"). Only words no English sentence uses:
    # the default languages are English and German together ("man", "fast", "bald" are left out). Not
    # "machen": "Wir haben beschlossen, das zu machen" is a decision (the reference's test), and a
    # decision whose every word is a break is a recap (``statements._points_back``).
    verbs=(
        "kann", "kannst", "können", "könnt", "konnte", "konnten", "könnte", "könnten", "könntest", "muss",
        "musst", "müssen", "müsst", "musste", "mussten", "müsste", "müssten", "sollst", "sollen", "sollt",
        "sollte", "sollten", "solltest", "willst", "wollen", "wollt", "wollte", "wollten", "darf", "darfst",
        "dürfen", "durfte", "dürfte", "dürften", "magst", "mögen", "möchte", "möchtest", "möchten",
        "würde", "würdest", "würden", "wäre", "wären", "hätte", "hätten", "habe", "hast", "habt", "bist",
        "seid", "gewesen", "geworden", "gehabt", "worden",
        "gehe", "geht", "gehen", "gegangen", "komme", "kommt", "kommen", "gekommen", "sehe", "siehst", "sieht",
        "sehen", "gesehen", "schaue", "schaut", "schauen", "geschaut", "anschauen", "angeschaut", "finde",
        "findest", "findet", "finden", "gefunden", "glaube", "glaubst", "glaubt", "glauben", "denke", "denkst",
        "denkt", "denken", "gedacht", "weiß", "weißt", "wissen", "gewusst", "sage", "sagst", "sagt", "sagen",
        "gesagt", "fragt", "gefragt", "gebe", "gibt", "geben", "gegeben", "nehme", "nimmt", "nehmen",
        "genommen", "lasse", "lässt", "lassen", "gelassen", "läuft", "laufen", "gelaufen", "schicke", "schickst",
        "schickt", "schicken", "geschickt", "brauche", "brauchst", "braucht", "brauchen", "gebraucht", "bleibt",
        "bleiben", "geblieben", "steht", "stehen", "liegt", "liegen", "scheint", "scheinen", "klingt", "klingen",
        "passt", "passen", "hoffe", "hoffen", "freue", "freuen", "gelesen", "liest", "versuche", "versuchen",
        "versucht", "zeigt", "gezeigt", "erklärt", "gesprochen", "bekommen", "warte", "wartet", "gewartet",
        "vielleicht", "eigentlich", "wirklich", "gerade", "nochmal", "einmal", "wieder", "erst", "früh",
        "später", "besser", "einfach", "einfacher", "genau", "ganz", "ziemlich", "etwas", "immer", "nie",
        "niemals", "oft", "manchmal", "gleich", "sofort", "bereits", "kurz", "schnell", "lieber", "leider",
        "zusammen", "darüber", "dabei", "damit", "dafür", "dazu", "daran", "davon", "darauf", "trotzdem",
        "deshalb", "deswegen", "also", "sonst", "eher", "irgendwie", "irgendwann", "natürlich", "sicher",
        "klar", "wohl", "eben", "doch", "denn", "mehr", "weniger", "ungefähr", "endlich", "bisher",
        "inzwischen", "mittlerweile", "zuerst", "danach", "vorher", "nachher", "übrigens", "außerdem",
        "allerdings", "hoffentlich", "bestimmt", "wahrscheinlich", "tatsächlich", "nochmals", "paar", "einige",
        "einigen", "einiger", "viele", "vielen", "vieler", "viel", "mehrere", "mehreren", "manche", "manchen",
        "wenige", "wenigen", "wenig", "alle", "allen", "aller", "alles", "jede", "jeder", "jedes", "jeden",
        "jedem", "beide", "beiden", "andere", "anderen", "anderer", "anderes", "diese", "dieser", "dieses",
        "diesen", "diesem", "welche", "welcher", "welches", "welchen", "welchem", "solche", "solchen",
        "irgendein", "irgendeine", "jemand", "niemand", "nichts", "sich", "wegen", "über", "unter", "durch",
        "gegen", "ohne", "bis", "seit", "während", "statt", "trotz", "zwischen", "neben", "hinter", "nächste",
        "nächsten", "nächster", "letzte", "letzten", "letzter",
        "runter", "rauf", "raus", "rein", "hoch", "weiter", "zurück", "los",
    ),
    frame=(
        rf"{_FRAME_START}(?:beim|bei\s+(?:dem|der|den)|für\s+(?:den|die|das)|bzgl\.?|bezüglich\s+(?:des|der))\s+"
        rf"{_FRAME_WORDS}",
    ),
)

ES: Final = LanguagePack(
    code="es",
    recap=(r"\bcomo (?:ya )?$|\b(?:habíamos|había)\s+(?:\w+\s+)?$",),
    ongoing=(r"\s*(?:está|están|sigue|siguen|va|van|anda|se retrasa|tiene|tienen)\b",),
    engaged=(r"\b(?:voy a|vamos a|estoy|estamos|quiero|queremos|planeo|planeamos|pienso|tengo que|tenemos que"
             r"|he empezado|hemos empezado|empecé|decidí|decidimos|elegimos|hagamos)\b",),
    owners=("mi", "mis", "nuestro", "nuestra", "nuestros", "nuestras", "tu", "tus", "su", "sus"),
    articles=("el", "la", "los", "las"),
    question_tag=("vale", "no", "sí", "verdad", "de acuerdo", "ok"),
    # a fragment going on with the decision before it (eighteenth round): "Sin teletexto.", "Con un color
    # distinto de la carcasa." — not "Sin problema.", "Con gusto."
    decision_tail=(r"(?:sin|con|nada de) (?!(?:problemas?|duda|gusto|prisa|cuidado|permiso)\b)"
                   r"(?:(?!\b(?:yo|nosotros|nosotras|tú|usted|él|ella|ellos|es|son|era|será|ha|han|hemos|puede"
                   r"|pueden|tiene|tienen|vamos|va)\b)[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*|¿)(?:y si\s+|podríamos\s+|deberíamos\s+|propongo (?:que\s+)?|"
              r"qué tal si\s+)([^.!?\n]{4,160})",),
    request=(r"(?:¿|\b)(?:puedes|podrías|puede usted|podría usted|me puedes|"
             r"nos puedes)(?: por favor)?\s+([^\W\d][^.!?\n]{6,160})",),
    acceptance=(r"(?:(?:sí|claro|vale|ok|por supuesto)[,.!]*\s*)*(?:lo haré|lo hago|puedo|me encargo|claro|"
                r"por supuesto)(?!\w)",),
    ratification=(r"(?:(?:vale|sí|perfecto|genial|bien)[,.!]*\s+)*(?:de acuerdo|hecho|hagámoslo|adelante"
                  r"|suena (?:bien|genial)|(?:buena|gran) idea|me apunto|cuenta conmigo"
                  r"|me parece bien)(?:[,.!]*\s*\w+)?",),
    # (twenty-first round) a yes answering a choice put to the group, and the opinion that puts one
    assent=(r"(?:sí|si|vale|claro|de acuerdo|perfecto|exacto|bueno)\b(?![^.!?]*\b(?:pero|no|nunca|aunque|quizás?"
            r"|tal vez|o)\b)(?![^.!?]*[?¿])",),
    opinion=("creo que", "pienso que"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:sí|si|vale|bueno|claro)[,.!]*\s+)*(?:creo que\s+)?(?:(?:es|eso es|me parece|sería)\s+)?"
              r"(?:una\s+)?(?:muy\s+)?(?:buena|gran|excelente|genial)\s+(?:idea|opción|solución|propuesta)\b"
              r"(?![^.!?]*\b(?:pero|no|aunque|quizás?|si|sin embargo)\b)(?![^.!?]*[?])",
              r"(?:(?:sí|si|vale|bueno|claro)[,.!]*\s+)*(?:estoy (?:totalmente )?de acuerdo"
              r"|me parece bien|me gusta la idea)"
              r"(?!\w)(?![^.!?]*\b(?:pero|no|aunque|quizás?|si|sin embargo)\b)(?![^.!?]*[?])",),
    going_on=(r"(?:seguir|continuar)\s+\w+(?:ndo)\b|(?:seguir|continuar) así\b",),
    decision=(
        r"(?:decidido|decidimos|decisión(?=\s+(?:es|fue|de)\b|\s*:)|hagamos|el plan es|enfoque:)",
        r"(?:acordado|optamos por|elegimos|vamos con)",
        # what the group keeps (eleventh round): "mantenemos el teletexto"
        r"\bmantenemos (?:el|la|los|las)\b",
    ),
    step=(
        # a person's own step taken (fourteenth round): "firmé con los Wolves", "me postulé a tres
        # agencias", "estoy montando mi propio estudio"
        r"\b(?:firmé|he firmado|acabo de firmar) con \w|\b(?:me postulé|me he postulado) (?:a|en|para) \w"
        r"|\bestoy (?:montando|abriendo|fundando) (?:un|una|mi propio|mi propia) \w",
    ),
    close=(
        r"(?:^|\s)(?:está |están |ya )?(?:hech[oa]|hechas|resuelt[oa]s?|cerrad[oa]s?|terminad[oa]s?|listo)"
        r"(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:ya )?funciona(?:\s|[.!,;:)]|$)",
    ),
    wait=(
        f"(?:esperando|bloqueado por|necesitamos{GAP}primero)",
        f"(?:pendiente de|falta{GAP}antes)",
    ),
    topic=(
        r"(?:volvamos a|ahora sobre|respecto a|hablemos de|en cuanto a)\s+"
        r"(?:el |la |los |las )?" + _topic_until(_TOPIC_END_ES),
    ),
    topic_blacklist=(
        "el", "la", "los", "las", "un", "una", "unos", "unas",
        "esto", "eso", "aquello", "ese", "esta",
        "yo", "tú", "él", "ella", "nosotros", "ellos", "ellas",
        "nada", "algo", "todo",
        "aquí", "allí", "ahora", "entonces", "pero", "porque",
        "hoy", "mañana", "ayer",
    ),
    high_impact_keywords=(
        "arquitectura", "seguridad", "migración", "eliminar",
        "producción", "desplegar", "crítico", "estrategia",
        "presupuesto", "contrato", "importante",
    ),
    mood=(
        ("frustrated", "(?:mierda|joder|hostia|coño|qué asco|me cago)"),
        ("excited", "(?:genial|increíble|perfecto|brutal|guay|mola)"),
        ("tense", "(?:cuidado|peligroso|urgente|crítico|ojo|atención)"),
        ("productive", "(?:hecho|terminado|desplegado|arreglado|listo)"),
        ("exploratory", "(?:y si|quizás|idea|a lo mejor|podríamos|probemos)"),
    ),
    noise_prefixes=("yo", "tú", "él", "ella", "nosotros", "nada", "algo"),
    commitment=(
        r"\b(?:lo haré|me encargo|yo me ocupo)\b",
        r"\b(?:prometido|de acuerdo)\b",
    ),
    due=(
        r"\b(?:(?:(?:para|hasta|antes de) )?(?:hoy|pasado mañana|mañana|esta (?:tarde|noche|semana)"
        r"|la próxima semana|la semana que viene|este fin de semana|el próximo fin de semana|este mes"
        r"|el próximo mes|el mes que viene|fin de mes|el (?:lunes|martes|miércoles|jueves|viernes|sábado|domingo))"
        r"|antes del (?:lunes|martes|miércoles|jueves|viernes|sábado|domingo))\b",
    ),
    reason=(r"\b(?:porque|ya que|puesto que|dado que|debido a|para que)\b",),
    consequence=(r"(?:^|,\s*)(?:así que|por eso|por lo tanto|por tanto)\b",),
    negation=(r"\b(?:no|nunca|todavía no|aún no)\b",),
    condition=(r"\b(?:si|cuando|una vez que|en cuanto|tan pronto como|hasta que|a menos que)\b",),
    arrival=(
        r"\b(?:llegó|llegaron|ha llegado|han llegado|recibid[oa]s?|recibimos|envió|enviaron|enviad[oa]s?"
        r"|entregad[oa]s?|respondió|contestó|aprobad[oa]s?|aprobó)\b",
        r"(?:está|están)(?: ya| por fin)? (?:aquí|disponibles?|list[oa]s?)(?:[.!,;:)]|$)",
    ),
    agreement=("prometido", "de acuerdo"),
    aspiration=(r"^(?:siempre|nunca)\b|\b(?:intentar\w*|hacer lo posible|lo mejor que pueda)\b",),
    hedge=(r"\b(?:quizás?|tal vez|a lo mejor|probablemente|algún día|si puedo|si tengo tiempo|creo que)\b",),
    idle=(r"\b(?:te|os|les) (?:aviso|cuento|mantengo (?:al tanto|informad[oa]s?))\b|\blo pensaré\b",),
    requested=(r"((?:recuérdame|recuerdame|me recuerdas|recordarme)\b[^\n.!?]{3,160})",),
    # a task given to the one addressed ("Tienes que preparar el informe para el viernes"; tenth round)
    assigned=(r"(?<![\wáéíóúñ])(?:tienes que|tenéis que)\s+((?:preparar|enviar|mandar|revisar|escribir|redactar"
              r"|trabajar en|diseñar|investigar|organizar|terminar|contactar|programar|actualizar)(?![\wáéíóúñ])"
              r"[^\n.!?]{2,160})",),
    delegated=(r"([A-ZÁÉÍÓÚÑ][a-záéíóúñ]+) (?:va a|se encarga de|se ocupa de) ((?:enviar|mandar|revisar|preparar"
               r"|llamar|escribir|arreglar|actualizar|comprobar|hacer|subir|firmar|reservar|pagar|contactar)\b"
               r"[^\n.!?]{2,160})",),
    stopwords=(
        "el", "la", "los", "las", "un", "una", "unos", "unas", "y", "o", "pero", "de", "del", "al", "a", "en",
        "con", "por", "para", "sin", "sobre", "es", "son", "fue", "era", "ser", "estar", "está", "están", "hay",
        "yo", "tú", "él", "ella", "nosotros", "ellos", "que", "qué", "como", "cuando", "donde", "muy", "más",
        "menos", "también", "ya", "no", "sí", "hoy", "mañana", "ayer", "ahora", "aquí", "este", "esta", "esto",
        "ese", "esa", "eso", "mi", "mis", "tu", "su", "sus", "nuestro", "gracias", "hola", "bien",
    ),
    # (issue 37, twenty-fourth round) modal and common verbs, adverbs and quantifiers a topic nobody
    # announced is not made of ("Tal vez podríamos …", "un par de cosas", "algunas cosas")
    verbs=(
        "podríamos", "podría", "podrías", "podrían", "puedo", "puedes", "puede", "podemos", "pueden",
        "debería", "deberíamos", "deberías", "deberían", "debo", "debes", "debe", "debemos", "deben", "tengo",
        "tienes", "tiene", "tenemos", "tienen", "quiero", "quieres", "quiere", "queremos", "quieren", "hacer",
        "hago", "hace", "hacemos", "hecho", "voy", "vas", "va", "vamos", "ir", "dijo", "dice", "decir",
        "creo", "cree", "pienso", "piensa", "sé", "sabe", "saber", "veo", "ver", "visto", "mirar",
        "leí", "he", "has", "ha", "hemos", "han", "había", "sería", "será", "estoy", "estamos", "estaba",
        "sigue", "parece", "vez", "quizás", "quizá", "realmente", "bastante", "demasiado", "siempre", "nunca",
        "todavía", "aún", "luego", "pronto", "tarde", "temprano", "sólo", "casi", "mejor", "peor",
        "así", "después", "antes", "otra", "otro", "otros", "otras", "mismo", "misma", "par", "cosas",
        "algunas", "algunos", "alguna", "algún", "varios", "varias", "muchos", "muchas", "mucho", "poco",
        "pocos", "pocas", "cada", "todos", "todas", "ningún", "ninguna", "próxima", "próximo", "siguiente",
        "última", "último",
    ),
)

FR: Final = LanguagePack(
    code="fr",
    recap=(r"(?:\bcomme (?:on l['’]a|nous l['’]avons)|\bnous avions|\bon avait)\s*(?:\w+\s+)?$",),
    ongoing=(r"\s*(?:est|sont|avance|bloque|reste|restent|prend|a|ont)\b",),
    engaged=(r"\b(?:je|j['’]|on|nous)\s*(?:vais|va|allons|suis|sommes|veux|voulons|travaille|travaillons|prévois"
             r"|compte|dois|devons|ai commencé|avons commencé|ai décidé|avons décidé|a décidé|ai choisi"
             r"|avons choisi)\b",),
    owners=("mon", "ma", "mes", "notre", "nos", "ton", "ta", "tes", "votre", "vos", "son", "sa", "ses", "leur",
            "leurs"),
    articles=("le", "la", "les", "l'", "l’"),
    question_tag=("non", "hein", "d'accord", "ok", "oui"),
    # a fragment going on with the decision before it (eighteenth round): "Pas de télétexte.", "Avec une
    # couleur différente du boîtier." — not "Pas de problème.", "Avec plaisir."
    decision_tail=(r"(?:pas de |pas d['’]|sans |avec )(?!(?:problème|souci|soucis|quoi|doute|plaisir|façon)\b)"
                   r"(?:(?!\b(?:je|j|nous|on|vous|tu|il|elle|ils|elles|est|sont|était|sera|a|ont|avons|peut"
                   r"|peuvent|doit|va|allons)\b)[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*)(?:et si on\s+|on pourrait\s+|on devrait\s+|je propose (?:qu['’]on\s+|"
              r"de\s+)?)([^.!?\n]{4,160})",),
    request=(r"\b(?:peux-tu|pourrais-tu|pouvez-vous|pourriez-vous|tu peux|vous pouvez|tu pourrais|"
             r"vous pourriez)(?: s['’]il (?:te|vous) plaît)?\s+([^\W\d][^.!?\n]{6,160})",),
    acceptance=(r"(?:(?:oui|ok|d['’]accord|bien sûr)[,.!]*\s*)*(?:je (?:le )?ferai|je peux|"
                r"je m['’]en occupe|bien sûr|avec plaisir)(?!\w)",),
    ratification=(r"(?:(?:ok|oui|parfait|super|bon)[,.!]*\s+)*(?:d['’]accord|entendu|ça marche|on fait comme ça|"
                  r"va pour ça|validé|bonne idée|ça me va|je suis partante?|ça me semble bien"
                  r"|volontiers)(?:[,.!]*\s*\w+)?",),
    # (twenty-first round) a yes answering a choice put to the group, and the opinion that puts one
    assent=(r"(?:oui|ouais|d['’]accord|ok|parfait|exactement|bien sûr|entendu|ça marche)(?!\w)(?![^.!?]*\b(?:mais|pas"
            r"|non|jamais|peut-être|ou)\b)(?![^.!?]*[?])",),
    opinion=("je pense que", "je crois que"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:oui|ouais|ok|bon|ah)[,.!]*\s+)*(?:je (?:pense|crois) que\s+)?(?:(?:c['’]est|ce serait|ça serait"
              r"|ça me semble)\s+)?(?:une\s+)?(?:très\s+|vraiment\s+)?(?:bonne|excellente|super)\s+"
              r"(?:idée|solution|option)"
              r"(?!\w)(?![^.!?]*\b(?:mais|pas|si|peut-être|cependant)\b)(?![^.!?]*[?])",
              r"(?:(?:oui|ouais|ok|bon)[,.!]*\s+)*(?:je suis (?:tout à fait |totalement )?d['’]accord"
              r"|ça me va|j['’]aime "
              r"(?:bien )?l['’]idée)(?!\w)(?![^.!?]*\b(?:mais|pas|si|peut-être|cependant)\b)(?![^.!?]*[?])",),
    going_on=(r"(?:continuer|persévérer)\s+(?:à|a|de|d['’]|comme ça)",),
    decision=(
        r"(?:décidé|décision(?=\s+(?:est|était|de|d['’])|\s*:)|on fait|le plan est|approche\s*:)",
        r"(?:convenu|arrêté|choisi de|opté pour)",
        # what the group keeps (eleventh round): "on garde le télétexte" — not "le contact"
        r"\b(?:on garde|nous gardons) (?:le|la|les)\b(?! contact)",
    ),
    step=(
        # a person's own step taken (fourteenth round): "j'ai signé avec les Wolves", "j'ai postulé
        # à trois agences", "je monte ma propre entreprise"
        r"\bj['’]ai (?:(?:enfin|finalement|hier) )*signé (?:avec|chez) \w"
        r"|\bj['’]ai (?:(?:enfin|finalement|hier) )*postulé (?:à|chez|auprès d[eu']|dans) ?\w"
        r"|\bje (?:monte|fonde|lance) (?:ma propre|mon propre) \w",
    ),
    close=(
        r"(?:^|\s)(?:c['’]est |est |sont )?(?:faite?|terminée?s?|résolue?s?|fermée?s?|finie?s?)(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:ça |il )(?:marche|fonctionne)(?:\s|[.!,;:)]|$)",
    ),
    wait=(
        r"(?:en attente de|bloqué par|il faut d['’]abord)",
        f"(?:attend[s]? (?:que |(?=(?:le|la|les|l['’]|du|des|un|une)\\b))|besoin (?:de|d['’]){GAP}avant)",
    ),
    topic=(
        r"(?:revenons (?:à|au|aux)|maintenant|concernant|parlons (?:de|du|des)|à propos (?:de|du|des))\s+"
        r"(?:la?\s+|l['’])?" + _topic_until(_TOPIC_END_FR),
    ),
    topic_blacklist=(
        "le", "la", "les", "un", "une", "des", "ce", "cette", "ces",
        "il", "elle", "on", "nous", "vous", "ils", "elles",
        "ça", "cela", "rien", "tout", "quelque", "chose",
        "ici", "là", "maintenant", "alors", "donc", "mais", "ou",
        "aujourd'hui", "demain", "hier",
    ),
    high_impact_keywords=(
        "architecture", "sécurité", "migration", "supprimer",
        "production", "déployer", "critique", "stratégie",
        "budget", "contrat", "majeur",
    ),
    mood=(
        ("frustrated", "(?:merde|putain|chiant|énervant|bordel|fait chier)"),
        ("excited", "(?:génial|super|trop bien|magnifique|parfait|incroyable)"),
        ("tense", "(?:attention|risqué|critique|urgent|dangereux|prudence)"),
        ("productive", "(?:terminé|fait|déployé|livré|corrigé)"),
        ("exploratory", "(?:et si|peut-être|idée|hypothèse|on pourrait|essayons)"),
    ),
    noise_prefixes=("je", "tu", "il", "elle", "on", "nous", "vous", "ils", "elles", "rien", "quelque"),
    commitment=(
        rf"\b(?:je vais|je ferai|je m['’]en occupe)\b\s*{_PROMISE}",
        r"\b(?:c['’]est noté|je m['’]engage à)\b",
    ),
    due=(
        r"\b(?:(?:pour |d['’]ici |avant |jusqu['’]à )?(?:aujourd['’]hui|après-demain|demain|ce soir|cette semaine"
        r"|la semaine prochaine|ce week-end|le week-end prochain|ce mois-ci|le mois prochain|la fin du mois"
        r"|(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)(?: prochain)?))\b",
    ),
    reason=(r"\b(?:parce que|parce qu['’]|puisque|étant donné que|afin de|afin que|pour que)", r",\s*car\b"),
    consequence=(r"(?:^|,\s*)(?:donc|c['’]est pourquoi|du coup|par conséquent)\b",),
    negation=(r"\b(?:ne|pas|jamais)\b|\bn['’]",),
    condition=(r"\b(?:si|quand|lorsque|dès que|une fois que|jusqu['’]à ce que|à moins que)\b|\bs['’]il",),
    arrival=(
        r"\b(?:arrivée?s?|reçue?s?|envoyée?s?|livrée?s?|répondu|approuvée?s?|validée?s?)\b",
        r"(?:est|sont)(?: enfin| maintenant)? (?:là|disponibles?|prête?s?)(?:[.!,;:)]|$)",
    ),
    agreement=("c'est noté", "c’est noté"),
    aspiration=(r"^(?:toujours|jamais)\b|\b(?:essayer|faire de mon mieux|faire mon possible)\b",),
    hedge=(r"\b(?:peut-être|probablement|un jour|si je peux|je pense que|sans doute|je crois que)\b",),
    idle=(r"^(?:te|vous) (?:tenir|tiens|tiendrai) au courant|^y (?:réfléchir|penser)\b",),
    vague=(r"^(?:te|vous) (?:dire|redire|faire signe)\b"
           # (seventeenth round, as English "direct you through the project", "pass the pen to …"): the
           # room guided through what is shown right then, the meeting's floor passed on
           r"|^(?:vous|te|les) (?:guider|accompagner|emmener) (?:à travers|dans|par|à)\b"
           r"|^(?:passer|donner|céder|laisser) (?:la parole|le stylo|le feutre|le marqueur|le micro|la main)\b",),
    requested=(r"((?:rappelle|rappelez)[- ]moi\b[^\n.!?]{3,160})",),
    # a task given to the one addressed ("Tu dois préparer le devis pour vendredi"; tenth round)
    assigned=(r"(?<![\wéèêàçîô])(?:tu dois|vous devez|il faut que tu)\s+((?:préparer|envoyer|écrire|rédiger|vérifier"
              r"|travailler sur|concevoir|organiser|finir|terminer|contacter|réviser|mettre à jour)(?![\wéèêàçîô])"
              r"[^\n.!?]{2,160})",),
    delegated=(r"([A-ZÉÈ][a-zéèêàçîô]+) va ((?:envoyer|vérifier|préparer|écrire|appeler|corriger"
               r"|mettre à jour|relire|faire|s['’]occuper|réserver|payer|signer|contacter|tester)\b[^\n.!?]{2,160})",),
    stopwords=(
        "le", "la", "les", "un", "une", "des", "et", "ou", "mais", "de", "du", "au", "aux", "à", "en", "dans",
        "sur", "pour", "par", "avec", "sans", "est", "sont", "était", "être", "avoir", "a", "ont", "je", "tu",
        "il", "elle", "nous", "vous", "ils", "elles", "on", "ce", "cette", "ces", "que", "qui", "quoi", "comme",
        "quand", "où", "très", "plus", "moins", "aussi", "déjà", "ne", "pas", "oui", "non", "aujourd'hui",
        "demain", "hier", "maintenant", "ici", "mon", "ma", "mes", "ton", "ta", "son", "sa", "ses", "notre",
        "merci", "bonjour", "bien",
    ),
    # (issue 37, twenty-fourth round) modal and common verbs, adverbs and quantifiers a topic nobody
    # announced is not made of ("Peut-être qu'on pourrait …", "quelques petites choses", "est-ce")
    verbs=(
        "peut-être", "est-ce", "peut", "peux", "peuvent", "pouvons", "pouvez", "pourrait", "pourrais",
        "pourraient", "pourrions", "pourriez", "doit", "dois", "doivent", "devons", "devez", "devrait",
        "devrais", "devraient", "devrions", "faut", "fallait", "faudrait", "veux", "veut", "voulons", "voulez",
        "veulent", "voudrais", "voudrait", "vais", "vas", "allons", "allez", "vont", "fait", "faire", "fais",
        "faisons", "faites", "font", "dit", "dire", "vu", "voir", "vois", "voit", "sais", "sait", "savoir",
        "crois", "croit", "pense", "penses", "pensons", "pensez", "pensent", "trouve", "trouves", "trouvé",
        "semble", "semblent", "avons", "avez", "suis", "sommes", "êtes", "été", "serait", "seraient",
        "seront", "aurait", "auraient", "regarder", "regarde", "envoyer", "envoie", "vraiment",
        "toujours", "jamais", "souvent", "juste", "seulement", "trop", "assez", "bientôt", "tôt",
        "tard", "vite", "ensuite", "puis", "enfin", "plutôt", "beaucoup", "peu", "tellement", "surtout",
        "sûrement", "probablement", "franchement", "heureusement", "malheureusement", "ensemble", "quelques",
        "plusieurs", "certains", "certaines", "chaque", "tous", "toutes", "autre", "autres", "même", "mêmes",
        "choses", "truc", "trucs", "prochain", "prochaine", "dernier", "dernière", "là-bas", "moi-même",
        "vous-même", "celui-ci", "celle-ci",
    ),
)

IT: Final = LanguagePack(
    code="it",
    recap=(r"(?:\bcome (?:abbiamo|avevamo)|\bavevamo)\s*(?:\w+\s+)?$",),
    ongoing=(r"\s*(?:è|sono|sta|stanno|va|vanno|resta|ha|hanno)(?!\w)",),
    engaged=(r"\b(?:sto|stiamo|vado a|andiamo a|voglio|vogliamo|devo|dobbiamo|ho deciso|abbiamo deciso|ho iniziato"
             r"|abbiamo iniziato|ho scelto|abbiamo scelto|penso di|pensiamo di)\b",),
    owners=("mio", "mia", "miei", "mie", "nostro", "nostra", "nostri", "nostre", "tuo", "tua", "suo", "sua", "loro"),
    articles=("il", "lo", "la", "i", "gli", "le", "l'", "l’"),
    question_tag=("no", "vero", "giusto", "va bene", "ok", "sì"),
    # a fragment going on with the decision before it (eighteenth round): "Niente televideo.", "Con un
    # colore diverso dalla scocca." — not "Nessun problema.", "Con piacere."
    decision_tail=(r"(?:niente|senza|con|nessun|nessuna) (?!(?:problem[ai]|piacere|dubbio|fretta|paura|pensiero)\b)"
                   r"(?:(?!\b(?:io|noi|tu|voi|lui|lei|loro|è|sono|era|sarà|ha|hanno|abbiamo|può|possono|va"
                   r"|andiamo)\b)[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*)(?:e se\s+|potremmo\s+|dovremmo\s+|propongo (?:di\s+)?)([^.!?\n]{4,160})",),
    request=('\\b(?:puoi|potresti|può|potrebbe)(?: per favore)?\\s+([^\\W\\d][^.!?\\n]{6,160})',),
    acceptance=('(?:(?:sì|certo|ok|va bene)[,.!]*\\s*)*(?:lo farò|lo faccio|posso|ci penso io|certo)(?!\\w)',),
    ratification=(r"(?:(?:ok|sì|perfetto|bene|va bene)[,.!]*\s+)*"
                  r"(?:d['’]accordo|facciamo così|affare fatto|facciamolo|(?:buona|ottima) idea|ci sto|mi va bene"
                  r"|mi sembra (?:una )?(?:buona|ottima) idea)(?:[,.!]*\s*\w+)?",),
    # (twenty-first round) a yes answering a choice put to the group, and the opinion that puts one
    assent=(r"(?:sì|si|va bene|ok|certo|perfetto|esatto|d['’]accordo|giusto)(?!\w)(?![^.!?]*\b(?:ma|però|non|mai"
            r"|forse|o)\b)(?![^.!?]*[?])",),
    opinion=("penso che", "credo che"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:sì|si|ok|bene)[,.!]*\s+)*(?:(?:penso|credo) che\s+)?(?:(?:è|sarebbe"
              r"|mi sembra)\s+)?(?:una\s+|un['’])?"
              r"(?:davvero\s+|molto\s+)?(?:buona|ottima|bella|bellissima)\s+(?:idea|soluzione|proposta)(?!\w)"
              r"(?![^.!?]*\b(?:ma|però|non|se|forse)\b)(?![^.!?]*[?])",
              r"(?:(?:sì|si|ok|bene)[,.!]*\s+)*(?:sono (?:pienamente |del tutto )?d['’]accordo"
              r"|mi piace l['’]idea|mi sta bene)"
              r"(?!\w)(?![^.!?]*\b(?:ma|però|non|se|forse)\b)(?![^.!?]*[?])",),
    going_on=(r"(?:continuare|proseguire)\s+(?:a|ad|così)\b",),
    decision=(
        r"(?:deciso|decisione(?=\s+(?:è|era|di)(?!\w)|\s*:)|facciamo|il piano è|approccio:)",
        r"(?:concordato|scelto di|optiamo per|andiamo con)",
        # what the group keeps (eleventh round): "teniamo il televideo"
        r"\b(?:teniamo|manteniamo) (?:il|lo|la|i|gli|le)\b",
    ),
    step=(
        # a person's own step taken (fourteenth round): "ho firmato con i Wolves", "mi sono candidata
        # a tre agenzie", "sto aprendo il mio studio"
        r"\bho (?:(?:appena|finalmente|ieri) )*firmato con \w|\bmi sono candidat[oa] (?:a|per|presso|in) \w"
        r"|\bsto (?:aprendo|fondando|avviando) (?:il mio|la mia|un|una) \w",
    ),
    close=(
        r"(?:^|\s)(?:è |sono |già )?(?:fatt[oae]|risolt[oaie]|chius[oaie]|terminat[oaie]|finit[oaie])"
        r"(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:già )?funziona(?:\s|[.!,;:)]|$)",
    ),
    wait=(
        f"(?:aspettando|bloccato da|serve{GAP}prima)",
        f"(?:in attesa di|manca{GAP}prima)",
    ),
    topic=(
        r"(?:torniamo (?:a|al|alla|allo|ai|alle)|adesso|riguardo(?: a| al| alla)?"
        r"|parliamo (?:di|del|della|dello|dei|delle|degli)|per quanto riguarda)\s+"
        r"(?:il |la |lo |i |le |gli )?" + _topic_until(_TOPIC_END_IT),
    ),
    topic_blacklist=(
        "il", "la", "lo", "i", "le", "gli", "un", "una", "uno",
        "questo", "quello", "questa", "quella",
        "io", "tu", "lui", "lei", "noi", "loro",
        "niente", "qualcosa", "tutto",
        "qui", "lì", "adesso", "allora", "ma", "perché",
        "oggi", "domani", "ieri",
    ),
    high_impact_keywords=(
        "architettura", "sicurezza", "migrazione", "eliminare",
        "produzione", "deploy", "critico", "strategia",
        "budget", "contratto", "importante",
    ),
    mood=(
        ("frustrated", "(?:cazzo|merda|cavolo|che palle|mannaggia|che schifo)"),
        ("excited", "(?:fantastico|bellissimo|perfetto|grande|mitico|fichissimo)"),
        ("tense", "(?:attenzione|pericoloso|urgente|critico|occhio|prudenza)"),
        ("productive", "(?:fatto|terminato|deployato|sistemato|finito)"),
        ("exploratory", "(?:e se|forse|idea|magari|potremmo|proviamo)"),
    ),
    noise_prefixes=("io", "tu", "lui", "lei", "noi", "niente", "qualcosa"),
    commitment=(
        r"\b(?:lo farò|me ne occupo|ci penso io)\b",
        r"\b(?:promesso|affare fatto|d['’]accordo)\b",
    ),
    due=(
        r"\b(?:(?:entro |per |prima di )?(?:oggi|stasera|dopodomani|domani|questa settimana|la prossima settimana"
        r"|questo fine settimana|il prossimo fine settimana|questo mese|il prossimo mese|il mese prossimo|fine mese"
        r"|lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica))\b",
    ),
    reason=(r"\b(?:perché|poiché|dato che|visto che|siccome|affinché)(?!\w)",),
    consequence=(r"(?:^|,\s*)(?:quindi|perciò|per questo)(?!\w)",),
    negation=(r"\b(?:non|mai)\b",),
    condition=(r"\b(?:se|quando|una volta che|appena|finché|a meno che)\b",),
    arrival=(
        r"\b(?:arrivat[oaie]|ricevut[oaie]|inviat[oaie]|consegnat[oaie]|rispost[oa]|approvat[oaie])\b",
        r"(?:è|sono)(?: finalmente| ora)? (?:qui|disponibil[ei]|pront[oaie])(?:[.!,;:)]|$)",
    ),
    agreement=("promesso", "affare fatto", "d'accordo", "d’accordo"),
    aspiration=(r"^(?:sempre|mai)\b|\b(?:provare|provarci|fare del mio meglio|fare il possibile)\b",),
    hedge=(r"\b(?:forse|magari|probabilmente|prima o poi|un giorno|se riesco|credo che|penso che)\b",),
    idle=(r"\bti (?:tengo|terrò) aggiornat[oaie]\b|\bci penserò\b",),
    vague=(r"\bti (?:faccio|farò) sapere\b",),
    requested=(r"((?:ricordami|ricordatemi|mi ricordi)\b[^\n.!?]{3,160})",),
    # a task given to the one addressed ("Devi preparare il preventivo per venerdì"; tenth round)
    assigned=(r"(?<![\wàèéìòù])(?:devi|dovete)\s+((?:preparare|inviare|mandare|scrivere|controllare|lavorare (?:su|a)"
              r"|progettare|organizzare|finire|contattare|rivedere|aggiornare)(?![\wàèéìòù])[^\n.!?]{2,160})",),
    delegated=(r"([A-Z][a-zàèéìòù]+) ((?:si occuperà d|manderà|invierà|preparerà|controllerà|scriverà"
               r"|chiamerà|sistemerà|aggiornerà|firmerà)\w*\b[^\n.!?]{2,160})",),
    stopwords=(
        "il", "lo", "la", "i", "gli", "le", "un", "uno", "una", "e", "o", "ma", "di", "del", "della", "dei",
        "delle", "a", "al", "alla", "da", "in", "nel", "nella", "con", "su", "per", "tra", "fra", "è", "sono",
        "era", "essere", "avere", "ha", "hanno", "io", "tu", "lui", "lei", "noi", "voi", "loro", "che", "chi",
        "come", "quando", "dove", "molto", "più", "meno", "anche", "già", "non", "sì", "oggi", "domani", "ieri",
        "adesso", "qui", "questo", "questa", "quello", "quella", "mio", "mia", "tuo", "suo", "nostro", "grazie",
        "ciao", "bene",
    ),
    # (issue 37, twenty-fourth round) modal and common verbs, adverbs and quantifiers a topic nobody
    # announced is not made of ("Forse si potrebbe …", "un paio di cose")
    verbs=(
        "forse", "potrebbe", "potremmo", "potrei", "potresti", "posso", "puoi", "può", "possiamo", "possono",
        "dovrebbe", "dovremmo", "devo", "devi", "deve", "dobbiamo", "devono", "voglio", "vuoi", "vuole",
        "vogliamo", "faccio", "facciamo", "fatto", "vado", "andiamo", "penso", "pensi", "credo",
        "vedere", "visto", "letto", "ho", "hai", "abbiamo", "avete", "sarebbe", "sarà", "stato", "sto",
        "stiamo", "sembra", "paio", "cose", "cosa", "qualche", "alcuni", "alcune", "diversi",
        "molti", "molte", "pochi", "poche", "ogni", "tutti", "tutte", "altro", "altra", "altri", "altre",
        "stesso", "stessa", "prossima", "prossimo", "ultima", "ultimo", "davvero", "veramente", "abbastanza",
        "troppo", "sempre", "mai", "ancora", "poi", "presto", "tardi", "soltanto", "quasi", "meglio",
        "peggio", "così", "dopo", "insieme", "magari", "probabilmente",
    ),
)

PT: Final = LanguagePack(
    code="pt",
    recap=(r"\bcomo (?:já )?$|\b(?:tínhamos|havíamos)\s+(?:\w+\s+)?$",),
    ongoing=(r"\s*(?:está|estão|continua|continuam|vai|vão|tem|têm)(?!\w)",),
    engaged=(r"(?<!\w)(?:vou|vamos|estou|estamos|quero|queremos|preciso|precisamos|tenho que|temos que|decidi|decidimos"
             r"|comecei|começamos|escolhi|escolhemos)(?!\w)",),
    owners=("meu", "minha", "meus", "minhas", "nosso", "nossa", "nossos", "nossas", "teu", "tua", "seu", "sua"),
    articles=("o", "a", "os", "as"),
    question_tag=("né", "certo", "ok", "sim", "não", "combinado"),
    # a fragment going on with the decision before it (eighteenth round): "Sem teletexto.", "Com uma cor
    # diferente da carcaça." — not "Sem problema.", "Com prazer."
    decision_tail=(r"(?:sem|com|nada de|nenhum|nenhuma) (?!(?:problemas?|prazer|dúvida|pressa|stress)\b)"
                   r"(?:(?!\b(?:eu|nós|você|vocês|ele|ela|eles|elas|é|são|era|será|tem|têm|temos|pode|podem"
                   r"|vai|vamos)\b)[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*)(?:e se\s+|poderíamos\s+|deveríamos\s+|proponho (?:que\s+)?)([^.!?\n]{4,160})",),
    request=('\\b(?:você pode|poderia|você poderia|pode)(?: por favor)?\\s+([^\\W\\d][^.!?\\n]{6,160})',),
    acceptance=(r"(?:(?:sim|claro|ok|com certeza)[,.!]*\s*)*(?:vou fazer|eu faço|faço|posso|pode deixar|"
                r"claro)(?!\w)",),
    ratification=(r"(?:(?:ok|sim|beleza|perfeito|ótimo)[,.!]*\s+)*(?:combinado|fechado|vamos nessa|vamos fazer isso"
                  r"|(?:boa|ótima) ideia|parece bom|(?:tô|estou) dentro|por mim tudo bem)(?:[,.!]*\s*\w+)?",),
    # (twenty-first round) a yes answering a choice put to the group, and the opinion that puts one
    assent=(r"(?:sim|ok|certo|claro|combinado|perfeito|exato|beleza)(?!\w)(?![^.!?]*\b(?:mas|não|nunca|talvez"
            r"|ou)\b)(?![^.!?]*[?])",),
    opinion=("acho que", "penso que"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:sim|ok|bom|claro)[,.!]*\s+)*(?:(?:acho|penso) que\s+)?(?:(?:é|seria|parece)\s+)?(?:uma\s+)?"
              r"(?:muito\s+)?(?:boa|ótima|excelente)\s+(?:ideia|solução|opção|proposta)(?!\w)"
              r"(?![^.!?]*\b(?:mas|não|se|talvez|porém)\b)(?![^.!?]*[?])",
              r"(?:(?:sim|ok|bom|claro)[,.!]*\s+)*(?:concordo(?: plenamente| totalmente)?"
              r"|gosto da ideia|por mim tudo bem)"
              r"(?!\w)(?![^.!?]*\b(?:mas|não|se|talvez|porém)\b)(?![^.!?]*[?])",),
    going_on=(r"(?:continuar|seguir)\s+(?:a\s+|\w+ndo\b|assim\b)",),
    decision=(
        r"(?:decidido|decidimos|decisão(?=\s+(?:é|foi|de)(?!\w)|\s*:)|vamos fazer|o plano é|abordagem:)",
        r"(?:combinado|optamos por|escolhemos|ficou definido)",
        # what the group keeps (eleventh round): "mantemos o teletexto"
        r"\bmantemos (?:o|a|os|as)\b",
    ),
    step=(
        # a person's own step taken (fourteenth round): "assinei com os Wolves", "me candidatei a
        # três agências", "estou abrindo meu próprio estúdio"
        r"\b(?:assinei|acabei de assinar) com \w|\bme candidatei (?:a|para|em) \w"
        r"|\bestou (?:abrindo|montando|fundando) (?:o meu|a minha|meu|minha|um|uma) \w",
    ),
    close=(
        r"(?:^|\s)(?:está |estão |já )?(?:feit[oa]s?|resolvid[oa]s?|fechad[oa]s?|terminad[oa]s?|pront[oa]s?)"
        r"(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:já )?funciona(?:\s|[.!,;:)]|$)",
    ),
    wait=(
        f"(?:esperando|bloqueado por|precisamos{GAP}primeiro)",
        f"(?:pendente|falta{GAP}antes)",
    ),
    topic=(
        r"(?:voltando (?:a|ao|à)|agora sobre|quanto (?:a|ao|à)|vamos falar (?:de|do|da|dos|das|sobre)"
        r"|em relação (?:a|ao|à))\s+"
        r"(?:o |a |os |as )?" + _topic_until(_TOPIC_END_PT),
    ),
    topic_blacklist=(
        "o", "a", "os", "as", "um", "uma", "uns", "umas",
        "isso", "isto", "aquilo", "esse", "esta",
        "eu", "tu", "ele", "ela", "nós", "eles", "elas",
        "nada", "algo", "tudo",
        "aqui", "ali", "agora", "então", "mas", "porque",
        "hoje", "amanhã", "ontem",
    ),
    high_impact_keywords=(
        "arquitetura", "segurança", "migração", "deletar",
        "produção", "deploy", "crítico", "estratégia",
        "orçamento", "contrato", "importante",
    ),
    mood=(
        ("frustrated", "(?:merda|porra|caralho|droga|que saco|inferno)"),
        ("excited", "(?:genial|incrível|perfeito|massa|demais|show)"),
        ("tense", "(?:cuidado|perigoso|urgente|crítico|atenção)"),
        ("productive", "(?:feito|terminado|deployado|arrumado|pronto)"),
        ("exploratory", "(?:e se|talvez|ideia|será que|poderíamos|testemos)"),
    ),
    noise_prefixes=("eu", "tu", "ele", "ela", "nós", "nada", "algo"),
    commitment=(
        r"\b(?:eu vou|eu farei|fico responsável)\b",
        r"\b(?:combinado|pode deixar)\b",
    ),
    due=(
        r"\b(?:(?:até |para |antes de )?(?:hoje|depois de amanhã|amanhã|esta semana|(?:na )?próxima semana"
        r"|semana que vem|(?:n?este|no próximo) fim de semana|(?:n?este|no próximo|o próximo) mês|mês que vem"
        r"|(?:o )?fim do mês|(?:segunda|terça|quarta|quinta|sexta)-feira|sábado|domingo))\b",
    ),
    reason=(r"\b(?:porque|já que|visto que|uma vez que|devido a|para que)\b", r",\s*pois\b"),
    consequence=(r"(?:^|,\s*)(?:por isso|portanto|então)\b",),
    negation=(r"(?<!\w)(?:não|nunca|ainda não)(?!\w)",),
    condition=(r"(?<!\w)(?:se|quando|assim que|logo que|até que|uma vez que|a menos que)(?!\w)",),
    arrival=(
        r"(?<!\w)(?:chegou|chegaram|recebid[oa]s?|enviad[oa]s?|entregues?|respondeu|aprovad[oa]s?)(?!\w)",
        r"(?:está|estão)(?: finalmente| agora)? (?:aqui|disponíve(?:l|is)|pront[oa]s?)(?:[.!,;:)]|$)",
    ),
    agreement=("combinado",),
    aspiration=(r"^(?:sempre|nunca)(?!\w)|(?<!\w)(?:tentar|fazer o (?:meu )?melhor|fazer o possível)(?!\w)",),
    hedge=(r"(?<!\w)(?:talvez|provavelmente|um dia|se eu puder|acho que|quem sabe)(?!\w)",),
    idle=(r"(?<!\w)(?:te|lhe|vos) (?:mantenho|manterei|manter) (?:informad[oa]s?|atualizad[oa]s?|a par)(?!\w)"
          r"|(?<!\w)pensar (?:nisso|sobre isso)(?!\w)",),
    vague=(r"(?<!\w)(?:te|lhe) (?:aviso|conto|falo)(?!\w)",),
    requested=(r"((?:me lembre|lembre-me|me lembra|lembra-me)(?!\w)[^\n.!?]{3,160})",),
    # a task given to the one addressed ("Você tem que preparar o relatório até sexta"; tenth round)
    assigned=(r"(?<![\wãõáéíóúç])(?:você tem que|você precisa|vocês têm que|vocês precisam|tens de|tens que)\s+"
              r"((?:preparar|enviar|mandar|escrever|revisar|trabalhar n[oa]|projetar|organizar|terminar|contatar"
              r"|atualizar)(?![\wãõáéíóúç])[^\n.!?]{2,160})",),
    delegated=(r"([A-ZÁÉÍÓÚ][a-zãõáéíóúç]+) vai ((?:enviar|mandar|revisar|preparar|ligar|corrigir"
               r"|verificar|fazer|escrever|atualizar|assinar|pagar|reservar|testar)(?!\w)[^\n.!?]{2,160})",),
    stopwords=(
        "o", "a", "os", "as", "um", "uma", "uns", "umas", "e", "ou", "mas", "de", "do", "da", "dos", "das", "ao",
        "à", "em", "no", "na", "nos", "nas", "com", "por", "para", "sem", "sobre", "é", "são", "foi", "era", "ser",
        "estar", "está", "estão", "há", "eu", "tu", "ele", "ela", "nós", "eles", "elas", "que", "como", "quando",
        "onde", "muito", "mais", "menos", "também", "já", "não", "sim", "hoje", "amanhã", "ontem", "agora", "aqui",
        "este", "esta", "isso", "esse", "essa", "meu", "minha", "seu", "sua", "nosso", "obrigado", "olá", "bem",
    ),
    # (issue 37, twenty-fourth round) modal and common verbs, adverbs and quantifiers a topic nobody
    # announced is not made of ("Talvez a gente pudesse …", "um par de coisas", "umas coisinhas")
    verbs=(
        "talvez", "pudesse", "poderia", "poderíamos", "podemos", "pode", "posso", "podem", "devia", "deveria",
        "deveríamos", "devemos", "deve", "devo", "tenho", "tem", "temos", "têm", "quero", "queremos", "quer",
        "vou", "vamos", "vai", "fazer", "faz", "fiz", "feito", "acho", "achamos", "sei", "ver", "vi", "li",
        "gente", "realmente", "bastante", "demais", "sempre", "nunca", "ainda", "cedo", "tarde", "só",
        "apenas", "quase", "melhor", "pior", "assim", "depois", "antes", "vez", "coisas", "coisa", "coisinhas",
        "par", "algumas", "alguns", "alguma", "algum", "vários", "várias", "muitos", "muitas", "pouco",
        "poucos", "cada", "todos", "todas", "outro", "outra", "outros", "outras", "mesmo", "mesma", "próxima",
        "próximo", "última", "último",
    ),
)

RU: Final = LanguagePack(
    code="ru",
    recap=(r"(?:как мы (?:уже )?|как и )\s*(?:\w+\s+)?$",),
    engaged=(r"(?<!\w)(?:я|мы)\s+(?:\w+\s+)?(?:буду|будем|хочу|хотим|планирую|планируем|собираюсь|собираемся|начал|начала"
             r"|начали|решил|решила|решили|выбрали|работаю|работаем)(?!\w)|(?<!\w)давайте(?!\w)",),
    owners=("мой", "моя", "моё", "мои", "моего", "моей", "наш", "наша", "наше", "наши", "нашего",
            "нашей", "твой", "твоя", "его", "её", "их"),
    question_tag=("да", "ладно", "хорошо", "ок", "верно"),
    # a fragment going on with the decision before it (eighteenth round): "Без телетекста.", "С цветом,
    # отличным от корпуса." — not "Без проблем.", "С удовольствием."
    decision_tail=(r"(?:без|с|со|никакого|никакой|никаких) (?!(?:проблем|вопросов|сомнени|удовольстви|радост)\w*)"
                   r"(?:(?!(?<!\w)(?:я|мы|ты|вы|он|она|они|это|будет|будем|есть|был|была|было|были|может|можем"
                   r"|надо|нужно)(?!\w))[^.!?;:])+",),
    proposal=(r"(?:^|[.!?]\s+|,\s*)(?:может,?\s+|давайте\s+|предлагаю\s+)([^.!?\n]{4,160})",),
    request=(r"(?<!\w)(?:можешь|можете|не мог бы ты|не могла бы ты|не могли бы вы|сможешь|"
             r"сможете)(?: пожалуйста)?\s+([^\W\d][^.!?\n]{6,160})",),
    acceptance=('(?:(?:да|конечно|хорошо|ок|ладно)[,.!]*\\s*)*(?:сделаю|могу|конечно|без проблем)(?!\\w)',),
    ratification=(r"(?:(?:ок|да|хорошо|отлично)[,.!]*\s+)*(?:договорились|решено|давайте так|согласен|согласна"
                  r"|(?:хорошая|отличная) идея|звучит (?:хорошо|отлично)|я за|я в деле)(?:[,.!]*\s*\w+)?",),
    # (twenty-first round) a yes answering a choice put to the group, and the opinion that puts one
    assent=(r"(?:да|ладно|хорошо|ок|согласен|согласна|точно|верно|конечно)(?!\w)(?![^.!?]*(?<!\w)(?:но|не|нет|никогда"
            r"|может быть|или)(?!\w))(?![^.!?]*[?])",),
    opinion=("я думаю", "по-моему"),
    # (twenty-fifth round) the idea judged good or agreed with, a few messages after it was proposed
    approval=(r"(?:(?:да|ну|ок|хорошо)[,.!]*\s+)*(?:(?:я думаю|по-моему),?\s+)?(?:это\s+)?(?:очень\s+)?"
              r"(?:хорошая|отличная|прекрасная|классная)\s+(?:идея|мысль)(?!\w)"
              r"(?![^.!?]*(?<!\w)(?:но|не|если|может)(?!\w))(?![^.!?]*[?])",
              r"(?:(?:да|ну|ок|хорошо)[,.!]*\s+)*(?:я (?:полностью |совершенно )?(?:согласен|согласна)|я за)(?!\w)"
              r"(?![^.!?]*(?<!\w)(?:но|не|если|может)(?!\w))(?![^.!?]*[?])",),
    going_on=(r"(?:продолжать|продолжим)(?!\w)",),
    decision=(
        r"(?:решили|решение|давайте сделаем|план[:\s]|подход:)",
        r"(?:договорились|выбрали|остановились на|утвердили)",
        # what the group keeps (eleventh round): "оставляем телетекст" — not "сохраняем" ("we
        # save": "сохраняем изменения" is a routine step, not a choice)
        r"(?<!\w)оставляем(?!\w)",
    ),
    step=(
        # a person's own step taken (fourteenth round): "я подписал контракт с «Волками»", "я подала
        # заявку в три агентства", "я открываю свою студию"
        r"(?<!\w)я (?:(?:только что|наконец|вчера) )*(?:подписал(?:а)? контракт с|подписал(?:ся|ась) с) ?\S"
        r"|(?<!\w)я подал(?:а)? (?:заявку|документы) (?:в|на) \w|(?<!\w)я открываю (?:свой|свою|своё) \w",
    ),
    close=(
        r"(?:^|\s)(?:уже )?(?:сделано|решено|закрыто|готово|исправлено)(?:\s|[.!,;:)]|$)",
        r"(?:^|\s)(?:уже )?работает(?:\s|[.!,;:)]|$)",
    ),
    wait=(
        f"(?:ждём|заблокировано|нужно{GAP}сначала)",
        r"(?:ожидаем|зависит от|сперва нужно)",
    ),
    topic=(r"(?:вернёмся к|теперь о|по поводу|давай(?:те)? обсудим|касательно)\s+" + _topic_until(_TOPIC_END_RU),),
    topic_blacklist=(
        "это", "то", "этот", "тот", "эта", "та", "здесь", "там",
        "я", "ты", "он", "она", "мы", "они", "вы",
        "ничего", "что-то", "всё",
        "сегодня", "завтра", "вчера",
        "ещё", "уже", "сейчас", "потом", "тоже", "но", "или",
    ),
    high_impact_keywords=(
        "архитектура", "безопасность", "миграция", "удалить",
        "продакшн", "деплой", "критический", "стратегия",
        "бюджет", "контракт", "важный",
    ),
    mood=(
        ("frustrated", "(?:блять|чёрт|пиздец|задолбало|бесит|ёпт)"),
        ("excited", "(?:круто|офигенно|класс|супер|шикарно|огонь)"),
        ("tense", "(?:осторожно|опасно|срочно|критично|внимание|риск)"),
        ("productive", "(?:сделано|готово|задеплоил|починил|выкатил)"),
        ("exploratory", "(?:а если|может быть|идея|попробуем|как насчёт|вариант)"),
    ),
    noise_prefixes=("я", "мы", "ты", "он", "она", "ничего", "что-то"),
    commitment=(r"\b(?:я сделаю|я займусь|обещаю|договорились)\b",),
    due=(
        r"\b(?:сегодня|послезавтра|завтра|на этой неделе|на следующей неделе|на этих выходных|на следующих выходных"
        r"|в этом месяце|в следующем месяце|к концу месяца"
        r"|в (?:понедельник|вторник|среду|четверг|пятницу|субботу|воскресенье)"
        r"|ко? (?:понедельнику|вторнику|среде|четвергу|пятнице|субботе|воскресенью))\b",
    ),
    reason=(r"\b(?:потому что|так как|поскольку|из-за|чтобы)\b",),
    consequence=(r"(?:^|,\s*)(?:поэтому|так что|следовательно)\b",),
    negation=(r"(?<!\w)(?:не|нет|никогда)(?!\w)",),
    condition=(r"(?<!\w)(?:если|когда|как только|пока не)(?!\w)",),
    arrival=(
        r"(?<!\w)(?:пришл[иоа]|пришёл|получил[иа]?|получен[оы]?|отправил[иа]?|отправлен[оы]?|ответил[иа]?"
        r"|одобрен[оы]?)(?!\w)",
    ),
    agreement=("обещаю", "договорились"),
    aspiration=(r"^(?:всегда|никогда)(?!\w)|(?:постараюсь|стараться|попробую|попытаюсь)",),
    hedge=(r"(?<!\w)(?:может быть|наверное|возможно|если|когда-нибудь|как-нибудь|думаю)(?!\w)",),
    idle=(r"(?:держать (?:тебя |вас )?в курсе|подумаю|подумать об этом)",),
    vague=(r"(?:дам знать|сообщу)",),
    requested=(r"(напомни(?:те)? мне(?!\w)[^\n.!?]{3,160})",),
    # a task given to the one addressed ("Тебе нужно подготовить отчёт к пятнице"; tenth round)
    assigned=(r"(?<![а-яё])(?:тебе нужно|вам нужно|тебе надо|вам надо|ты должен|ты должна|вы должны)\s+"
              r"((?:подготовить|отправить|прислать|написать|проверить|доделать|закончить|организовать"
              r"|протестировать|разработать|спроектировать|обновить)(?![а-яё])[^\n.!?]{2,160})",),
    delegated=(r"([А-ЯЁ][а-яё]+) ((?:пришлёт|пришлет|отправит|сделает|проверит|подготовит|напишет|позвонит|займётся"
               r"|займется|исправит|обновит)(?!\w)[^\n.!?]{2,160})",),
    stopwords=(
        "и", "в", "во", "не", "что", "он", "на", "я", "с", "со", "как", "а", "то", "все", "она", "так", "его",
        "но", "да", "ты", "к", "у", "же", "вы", "за", "бы", "по", "только", "ее", "мне", "было", "вот", "от",
        "меня", "еще", "нет", "о", "из", "ему", "теперь", "когда", "даже", "ну", "вдруг", "ли", "если", "уже",
        "или", "ни", "быть", "был", "него", "до", "вас", "нибудь", "опять", "уж", "вам", "ведь", "там", "потом",
        "себя", "ничего", "ей", "может", "они", "тут", "где", "есть", "надо", "ней", "для", "мы", "тебя", "их",
        "чем", "была", "сам", "чтоб", "без", "будто", "чего", "раз", "тоже", "себе", "под", "будет", "ж", "тогда",
        "кто", "этот", "того", "потому", "этого", "какой", "совсем", "ним", "здесь", "этом", "один", "почти",
        "мой", "тем", "чтобы", "нее", "сейчас", "были", "куда", "зачем", "всех", "никогда", "можно", "при",
        "наконец", "два", "об", "другой", "хоть", "после", "над", "больше", "тот", "через", "эти", "нас", "про",
        "всего", "них", "какая", "много", "разве", "три", "эту", "моя", "впрочем", "хорошо", "свою", "этой",
        "перед", "иногда", "лучше", "чуть", "том", "нельзя", "такой", "им", "более", "всегда", "конечно", "всю",
        "между", "сегодня", "завтра",
    ),
    # (issue 37, twenty-fourth round) modal and common verbs, adverbs and quantifiers a topic nobody
    # announced is not made of ("Может быть, стоит …", "пара мелочей", "несколько вещей")
    verbs=(
        "стоит", "можем", "могу", "можешь", "могут", "мог", "могла", "могли", "нужно", "должны", "должен",
        "должна", "хочу", "хочешь", "хотим", "хотят", "хотел", "хотела", "давай", "давайте", "буду", "будем",
        "будут", "сделать", "делать", "думаю", "думаешь", "знаю", "знаешь", "прочитал", "прочитала",
        "посмотрю", "посмотреть", "кажется", "пара", "пару", "пары", "несколько", "мелочи", "мелочей",
        "вещи", "вещей", "некоторые", "многие", "каждый", "каждая", "другие", "следующей", "следующий",
        "следующая", "прошлой", "прошлый", "очень", "действительно", "реально", "просто", "всегда", "снова",
        "сразу", "скоро", "рано", "поздно", "лучше", "хуже", "вместе", "наверное", "возможно", "пожалуй",
        "кстати", "вообще",
    ),
)

JA: Final = LanguagePack(
    code="ja",
    question_tag=("ね", "よね"),
    proposal=(r"([^。！？\n]{2,80}?(?:ませんか|ましょうか|はどうですか|はどう))",),
    ratification=(r"(?:はい[、,]?\s*)?(?:そうしましょう|それでいきましょう|賛成です|賛成|いい考えですね|いいアイデアですね)",),
    decision=(
        r"(?:決め[たる]|決定し[たま]|方針[はを]|にしよう|にする)",
        r"(?:採用す[るる]|確定し[たま]|これで[行い]く)",
    ),
    close=(
        r"(?:完了|解決し[たま]|直[しっ]た|終わ[っり]|閉じ[たる])",
        r"(?:できた|動い[たて]|問題な[いし]|OK[だです])",
    ),
    wait=(
        f"(?:待[っち]て|ブロック|先に{GAP}必要|まだ{GAP}できない)",
        r"(?:待機中|依存し[てた]|前提[はが])",
    ),
    topic=(
        # The topic comes before its cue ("ログイン画面について"); the reference captured the
        # words after it. Katakana, kanji and Latin only: hiragana are particles.
        r"([\u30a0-\u30ff\u4e00-\u9fffA-Za-z0-9ー]{2,20})(?:について|に戻[るっろ]|の話[をし]|を見てみ[よる])",
        r"([\u30a0-\u30ff\u4e00-\u9fffA-Za-z0-9ー]{2,20})(?:の件|に関して)",
    ),
    topic_blacklist=(
        "これ", "それ", "あれ", "ここ", "そこ",
        "私", "僕", "あなた", "彼", "彼女", "我々",
        "何", "どれ", "どこ",
        "今日", "明日", "昨日",
    ),
    high_impact_keywords=(
        "アーキテクチャ", "セキュリティ", "マイグレーション", "削除",
        "本番", "デプロイ", "重要", "戦略",
        "予算", "契約", "重大",
    ),
    mood=(
        ("frustrated", "(?:くそ|最悪|ひどい|うざい|ムカつく|やばい)"),
        ("excited", "(?:すごい|最高|完璧|やった|素晴らしい|神)"),
        ("tense", "(?:気をつけ|危険|緊急|注意|慎重|リスク)"),
        ("productive", "(?:完了|修正済|デプロイ[済し]|リリース[済し]|直した)"),
        ("exploratory", "(?:もし|かもしれ|アイデア|試し[てに]|どうだろう|検討)"),
    ),
    noise_prefixes=("私", "僕", "俺", "我々", "何"),
    commitment=(r"(?:やります|対応します|承知しました)",),
    due=(r"(?:明後日|明日|今日|今夜|今晩|今週末|来週末|今週|来週|今月|来月)",),
    reason_before=(r"(?:ので|から(?=[、，,])|ため(?:に)?(?=[、，,]))",),
    consequence=(r"^(?:だから|なので|そのため|したがって)",),
    case_sensitive=True,
    negation=(r"(?:まだ)",),
    agreement=("承知しました",),
    aspiration=(r"(?:頑張|努力|ずっと)",),
    hedge=(r"(?:かも|たぶん|多分|もし|いつか|と思います|と思う)",),
    requested=(r"([^\n。！？]{2,80}?(?:をリマインドして|リマインドしてください|リマインドお願い|思い出させて)[^\n。！？]{0,10})",),
    # the task comes before the ask ("議事録を送ってもらえますか？"): group 1 its clause, to the て-form
    request=(r"([^\n。！？、，,.!?]{2,80}?[てで])(?:くれますか|くれませんか|くれる[?？]|くれない[?？]"
             r"|もらえますか|もらえませんか|もらえる[?？]|もらえない[?？]|いただけますか|いただけませんか)",),
    acceptance=(r"(?:(?:はい|ええ|うん|もちろん|了解です|了解|わかりました|分かりました|いいですよ)[、。！!,.\s]*)*"
                r"(?:私が|僕が)?(?:やります|やっておきます|対応します|引き受けます|任せてください|承知しました|かしこまりました)",),
)

KO: Final = LanguagePack(
    code="ko",
    question_tag=("그렇죠", "맞죠", "알겠죠"),
    proposal=(r"([^.!?\n]{2,80}?(?:할까요|하는 게 어때요|어때요))",),
    ratification=(r"(?:네[,]?\s*|좋아요[,]?\s*)?(?:그렇게 하죠|그렇게 해요|찬성|좋은 생각이에요|좋은 생각이네요)",),
    decision=(
        r"(?:결정|하기로|계획은|으로 가자|방침[은이])",
        r"(?:확정|정했[다어]|채택|선택했[다어]|이걸로)",
    ),
    close=(
        r"(?:완료|해결[됐했]|고쳤[다어]|끝났[다어]|닫[았힌])",
        # "OK" only as a word of its own: "HEARTBEAT_OK" closed threads with CORTEX_LANGUAGE=all
        r"(?:됐다|작동[한해]|문제없[다어]|(?<![A-Za-z0-9_])OK(?![A-Za-z0-9_]))",
    ),
    wait=(
        f"(?:기다[려리]|블로킹|먼저{GAP}필요|아직{GAP}안 [돼됨])",
        r"(?:대기 중|의존|전제[는가])",
    ),
    topic=(
        # The topic comes before its cue ("결제 모듈에 대해"); the reference captured the words after it.
        r"([\uac00-\ud7af\w]{2,20}(?: [\uac00-\ud7af\w]{2,20})?)(?:에 대해|에 대한|으?로 돌아가|[을를] 살펴보[자면])",
        r"([\uac00-\ud7af\w]{2,20}(?: [\uac00-\ud7af\w]{2,20})?)(?:에 관해서|관해서|의 건|관련해)",
    ),
    topic_blacklist=(
        "이것", "그것", "저것", "이거", "그거", "저거", "여기", "거기",
        "나", "너", "그", "그녀", "우리", "그들",
        "뭐", "어디", "어떤",
        "오늘", "내일", "어제",
    ),
    high_impact_keywords=(
        "아키텍처", "보안", "마이그레이션", "삭제",
        "프로덕션", "배포", "중요", "전략",
        "예산", "계약", "중대",
    ),
    mood=(
        ("frustrated", "(?:씨발|젠장|짜증|최악|미치겠|빡치)"),
        ("excited", "(?:대박|최고|완벽|굿|멋지[다네]|짱)"),
        ("tense", "(?:조심|위험|긴급|주의|신중|리스크)"),
        ("productive", "(?:완료|수정[됨완]|배포[됨완]|출시|고침)"),
        ("exploratory", "(?:만약|혹시|아이디어|해볼[까까]|어떨까|검토)"),
    ),
    noise_prefixes=("나", "너", "우리", "뭐", "아무것"),
    commitment=(r"(?:제가 할게요|처리하겠습니다|알겠습니다)",),
    due=(r"(?:오늘 밤|오늘|내일|모레|이번 주말|다음 주말|이번 주|다음 주|이번 달|다음 달)",),
    reason_before=(r"(?:때문에|니까|므로)",),
    consequence=(r"^(?:그래서|따라서|그러므로)",),
    case_sensitive=True,
    negation=(r"(?:아직|안 |못 )",),
    agreement=("알겠습니다",),
    aspiration=(r"(?:노력|최선|항상)",),
    hedge=(r"(?:아마|혹시|만약|언젠가|것 같아)",),
    requested=(r"([^\n.!?]{2,80}?(?:리마인드해|리마인드 해|상기시켜)[^\n.!?]{0,10})",),
    # the task comes before the ask ("보고서를 보내 줄래요?"): group 1 its clause, to the verb
    request=(r"([^\n.!?,，]{2,80}?)\s?(?:줄래요|줄래|주실래요|주시겠어요|주겠어요|줄 수 있(?:어요|어|나요|을까요)"
             r"|주실 수 있(?:어요|나요|을까요))(?=[?？.\s]|$)",),
    acceptance=(r"(?:(?:네|예|그래요|좋아요|물론이죠|물론|알겠어요|알겠습니다)[,.!\s]*)*(?:제가\s*)?"
                r"(?:할게요|할게|하겠습니다|해 ?드릴게요|드릴게요|보낼게요|그럴게요|처리하겠습니다|처리할게요)",),
)

ZH: Final = LanguagePack(
    code="zh",
    question_tag=("对吧", "好吗", "行吗", "吧"),
    proposal=(r"(?:要不|不如|我建议|我们可以)([^。！？\n]{2,80})",),
    ratification=(r"(?:好的?[，,]?\s*)?(?:就这么办|同意|就这么定了|就这样|好主意|没问题)",),
    decision=(
        r"(?:决定|已决定|方案[是为]|我们[用采]|确定了|就这么[定办])",
        r"(?:敲定|拍板|最终[选方]|采用|选择了)",
    ),
    close=(
        r"(?:完成|搞定|解决了|已[关修]|修好了|结束了)",
        r"(?:好了|没问题了|可以了|OK了|行了)",
    ),
    wait=(
        f"(?:等待|等[着]?|被{GAP}阻塞|需要{GAP}才能|还差)",
        r"(?:卡在|依赖于|前提是)",
    ),
    topic=(
        r"(?:关于|回到|讨论|说[说到]|看看)\s*([\u4e00-\u9fff\w]{2,20})",
        r"(?:至于|针对|聊聊)\s*([\u4e00-\u9fff\w]{2,20})",
    ),
    topic_blacklist=(
        "这个", "那个", "什么", "哪个", "这里", "那里",
        "我", "你", "他", "她", "我们", "他们",
        "没有", "东西", "事情", "一下",
        "今天", "明天", "昨天",
    ),
    high_impact_keywords=(
        "架构", "安全", "迁移", "删除",
        "生产", "部署", "关键", "策略",
        "预算", "合同", "重大",
    ),
    mood=(
        ("frustrated", "(?:靠|妈的|草|烦死|崩溃|要命|坑爹)"),
        ("excited", "(?:太好了|牛逼|厉害|完美|太棒了|666)"),
        ("tense", "(?:小心|危险|紧急|注意|当心|风险)"),
        ("productive", "(?:搞定|完成|修好|部署了|上线了)"),
        ("exploratory", "(?:如果|或许|想法|试试|要不|可以考虑)"),
    ),
    noise_prefixes=("我", "你", "他", "她", "我们", "没有"),
    commitment=(r"(?:我会|我来|我负责|包在我身上|没问题)",),
    due=(r"(?:今天|明天|后天|今晚|本周末|这周末|下周末|本周|这周|下周|这个月|本月|下个月)",),
    reason=(r"(?:因为|由于|为了)",),
    consequence=(r"(?:所以|因此|因而)",),
    case_sensitive=True,
    negation=(r"(?:没|不|未|尚未|还没)",),
    agreement=("没问题",),
    aspiration=(r"(?:尽力|尽量|努力|永远|一直)",),
    hedge=(r"(?:也许|可能|如果|大概|改天|有空的话|看情况)",),
    idle=(r"(?:考虑一下|想想|随时告诉你|保持联系)",),
    vague=(r"(?:告诉你|通知你|再联系)",),
    requested=(r"(提醒我[^\n。！？]{2,80})",),
    # the task comes inside the ask ("你能把报告发给大家吗？"): group 1 what is asked
    request=(r"(?:你能不能|你可不可以|你能|你可以|您能不能|您可不可以|您能|您可以)(?:帮我|帮忙)?"
             r"([^\n。！？，,?]{2,80}?)(?:吗|么|嘛)?[?？]",),
    acceptance=(r"(?:(?:好的?|行|可以|没问题|当然|嗯|好啊)[，,。！!、\s]*)*(?:我来|我会|我可以|交给我|包在我身上|我负责)",),
)

# Wait phrases that only announce what is waited for ("waiting for", "warte auf", "等待"):
# the wait's text is what follows them. Phrases that hold it ("need the node pool first")
# are kept whole. Cortex's own, on the lowered text.
WAIT_CUES: Final = (
    r"(?:(?:we are |we're |i'm |i am |still )?(?:waiting (?:for|on)|blocked by)"
    r"|(?:ich )?warte(?:n)? (?:noch )?auf|blockiert durch"
    r"|esperando(?: a)?|bloqueado por|pendiente de|en attente de|bloqué par|attends? (?:que )?"
    r"|aspettando|bloccato da|in attesa di|pendente|ждём|ожидаем|зависит от|заблокировано"
    r"|等待|等着?|卡在|依赖于|待って|待機中|依存して|기다려|기다리|대기 중|의존)\s*"
)

# Capitalised words that name no person: a ``delegated`` match on one ("It will send …", "Das
# Team wird …", "Mañana va a …") is none. Cortex's own (issue 37).
NOT_A_NAME: Final = frozenset((
    "I", "It", "This", "That", "There", "He", "She", "We", "They", "You", "Everyone", "Everything", "Nothing",
    "Someone", "Somebody", "Nobody", "Anyone", "Who", "What", "Which", "Where", "When", "How", "Why", "The", "A",
    "An", "My", "Our", "Your", "His", "Her", "Their", "Its", "Today", "Tomorrow", "Monday", "Tuesday", "Wednesday",
    "Thursday", "Friday", "Saturday", "Sunday", "Maybe", "Then", "Now", "Also", "But", "And", "So", "Yes", "No", "Ok",
    "Okay", "Sure", "Hopefully", "Probably", "Perhaps", "Next", "Last", "First", "Nobody", "Team",
    "Der", "Die", "Das", "Ein", "Eine", "Es", "Er", "Sie", "Wir", "Ich", "Du", "Ihr", "Man", "Alles", "Nichts",
    "Jemand",
    "Niemand", "Morgen", "Heute", "Dann", "Dies", "Dieser", "Diese", "Jeder", "Keiner", "Wer", "Was",
    "El", "La", "Los", "Las", "Un", "Una", "Esto", "Eso", "Él", "Ella", "Nadie", "Todo", "Mañana", "Hoy", "Quién",
    "Le", "Les", "Une", "Ce", "Ça", "Il", "Elle", "On", "Nous", "Vous", "Ils", "Elles", "Tout", "Demain", "Personne",
    "Qui", "Lo", "Gli", "Questo", "Lui", "Lei", "Noi", "Loro", "Tutto", "Domani", "Nessuno", "Chi",
    "O", "Os", "As", "Um", "Uma", "Isso", "Ele", "Nós", "Eles", "Tudo", "Amanhã", "Ninguém", "Quem",
    "Он", "Она", "Мы", "Они", "Это", "Кто", "Что", "Все", "Всё", "Завтра", "Никто", "Сегодня", "Я", "Ты", "Вы",
))

# English and German first (the design's order), then the reference's other packs.
PACKS: Final[dict[str, LanguagePack]] = {
    pack.code: pack for pack in (EN, DE, ES, FR, IT, PT, RU, JA, KO, ZH)
}
