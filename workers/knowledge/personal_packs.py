"""What people say about themselves and about each other, per language, as data.

Cortex's own (the reference derives no facts without its LLM). Each pack lists, as regex
sources on the lower-cased message (``conversation.patterns.MatchText``; apostrophes
straight or typographic):

* ``lead`` — where a statement by the speaker about themselves may start ("i", "my",
  "ich", "soy", "私は" …); only a lead that opens its clause counts (``personal.opens_clause``);
* ``first_person`` — the statements tried at such a lead, each ``(predicate, source,
  check)``: the predicate a fact gets (English words as hyphenated slugs, one vocabulary
  in every language; ``{rel}``, ``{noun}`` and ``{verb}`` are filled from the groups of
  those names), the source (group ``obj`` is the object) and how the object is checked
  (``personal.CHECKS``);
* ``third_person`` — the same statements after a name that opens a clause ("Maria lives in
  Porto"): languages that capitalise names only;
* the words around them: discourse words a clause may open with ("yeah", "also", "und",
  "pues"), where an object ends (a new clause), fillers at its end ("too"), what makes a
  clause about now rather than for good ("today", "heute"), objects that say nothing
  lasting ("it", "that", "you"), the family, pets and conditions one *has*.

A predicate starting with ``'s-`` is said of something of the subject's: ``'s-kids-love``
reads "Melanie's kids love dinosaurs" (``workers.render.fact_sentence``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Check = Literal["phrase", "noun", "name", "family", "taste", "capitalized", "kind"]

_A: Final = "['’]"


def _own_not_after(owns: tuple[str, ...], words: tuple[str, ...]) -> str:
    """One of ``owns`` ("my", "our") and a blank, not after one of ``words`` ("if", a wish): the look back is
    made only once the word matched (a lead's heads are tried at every lead: a look back first would be paid
    at each)."""
    behind = "".join(rf"(?<!{word}\s{own}\s)" for word in words for own in owns)
    return rf"(?:{'|'.join(owns)})\s{behind}\s*"

# What happened to the speaker's own people and stays so, read as the object of "'s-<kin>" ("Maria's grandma
# passed away"; twenty-second round): every pack's words for a death. ``briefing`` shows such a line as it
# shows a change of life.
KIN_DEATHS: Final = frozenset({"passed away", "died", "gestorben", "verstorben", "falleció", "murió", "fallecieron",
                               "murieron", "décédé", "décédée", "décédés", "décédées", "mort", "morte", "morts",
                               "mortes"})
# The object: the rest of the clause; ``personal`` cuts it where a new clause begins.
OBJ: Final = r"(?P<obj>[^.!?;\n…]{1,160})"
_CJK_OBJ: Final = r"(?P<obj>[^。！？!?.,，、；;\n\s]{1,20}?)"


@dataclass(frozen=True, slots=True)
class PersonalPack:
    code: str
    lead: str
    first_person: tuple[tuple[str, str, Check], ...]
    third_person: tuple[tuple[str, str, Check], ...] = ()
    anywhere: tuple[tuple[str, str, Check], ...] = ()  # tried at every lead, its clause's start or not
    third_verbs: tuple[str, ...] = ()  # the first word of every third-person tail ("lives", "wohnt")
    discourse: tuple[str, ...] = ()
    coordinators: tuple[str, ...] = ()  # words that join two clauses ("and", "but"): a clause starts after one
    ends: str = ""  # an object ends where one of these starts
    trailing: str = ""  # fillers taken off an object's end
    transient: str = ""  # a clause with one of these is about now
    unreal: str = ""  # and of these, those that make an event unreal (wished, negated): a time word does not
    events: tuple[str, ...] = ()  # predicates of events that stay true ("lost my job … this month")
    vague: str = ""  # an object that starts with one of these says nothing lasting
    taste_vague: str = ""  # and for likes and loves, these too ("the colours", "this")
    passing: str = ""  # a taste's object that tells an activity at length: a feeling of the moment, not a pastime
    not_nouns: str = ""  # an "is a" object starting with one of these is no kind ("a bit", "a lot")
    family: str = ""  # what "has" takes: family, pets, conditions
    own_words: str = ""  # first-person words that make an object the speaker's own words
    deictic: str = ""  # an object with one of these points at something said, not at something lasting
    pronouns: tuple[tuple[str, str], ...] = ()  # first-person words of an object, said of the subject
    verbs: tuple[tuple[str, str], ...] = ()  # the speaker's own ``{verb}`` as said → the predicate's word
    rel_verbs: tuple[tuple[str, str], ...] = ()  # and a ``{verb}`` said of the speaker's ``{rel}``
    comma_clause: str = ""  # a comma starts a new clause before these (without: before any lower-case word)
    before: tuple[tuple[str, str, Check], ...] = ()  # "<object> is my favourite": the object precedes
    before_gate: str = ""  # every ``before`` match contains a match of this (one search rules them out)
    # who one is said in passing, before the speaker's own clause ("As a nurse, I …"; twenty-fifth round): searched
    # in a message that holds one of ``in_passing_words``, each match starting a word and opening its clause (no new
    # lead: a lead's first letters are tried at every position of every message, and a regex search of every
    # message costs as much)
    in_passing: tuple[tuple[str, str, Check], ...] = ()
    in_passing_words: tuple[str, ...] = ()
    kind: str = ""  # what a "kind" object ends with: a person's kind ("医者", "학생", "老师")
    before_stop: str = ""  # characters that end an object read backwards (a topic's particle "は")
    topic: str = ""  # what may stand before such an object in its clause: the speaker as topic ("私は")
    # a time phrase that may stand before a lead ("Just yesterday I joined …", "Last week I got …"): the
    # clause opens before it, and only an event (``events``) is read there — "Yesterday I'm at …" is
    # about that day (fourteenth round)
    dated: str = ""
    dated_last: tuple[str, ...] = ()  # the words a ``dated`` phrase ends with (one set lookup rules most leads out)
    # what reports the clause after it to the listener ("I wanted to tell ya I just joined …"): the
    # clause opens after it, whatever it states
    reported: str = ""
    reported_last: tuple[str, ...] = ()  # the words a ``reported`` phrase ends with
    # what a practice under way read with an open verb (``personal.under_way``) may not say after its verb
    under_way_not: str = ""
    max_words: int = 10
    spaced: bool = True  # words are separated by spaces (not Chinese or Japanese)


# --- English ------------------------------------------------------------------------------

_EN_ADV = (r"(?:(?:also|actually|originally|really|definitely|totally|still|now|currently|very|so|super|pretty"
           r"|quite|severely|mildly|proudly|officially|just|literally|kinda|kind\s+of|more|mostly|mainly|big|huge)\s+){0,3}")
_EN_I_AM = rf"(?:i{_A}m|i\s+am|i{_A}ve\s+been|i\s+have\s+been)\s+{_EN_ADV}"
_EN_DURABLE = (r"(?:vegan|vegetarian|pescatarian|married|single|divorced|widowed|engaged|pregnant|retired|unemployed"
               r"|self-employed|diabetic|c[o]?eliac|lactose[- ]intolerant|gluten[- ]intolerant|colou?r[- ]?blind"
               r"|deaf|blind|left-handed|right-handed|transgender|trans|non-?binary|gay|lesbian|bisexual|queer"
               r"|asexual|autistic|dyslexic|adopted|sober|an\s+only\s+child)")
_EN_REL = (r"(?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse|(?:oldest|youngest|eldest|little"
           r"|older|younger|big)\s+(?:son|daughter|brother|sister|one|kids|children|ones)|sons?|daughters?|kids"
           r"|children|child|kid"
           r"|baby|toddler|twins|mom|mum|mother|dad|father|parents|brothers?|sisters?|siblings|grandma|grandmother"
           r"|aunt|uncle|cousin|niece|nephew"
           r"|grandpa|grandfather|grandparents|family|fam|dogs?|cats?|pets?|puppy|kitten|guinea\s+pig|hamster"
           r"|rabbit|bunny|parrot|horse|best\s+friend|roommate|boss)")
_EN_PETS = (r"(?:dog|cat|puppy|kitten|guinea\s+pig|hamster|rabbit|bunny|parrot|horse|turtle|pet|son|daughter"
            r"|husband|wife|partner|boyfriend|girlfriend|brother|sister|mom|mum|dad)")
_EN_REL_VERB = (r"(?:loves?|likes?|enjoys?|adores?|plays?|works?\s+(?:as|at|for|in)|lives?\s+in"
                r"|(?:is|are)\s+allergic\s+to|(?:is|are)\s+into)")
_EN_WE_OR_I = r"(?:i|we)"
_EN_COURSE = (r"(?:class|classes|course|courses|program|programme|degree|lessons|training|workshop|apprenticeship"
              r"|internship|job|position)\b")
_EN_WE_ARE = rf"(?:i{_A}m|i\s+am|we{_A}re|we\s+are)\s+"
_EN_PLAN_ADV = r"(?:(?:finally|actually|officially|also|soon|now|really)\s+)?"
# a stay that lasts, said after the place ("… to Ireland for a semester", "… for two years")
_EN_LONG_STAY = (r"[^.!?;\n…]{1,60}?\bfor\s+(?:a|an|the|one|two|three|four|six|several|a\s+few)\s+(?:whole\s+|full\s+)?"
                 r"(?:semester|term|year|years|months|school\s+year)\b")
# the speaker's own people as a clause's subject (twenty-second round): "my" or "our", a count before the noun
# ("our two daughters"); what is said of them lasts — a taste or a job (``_EN_REL_VERB``), a death, a win. "The
# kids" is not read: "the" is too common a lead to look at (each message's scan pays for it), and a teacher's
# "the kids" are the class
_EN_OWN = r"(?:my|our)\s+"
_EN_PARTNER = r"(?:girlfriend|boyfriend|fianc[ée]e?|partner|husband|wife|sweetheart)"
_EN_COUNT = r"(?:(?:\d{1,2}|two|three|four|five|both)\s+)?"
_EN_GROUP = r"(?:(?:[a-z]+\s+)?(?:team|crew|band|squad|club|choir|orchestra))"
# what a win that lasts names: a place, a title, a prize — not "the game" of that night
_EN_WON = (r"(?:place|prize|title|championship|cup|medal|award|trophy|regionals?|nationals?|league|tournament"
           r"|competition|contest|finals?)\b")
# who one is, said in passing (twenty-fifth round): "my own journey as a transgender woman", "my life as a single
# parent" (read at the lead "my"). What one was ("as a kid"), a group ("as a team") and a figure of speech ("as a
# result") are not. "As a nurse, I …" is read in French and Spanish only (``in_passing``): in the default packs a
# gate looked for in every message cost the reader ~4 % of its instructions a message
_EN_AS_NOT = (r"(?!(?:kid|child|teen\w*|youngster|boy|girl|baby|toddler|result|matter|whole|rule|bonus|reminder"
              r"|side|thank|gift|treat|team|family|group|couple|way|kind|sort|part|first|last|joke|favou?r|token"
              r"|sign|start|reward|consequence|precaution|matter|general|heads|surprise|fellow|friend|side)\b)")
# its last word names a person ("woman", "nurse", "single parent", "writer", "veteran"), not a thing ("as a curve, I")
_EN_PERSON = (r"[a-z-]*(?:er|or|ist|ian|an|ant|ent|ess|man|woman|men|person|mom|mum|mother|dad|father|parent|wife"
              r"|husband|nurse|doctor|chef|coach|guy|gal|native|adult|vert|survivor|refugee|fan|lover|owner|nerd|geek)")
# the object runs to the clause's end and is checked afterwards ("kind": ``EN.kind``): a person's ending tried inside
# the pattern was tried at every word of a long object
_EN_AS_KIND = rf"an?\s+(?#obj){_EN_AS_NOT}"
_EN_OWN_NOT_IF = _own_not_after(("my", "our"), ("if", "unless", "wish", "hope", "whether", "imagine"))
# what a person is in a team, said when they introduce themselves ("I'm Bart, the project manager")
_EN_ROLE = (r"(?:manager|designer|expert|engineer|developer|lead|leader|head|director|officer|analyst|architect"
            r"|consultant|coordinator|owner|specialist|secretary|chair|host|moderator|assistant|intern|researcher"
            r"|scientist|accountant|editor|producer|administrator|admin|rep|representative)s?")

# The open verb of a practice under way: any "-ing" word but those of a state, a plan, a feeling or talk
# ("I'm going …", "I'm thinking about …", "I'm hoping to …", "I'm loving it") and adjectives in "-ing"
_EN_UNDER_WAY = (r"(?!(?:go|feel|think|try|hop|look|gett|hav|stay|lov|wait|want|plann|consider|see|talk|say|wonder"
                 r"|tell|ask|send|shar|kidd|miss|dy|enjoy|lik|hat|amaz|noth|someth|anyth|everyth|morn|even|dur"
                 r"|interest|excit|bor|outgo|car|will|count|root|guess|assum|mean|sitt|head|com|leav|relax|chill"
                 r"|struggl|deal|los|mov|hear|know|bless|freak|rock|kill|sav|gonn|be|th|k|r|s|br|sw|wr|str|spr|cl|fl|sl|st|w"
                 # what one does at the moment, not as a practice: "I'm reading a fantasy book", "I'm playing …"
                 r"|read|watch|listen|eat|drink|wear|us|play"
                 # and the verbs closed phrases read ("is-learning", "is-writing"): what they leave is no practice
                 r"|learn|writ)ing\b)"
                 r"[a-z]{2,}ing")
# what such a verb's object may not start with: how it goes, not what is done ("doing great", "working hard",
# "keeping busy", "reading as usual", "playing professionally"), an infinitive ("starting to realize …",
# "aiming to turn …"), the speaker's own self or body ("living my true self", "crossing my fingers"), a
# duration alone ("playing for about four months"); nor may its clause say a time to come or now ("… next
# month", "… later", "right now") or a person it does not name ("helping her find a new place"): ``under_way_not``
# "(?#obj)" marks where the object's guard starts: no part of the rules' heads (``personal._heads``)
_EN_NOT_PRACTICE = (r"(?#obj)(?!(?:well|great|good|fine|okay|ok|alright|better|worse|pretty|so|really|too|hard"
                    r"|fun|forward"
                    r"|a\s+lot|lots|more|much|back|up|out|it|this|that|them|you|myself|around|on\s+it|again|now"
                    r"|busy|as|into|through|together|ever|to|my|our|[a-z]+ly|(?:the\s+|some\s+)?time"
                    r"|for\s+(?:about|over|almost|nearly|the\s+past|a|an|one|two|three|four|five|six|\d+|several"
                    r"|many|some)\s+(?:\w+\s+)?(?:years?|months?|weeks?|days?|hours?))\b)")

EN: Final = PersonalPack(
    code="en",
    lead=r"(?:i|we|my|our|just(?=\s+started\s))(?!\w)",
    first_person=(
        ("is-allergic-to", _EN_I_AM + r"allergic\s+to\s+" + OBJ, "phrase"),
        ("is-from", _EN_I_AM + r"from\s+" + OBJ, "name"),
        ("works-as", _EN_I_AM + r"(?:working|employed)\s+as\s+" + OBJ, "phrase"),
        ("works-at", _EN_I_AM + r"(?:working|employed)\s+(?:at|for)\s+" + OBJ, "phrase"),
        ("studies", _EN_I_AM + r"(?:studying|majoring\s+in)\s+" + OBJ, "phrase"),
        ("is-learning", _EN_I_AM + r"learning\s+(?:(?:how\s+)?to\s+play\s+(?:the\s+)?|to\s+)?" + OBJ, "taste"),
        ("is-learning", rf"i(?:{_A}ve|\s+have)\s+(?:also\s+|just\s+|recently\s+)?started\s+learning\s+"
                        r"(?:(?:how\s+)?to\s+play\s+(?:the\s+)?|to\s+)?" + OBJ, "taste"),
        ("is-{verb}", _EN_I_AM + r"(?P<verb>into|keen\s+on|passionate\s+about|interested\s+in|obsessed\s+with"
                     r"|fascinated\s+by|good\s+at|all\s+about)\s+" + OBJ, "taste"),
        ("is-married-to", _EN_I_AM + r"married\s+to\s+" + OBJ, "name"),
        ("{verb}", _EN_I_AM + r"(?P<verb>mentoring|coaching|fostering|volunteering\s+(?:at|with|for|as))\s+" + OBJ,
         "phrase"),
        ("is-writing", _EN_I_AM + r"writing\s+(?=(?:[\w-]+\s+){0,3}?(?:articles?|books?|novels?|stor(?:y|ies)|scripts?"
                                  r"|screenplays?|blogs?|songs?|poems?|memoir|thesis|columns?)\b)" + OBJ, "phrase"),
        ("is-part-of", _EN_I_AM + r"(?:a\s+)?(?:member|part)\s+of\s+" + OBJ, "phrase"),
        ("is", _EN_I_AM + rf"(?P<obj>{_EN_DURABLE}\b[^.!?;\n…]{{0,80}})", "phrase"),
        ("is", _EN_I_AM + r"(?P<obj>\d{1,3}\s+years?\s+old)\b", "phrase"),
        ("has", _EN_I_AM + r"(?:so\s+|really\s+)?(?:lucky|blessed|grateful|thankful)\s+to\s+have\s+" + OBJ,
         "family"),
        ("is-a", _EN_I_AM + r"(?:a|an)\s+" + OBJ, "noun"),
        ("is-a", rf"i{_A}ve\s+been\s+(?:a|an)\s+(?P<obj>[^.!?;,\n…]{{1,60}}?)\s+for\s+(?:\d+|a|an|one|two|three"
                 r"|four|five|six|seven|eight|nine|ten|many|several|over|almost|nearly|about)\b", "noun"),
        ("works-as", r"i\s+(?:currently\s+|now\s+|still\s+|actually\s+)?work\s+as\s+" + OBJ, "phrase"),
        ("works-at", r"i\s+(?:currently\s+|now\s+|still\s+|actually\s+)?work\s+(?:at|for)\s+" + OBJ, "phrase"),
        ("works-in", r"i\s+(?:currently\s+|now\s+|still\s+|actually\s+)?work\s+in\s+" + OBJ, "phrase"),
        ("works-with", r"i\s+(?:currently\s+|now\s+|still\s+|actually\s+)?work\s+with\s+" + OBJ, "phrase"),
        ("lives-in", _EN_WE_OR_I + r"\s+(?:currently\s+|now\s+|still\s+|actually\s+)?live\s+in\s+" + OBJ, "phrase"),
        ("lives-in", _EN_WE_OR_I + rf"(?:{_A}ve|\s+have)\s+lived\s+in\s+" + OBJ, "phrase"),
        ("lives-with", r"i\s+(?:currently\s+|now\s+|still\s+)?live\s+with\s+" + OBJ, "phrase"),
        ("grew-up-in", r"i\s+grew\s+up\s+in\s+" + OBJ, "phrase"),
        ("was-born-in", r"i\s+was\s+born\s+in\s+" + OBJ, "phrase"),
        ("is-from", r"i\s+(?:come|am\s+originally)\s+from\s+" + OBJ, "name"),
        ("moved-to", _EN_WE_OR_I + r"\s+(?:just\s+|recently\s+)?moved\s+to\s+" + OBJ, "name"),
        # a change of life under way or just begun (twenty-fourth round): a move to a named place ("I'm moving to
        # Denver next month", "we're relocating to Austin"), a long stay there ("Next month, I'm off to Ireland for a
        # semester"; a trip names no stay: "off to Paris this weekend" is not read), a course signed up for
        ("is-moving-to", rf"{_EN_WE_ARE}{_EN_PLAN_ADV}(?:moving|relocating)\s+(?:back\s+)?to\s+" + OBJ, "name"),
        ("is-off-to", rf"{_EN_WE_ARE}{_EN_PLAN_ADV}(?:off|heading|headed)\s+(?:back\s+)?to\s+"
                      rf"(?={_EN_LONG_STAY})" + OBJ, "capitalized"),
        ("signed-up-for", r"(?:i|we)\s+(?:(?:just|also|finally|recently|officially)\s+)?(?:signed\s+up\s+for"
                          r"|enrolled\s+in|registered\s+for)\s+(?=(?:a|an|my|our|the)\s)" + OBJ, "phrase"),
        ("started", r"(?:i|we)\s+(?:(?:just|also|finally|recently)\s+)?(?:started|began|took\s+up)\s+"
                    rf"(?=(?:a|an|my|our)\s+(?:[\w-]+\s+){{0,3}}?{_EN_COURSE})" + OBJ, "phrase"),
        # "we've got a pup and a kitty": the contraction has no blank before it
        ("has", _EN_WE_OR_I + rf"(?:\s+have|{_A}ve\s+got|\s+have\s+got)\s+(?!to\b)" + OBJ, "family"),
        ("{verb}", r"i\s+(?:(?:really|absolutely|just|also|totally|truly|do|genuinely)\s+){0,2}"
                   r"(?P<verb>love|like|enjoy|adore)\s+" + OBJ, "taste"),
        ("plays", r"i\s+(?:also\s+|still\s+|mostly\s+)?play\s+" + OBJ, "phrase"),
        ("lost-their-job-{rel}", r"i\s+(?:also\s+|just\s+|recently\s+)?lost\s+my\s+job\s+(?P<rel>as|at|with)\s+" + OBJ,
         "phrase"),
        ("joined", r"i\s+(?:also\s+|just\s+|recently\s+|finally\s+)?joined\s+(?=(?:a|an|the|my|our)\s)" + OBJ,
         "phrase"),
        # a job, a deal, a place got: "I got a temp job to help cover expenses", "got accepted for an internship"
        ("got", r"i\s+(?:just\s+|also\s+|finally\s+|recently\s+)?got\s+(?:accepted\s+(?:for|to|into)\s+)?"
                r"(?=(?:a|an)\s+(?:[\w-]+\s+){0,2}(?:job|position|internship|role|gig|promotion|endorsement"
                r"|sponsorship|contract|scholarship|apprenticeship|residency|fellowship)\b)" + OBJ, "phrase"),
        ("has", r"(?:i|we)\s+(?:also\s+|just\s+|recently\s+|finally\s+)?(?:got|adopted)\s+"
                r"(?=(?:another|a|an|two|three|four)\s)" + OBJ, "family"),
        ("started", r"i\s+started\s+(?P<obj>[a-z]+ing\b[^.!?;\n…]{0,60}?\s+(?:about\s+|over\s+|almost\s+)?"
                    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|many|several)\s+years?\s+ago)",
         "phrase"),
        ("is-named", rf"my\s+name(?:\s+is|{_A}s)\s+(?:(?:uh|um|er)\s+)?" + OBJ, "name"),
        # a name given as one introduces oneself in a meeting (issue 37, AMI): with the role after it
        # ("I'm Bart the project manager", "I am Hemant, the industrial designer") or said next
        # ("I'm uh Michael. I'm the user interface designer", "I'm Laura and I'm the project
        # manager": tenth round, every AMI series of the dev split); a capitalised word alone after "I'm"
        # ("I'm French") is no name
        ("is-named", rf"i(?:{_A}m|\s+am)\s+(?:(?:uh|um|er),?\s+)?(?P<obj>[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*)?)"
                     rf"(?=(?:\s*,?|(?:[.;]|,?\s+and)\s+(?:(?:uh|um|er|so),?\s+)?i(?:{_A}m|\s+am))\s+(?:the|a|an|your|our)\s+(?:[\w-]+\s+){{0,3}}?"
                     rf"{_EN_ROLE}\b)", "name"),
        # a marriage, an event that stays true (twenty-fifth round): "I married my high school sweetheart", "My
        # girlfriend and I had an emotional wedding ceremony last week", "my fiancé and I just tied the knot"
        ("married-their", r"i\s+(?:just\s+|finally\s+|recently\s+)?(?:got\s+married\s+to|married)\s+(?:my|our)\s+"
                          + OBJ, "phrase"),
        ("married-their", rf"my\s+(?P<obj>{_EN_PARTNER})\s+and\s+i\s+(?:just\s+|finally\s+|recently\s+|officially\s+)?"
                    r"(?:got\s+married|tied\s+the\s+knot|had\s+(?:a|an|our)\s+(?:[\w-]+\s+){0,4}?wedding)\b", "phrase"),
        ("opened", r"(?:i|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+)?(?:opened|launched|founded)\s+"
                   r"(?=(?:a|an|my|our)\s)" + OBJ, "phrase"),
        ("{verb}", rf"i(?:{_A}ve|\s+have)\s+always\s+(?P<verb>loved|liked|enjoyed)\s+" + OBJ, "taste"),
        ("{verb}s", r"i\s+(?:also\s+|still\s+|regularly\s+|usually\s+|often\s+)?(?P<verb>mentor|coach|paint|draw"
                    r"|knit|sew|bake|write|run|swim|hike|surf|dance|sing|garden|meditate|practice|practise|foster"
                    r"|train|breed|grow|brew|build|restore|rescue|ride)\s+" + OBJ, "phrase"),
        ("speaks", r"i\s+(?:also\s+)?speak\s+" + OBJ, "name"),
        ("studies", r"i\s+study\s+" + OBJ, "phrase"),
        ("teaches", r"i\s+teach\s+" + OBJ, "taste"),
        ("volunteers-at", r"i\s+(?:regularly\s+|also\s+)?volunteer\s+(?:at|with|for)\s+" + OBJ, "phrase"),
        ("collects", r"i\s+collect\s+" + OBJ, "taste"),
        ("'s-favorite-{noun}-is", r"my\s+(?:all-time\s+|absolute\s+)?(?:favou?rite|fave)\s+"
                                  r"(?P<noun>[a-z]+(?:\s[a-z]+)?)\s+(?:is|are)\s+" + OBJ, "phrase"),
        ("'s-{rel}-is-named", rf"my\s+(?P<rel>{_EN_REL})(?:{_A}s|\s+is)\s+(?:named|called)\s+" + OBJ, "name"),
        ("'s-{rel}-is-named", rf"my\s+(?P<rel>{_EN_REL}){_A}s\s+name\s+is\s+" + OBJ, "name"),
        ("'s-{rel}-{verb}", rf"{_EN_OWN}{_EN_COUNT}(?P<rel>{_EN_REL})\s+(?P<verb>{_EN_REL_VERB})\s+" + OBJ, "taste"),
        ("'s-{rel}-is", rf"my\s+(?P<rel>{_EN_REL})(?:{_A}s|\s+is|\s+are)\s+(?P<obj>(?:a|an)\s+[^.!?;\n…]{{1,80}}"
                        rf"|\d{{1,2}}(?:\s+years?\s+old)?(?=\s*(?:[.!,;]|$))|{_EN_DURABLE}\b[^.!?;\n…]{{0,60}})",
         "phrase"),
        # a practice under way, said with any verb ("I'm starting a dance studio", "I've been taking pottery
        # classes", "just started doing aerial yoga"): tried last, after every closed phrase; the knowledge core
        # keeps it only once the listener took it up and the speaker said it again at a later sitting
        # (``personal.under_way``, ``core._under_way``; sixteenth round)
        ("is-{verb}", _EN_I_AM + rf"(?P<verb>{_EN_UNDER_WAY})\s+{_EN_NOT_PRACTICE}" + OBJ, "phrase"),
        ("started-{verb}", rf"(?:i(?:{_A}ve|\s+have)?\s+)?(?:just\s+|recently\s+|also\s+|finally\s+)?"
                           rf"(?:started|began)\s+(?P<verb>{_EN_UNDER_WAY})\s+{_EN_NOT_PRACTICE}" + OBJ, "phrase"),
    ),
    anywhere=(
        ("is-a", rf"my\s+(?:own\s+)?(?:journey|life|experience|story|path|identity)\s+as\s+{_EN_AS_KIND}"
                 r"(?P<obj>[^.!?;,:\n…]{1,40}?)(?=\s*(?:[.!?;,:…]|$|\s+(?:and|but|has|have|is|was|in|to)\b))",
         "kind"),
        # what happened to the speaker's own people and stays so, also told inside another clause ("my best
        # memory was when my team won first place at regionals", "Last week, my grandma passed away"); not
        # after "if" or a wish (twenty-second round)
        ("'s-{rel}", rf"{_EN_OWN_NOT_IF}(?P<rel>{_EN_REL})\s+(?:(?:just|recently|sadly)\s+)?"
                     r"(?P<obj>passed\s+away|died)\b", "phrase"),
        ("'s-{rel}-won", rf"{_EN_OWN_NOT_IF}(?P<rel>{_EN_GROUP})\s+(?:(?:just|also|finally|actually)\s+)?won\s+"
                         rf"(?=(?:[\w-]+\s+){{0,4}}?{_EN_WON})" + OBJ, "phrase"),
        ("'s-{rel}-is", r"my\s+(?P<rel>home\s+country|hometown|home\s+town|homeland)\s*,?\s+(?:is\s+)?" + OBJ, "name"),
        # "Lost my job as a banker yesterday": the subject left out, as chat does
        ("lost-their-job-{rel}", r"(?:(?<=^lost\s)|(?<=[.!?,]\slost\s))my\s+job\s+(?P<rel>as|at|with)\s+" + OBJ,
         "phrase"),
    ),
    third_person=(
        ("works-as", r"\s+(?:works|is\s+working)\s+as\s+" + OBJ, "phrase"),
        ("lives-in", r"\s+(?:lives|is\s+living)\s+in\s+" + OBJ, "phrase"),
        ("is-allergic-to", r"\s+is\s+(?:also\s+|severely\s+|very\s+)?allergic\s+to\s+" + OBJ, "phrase"),
        ("is-from", r"\s+(?:is\s+(?:originally\s+)?|comes\s+)from\s+" + OBJ, "name"),
        ("is-married-to", r"\s+is\s+married\s+to\s+" + OBJ, "name"),
        ("has", r"\s+has\s+(?!to\b|got\s+to\b|been\b)" + OBJ, "family"),
    ),
    third_verbs=("works", "is", "lives", "comes", "has"),
    coordinators=("and", "but"),
    discourse=("and", "but", "so", "also", "yeah", "yes", "yep", "yup", "well", "oh", "actually", "honestly",
               "btw", "plus", "now", "lol", "haha", "wow", "ok", "okay", "sure", "right", "anyway", "and yeah",
               "totally", "definitely", "um", "uh", "hey", "hi", "hello", "aww", "ah", "true", "fun", "fact"),
    ends=(r"\s+(?:and|but|or|so|then)\s+(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll|it|it['’]s|they|they['’]re|we|we['’]re"
          r"|she|he|that|that['’]s|this|you|(?:our|my|his|her|their|your)(?:\s+\w+){1,2}\s+(?:is|are|was|were)|the\s+\w+\s+(?:is|are|was|were))\b"
          r"|\s+(?:but|because|cause|['’]cause|since|which|when|while|though|although|if|until|unless|so\s+that"
          r"|where|who|whom|whose|after|before|as\s+well\s+as|as\s+long\s+as|and\s+so|just\s+like|like\s+you)\b"
          r"|\s+(?:and|but)\s+(?:how|why|what)\s"
          # a second clause of the same subject, its "I" left out: "a few fish and had a blast" (seventeenth round)
          r"|\s+(?:and|but)\s+(?:had|went|got|made|took|saw|was|were|did|came|found|felt|spent|ended\s+up|tried"
          r"|decided)\b"
          r"|\s+[-–—]+\s+|\s*[-–—]{2,}|\s*[(:\"“]"),
    trailing=(r"(?:\s+(?:too|as\s+well|also|though|lol|haha+|hehe|now|again|tbh|honestly|really|actually|anyway"
              r"|these\s+days|at\s+all|and\s+stuff|and\s+all|and\s+everything|and\s+more|etc|lately|so\s+much"
              r"|a\s+lot|alot|myself|for\s+(?:\w+\s+)?(?:years|months)|for\s+a(?:\s+while)?|since\s+\w+"
              # when an event happened is no part of what it was ("joined a gym last week")
              r"|(?:just\s+)?(?:yesterday|today|(?:last|this|on)\s+(?:week|weekend|month|year|summer|winter|spring|fall"
              r"|morning|afternoon|evening|night|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?)"
              r"|(?:a|an|one|two|three|four|five|six|\d+)\s+(?:days?|weeks?|months?)\s+ago)))+$"),
    transient=(r"\b(?:today|tonight|tomorrow|yesterday|this\s+(?:morning|afternoon|evening|week|weekend|month)"
               r"|right\s+now|at\s+the\s+moment|for\s+now|for\s+the\s+moment|last\s+(?:night|week|weekend)"
               r"|next\s+(?:week|weekend)|anymore|any\s+more|no\s+longer|gonna|going\s+to|about\s+to|wanna"
               r"|would|could|might|maybe|hope|wish|not|never|n['’]t)\b"),
    unreal=(r"\b(?:gonna|going\s+to|about\s+to|wanna|would|could|might|maybe|hope|wish|not|never|n['’]t)\b"),
    events=("lost-their-job-as", "lost-their-job-at", "lost-their-job-with", "joined", "has", "started", "opened",
            "married-their",
            "got", "signed-up-for"),
    dated=(r"(?:(?:just|only|so)\s+)?(?:yesterday|recently|(?:last|this\s+past|on)\s+(?:week|weekend|month|year|summer"
           r"|winter|spring|fall|night|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|(?:a|one|two|three|four|five|six|\d+"
           r"|a\s+few|a\s+couple\s+(?:of\s+)?)\s+(?:days?|weeks?|months?|years?)\s+ago|since\s+we\s+last\s+(?:talked"
           r"|chatted|spoke))\s*,?\s+"),
    dated_last=("yesterday", "recently", "week", "weekend", "month", "year", "summer", "winter", "spring", "fall",
                "night", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "ago", "talked",
                "chatted", "spoke"),
    reported=r"(?:tell|told|let)\s+(?:you|ya|u)\s+(?:know\s+)?(?:that\s+)?",
    reported_last=("you", "ya", "u", "know", "that"),
    under_way_not=(r"\b(?:next\s+(?:week|month|year|weekend|time)|later|soon|tomorrow|tonight|today|right\s+now"
                   r"|at\s+the\s+moment|this\s+(?:morning|afternoon|evening|week|weekend)|he|she|him|her|his|hers)\b"),
    vague=(r"(?:it|its|it['’]s|that|that['’]s|this|these|those|them|they|you|your|yours|ya|u|how|what|when|where"
           r"|why|who|which|whatever|so|such|there|here|too|very|really|all|everything|anything|something|nothing"
           r"|everyone|everybody|anyone|one|some|any|being|seeing|hearing|knowing|having|getting|doing|watching"
           r"|talking|chatting|to\s+see|to\s+hear|to\s+know|to\s+have|to\s+be|a\s+lot|lots|more|much|both"
           r"|each|every|with|around|along|myself|me|us|him|her|his|our|ours|sure|ready|going|up|on|off|in|out"
           r"|like|just|only|even|still|a\s+bit|a\s+little|the\s+same|the\s+best|their|theirs|and|or|but)\b"),
    # "is into helping the community and making it a better place", "is passionate about sinking into
    # different magical worlds": what the speaker enjoyed doing then; "is into hiking" stays
    passing=(r"[a-z]+ing\s+(?:the|a|an|their|them|it|about|into|in|on|for|up|out|over|through|around|different"
             r"|new|other|people|others|time|more|some|all|everything|something)\s+\S+"),
    taste_vague=(r"(?:the|this|that|these|those|a|an|your|to\s+(?:see|hear|know|think|say|chat|talk|share|help"
                 r"|remind))\b"),
    not_nouns=(r"(?:bit|little|lot|tad|mess|wreck|few|couple|ton|bundle|total|complete|huge\s+mess|big\s+mess|sucker"
               r"|part|way|result|kind|sort|new|good|great|bad|proud|hot|mix|combination)\b"),
    family=(r"\b(?:kids?|child(?:ren)?|sons?|daughters?|boys?|girls?|bab(?:y|ies)|toddlers?|twins?|husband|wife"
            r"|partner|boyfriend|girlfriend|fianc[ée]e?|brothers?|sisters?|siblings?|grand(?:kids?|children|sons?"
            r"|daughters?)|nieces?|nephews?|dogs?|cats?|pupp(?:y|ies)|pups?|kittens?|pets?|guinea\s+pigs?"
            r"|hamsters?|rabbits?|bunn(?:y|ies)|parrots?|birds?|fish|turtles?|horses?|snakes?|lizards?"
            r"|roommates?|allerg(?:y|ies)|asthma|diabetes|adhd|autism|dyslexia|anxiety|depression)\b"),
    own_words=r"\b(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll)\b",
    # said of something in the conversation: "this genre", "into that world", "fan of it", "holding them"
    deictic=(r"\b(?:this|these|those|(?:to|in|of|at|from|with|about|for|into)\s+that)\b"
             r"|\b(?:here|there)\b|\b(?:it|that|them|one|too|fan|of|to|in|on|at|for|with|about|from|by|into)$"),
    pronouns=(("my", "their"), ("me", "them"), ("myself", "themselves"), ("mine", "theirs"), ("our", "their"),
              ("us", "them")),
    verbs=(("love", "loves"), ("like", "likes"), ("enjoy", "enjoys"), ("adore", "loves"), ("loved", "loves"),
           ("liked", "likes"), ("enjoyed", "enjoys"), ("mentoring", "mentors"), ("coaching", "coaches"),
           ("fostering", "fosters"), ("volunteering at", "volunteers-at"), ("volunteering with", "volunteers-with"),
           ("volunteering for", "volunteers-for"), ("volunteering as", "volunteers-as")),
    # a comma before one of these starts a new clause; before anything else it goes on a list
    # or a phrase ("creating a safe, inviting place", "hiking, reading and cooking")
    comma_clause=(r",\s*(?:i|i['’]\w+|it|it['’]s|its|that|that['’]s|this|they|they['’]re|we|we['’]re|she|he"
                  r"|you|which|who|so|but|the|though|because|plus|especially|like|just|not|even|as|since|when"
                  r"|although|while|then|now|too|haha|lol|right|really|definitely|thanks|yeah|things|everything|life)\b"),
    before_gate=r"my\s+(?:\w+\s+)?(?:fav|fave|hobb|passion|top\s+pick|go-to)|,\s+my\s",
    kind=rf"\b{_EN_PERSON}$",
    before=(
        ("'s-favorite-{noun}-is", rf"(?:{_A}s|\s+is|\s+are)\s+(?:definitely\s+|totally\s+|also\s+|still\s+)?my\s+"
                                  r"(?:all-time\s+|absolute\s+|new\s+)?(?:favou?rite|fave|top\s+pick|go-to)"
                                  r"(?:\s+(?P<noun>[a-z]+))?"
                                  r"(?=\s*(?:[.!,;:)]|$))", "taste"),
        ("'s-{rel}-is", rf"(?:{_A}s|\s+is)\s+my\s+(?:main\s+|biggest\s+|greatest\s+)?(?P<rel>hobby|passion)"
                        r"(?=\s*(?:[.!,;:)]|$))", "taste"),
        ("'s-{rel}-are", r"\s+are\s+my\s+(?:main\s+|biggest\s+|greatest\s+)?(?P<rel>hobbies|passions)"
                         r"(?=\s*(?:[.!,;:)]|$))", "taste"),
        ("'s-{rel}-is-named", rf",\s+my\s+(?P<rel>{_EN_PETS})(?=\s*(?:[.!,;:)]|$))", "name"),
    ),
)

# --- German -------------------------------------------------------------------------------

_DE_ADV = (r"(?:(?:auch|eigentlich|wirklich|schon|ja|übrigens|total|sehr|ziemlich|stark|leicht|seit\s+\w+\s+jahren"
           r"|inzwischen|mittlerweile|jetzt|ursprünglich|selbst)\s+){0,3}")
_DE_ICH_BIN = rf"ich\s+bin\s+{_DE_ADV}"
_DE_DURABLE = (r"(?:veganer(?:in)?|vegan|vegetarier(?:in)?|verheiratet|ledig|single|geschieden|verwitwet|verlobt"
               r"|schwanger|in\s+rente|rentner(?:in)?|arbeitslos|selbstständig|selbständig|diabetiker(?:in)?"
               r"|transgender|trans|nicht-?binär|schwul|lesbisch|bisexuell|queer|farbenblind|taub|blind"
               r"|linkshänder(?:in)?|rechtshänder(?:in)?|autist(?:in)?|adoptiert|\d{1,3}\s+jahre\s+alt)")
_DE_REL = (r"(?:mann|ehemann|frau|ehefrau|partner(?:in)?|freund(?:in)?|verlobte[rn]?|sohn|söhne|tochter|töchter"
           r"|kinder|kind|baby|mutter|mama|vater|papa|eltern|bruder|brüder|schwester|schwestern|geschwister"
           r"|oma|opa|großeltern|familie|hund|katze|kater|haustier|meerschweinchen|hamster|kaninchen|pferd"
           r"|bester\s+freund|beste\s+freundin|chef(?:in)?|lieblings\w+)")

# who one is, said in passing ("Als Krankenschwester weiß ich …"): not searched (twenty-fifth round) — in the default
# packs, English and German, a gate looked for in every message cost the reader ~4 % of its instructions a message;
# a reading at the lead after the kind ("…, I", "weiß ich") is the next round's
_DE_OWN_NOT_IF = _own_not_after(("mein", "meine", "unser", "unsere"), ("wenn", "falls"))
_DE_COUNT = r"(?:(?:\d{1,2}|zwei|drei|vier|beiden)\s+)?"

DE: Final = PersonalPack(
    code="de",
    lead=r"(?:ich|wir|mein(?:e[mnr]?)?|unser(?:e[mnr]?)?)(?!\w)",
    first_person=(
        ("is-allergic-to", _DE_ICH_BIN + r"allergisch\s+(?:gegen|auf)\s+" + OBJ, "phrase"),
        ("is-from", _DE_ICH_BIN + r"aus\s+" + OBJ, "name"),
        ("is", _DE_ICH_BIN + rf"(?P<obj>{_DE_DURABLE})(?=\s*(?:[.!,;:]|und\b|aber\b|$))", "phrase"),
        ("is-a", _DE_ICH_BIN + r"(?:ein|eine)\s+" + OBJ, "noun"),
        # what one cares about most (twenty-fifth round): "ich begeistere mich schon lange für Astronomie"
        ("is-passionate-about", r"ich\s+begeistere\s+mich\s+(?:\w+\s+){0,3}?für\s+" + OBJ, "taste"),
        # a noun of a person's kind without its article ("Ich bin Lehrerin", not "Ich bin Jonas")
        ("is-a", _DE_ICH_BIN + r"(?P<obj>[\w-]*(?:in|er|ent|eur|ist|loge|arzt|walt|ant|ling|ier|at|ör|deutsche"
                               r"|beamte)(?:\s+von\s+beruf)?)(?=\s*(?:[.!,;:]|und\b|$))", "capitalized"),
        ("grew-up-in", r"ich\s+bin\s+in\s+(?P<obj>[^.!?;,\n…]{1,60}?)\s+aufgewachsen", "phrase"),
        ("was-born-in", r"ich\s+bin\s+in\s+(?P<obj>[^.!?;,\n…]{1,60}?)\s+geboren", "phrase"),
        ("is-from", r"ich\s+(?:komme|stamme)\s+(?:ursprünglich\s+)?aus\s+" + OBJ, "name"),
        ("works-as", r"ich\s+arbeite\s+(?:\w+\s+)?als\s+" + OBJ, "phrase"),
        ("works-at", r"ich\s+arbeite\s+(?:\w+\s+)?(?:bei|für)\s+" + OBJ, "phrase"),
        ("lives-in", r"(?:ich|wir)\s+(?:wohne|wohnen|lebe|leben)\s+(?:\w+\s+)?in\s+" + OBJ, "phrase"),
        # a change in one's life (fourteenth round; the verb ends the clause): moved, joined, opened, lost a job
        ("moved-to", r"(?:ich|wir)\s+(?:bin|sind)\s+(?:\w+\s+){0,2}?nach\s+(?P<obj>[^.!?;,\n…]{1,60}?)\s+(?:gezogen"
                     r"|umgezogen)\b", "name"),
        # a marriage (twenty-fifth round): "ich habe letztes Jahr meine Freundin geheiratet", "meine Verlobte und ich
        # haben im Mai geheiratet"
        ("married-their", r"ich\s+(?:habe|hab)\s+(?:\w+\s+){0,3}?(?:meinen|meine)\s+(?P<obj>[^.!?;,\n…]{1,40}?)"
                          r"\s+geheiratet\b", "phrase"),
        ("married-their", r"(?:mein|meine)\s+(?P<obj>freund|freundin|partner|partnerin|verlobte[rn]?)\s+und\s+ich"
                          r"\s+haben\s+(?:\w+\s+){0,3}?geheiratet\b", "phrase"),
        ("joined", r"ich\s+bin\s+(?:\w+\s+){0,2}?(?=(?:einem|einer|dem|der)\s)(?P<obj>[^.!?;,\n…]{1,60}?)"
                   r"\s+beigetreten\b", "phrase"),
        # under way or just begun (twenty-fourth round): "ich ziehe nächsten Monat nach Leipzig (um)", "ich gehe für
        # ein Semester nach Irland", "ich habe mich für einen Töpferkurs angemeldet"
        ("is-moving-to", r"(?:ich|wir)\s+(?:ziehe|ziehen)\s+(?:\w+\s+){0,3}?nach\s+(?P<obj>[^.!?;,\n…]{1,60}?)"
                         r"(?:\s+um)?(?=\s*(?:[.!?;,…]|$|\s+(?:und|aber)\s))", "name"),
        ("is-off-to", r"(?:ich|wir)\s+(?:gehe|gehen)\s+(?:\w+\s+){0,2}?für\s+(?:ein|zwei|drei|sechs|einige)\s+"
                      r"(?:semester|jahr|jahre|monate)\s+nach\s+" + OBJ, "name"),
        ("signed-up-for", r"(?:ich|wir)\s+(?:habe|hab|haben)\s+(?:mich|uns)\s+(?:\w+\s+){0,2}?(?:für|zu)\s+"
                          r"(?P<obj>(?:einen|eine|ein|den|die|das|einem|einer|dem)\s+[^.!?;,\n…]{1,60}?)"
                          r"\s+(?:angemeldet|eingeschrieben)\b", "phrase"),
        ("opened", r"(?:ich|wir)\s+(?:habe|hab|haben)\s+(?:\w+\s+){0,2}?(?=(?:einen|eine|ein|meinen|meine|mein)\s)"
                   r"(?P<obj>[^.!?;,\n…]{1,60}?)\s+(?:eröffnet|gegründet)\b", "phrase"),
        ("lost-their-job-at", r"ich\s+(?:habe|hab)\s+(?:\w+\s+){0,2}?meinen\s+(?:job|arbeitsplatz|arbeit)"
                              r"\s+(?:bei|in)\s+(?P<obj>[^.!?;,\n…]{1,60}?)\s+verloren\b", "phrase"),
        ("has", r"(?:ich|wir)\s+(?:habe|hab|haben)\s+" + OBJ, "family"),
        ("{verb}", r"ich\s+(?P<verb>liebe|mag)\s+" + OBJ, "taste"),
        ("plays", r"ich\s+spiele\s+(?:gerne?\s+)?" + OBJ, "taste"),
        ("studies", r"ich\s+studiere\s+" + OBJ, "phrase"),
        ("speaks", r"ich\s+spreche\s+" + OBJ, "capitalized"),
        ("'s-{rel}-is", r"mein(?:e)?\s+(?P<rel>lieblings[\w-]+)\s+(?:ist|sind)\s+" + OBJ, "phrase"),
        ("'s-{rel}-is-named", rf"mein(?:e)?\s+(?P<rel>{_DE_REL})\s+(?:heißt|heisst)\s+" + OBJ, "name"),
        ("'s-{rel}-{verb}", rf"(?:mein|unser)(?:e)?\s+{_DE_COUNT}(?P<rel>{_DE_REL})\s+"
                            r"(?P<verb>arbeitet\s+als|arbeitet\s+bei|wohnt\s+in|liebt|lieben|mag|mögen|spielt"
                            r"|spielen)\s+" + OBJ, "taste"),
        ("'s-{rel}-is", rf"mein(?:e)?\s+(?P<rel>{_DE_REL})\s+(?:ist|sind)\s+(?P<obj>(?:ein|eine)\s+[^.!?;\n…]{{1,80}}"
                        rf"|{_DE_DURABLE})", "phrase"),
    ),
    anywhere=(
        # what happened to the speaker's own people and stays so (twenty-second round): "meine Oma ist letzte
        # Woche gestorben", "unser Team hat die Regionalmeisterschaft gewonnen"; not after "wenn" or "falls"
        ("'s-{rel}", rf"{_DE_OWN_NOT_IF}(?P<rel>{_DE_REL})\s+(?:ist|sind)\s+"
                     r"(?:\w+\s+){0,3}?(?P<obj>gestorben|verstorben)\b", "phrase"),
        ("'s-{rel}-won", rf"{_DE_OWN_NOT_IF}(?P<rel>[\w-]*(?:team|mannschaft|band|verein))"
                         r"\s+hat\s+(?:\w+\s+){0,2}?(?=(?:den|die|das|einen|eine|ein|ersten|zweiten|dritten)\s+(?:[\w-]+\s+){0,2}?"
                         r"[\w-]*(?:meisterschaft|titel|preis|pokal|medaille|turnier|wettbewerb|finale|platz|liga)\b)(?P<obj>[^.!?;,\n…]{1,60}?)"
                         r"\s+gewonnen\b", "phrase"),
    ),
    third_person=(
        ("works-as", r"\s+arbeitet\s+(?:\w+\s+)?als\s+" + OBJ, "phrase"),
        ("lives-in", r"\s+(?:wohnt|lebt)\s+(?:\w+\s+)?in\s+" + OBJ, "phrase"),
        ("is-allergic-to", r"\s+ist\s+(?:\w+\s+)?allergisch\s+(?:gegen|auf)\s+" + OBJ, "phrase"),
        ("is-from", r"\s+(?:kommt|stammt)\s+(?:ursprünglich\s+)?aus\s+" + OBJ, "name"),
        ("is-married-to", r"\s+ist\s+mit\s+(?P<obj>[^.!?;,\n…]{1,60}?)\s+verheiratet", "name"),
        ("has", r"\s+hat\s+" + OBJ, "family"),
    ),
    third_verbs=("arbeitet", "wohnt", "lebt", "ist", "kommt", "stammt", "hat"),
    coordinators=("und", "aber", "sondern"),
    discourse=("und", "aber", "also", "ja", "naja", "na", "übrigens", "ach", "oh", "nein", "doch", "jetzt", "auch",
               "genau", "klar", "ok", "okay", "hallo", "hi", "hey", "tatsächlich", "ehrlich", "gesagt", "übrigens"),
    ends=(r"\s+(?:und|aber|oder|also|denn)\s+(?:ich|es|das|wir|sie|er|du|dann|jetzt|auch|noch)\b"
          # a second clause of the same subject, its "ich" left out: "… ein paar Fische und hatte viel Spaß"
          r"|\s+(?:und|aber)\s+(?:hatte|hatten|habe|hab|war|waren|bin|ging|bekam|machte|fand|fühlte)\b"
          r"|\s+(?:und|aber)\s+(?:wie|warum|was)\s"
          r"|\s+(?:aber|weil|da|denn|wenn|obwohl|seitdem|bis|dass|was|wo|wie|sodass)\b|\s+[-–—]+\s+|\s*[-–—]{2,}|\s*[(:\"“„]"),
    trailing=(r"(?:\s+(?:auch|sehr|total|echt|wirklich|gerne?|halt|eben|schon|mittlerweile|inzwischen"
              r"|seit\s+(?:\w+\s+)?jahren))+$"),
    events=("moved-to", "joined", "opened", "lost-their-job-at", "signed-up-for", "married-their"),
    unreal=r"\b(?:nicht|nie|niemals|kein\w*|würde|könnte|vielleicht|hoffe|wünschte|werde|will)\b",
    transient=(r"\b(?:heute|morgen|gestern|gerade|grad|momentan|im\s+moment|jetzt\s+gerade|diese\s+woche"
               r"|dieses\s+wochenende|nicht|nie|niemals|kein\w*|würde|könnte|vielleicht|hoffe|wünschte|werde"
               r"|will)\b"),
    vague=(r"(?:es|das|dies\w*|sie|ihn|ihm|ihr|dich|dir|euch|du|dein\w*|euer|wie|was|wann|wo|warum|wer|so|sehr|alles"
           r"|etwas|nichts|jeden?|mich|mir|uns|sein\w*|noch|nur|schon|auch|gerade|bereit|fertig|dabei|froh|müde"
           r"|ein\s+bisschen|viel\w*|mehr)\b"),
    taste_vague=r"(?:der|die|das|den|dem|dies\w*|dein\w*|euer\w*|es)\b",
    not_nouns=r"(?:bisschen|wenig|paar|bissl|kleiner|kleine|neuer|neue|guter|gute|teil|art)\b",
    family=(r"(?:kind|kinder|sohn|söhne|tochter|töchter|baby|babys|zwillinge|mann|ehemann|frau|ehefrau|partner(?:in)?"
            r"|freund(?:in)?|bruder|brüder|schwester|schwestern|geschwister|enkel(?:kinder|in)?|nichte|neffe"
            r"|hund|hunde|katze|katzen|kater|haustier(?:e)?|meerschweinchen|hamster|kaninchen|pferd(?:e)?"
            r"|vogel|vögel|fisch(?:e)?|\w*allergie|asthma|diabetes|adhs|zöliakie)\b"),
    own_words=r"\b(?:ich|mein\w*|mich|mir)\b",
    verbs=(("liebe", "loves"), ("mag", "likes")),
    rel_verbs=(("arbeitet als", "works as"), ("arbeitet bei", "works at"), ("wohnt in", "lives in"),
               ("liebt", "loves"), ("lieben", "love"), ("mag", "likes"), ("mögen", "like"), ("spielt", "plays"),
               ("spielen", "play")),
)

# --- Spanish, French, Italian, Portuguese --------------------------------------------------
# They drop the subject pronoun: the verb itself ("soy", "trabajo") leads. Professions are
# said without an article ("soy profesora"), like adjectives ("soy feliz"): only words of a
# person's kind count there.

_ES_ADV = r"(?:(?:también|realmente|de\s+hecho|ya|muy|bastante|originalmente|ahora)\s+){0,2}"
_ES_YO = r"(?:yo\s+)?"
_ES_DURABLE = (r"(?:vegan[oa]|vegetarian[oa]|casad[oa]|solter[oa]|divorciad[oa]|viud[oa]|jubilad[oa]|diabétic[oa]"
               r"|celíac[oa]|transgénero|trans|gay|lesbiana|bisexual|queer|zurd[oa]|sord[oa]|ciega|ciego"
               r"|daltónic[oa])")
_ES_KIND = (r"(?:[\w]+(?:ista|or|ora|ero|era|logo|loga|ario|aria)|médic[oa]|abogad[oa]|estudiante|enfermer[oa]"
            r"|madre|padre|ingenier[oa])")

_ES_REL = (r"(?:abuel[oa]s?|madre|padre|mamá|papá|padres|herman[oa]s?|hij[oa]s?|espos[oa]|marido|mujer|novi[oa]"
           r"|perr[oa]|gat[oa]|mascota|tí[oa]|prim[oa]|mejor\s+amig[oa])")

# who one is, said in passing (twenty-fifth round): "Como enfermera, me preocupa …", "Siendo madre soltera, mi …" — a
# person's kind and, after the comma, the speaker's own words; not what one was ("como niña")
_ES_AS_KIND = (r"(?:como|siendo)\s+(?:(?:un|una)\s+)?(?#obj)(?!(?:niñ[oa]s?|adolescente|equipo|grupo|familia)\b)"
               rf"(?P<obj>(?:mujer|hombre|persona|{_ES_KIND})(?:\s+[\w-]+)?)\s*,\s*(?=(?:yo|me|mi|mis)\b)")
_ES_OWN_NOT_IF = _own_not_after(("mi", "mis", "nuestro", "nuestra", "nuestros", "nuestras"), ("si",))

ES: Final = PersonalPack(
    code="es",
    lead=(r"(?:yo|soy|trabajo|vivo|vivimos|tengo|tenemos|me|mi|mis|nuestr[oa]s?|estudio|toco|hablo|nací|crecí|vengo|adoro|amo|perdí"
          r"|abrí|abrimos|conseguí)(?!\w)"),
    first_person=(
        ("is-allergic-to", _ES_YO + r"soy\s+" + _ES_ADV + r"alérgic[oa]\s+(?:a\s+los|a\s+las|al|a)\s+" + OBJ,
         "phrase"),
        ("is-from", _ES_YO + r"soy\s+(?:originalmente\s+)?de\s+" + OBJ, "name"),
        ("is-from", _ES_YO + r"vengo\s+de\s+" + OBJ, "name"),
        ("is", _ES_YO + r"soy\s+" + _ES_ADV + rf"(?P<obj>{_ES_DURABLE})\b", "phrase"),
        # what one cares about most (twenty-fifth round): "soy una apasionada de la fotografía", "me apasiona el jazz"
        ("is-passionate-about", _ES_YO + r"soy\s+(?:un|una)\s+apasionad[oa]\s+(?:de|del|por)\s+"
                                r"(?:(?:la|los|las)\s+)?" + OBJ, "taste"),
        ("is-passionate-about", r"me\s+apasiona(?:n)?\s+(?:mucho\s+)?(?:(?:el|la|los|las)\s+)?" + OBJ, "taste"),
        ("is-a", _ES_YO + r"soy\s+(?:un|una)\s+" + OBJ, "noun"),
        ("is-a", _ES_YO + rf"soy\s+(?P<obj>{_ES_KIND})(?=\s*(?:[.!,;:]|y\b|de\b|en\b|$))", "phrase"),
        ("works-as", _ES_YO + r"trabajo\s+(?:como|de)\s+" + OBJ, "phrase"),
        ("works-at", _ES_YO + r"trabajo\s+(?:en|para)\s+" + OBJ, "phrase"),
        ("lives-in", _ES_YO + r"(?:vivo|vivimos)\s+en\s+" + OBJ, "phrase"),
        ("was-born-in", _ES_YO + r"nací\s+en\s+" + OBJ, "phrase"),
        ("grew-up-in", _ES_YO + r"crecí\s+en\s+" + OBJ, "phrase"),
        ("has", _ES_YO + r"(?:tengo|tenemos)\s+" + OBJ, "family"),
        ("{verb}", r"me\s+(?P<verb>encanta|encantan|gusta|gustan|fascina|fascinan)\s+(?:mucho\s+)?" + OBJ, "taste"),
        ("{verb}", _ES_YO + r"(?P<verb>adoro|amo)\s+" + OBJ, "taste"),
        ("plays", _ES_YO + r"toco\s+(?:el|la)\s+" + OBJ, "phrase"),
        ("studies", _ES_YO + r"estudio\s+" + OBJ, "phrase"),
        # a change in one's life (fourteenth round): moved, joined, opened, lost or got a job
        ("moved-to", _ES_YO + r"(?:me\s+mudé|nos\s+mudamos)\s+a\s+" + OBJ, "name"),
        # a marriage (twenty-fifth round): "me casé con mi novio de toda la vida", "mi novia y yo nos casamos"
        ("married-their", _ES_YO + r"me\s+casé\s+con\s+mi\s+" + OBJ, "phrase"),
        ("married-their", r"mi\s+(?P<obj>novi[oa]|pareja|prometid[oa])\s+y\s+yo\s+nos\s+(?:\w+\s+)?casamos\b",
         "phrase"),
        # a move under way (twenty-fourth round): "me mudo a Valencia el mes que viene"; a course signed up for
        # is "joined" ("me apunté a un curso")
        ("is-moving-to", _ES_YO + r"me\s+(?:mudo|traslado)\s+a\s+" + OBJ, "name"),
        ("joined", _ES_YO + r"me\s+(?:uní|apunté|inscribí)\s+(?:a\s+(?=(?:un|una|la)\s)|al\s+)" + OBJ, "phrase"),
        ("opened", _ES_YO + r"(?:abrí|abrimos)\s+(?=(?:un|una|mi|nuestr[oa])\s)" + OBJ, "phrase"),
        ("lost-their-job-at", _ES_YO + r"perdí\s+mi\s+(?:trabajo|empleo|puesto)\s+en\s+" + OBJ, "phrase"),
        ("got", _ES_YO + r"conseguí\s+(?=(?:un|una)\s+(?:\w+\s+){0,2}?(?:trabajo|empleo|puesto|beca|contrato"
                         r"|prácticas)\b)" + OBJ, "phrase"),
        ("speaks", _ES_YO + r"hablo\s+" + OBJ, "phrase"),
        ("'s-favorite-{noun}-is", r"mis?\s+(?P<noun>\w+)\s+favorit[oa]s?\s+(?:es|son)\s+" + OBJ, "phrase"),
    ),
    anywhere=(
        # what happened to the speaker's own people and stays so (twenty-second round): "mi abuela falleció la
        # semana pasada", "nuestro equipo ganó el campeonato regional"; not after "si"
        ("'s-{rel}", rf"{_ES_OWN_NOT_IF}(?P<rel>{_ES_REL})\s+(?:\w+\s+)?"
                     r"(?P<obj>falleció|murió|fallecieron|murieron)\b", "phrase"),
        ("'s-{rel}-won", rf"{_ES_OWN_NOT_IF}(?P<rel>equipo|grupo|banda|club)\s+(?:\w+\s+)?ganó\s+"
                         r"(?=(?:[\w-]+\s+){0,3}?(?:campeonato|título|premio|copa|medalla|torneo|concurso|final|lugar"
                         r"|puesto|liga)\b)" + OBJ, "phrase"),
    ),
    third_person=(
        ("works-as", r"\s+trabaja\s+(?:como|de)\s+" + OBJ, "phrase"),
        ("works-at", r"\s+trabaja\s+(?:en|para)\s+" + OBJ, "phrase"),
        ("lives-in", r"\s+vive\s+en\s+" + OBJ, "phrase"),
        ("is-allergic-to", r"\s+es\s+alérgic[oa]\s+(?:a\s+los|a\s+las|al|a)\s+" + OBJ, "phrase"),
        ("is-from", r"\s+es\s+de\s+" + OBJ, "name"),
        ("has", r"\s+tiene\s+" + OBJ, "family"),
    ),
    third_verbs=("trabaja", "vive", "es", "tiene"),
    coordinators=("y", "pero", "e"),
    discourse=("y", "pero", "pues", "bueno", "sí", "oye", "además", "también", "ya", "ah", "oh", "vale", "claro",
               "hola", "verdad", "entonces", "mira", "vaya"),
    ends=(r"\s+(?:y|pero|o)\s+(?:yo|me|mi|es|está|lo|la|eso|esto|también|ahora)\b"
          # a second clause of the same subject in the past, its "yo" left out: "… un club y tuve un día genial"
          r"|\s+(?:y|pero)\s+(?:tuve|fui|hice|estuve|pasé|vi|encontré|decidí|era|tenía|fue)\b"
          r"|\s+(?:pero|porque|ya\s+que|aunque|cuando|que|donde|si|mientras|pues)\b|\s+[-–—]+\s+|\s*[(:\"“«]"),
    trailing=r"(?:\s+(?:también|mucho|muchísimo|ya|la\s+verdad|ja(?:ja)+|desde\s+hace\s+\w+(?:\s+años)?))+$",
    events=("moved-to", "joined", "opened", "lost-their-job-at", "got", "married-their"),
    dated=(r"(?:ayer|(?:la\s+)?semana\s+pasada|(?:el\s+)?(?:mes|año|fin\s+de\s+semana)\s+pasado|hace\s+(?:un|una|unos"
           r"|unas|dos|tres|\d+)\s+(?:días?|semanas?|meses|mes|años?)|recientemente)\s*,?\s+"),
    dated_last=("ayer", "pasada", "pasado", "día", "días", "semana", "semanas", "mes", "meses", "año", "años",
                "recientemente"),
    unreal=r"\b(?:no|nunca|jamás|quizás|quizá|tal\s+vez|ojalá|espero|voy\s+a|vamos\s+a|sería|podría)\b",
    transient=(r"\b(?:hoy|mañana|ayer|ahora\s+mismo|esta\s+semana|este\s+fin\s+de\s+semana|en\s+este\s+momento"
               r"|no|nunca|jamás|quizás|quizá|tal\s+vez|ojalá|espero|voy\s+a|vamos\s+a|sería|podría)\b"),
    vague=(r"(?:lo|la|eso|esto|esta|este|estos|estas|tu|tus|te|ti|usted|ustedes|su|sus|que|qué|cómo|como|cuando"
           r"|todo|nada|algo|muy|mucho|tan|aquí|allí|ahí|un\s+poco)\b"),
    taste_vague=r"(?:este|esta|eso|esto|tu|tus)\b",
    not_nouns=r"(?:poco|montón|lío|desastre)\b",
    family=(r"\b(?:hij[oa]s?|niñ[oa]s?|bebés?|gemel[oa]s|marido|espos[oa]|pareja|novi[oa]|herman[oa]s?|perr[oa]s?"
            r"|gat[oa]s?|mascotas?|conejos?|hámster|caballos?|niet[oa]s?|alergias?|asma|diabetes)\b"),
    own_words=r"\b(?:yo|mi|mis|me|conmigo)\b",
    in_passing=(("is-a", _ES_AS_KIND, "phrase"),),
    in_passing_words=("como ", "siendo "),
    verbs=(("encanta", "loves"), ("encantan", "loves"), ("gusta", "likes"), ("gustan", "likes"),
           ("fascina", "loves"), ("fascinan", "loves"), ("adoro", "loves"), ("amo", "loves")),
)

_FR_ADV = r"(?:(?:vraiment|aussi|très|déjà|toujours|moi-même|complètement|plutôt)\s+){0,2}"
_FR_SUIS = r"je\s+suis\s+" + _FR_ADV
_FR_DURABLE = (r"(?:végétarien(?:ne)?|végane?|vegan|mariée?|célibataire|divorcée?|veuf|veuve|fiancée?|enceinte"
               r"|retraitée?|à\s+la\s+retraite|diabétique|cœliaque|transgenre|trans|non-binaire|gay|gai|lesbienne"
               r"|bisexuel(?:le)?|queer|daltonien(?:ne)?|sourde?|aveugle|gauch(?:er|ère))")
_FR_KIND = (r"(?:[\w]+(?:iste|ier|ière|eur|trice|icien|icienne)|médecin|infirmi(?:er|ère)|avocate?|étudiante?"
            r"|enseignante?|professeure?|prof|mère|père|maman|papa)")

_FR_REL = (r"(?:grand-mère|grand-père|grands-parents|mère|père|parents|frère|sœur|fils|fille|mari|femme"
           r"|chien(?:ne)?|chat(?:te)?|oncle|tante|cousin(?:e)?|meilleure?\s+ami(?:e)?)")

# who one is, said in passing (twenty-fifth round): "En tant que femme trans, je …", "Étant infirmière, j'ai …" —
# then the speaker's own words; not "en tant que tel" (as such) nor a group
_FR_AS_KIND = (r"(?:en\s+tant\s+que|étant)\s+(?:(?:un|une)\s+)?(?#obj)(?!(?:tel|telle|tels|telles|groupe|équipe"
               r"|famille|enfants?|ados?|adolescente?s?)\b)(?P<obj>[^.!?;,:\n…]{1,40}?)\s*,\s*"
               r"(?=(?:je|moi|mon|ma|mes)\b|j['’])")
_FR_OWN_NOT_IF = _own_not_after(("mon", "ma", "mes", "notre", "nos"), ("si",))

FR: Final = PersonalPack(
    code="fr",
    lead=r"(?:je|mon|ma|mes|notre|nos|nous)(?!\w)|j['’]",
    first_person=(
        ("is-allergic-to", _FR_SUIS + r"allergique\s+(?:à\s+la|à\s+l['’]|aux|au|à)\s*" + OBJ, "phrase"),
        ("is-from", _FR_SUIS + r"(?:originaire\s+)?(?:de|d['’]|du)\s*" + OBJ, "name"),
        ("is-from", r"je\s+viens\s+(?:de|d['’]|du)\s*" + OBJ, "name"),
        ("is", _FR_SUIS + rf"(?P<obj>{_FR_DURABLE})(?!\w)", "phrase"),
        # what one cares about most (twenty-fifth round): "je suis passionnée de photographie"
        ("is-passionate-about", _FR_SUIS + r"passionn[ée]e?s?\s+(?:par|de|d['’]|du|des)\s*" + OBJ, "taste"),
        ("is-a", _FR_SUIS + r"(?:un|une)\s+" + OBJ, "noun"),
        ("is-a", _FR_SUIS + rf"(?P<obj>{_FR_KIND})(?=\s*(?:[.!,;:]|et\b|de\b|à\b|chez\b|$))", "phrase"),
        ("was-born-in", r"je\s+suis\s+née?\s+(?:à|en|au|aux)\s+" + OBJ, "phrase"),
        ("grew-up-in", r"j['’]ai\s+grandi\s+(?:à|en|au|aux|dans)\s+" + OBJ, "phrase"),
        # a change in one's life (fourteenth round): moved, joined, opened, lost a job
        ("moved-to", r"(?:j['’]ai|nous\s+avons)\s+(?:\w+\s+)?déménagé\s+(?:à|en|au|aux)\s+" + OBJ, "name"),
        # a marriage (twenty-fifth round): "j'ai épousé mon compagnon", "ma copine et moi nous sommes mariés en mai"
        ("married-their", r"j['’]ai\s+(?:\w+\s+)?épousé\s+(?:mon|ma)\s+(?P<obj>[^.!?;,\n…]{1,40}?)(?=\s+(?:l['’]été"
                          r"|l['’]an|l['’]année|le\s+mois|la\s+semaine|en|cet|cette|ce|il\s+y\s+a|hier)\b|\s*[.!?;,…]|$)",
         "phrase"),
        ("married-their", r"(?:mon|ma)\s+(?P<obj>copain|copine|compagnon|compagne|fiancée?|partenaire)\s+et\s+moi"
                          r"\s+(?:nous\s+)?(?:nous\s+sommes\s+mariée?s|avons\s+célébré\s+notre\s+mariage)\b", "phrase"),
        ("joined", r"j['’]ai\s+(?:\w+\s+)?(?:rejoint|intégré)\s+(?=(?:un|une|le|la|l['’])\s*)" + OBJ, "phrase"),
        # under way or just begun (twenty-fourth round): "je déménage à Lyon le mois prochain", "je pars en Irlande
        # pour un semestre", "je me suis inscrite à un cours de poterie"
        ("is-moving-to", r"(?:je|nous)\s+(?:déménage|déménageons|m['’]installe|nous\s+installons)\s+(?:\w+\s+)?"
                         r"(?:à|en|au|aux)\s+" + OBJ, "name"),
        ("is-off-to", r"(?:je|nous)\s+(?:pars|partons)\s+(?:à|en|au|aux)\s+(?=[^.!?;\n…]{1,60}?\bpour\s+(?:un|une|deux"
                      r"|trois|six|l['’])\s*(?:semestre|an|année|ans|mois)\b)" + OBJ, "capitalized"),
        ("signed-up-for", r"(?:je\s+me\s+suis|nous\s+nous\s+sommes)\s+(?:\w+\s+)?inscrite?s?\s+(?:à|au|aux|en)\s+"
                          + OBJ, "phrase"),
        ("opened", r"(?:j['’]ai|nous\s+avons)\s+(?:\w+\s+)?(?:ouvert|fondé|lancé)\s+"
                   r"(?=(?:un|une|mon|ma|notre)\s)" + OBJ, "phrase"),
        ("lost-their-job-at", r"j['’]ai\s+(?:\w+\s+)?perdu\s+mon\s+(?:travail|emploi|boulot|poste)"
                              r"\s+(?:chez|à|au|dans)\s+" + OBJ, "phrase"),
        ("works-as", r"je\s+travaille\s+(?:comme|en\s+tant\s+que)\s+" + OBJ, "phrase"),
        ("works-at", r"je\s+travaille\s+(?:chez|pour)\s+" + OBJ, "phrase"),
        ("works-in", r"je\s+travaille\s+(?:dans|en)\s+" + OBJ, "phrase"),
        ("lives-in", r"(?:j['’]habite|je\s+vis|nous\s+habitons|nous\s+vivons)\s+(?:à|en|au|aux|dans)\s+" + OBJ,
         "phrase"),
        ("has", r"(?:j['’]ai|nous\s+avons)\s+" + OBJ, "family"),
        ("{verb}", r"j['’](?P<verb>adore|aime)\s+(?:bien\s+|beaucoup\s+)?" + OBJ, "taste"),
        ("plays", r"je\s+joue\s+(?:du|de\s+la|de\s+l['’]|au|à\s+la|aux)\s*" + OBJ, "phrase"),
        ("studies", r"j['’]étudie\s+" + OBJ, "phrase"),
        ("speaks", r"je\s+parle\s+" + OBJ, "phrase"),
        ("'s-favorite-{noun}-is", r"(?:mon|ma)\s+(?P<noun>\w+)\s+préférée?\s+(?:est|c['’]est)\s+" + OBJ, "phrase"),
    ),
    anywhere=(
        # what happened to the speaker's own people and stays so (twenty-second round): "ma grand-mère est
        # décédée la semaine dernière", "notre équipe a gagné le championnat régional"; not after "si"
        ("'s-{rel}", rf"{_FR_OWN_NOT_IF}(?P<rel>{_FR_REL})\s+(?:est|sont)\s+(?:\w+\s+)?"
                     r"(?P<obj>décédée?s?|morte?s?)\b", "phrase"),
        ("'s-{rel}-won", rf"{_FR_OWN_NOT_IF}(?P<rel>équipe|groupe|club)\s+a\s+(?:\w+\s+)?(?:gagné|remporté)\s+"
                         r"(?=(?:[\w-]+\s+){0,3}?(?:championnat|titre|prix|coupe|médaille|tournoi|concours|finale"
                         r"|place|ligue)\b)" + OBJ, "phrase"),
    ),
    third_person=(
        ("works-as", r"\s+travaille\s+(?:comme|en\s+tant\s+que)\s+" + OBJ, "phrase"),
        ("works-at", r"\s+travaille\s+(?:chez|pour)\s+" + OBJ, "phrase"),
        ("lives-in", r"\s+(?:habite|vit)\s+(?:à|en|au|aux)\s+" + OBJ, "phrase"),
        ("is-allergic-to", r"\s+est\s+allergique\s+(?:à\s+la|à\s+l['’]|aux|au|à)\s*" + OBJ, "phrase"),
        ("is-from", r"\s+vient\s+(?:de|d['’]|du)\s*" + OBJ, "name"),
        ("has", r"\s+a\s+" + OBJ, "family"),
    ),
    third_verbs=("travaille", "habite", "vit", "est", "vient", "a"),
    coordinators=("et", "mais"),
    discourse=("et", "mais", "alors", "bon", "oui", "ouais", "ah", "oh", "bah", "enfin", "sinon", "moi", "perso",
               "aussi", "salut", "coucou", "donc", "d'ailleurs", "bref", "sinon"),
    ends=(r"\s+(?:et|mais|ou)\s+(?:je|j['’]|il|elle|c['’]est|ça|on|nous|vous|ils|elles)\b"
          r"|\s+(?:mais|parce\s+que|car|puisque|quand|lorsque|si|qui|que|où|depuis\s+que|bien\s+que|alors\s+que"
          r"|pendant\s+que)\b|\s+[-–—]+\s+|\s*[(:\"“«]"),
    trailing=r"(?:\s+(?:aussi|beaucoup|vraiment|bien|trop|lol|mdr|ha(?:ha)+|depuis\s+\w+(?:\s+ans)?))+$",
    events=("moved-to", "joined", "opened", "lost-their-job-at", "signed-up-for", "married-their"),
    dated=(r"(?:hier|la\s+semaine\s+dernière|le\s+(?:mois|week-end)\s+dernier|l['’]année\s+dernière|il\s+y\s+a\s+(?:un|une"
           r"|deux|trois|quelques|\d+)\s+(?:jours?|semaines?|mois|ans?)|récemment)\s*,?\s+"),
    dated_last=("hier", "dernière", "dernier", "jour", "jours", "semaine", "semaines", "mois", "an", "ans",
                "récemment"),
    unreal=(r"(?:\b(?:ne|n['’]|jamais|peut-être|espère|j['’]espère|voudrais|aimerais|vais|allons|serait|pourrait)\b"
            r"|\bpas\b)"),
    transient=(r"(?:\b(?:aujourd['’]hui|demain|hier|ce\s+soir|ce\s+matin|cette\s+semaine|ce\s+week-end"
               r"|en\s+ce\s+moment|ne|pas|jamais|peut-être|vais|va|serais|pourrais|voudrais)\b|\bn['’]"
               r"|\bj['’]espère)"),
    vague=(r"(?:ça|cela|ce|cet|cette|ces|tu|te|toi|ton|ta|tes|vous|votre|vos|que|qui|quoi|comment|quand|tout|rien"
           r"|quelque|très|trop|si|de|du|des|avec|un\s+peu)\b"),
    taste_vague=r"(?:ce|cet|cette|ces|ça|ton|ta|tes|votre|vos)\b",
    not_nouns=r"(?:peu|tas|bordel|désastre)\b",
    family=(r"\b(?:enfants?|fils|filles?|bébés?|jumeaux|jumelles|mari|épouse|époux|conjointe?|compagnon|compagne"
            r"|copain|copine|frères?|sœurs?|soeurs?|chiens?|chats?|chattes?|animal|animaux|lapins?|hamsters?"
            r"|chevaux|cheval|petits-enfants|allergies?|asthme|diabète)\b"),
    own_words=r"(?:\b(?:je|me|moi|mon|ma|mes)\b|\b[jm]['’])",
    in_passing=(("is-a", _FR_AS_KIND, "phrase"),),
    in_passing_words=("en tant que", "étant "),
    verbs=(("adore", "loves"), ("aime", "likes")),
)

_IT_ADV = r"(?:(?:anche|davvero|molto|proprio|già|originariamente)\s+){0,2}"
_IT_SONO = r"(?:io\s+)?sono\s+" + _IT_ADV
_IT_DURABLE = (r"(?:vegetarian[oa]|vegan[oa]?|sposat[oa]|single|divorziat[oa]|vedov[oa]|fidanzat[oa]|incinta"
               r"|in\s+pensione|pensionat[oa]|diabetic[oa]|celiac[oa]|transgender|trans|gay|lesbica|bisessuale"
               r"|queer|mancin[oa]|sord[oa]|ciec[oa]|daltonic[oa])")
_IT_KIND = (r"(?:[\w]+(?:ista|tore|trice|iere|iera|ologo|ologa)|medico|avvocat[oa]|ingegnere|studente|studentessa"
            r"|insegnante|professore|professoressa|mamma|papà)")

IT: Final = PersonalPack(
    code="it",
    lead=r"(?:io|sono|lavoro|vivo|viviamo|abito|abitiamo|ho|abbiamo|mi|il|la|amo|adoro|studio|suono|parlo|gioco)(?!\w)",
    first_person=(
        ("is-allergic-to", _IT_SONO + r"allergic[oa]\s+(?:a|al|alla|alle|ai|agli|all['’])\s*" + OBJ, "phrase"),
        ("is-from", _IT_SONO + r"(?:originari[oa]\s+)?(?:di|del|della)\s+" + OBJ, "name"),
        ("is", _IT_SONO + rf"(?P<obj>{_IT_DURABLE})\b", "phrase"),
        ("is-a", _IT_SONO + r"(?:un|una|uno|un['’])\s*" + OBJ, "noun"),
        ("is-a", _IT_SONO + rf"(?P<obj>{_IT_KIND})(?=\s*(?:[.!,;:]|e\b|di\b|a\b|$))", "phrase"),
        ("was-born-in", r"(?:io\s+)?sono\s+nat[oa]\s+(?:a|in)\s+" + OBJ, "phrase"),
        ("grew-up-in", r"(?:io\s+)?sono\s+cresciut[oa]\s+(?:a|in)\s+" + OBJ, "phrase"),
        ("works-as", r"(?:io\s+)?lavoro\s+come\s+" + OBJ, "phrase"),
        ("works-at", r"(?:io\s+)?lavoro\s+(?:in|presso|per|da|alla|al|nella|nel)\s+" + OBJ, "phrase"),
        ("lives-in", r"(?:io\s+)?(?:vivo|viviamo|abito|abitiamo)\s+(?:a|in|ad)\s+" + OBJ, "phrase"),
        ("has", r"(?:io\s+)?(?:ho|abbiamo)\s+" + OBJ, "family"),
        ("{verb}", r"mi\s+(?P<verb>piace|piacciono)\s+(?:molto\s+|tanto\s+)?" + OBJ, "taste"),
        ("{verb}", r"(?:io\s+)?(?P<verb>amo|adoro)\s+" + OBJ, "taste"),
        ("plays", r"(?:io\s+)?suono\s+(?:il|la|lo|l['’])\s*" + OBJ, "phrase"),
        ("studies", r"(?:io\s+)?studio\s+" + OBJ, "phrase"),
        ("speaks", r"(?:io\s+)?parlo\s+" + OBJ, "phrase"),
        ("'s-favorite-{noun}-is", r"(?:il\s+mio|la\s+mia)\s+(?P<noun>\w+)\s+preferit[oa]\s+è\s+" + OBJ, "phrase"),
    ),
    third_person=(
        ("works-as", r"\s+lavora\s+come\s+" + OBJ, "phrase"),
        ("works-at", r"\s+lavora\s+(?:in|presso|per|da)\s+" + OBJ, "phrase"),
        ("lives-in", r"\s+(?:vive|abita)\s+(?:a|in|ad)\s+" + OBJ, "phrase"),
        ("is-allergic-to", r"\s+è\s+allergic[oa]\s+(?:a|al|alla|alle|ai|agli|all['’])\s*" + OBJ, "phrase"),
        ("is-from", r"\s+(?:è|viene)\s+(?:di|da)\s+" + OBJ, "name"),
        ("has", r"\s+ha\s+" + OBJ, "family"),
    ),
    third_verbs=("lavora", "vive", "abita", "è", "viene", "ha"),
    coordinators=("e", "ma", "ed"),
    discourse=("e", "ma", "allora", "beh", "sì", "ah", "oh", "comunque", "anche", "ciao", "ok", "dunque", "quindi",
               "poi", "insomma", "guarda", "senti"),
    ends=(r"\s+(?:e|ma|o)\s+(?:io|mi|è|lo|la|questo|quello|sono|ho)\b"
          r"|\s+(?:ma|perché|poiché|anche\s+se|quando|se|che|dove|mentre|finché)\b|\s+[-–—]+\s+|\s*[(:\"“«]"),
    trailing=r"(?:\s+(?:anche|molto|tanto|davvero|proprio|ah(?:ah)+|da\s+\w+\s+anni))+$",
    transient=(r"\b(?:oggi|domani|ieri|stasera|stamattina|questa\s+settimana|questo\s+weekend"
               r"|in\s+questo\s+momento|adesso|non|mai|forse|magari|spero|vorrei|potrei|sarei|sto\s+per)\b"),
    vague=(r"(?:lo|la|li|le|questo|questa|quello|quella|ciò|tu|te|ti|tuo|tua|tuoi|tue|voi|che|cosa|come|quando"
           r"|tutto|niente|qualcosa|molto|troppo|così|qui|lì|un\s+po['’])\b"),
    taste_vague=r"(?:questo|questa|quello|quella|tuo|tua|tuoi|tue)\b",
    not_nouns=r"(?:po|casino|disastro)\b",
    family=(r"\b(?:figli[oae]?|bambin[oiae]|neonat[oa]|gemelli|marito|moglie|compagn[oa]|fidanzat[oa]|fratell[oi]"
            r"|sorell[ae]|can[ei]|gatt[oiae]|animal[ei]|conigli[o]?|criceto|cavall[oi]|nipoti|allergi[ae]|asma"
            r"|diabete)\b"),
    own_words=r"\b(?:io|mi|me|mio|mia|miei|mie)\b",
    verbs=(("piace", "likes"), ("piacciono", "likes"), ("amo", "loves"), ("adoro", "loves")),
)

_PT_ADV = r"(?:(?:também|muito|realmente|bem|originalmente)\s+){0,2}"
_PT_SOU = r"(?:eu\s+)?sou\s+" + _PT_ADV
_PT_DURABLE = (r"(?:vegetarian[oa]|vegan[oa]?|casad[oa]|solteir[oa]|divorciad[oa]|viúv[oa]|noiv[oa]|aposentad[oa]"
               r"|diabétic[oa]|celíac[oa]|transgênero|transgénero|trans|gay|lésbica|bissexual|queer|canhot[oa]"
               r"|surd[oa]|ceg[oa]|daltônic[oa])")
_PT_KIND = (r"(?:[\w]+(?:ista|or|ora|eiro|eira|logo|loga)|médic[oa]|advogad[oa]|estudante|engenheir[oa]|mãe"
            r"|pai)")

PT: Final = PersonalPack(
    code="pt",
    lead=(r"(?:eu|sou|trabalho|moro|moramos|vivo|tenho|temos|meu|minha|adoro|amo|gosto|estudo|toco|falo|nasci"
          r"|cresci|venho)(?!\w)"),
    first_person=(
        ("is-allergic-to", _PT_SOU + r"alérgic[oa]\s+(?:a|ao|à|aos|às)\s+" + OBJ, "phrase"),
        ("is-from", _PT_SOU + r"(?:originalmente\s+)?(?:de|do|da|dos|das)\s+" + OBJ, "name"),
        ("is-from", r"(?:eu\s+)?venho\s+(?:de|do|da)\s+" + OBJ, "name"),
        ("is", _PT_SOU + rf"(?P<obj>{_PT_DURABLE})\b", "phrase"),
        ("is-a", _PT_SOU + r"(?:um|uma)\s+" + OBJ, "noun"),
        ("is-a", _PT_SOU + rf"(?P<obj>{_PT_KIND})(?=\s*(?:[.!,;:]|e\b|de\b|em\b|$))", "phrase"),
        ("works-as", r"(?:eu\s+)?trabalho\s+como\s+" + OBJ, "phrase"),
        ("works-at", r"(?:eu\s+)?trabalho\s+(?:na|no|em|para|numa|num)\s+" + OBJ, "phrase"),
        ("lives-in", r"(?:eu\s+)?(?:moro|moramos|vivo)\s+(?:em|no|na|nos|nas)\s+" + OBJ, "phrase"),
        ("was-born-in", r"(?:eu\s+)?nasci\s+(?:em|no|na)\s+" + OBJ, "phrase"),
        ("grew-up-in", r"(?:eu\s+)?cresci\s+(?:em|no|na)\s+" + OBJ, "phrase"),
        ("has", r"(?:eu\s+)?(?:tenho|temos)\s+" + OBJ, "family"),
        ("{verb}", r"(?:eu\s+)?(?P<verb>adoro|amo)\s+" + OBJ, "taste"),
        ("{verb}", r"(?:eu\s+)?(?P<verb>gosto)\s+(?:muito\s+)?(?:de|do|da|dos|das)\s+" + OBJ, "taste"),
        ("plays", r"(?:eu\s+)?toco\s+(?:o|a)\s+" + OBJ, "phrase"),
        ("studies", r"(?:eu\s+)?estudo\s+" + OBJ, "phrase"),
        ("speaks", r"(?:eu\s+)?falo\s+" + OBJ, "phrase"),
        ("'s-favorite-{noun}-is", r"(?:o\s+)?(?:meu|minha)\s+(?P<noun>\w+)\s+favorit[oa]\s+é\s+" + OBJ, "phrase"),
    ),
    third_person=(
        ("works-as", r"\s+trabalha\s+como\s+" + OBJ, "phrase"),
        ("works-at", r"\s+trabalha\s+(?:na|no|em|para)\s+" + OBJ, "phrase"),
        ("lives-in", r"\s+(?:mora|vive)\s+(?:em|no|na)\s+" + OBJ, "phrase"),
        ("is-allergic-to", r"\s+é\s+alérgic[oa]\s+(?:a|ao|à|aos|às)\s+" + OBJ, "phrase"),
        ("is-from", r"\s+é\s+(?:de|do|da)\s+" + OBJ, "name"),
        ("has", r"\s+tem\s+" + OBJ, "family"),
    ),
    third_verbs=("trabalha", "mora", "vive", "é", "tem"),
    coordinators=("e", "mas"),
    discourse=("e", "mas", "então", "bem", "sim", "ah", "oh", "olha", "aliás", "também", "oi", "olá", "ok", "pois",
               "enfim", "né"),
    ends=(r"\s+(?:e|mas|ou)\s+(?:eu|me|é|isso|isto|ele|ela|estou|tenho)\b"
          # a second clause of the same subject in the past, its "eu" left out: "… um clube e tive um dia ótimo"
          r"|\s+(?:e|mas)\s+(?:tive|fui|fiz|estive|passei|vi|encontrei|decidi|era|tinha|foi)\b"
          r"|\s+(?:mas|porque|pois|embora|quando|se|que|onde|enquanto)\b|\s+[-–—]+\s+|\s*[(:\"“«]"),
    trailing=r"(?:\s+(?:também|muito|demais|mesmo|ha(?:ha)+|kkk+|há\s+\w+\s+anos))+$",
    transient=(r"\b(?:hoje|amanhã|ontem|esta\s+semana|este\s+fim\s+de\s+semana|neste\s+momento|agora|não|nunca"
               r"|jamais|talvez|espero|vou|gostaria|poderia|seria)\b"),
    vague=(r"(?:isso|isto|aquilo|você|vocês|te|ti|teu|tua|seu|sua|que|como|quando|tudo|nada|algo|muito|tão|aqui|ali"
           r"|um\s+pouco)\b"),
    taste_vague=r"(?:isso|isto|aquilo|teu|tua|seu|sua)\b",
    not_nouns=r"(?:pouco|monte|bagunça|desastre)\b",
    family=(r"\b(?:filh[oa]s?|crianças?|bebês?|gêmeos|gémeos|marido|espos[oa]|companheir[oa]|namorad[oa]|irmãos?"
            r"|irmãs?|cachorros?|cães|cão|gat[oa]s?|animais|animal|coelhos?|hamsters?|cavalos?|net[oa]s?"
            r"|alergias?|asma|diabetes)\b"),
    own_words=r"\b(?:eu|me|mim|meu|minha|meus|minhas|comigo)\b",
    verbs=(("adoro", "loves"), ("amo", "loves"), ("gosto", "likes")),
)

# --- Russian -------------------------------------------------------------------------------

_RU_KIND = (r"(?:врач|учитель|учительница|инженер|программист|программистка|студент|студентка|медсестра|юрист"
            r"|дизайнер|художник|художница|музыкант|менеджер|бухгалтер|мама|папа|пенсионер|пенсионерка)")

RU: Final = PersonalPack(
    code="ru",
    lead=r"(?:я|мой|моя|мои|моё|у\s+меня|мне|мы)(?!\w)",
    first_person=(
        ("is-allergic-to", r"у\s+меня\s+аллергия\s+на\s+" + OBJ, "phrase"),
        ("lives-in", r"(?:я|мы)\s+(?:сейчас\s+|уже\s+)?(?:живу|живём|живем)\s+(?:в|во|на)\s+" + OBJ, "phrase"),
        ("works-at", r"я\s+(?:сейчас\s+)?работаю\s+(?:в|во|на)\s+" + OBJ, "phrase"),
        ("works-as", r"я\s+(?:сейчас\s+)?работаю\s+(?P<obj>[а-яё]+(?:ом|ем|ём|ой|ей))(?!\w)", "phrase"),
        ("is-from", r"я\s+(?:родом\s+)?из\s+" + OBJ, "name"),
        ("has", r"у\s+(?:меня|нас)\s+(?:есть\s+)?" + OBJ, "family"),
        ("{verb}", r"я\s+(?:очень\s+|просто\s+)?(?P<verb>люблю|обожаю)\s+" + OBJ, "taste"),
        ("{verb}", r"мне\s+(?:очень\s+)?(?P<verb>нравится|нравятся)\s+" + OBJ, "taste"),
        ("plays", r"я\s+играю\s+(?:на|в)\s+" + OBJ, "phrase"),
        ("studies", r"я\s+(?:изучаю|учусь\s+на)\s+" + OBJ, "phrase"),
        ("is", r"я\s+(?P<obj>веган|веганка|вегетарианец|вегетарианка|замужем|женат|холост|разведена?|разведён"
               r"|на\s+пенсии|беременна|диабетик|трансгендер|гей|лесбиянка|бисексуал(?:ка)?|левша)(?!\w)", "phrase"),
        ("is-a", r"я\s+(?:[-–—]\s+|по\s+профессии\s+)?" + rf"(?P<obj>{_RU_KIND})(?!\w)", "phrase"),
        ("'s-favorite-{noun}-is", r"(?:мой|моя|моё|мои)\s+любим(?:ый|ая|ое|ые)\s+(?P<noun>\w+)\s+(?:[-–—]|это)\s+"
                                  + OBJ, "phrase"),
    ),
    coordinators=("и", "а", "но"),
    discourse=("и", "а", "но", "ну", "да", "вот", "кстати", "вообще", "привет", "ой", "ах", "ок", "слушай", "честно",
               "так", "впрочем"),
    ends=(r"\s+(?:и|а|но)\s+(?:я|это|мне|он|она|мы|у)(?!\w)|\s*,\s*(?:но|а|и|потому|что|который|которая|которые"
          r"|когда|если|где|чтобы)(?!\w)|\s+(?:потому\s+что|так\s+как|когда|если|хотя|пока)(?!\w)"
          r"|\s+[-–—]+\s+|\s*[(:\"“«]"),
    trailing=r"(?:\s+(?:тоже|очень|сильно|ещё|уже|просто|ха(?:ха)+))+$",
    transient=(r"(?<!\w)(?:сегодня|завтра|вчера|на\s+этой\s+неделе|в\s+эти\s+выходные|не|нет|никогда|может"
               r"|возможно|наверное|надеюсь|хочу|хотел|хотела|буду|собираюсь)(?!\w)"),
    vague=(r"(?:это|этот|эта|эти|то|ты|тебя|тебе|твой|твоя|твои|вас|вам|ваш|что|как|когда|всё|все|ничего|очень"
           r"|так|тут|там)(?!\w)"),
    taste_vague=r"(?:это|этот|эта|эти|твой|твоя|твои|ваш)(?!\w)",
    family=(r"(?:дет|ребён|ребен|сын|дочь|дочк|дочер|муж|жена|парен|девушк|брат|сестр|собак|пёс|пес|кот|кошк|питом"
            r"|хомяк|кролик|лошад|внук|внучк|близнец|двое|трое|аллерги|астм|диабет)"),
    own_words=r"(?<!\w)(?:я|мне|меня|мой|моя|мои|моё|мной)(?!\w)",
    verbs=(("люблю", "loves"), ("обожаю", "loves"), ("нравится", "likes"), ("нравятся", "likes")),
)

# --- Japanese, Korean, Chinese --------------------------------------------------------------
# Japanese and Korean put the verb last: the statement is found at its verb ("…に住んでいます",
# "…에 살아요") and its object read backwards up to the topic, which must be the speaker
# ("私は", "저는") or absent. Chinese leads with "我".

JA: Final = PersonalPack(
    code="ja",
    lead=r"(?!)",
    first_person=(),
    before=(
        ("lives-in", r"に住んで(?:います|いる|おります|ます)", "phrase"),
        ("works-as", r"として働いて(?:います|いる|おります)", "phrase"),
        ("works-at", r"(?<!と)(?:で働いて|に勤めて)(?:います|いる|おります)", "phrase"),
        ("is-allergic-to", r"(?:の)?アレルギー(?:です|があります|がある|持ちです)", "phrase"),
        ("is-from", r"(?:の)?出身(?:です|だ)", "phrase"),
        ("{verb}", r"が(?P<verb>大好き|好き)(?:です|だ|なんです)?(?=[。！!、]|$)", "taste"),
        ("has", r"が(?:\d+|一|二|三|四|五)?(?:人|匹|頭|羽)?(?:います|いる)(?=[。！!、]|$)", "family"),
        ("has", r"を飼って(?:います|いる)", "phrase"),
        ("plays", r"を弾(?:きます|く|いています)", "phrase"),
        ("studies", r"を(?:勉強|専攻)して(?:います|いる)", "phrase"),
        ("is-a", r"(?:です|だ)(?=[。！!、]|$)", "kind"),
    ),
    transient=r"(?:今日|明日|昨日|今週|今夜|ません|ない|たい|かも|でしょう)",
    vague=r"(?:これ|それ|あれ|あなた|君|何|どこ)",
    taste_vague=r"(?:これ|それ|あれ|あなた|君)",
    family=r"(?:子供|子ども|息子|娘|夫|妻|主人|旦那|彼氏|彼女|兄|姉|弟|妹|犬|猫|ペット|孫|双子)",
    own_words=r"(?:私|わたし|僕|ぼく|俺|おれ)",
    verbs=(("好き", "likes"), ("大好き", "loves")),
    kind=(r"(?:者|師|員|生|人|家|士|手|官|ナー|ター|ーマー|ニア|スト|婦|夫|ママ|パパ|母|父)$"),
    before_stop="はがもを、。！？",
    topic=r"(?:私|わたし|僕|ぼく|俺|おれ|うち|自分)(?:は|も)",
    spaced=False,
)

KO: Final = PersonalPack(
    code="ko",
    lead=r"(?!)",
    first_person=(),
    before=(
        ("lives-in", r"에\s*살(?:아요|고\s*있어요|고\s*있습니다|아|습니다|고\s*있어)", "phrase"),
        ("works-at", r"에서\s*일(?:해요|하고\s*있어요|합니다|해|하고\s*있습니다)", "phrase"),
        ("works-as", r"(?:으로|로)\s*일(?:해요|하고\s*있어요|합니다|해)", "phrase"),
        ("is-allergic-to", r"\s*알레르기가\s*있(?:어요|습니다|어)", "phrase"),
        ("is-from", r"\s*출신(?:이에요|입니다|이야|예요)", "phrase"),
        ("{verb}", r"(?:을|를)\s*(?:정말\s*|진짜\s*|아주\s*|너무\s*)?(?P<verb>좋아해요|좋아합니다|좋아해|사랑해요)",
         "taste"),
        ("has", r"(?:이|가)\s*(?:한|두|세|네|다섯|\d+)\s*(?:명|마리)\s*있(?:어요|습니다|어)", "family"),
        ("has", r"(?:을|를)\s*키(?:워요|우고\s*있어요|웁니다)", "phrase"),
        ("plays", r"(?:을|를)\s*(?:쳐요|칩니다|연주해요)", "phrase"),
        ("is-a", r"(?:입니다|이에요|예요|이야)(?=[.!?。]|$|\s)", "kind"),
    ),
    transient=r"(?:오늘|내일|어제|이번\s*주|지금|않|안\s|못|싶|것\s*같)",
    vague=r"(?:이거|그거|저거|이것|그것|당신|너|뭐)",
    taste_vague=r"(?:이거|그거|저거|이것|그것|당신|너)",
    family=r"(?:아이|애|아들|딸|남편|아내|와이프|남자친구|여자친구|형|오빠|누나|언니|동생|강아지|개|고양이|반려동물|손주|쌍둥이)",
    own_words=r"(?:^|\s)(?:저|나|제|내)(?:\s|$)",
    verbs=(("좋아해요", "likes"), ("좋아합니다", "likes"), ("좋아해", "likes"), ("사랑해요", "loves")),
    kind=(r"(?:의사|선생님|교사|학생|엔지니어|간호사|회사원|변호사|디자이너|개발자|프로그래머|주부|엄마|아빠|사람)$"),
    before_stop=" ",
    topic=r"(?:저는|나는|제가|내가|저도|나도|전|난)",
)

_ZH_OBJ = r"(?P<obj>[^。！？!?.,，、；;\n\s]{1,20}?)(?=[。！？!?.,，、；;\n\s]|$|了|的时候)"

ZH: Final = PersonalPack(
    code="zh",
    lead=r"我",
    first_person=(
        ("is-from", r"我(?:是|来自)(?P<obj>[^。！？!?.,，、；;\n\s的一个好坏大小老新]{1,4}?)人"
                    r"(?=[。！？!?.,，、；;\n\s]|$)", "phrase"),
        ("is-from", r"我来自" + _ZH_OBJ, "phrase"),
        ("lives-in", r"我(?:们)?(?:现在)?住在" + _ZH_OBJ, "phrase"),
        ("works-at", r"我(?:现在)?在(?P<obj>[^。！？!?.,，、；;\n\s]{1,20}?)(?:工作|上班)", "phrase"),
        ("works-as", r"我(?:现在)?(?:当|做)" + _ZH_OBJ, "kind"),
        ("is-allergic-to", r"我对(?P<obj>[^。！？!?.,，、；;\n\s]{1,12}?)过敏", "phrase"),
        ("has", r"我(?:们)?(?:家)?有" + _ZH_OBJ, "family"),
        ("{verb}", r"我(?:很|非常|特别|真的)?(?P<verb>喜欢|爱)" + _ZH_OBJ, "taste"),
        ("plays", r"我(?:会)?弹" + _ZH_OBJ, "phrase"),
        ("'s-favorite-{noun}-is", r"我最喜欢的(?P<noun>[^。！？!?.,，、；;\n\s]{1,4}?)是" + _ZH_OBJ, "phrase"),
        ("is-a", r"我是(?:一[个名位])?" + _ZH_OBJ, "kind"),
    ),
    ends=r"[，,、；;]|但是|因为|所以|而且|不过|可是",
    transient=r"(?:今天|明天|昨天|这周|不|没|别|可能|也许|想|要|打算)",
    vague=r"(?:你|这|那|它|什么|怎么)",
    taste_vague=r"(?:你|这|那|它)",
    family=r"(?:孩子|儿子|女儿|老公|丈夫|老婆|妻子|男朋友|女朋友|哥哥|姐姐|弟弟|妹妹|狗|猫|宠物|孙子|双胞胎|过敏|哮喘|糖尿病)",
    own_words=r"我",
    verbs=(("喜欢", "likes"), ("爱", "loves")),
    kind=(r"(?:医生|老师|教师|学生|工程师|护士|律师|设计师|程序员|会计|司机|妈妈|爸爸|母亲|父亲|家|员|师|者)$"),
    spaced=False,
)

PACKS: Final[dict[str, PersonalPack]] = {pack.code: pack for pack in (EN, DE, ES, FR, IT, PT, RU, JA, KO, ZH)}
