"""Regular expressions for entity and fact extraction, compiled once at import.

Ported from the knowledge-engine reference (``src/patterns.ts``). The reference's
patterns rescan long runs from every start position (quadratic on a hostile 64 KiB
message) or backtrack through nested repetitions; here every such repetition is bounded
or possessive, so each pattern costs time linear in the text with a small constant.
Each change says why where it is made. Quality fixes (word boundaries the reference
lacked, names that fused across lines) are noted the same way; the reference's own
test cases still hold (``tests/workers/knowledge/test_knowledge_patterns.py``).

Callers use ``finditer``/``match`` and share no match state, so the reference's
fresh-RegExp-per-access proxy has no equivalent here.
"""

from __future__ import annotations

import re
from typing import Final

from schemas.types import EntityType

# Words that start sentences or look like names but are not (the reference's list).
EXCLUDED_WORDS: Final[tuple[str, ...]] = (
    "A", "An", "The", "Hello", "My", "This", "Contact", "He", "She",
    "It", "We", "They", "I", "You", "His", "Her", "Our", "Your",
    "Their", "Its", "That", "These", "Those", "What", "Which", "Who",
    "How", "When", "Where", "Why", "But", "And", "Or", "So", "Not",
    "No", "Yes", "Also", "Just", "For", "From", "With", "About",
    "After", "Before", "Between", "During", "Into", "Through",
    "Event", "Talk", "Project", "Multiple", "German",
    "Am", "Are", "Is", "Was", "Were", "Has", "Have",
    "Had", "Do", "Does", "Did", "Will", "Would", "Could", "Should",
    "May", "Might", "Must", "Can", "Shall", "If", "Then",
)

# Cortex goes further (docs/contract-extensions.md, "Entity noise"): words that are capitalised
# only because they open a sentence of chat — thanks and interjections, and German pronouns,
# articles and adverbs — which the reference's list made entities ("Thanks", "Awesome",
# "Wir", "Jetzt": 15 of the demo conversation's 32 entities).
CHAT_OPENERS: Final[tuple[str, ...]] = (
    "Thanks", "Thank", "Awesome", "Agreed", "Sure", "Okay", "Ok", "OK", "Hi", "Hey", "Please",
    "Sorry", "Regarding", "Let", "Maybe", "Oh", "Wow", "Alright", "Actually", "Anyway", "However",
    "Meanwhile", "Finally", "Now", "Here", "There", "Today", "Tomorrow", "Yesterday", "Yeah",
    "Yep", "Nope", "Done", "Every", "Each", "All", "Some", "Any", "Once", "Still", "Again",
    "Otherwise", "Hmm", "Cheers", "Congrats", "Glad", "Sounds", "Appreciate", "Definitely",
    "Absolutely", "Really", "Anything", "Everything", "Everyone", "Nothing", "Something", "Keep",
    "Take", "Got", "Gotta", "Gonna", "Wanna", "Been", "Being", "Having", "Look", "Looks", "See",
    "Check", "Stay", "Enjoy", "Guess", "Tell", "Remember", "Catch", "Bye", "Yup", "Nah", "Haha",
    "Lol", "Aww", "Woah", "Woohoo", "Plus", "By", "As", "Of", "On", "In", "At", "To", "Even",
    "Always", "Sometimes", "Lately", "Since", "Whenever", "Such", "Same", "Don't", "Haven't",
    "Didn't", "Can't", "Won't", "Isn't", "It's", "That's", "There's", "Let's", "I'm", "I've",
    "I'll", "I'd", "You're", "We're", "BTW", "FYI",
    "Wir", "Ich", "Du", "Er", "Es", "Sie", "Ihr", "Der", "Die", "Das", "Den", "Dem", "Des",
    "Ein", "Eine", "Einen", "Einem", "Einer", "Und", "Aber", "Oder", "Jetzt", "Dann", "Danke",
    "Ja", "Nein", "Bitte", "Heute", "Morgen", "Gestern", "Hallo", "Beim", "Im", "Auf", "Mit",
    "Für", "Von", "Vom", "Zu", "Zum", "Zur", "Bei", "Nach", "Wenn", "Weil", "Dass", "Noch",
    "Schon", "Auch", "Nur", "Mal", "Genau", "Klar", "Vielleicht", "Wie", "Wo", "Warum", "Wer",
    "Ist", "Sind", "Hat", "Haben", "Wird", "Werden", "Kann", "Muss", "Soll", "Diese",
    "Dieser", "Dieses", "Unser", "Unsere", "Mein", "Meine", "Kein", "Keine", "Nicht", "Sehr",
    "Gut", "Super",
)

# Praise that opens a sentence ("Great work", "Nice momentum") but also starts names ("Great
# Britain", "Good Morning America"): not an entity alone at the start of a sentence, kept
# inside a longer name and elsewhere ("we use Next"). (A lone gerund opens as many sentences,
# "Seeing you happy…", but "Beijing was great" is a name: gerunds stay.)
SOLO_OPENERS: Final[frozenset[str]] = frozenset({
    "Great", "Nice", "Good", "Perfect", "Next", "Cool", "Right", "Well", "Fine", "Excellent",
    "Brilliant", "First", "Last",
})


def _word_alternation(words: tuple[str, ...]) -> str:
    r"""``A(?:bout|nd|n|)\b|B(?:ut|efore)\b|...``: grouped by first letter, so a word is
    compared with the few exclusions that share its initial, not with all of them."""
    by_initial: dict[str, list[str]] = {}
    for word in words:
        by_initial.setdefault(word[0], []).append(re.escape(word[1:]))
    branches = []
    for initial, rests in by_initial.items():
        tails = "|".join(sorted(rests, key=len, reverse=True))
        branches.append(rf"{initial}(?:{tails})\b")
    return "|".join(branches)


_EXCL = _word_alternation(EXCLUDED_WORDS + CHAT_OPENERS)

# Latin-1 letters as well as ASCII: Python's ``\b`` is Unicode-aware, so without them
# "Jürgen" or "José" would fail the closing word boundary and not match at all.
_UP = "A-ZÀ-ÖØ-Þ"
_LOW = "a-zß-öø-ÿ"

# One capitalised word: O'Malley, McDonald's, OpenClaw, or an acronym such as USS.
_CAP = rf"(?:[{_UP}][{_LOW}']*(?:[{_UP}][{_LOW}']+)*|[{_UP}]{{2,}})"

# Up to six words: a real name is never longer, and the bound keeps a page of
# capitalised words from being rescanned from each of its words.
_NAME_WORDS = 5
_NAME_SEP = r"(?:-|[ \t\u00a0])"
# ``(?=[{_UP}])`` rejects a lower-case word before the long exclusion list is tried.
_WORD = rf"(?=[{_UP}])(?!{_EXCL}){_CAP}"
PROPER_NOUN_BODY: Final[str] = rf"{_WORD}(?:{_NAME_SEP}{_WORD}){{0,{_NAME_WORDS}}}"

_DE_MONTHS = "Januar|Februar|März|Mar|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember"
_EN_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"

_ORG_SUFFIX = r"(?:Inc\.|LLC|Corp\.|GmbH|AG|Ltd\.)"
# The reference has no boundary after the suffix, so "Acme AGENDA" became "Acme AG";
# suffixes that end in a letter must now end the word.
_ORG_SUFFIX_END = r"(?:Inc\.|Corp\.|Ltd\.|(?:LLC|GmbH|AG)(?![A-Za-z0-9]))"
# Up to five capitalised words before the suffix, each taken whole and none of them a
# suffix itself, so a run of capitalised words without a suffix fails fast instead of
# retrying the suffix after every word.
_ORG_WORD = r"(?!(?:Inc|LLC|Corp|GmbH|AG|Ltd)\b)[A-Z][A-Za-z0-9]++"
ORGANIZATION_BODY: Final[str] = rf"{_ORG_WORD}(?:\s{_ORG_WORD}){{0,4}}+,?\s?{_ORG_SUFFIX_END}"

# Words before a number that make it a quantity, not a version ("for 3 days", "was 10"):
# a product match that starts with one is dropped (``extract``). Cortex goes further than the
# reference, which took them for products. A set looked up after the match, not a lookahead
# in the pattern: tried at every word of a long text, the lookahead cost 1.5x its scan.
QUANTITY_WORDS: Final[frozenset[str]] = frozenset((
    "for", "was", "were", "are", "has", "had", "have", "got", "get", "took", "take", "the", "and",
    "all", "about", "around", "after", "before", "with", "then", "than", "over", "under", "only",
    "just", "last", "next", "every", "each", "from", "into", "within", "nearly", "almost", "least",
    "most", "another", "other", "these", "those", "this", "that", "until", "since", "during", "per",
    "top", "down", "probably", "maybe", "like", "scored", "ran", "run", "runs", "wait", "waited",
    "retry", "retried", "via", "por", "mit", "für", "nach", "vor", "seit", "bis", "über",
    "und", "die", "der", "das", "den", "dem", "ist", "sind", "war", "hat", "haben", "alle", "etwa",
))

_PRODUCT = (
    # Multi-word name ending in a Roman numeral ("Final Fantasy VII"). A lone "I" is
    # the pronoun far more often than a numeral ("Atlas and I"), so it does not count.
    rf"(?=[A-Z])(?!{_EXCL})[A-Z][a-zA-Z0-9]{{2,}}+(?:\s[a-zA-Z]++){{0,3}}\s(?!I\b)[IVXLCDM]+"
    # Word and version ("iPhone 15", "GPT-4", "Python 3.12"). The name is read as up to
    # four hyphen-joined tokens, each taken whole, where the reference's
    # ``[a-zA-Z0-9-]{2,}`` backtracked through every hyphen of a long run; at least three
    # characters, as in the reference.
    r"|(?=[a-zA-Z0-9-]{2}[a-zA-Z0-9])[a-zA-Z][a-zA-Z0-9]*+(?:-[a-zA-Z][a-zA-Z0-9]*+){0,3}+"
    r"[\s-]v?[0-9]+(?:\.[0-9]+)?"
    # One word ending in a Roman numeral ("ProductX"): the whole alphanumeric run is
    # taken possessively and its last letter checked, instead of backtracking into it.
    r"|[a-zA-Z][a-zA-Z0-9]{2,}+(?<=[IVXLCDM])"
)

EMAIL: Final = re.compile(
    # The local part is a whole run of address characters (at most 64, RFC 5321): the
    # reference restarted at every word boundary inside a long dotted run and rescanned
    # it to its end. Domain labels are explicit, so "@." and "@x" never match.
    r"(?<![a-zA-Z0-9._%+-])[a-zA-Z0-9._%+-]{1,64}+@(?:[a-zA-Z0-9-]{1,63}\.){1,8}[a-zA-Z]{2,63}\b"
)
URL: Final = re.compile(
    # The reference allows any character (even a space) second; ``\S`` keeps URLs whole.
    r"\bhttps?://[^\s/$.?#]\S+\b"
)
ISO_DATE: Final = re.compile(r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z?)?\b")
COMMON_DATE: Final = re.compile(
    # The reference's top-level alternation left each branch with only one boundary
    # ("v1.2.30" matched); both branches are now bounded on both sides.
    r"\b(?:[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4}|[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{2,4})\b"
)
GERMAN_DATE: Final = re.compile(rf"\b[0-9]{{1,2}}\.\s(?:{_DE_MONTHS})\s+[0-9]{{4}}\b", re.IGNORECASE)
ENGLISH_DATE: Final = re.compile(
    rf"\b(?=[JFMASOND])(?:{_EN_MONTHS})\s+[0-9]{{1,2}}(?:st|nd|rd|th)?,\s+[0-9]{{4}}\b", re.IGNORECASE
)
PROPER_NOUN: Final = re.compile(rf"\b{PROPER_NOUN_BODY}\b")
PRODUCT_NAME: Final = re.compile(rf"\b(?:{_PRODUCT})\b")
ORGANIZATION: Final = re.compile(rf"\b{ORGANIZATION_BODY}")

# Pattern order matters only for the order of first appearance in a message.
ENTITY_PATTERNS: Final[tuple[tuple[str, re.Pattern[str], EntityType], ...]] = (
    ("email", EMAIL, "email"),
    ("url", URL, "url"),
    ("iso_date", ISO_DATE, "date"),
    ("common_date", COMMON_DATE, "date"),
    ("german_date", GERMAN_DATE, "date"),
    ("english_date", ENGLISH_DATE, "date"),
    ("proper_noun", PROPER_NOUN, "unknown"),
    ("product_name", PRODUCT_NAME, "product"),
    ("organization_suffix", ORGANIZATION, "organization"),
)

# Cheap pre-checks (see ``extract._scans``): every organisation match contains one of
# these literals, every date a digit.
ORG_SUFFIX_LITERALS: Final = ("Inc.", "LLC", "Corp.", "GmbH", "AG", "Ltd.")
ORG_SUFFIX_HINT: Final = re.compile("|".join(map(re.escape, ORG_SUFFIX_LITERALS)))
DIGIT: Final = re.compile(r"[0-9]")
# Every PRODUCT_NAME match has a digit (a version) or ends in a Roman numeral letter at a
# word boundary: after a letter or digit of its word ("ProductX", "VII"), or a lone one
# after a space (" X"; a lone "I" is the pronoun, never a numeral). Text with neither
# cannot match, and the pronoun alone does not make the product scan run.
PRODUCT_HINT: Final = re.compile(r"[a-zA-Z0-9][IVXLCDM]\b|\s[VXLCDM]\b")

ORG_SUFFIX_TRAILER: Final = re.compile(rf",?\s?{_ORG_SUFFIX}$", re.IGNORECASE)
TRAILING_PUNCT: Final = re.compile(r"[.,!?;:]$")
WHITESPACE: Final = re.compile(r"\s+")
WORD_SPLIT: Final = re.compile(r"\s|-")

# --- Regex-derived facts -------------------------------------------------------------
# The reference derives no facts from regex matches (only its LLM path adds facts), so
# this is Cortex's own, deliberately small set: a name found by PROPER_NOUN, directly
# followed by an explicit verb phrase, and an object that ends the clause. Anything less
# certain is left to the LLM path. The tails are matched only at the end of each name
# match, so deriving facts costs one anchored attempt per name, not another full scan.

WORKS_AT_TAIL: Final = re.compile(
    r"[ \t]+(?:works|worked|is[ \t]+working|arbeitet|arbeitete)[ \t]+(?:at|for|bei|für)[ \t]+"
)
EMPLOYER: Final = re.compile(rf"(?P<org>{ORGANIZATION_BODY})|(?P<name>{PROPER_NOUN_BODY})\b")
# The verbs these tails start with: a name not followed by one is no subject of theirs, and
# derive_statements tries no tail after it.
STATEMENT_VERBS: Final = frozenset({"works", "worked", "is", "was", "ist", "war", "arbeitet", "arbeitete"})
# Up to three words, then the end of the clause, so "is a good idea because ..." yields
# nothing rather than half a sentence. Words are taken whole (possessive): trying every
# shorter prefix of three long words would cost the cube of their length.
IS_A_TAIL: Final = re.compile(
    rf"[ \t]+(?:is|was|ist|war)[ \t]+(?:a|an|ein|eine)[ \t]+"
    rf"(?P<kind>[{_LOW}{_UP}][\w-]{{0,40}}+(?:[ \t][{_LOW}{_UP}][\w-]{{0,40}}+){{0,2}})"
    r"(?=[.,;:!?]|[ \t]*(?:\r?\n|$))"
)

# A kind said for the speaker or the listener is how they see the name, not what it is: "Pricing is a factor for
# us", "Anna ist ein Vorbild für mich" (issue 37, eighteenth round; the development split's meetings).
VIEWED: Final = re.compile(r"\b(?:us|me|you|mine|ours|yours|uns|mich|mir|dich|dir|euch)$")

# Praise is no kind: "Zelda is an awesome open-world game", "Atlas ist ein toller Agent" say
# what the speaker thinks of it (Cortex's own: the reference read "is a awesome …" as a fact).
PRAISE: Final = re.compile(
    r"(?:must-\w+|awesome|great|amazing|good|nice|cool|fantastic|wonderful|beautiful|excellent|incredible|terrible|awful"
    r"|bad|fun|lovely|perfect|brilliant|super|real|total|huge|big|little|bit|lot|toll\w*|super|gut\w*|schön\w*"
    r"|riesig\w*|klein\w*|echt\w*)\b"
)

# A project's figures, said in a kick-off (issue 37, AMI): "our selling price is twenty five Euros",
# "the production cost can be maximal twelve and a half Euros", "a profit of fifty million Euros",
# "it sells for 25 euros". English only; on lowered text: ``figure`` names what the figure is,
# ``amount`` is the amount with its currency (digits or number words).
# Tenth round (issue 37): the same figures said as a team says them — the noun with no verb
# ("selling price twenty five Euros, profit aim fifty million Euros"), a future or a filler
# ("is going to be", "is gonna be a max of", "profit aim ultimately of"), a verb in place of the
# noun ("we'll sell it for …" is the selling price, "we're aiming to make …" the profit aim, "it
# can't cost more than … to make / per unit" the production cost), and an amount with its cents
# after the currency ("twelve Euros fifty"). Measured on every AMI series of the development split
# (QMSum train/, 25 series; ``python -m workers.evals.real_facts --ami``), not on one conversation.
_FIGURE_NUMBER = (r"(?:\d[\d.,]*|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
                  r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
                  r"|eighty|ninety|hundred|thousand|million|billion|point|and|a|half)")
_FIGURE_CURRENCY = r"(?:euros?|dollars?|pounds?|francs?|cents?|€|\$|£)"
_FIGURE_FILLER = (r"(?:uh|um|er|of|about|around|roughly|approximately|maximal|maximum|max|a\s+max(?:imum)?\s+of"
                  r"|at\s+most|at\s+least|only|just|ultimately|overall|exactly|no\s+more\s+than|not\s+more\s+than"
                  r"|any\s+more\s+than|more\s+than|less\s+than|under|below)")
# what is sold or made: "it", "this remote control", "each unit" (a possessive other than "our" is
# someone's own thing: "I sold my bike for …" is no project's price)
_FIGURE_THING = (r"(?:(?:it|this|these|them|that|each(?:\s+one)?|one"
                 r"|(?:the|this|our)\s+[a-z]+(?:\s+[a-z]+)?)\s+)?")
_FIGURE_BE = (r"(?:is|was|will\s+be|would\s+be|can\s+be|should\s+be|must\s+be|has\s+to\s+be|is\s+going\s+to\s+be"
              r"|is\s+gonna\s+be|'s\s+going\s+to\s+be|'s\s+gonna\s+be|needs\s+to\s+be|has\s+got\s+to\s+be)\b")
# A finding about a share of people, as a team reports its market research (tenth round, issue
# 37): "seventy five percent of users find their remote controls ugly", "eighty percent would
# spend more money on a remote that looks fancy", "fifty percent of the users they use only ten
# percent of the buttons". The share is of people (or said alone) and a verb of saying, finding,
# wanting or doing follows: "fifty percent of the selling price" is no finding. English only;
# on lowered text, searched only where "percent" or "%" is said.
SHARE_TRIGGERS: Final = ("percent", "%")
SHARE: Final = re.compile(
    # a share's number is a few words ("ninety one point two"): bounded, so a run of number words
    # is not rescanned from each of its words
    rf"\b(?P<share>(?:(?:over|about|around|nearly|almost|roughly|some)\s+)?(?:{_FIGURE_NUMBER}[\s-]+){{0,6}}{_FIGURE_NUMBER}"
    r"\s*(?:percent|%)(?:\s+of\s+(?:the\s+|all\s+|our\s+)?(?:(?:uh|um|er)\s+)?(?:[a-z]+\s+){0,3}?"
    r"(?:users?|people|consumers|customers|respondents|buyers|owners|viewers|them|those\s+asked)"
    r"(?:\s+(?:questioned|asked|surveyed|interviewed|tested|polled))?"
    r"(?:\s+of\s+[a-z]+(?:\s+[a-z]+)?(?=\s+(?:they\s+)?(?:say|said|find|found|think|would|are|were|use|want|prefer)\b))?)?)"
    r"(?:,?\s+(?:they|uh|um|er))*"
    r"\s+(?P<said>(?:(?:do|does|did)\s+)?(?:say|said|says|find|found|finds|think|thought|would|are|were|use|used|want|wanted|prefer"
    r"|preferred|mentioned|zap|lose|lost|need|needed|like|liked|dislike|disliked|have|had|own|spend|pay|buy"
    r"|indicated|indicate|stated|reported|answered|responded|claimed|agreed|considered)\b"
    r"[^.?!;:\n]{3,90}?)(?=\s*(?:[.?!;:\n]|,\s+(?:so|which|but|and\s+(?:we|i|that))\b|$))")

# a figure asked, proposed or supposed: a hedge before it in its sentence
FIGURE_UNSURE: Final = re.compile(
    r"\b(?:if|could|might|maybe|perhaps|whether|let's|let\s+us|then\s+we|suppose|unless)\b")
# every figure has its currency: a message naming none is not searched
FIGURE_TRIGGERS: Final = ("euro", "dollar", "pound", "franc", "cents", "€", "$", "£")  # not "cent": "recent", "percent"
FIGURE: Final = re.compile(
    r"\b(?<!my )(?<!your )(?<!his )(?<!her )(?<!that )(?<!this )"
    r"(?:(?P<figure>(?:selling|sales|retail|target|unit|production|manufacturing)\s+(?:price|cost)"
    r"|(?:profit|revenue|turnover)(?:\s+(?:aim|target|goal))?|budget)(?:\s+(?:uh|um|er))?"
    r"(?:\s+(?:for|of)\s+(?:our|the|this|each)\s+[a-z]+(?:\s+[a-z]+)?(?=\s+(?:is|was|will|would|can|should|must|has)\b))?"
    rf"(?:\s+(?:{_FIGURE_BE}|of\b|at\b)|(?=\s+(?:{_FIGURE_FILLER}\s+){{0,4}}{_FIGURE_NUMBER}[\s-]))"
    rf"|(?P<sells>(?:sells?|selling)\s+{_FIGURE_THING}(?:for|at)\b)"
    r"|(?P<makes>(?:aim|aiming|aims)\s+to\s+make(?:\s+a\s+profit\s+of)?\b)"
    r"|(?P<costs>costs?\b)"
    rf"|(?P<produce>(?:produce|make|build|manufacture)\s+{_FIGURE_THING}(?:for|at)\b))"
    rf"\s+(?:{_FIGURE_FILLER}\s+){{0,4}}"
    rf"(?P<amount>(?:{_FIGURE_NUMBER}[\s-]+){{0,8}}{_FIGURE_NUMBER}\s*{_FIGURE_CURRENCY}"
    r"(?:\s+(?:fifty|twenty[\s-]five|seventy[\s-]five|\d{2})(?![\w])(?!\s*(?:percent|%)))?)"
    r"(?P<per>\s+(?:per|a|each|for\s+each)\s+(?:unit|item|piece|remote|device|one|time)\b"
    r"|\s+to\s+(?:make|produce|build|manufacture)\b)?"
    r"(?![\w])")
