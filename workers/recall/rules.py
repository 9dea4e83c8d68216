"""Rules: standing instructions to the agent, told from sentences that merely say always or never.

The semantic-memory design's classifier counts a rule for any sentence with "must",
"always", "never" or "don't", so in chat "It must be really awesome!", "Never say never!",
"That's a memory I'll never forget." and "I'm so glad we can always be there for each other"
were rules, shown under the briefing's Rules & Key Memories (issue 37). A rule is an
instruction that stands — said to the agent or as the team's norm:

* an imperative that opens its sentence with always or never ("Always answer in German",
  "Never deploy on Fridays", "Antworte immer auf Deutsch", "Ne déploie jamais le vendredi"),
  or a prohibition ("Don't push to main");
* one said to the listener with a modal ("You must always validate input");
* a standing scope ("From now on …", "Going forward …", "ab sofort", "désormais", "今後は");
* a reminder that opens its sentence ("Remember that the staging DB is shared", "Merk dir:");
* a norm of a thing, not of a person ("Tests must be green before a merge", "Authentication is
  required for all API endpoints", "Wir dürfen niemals …");
* an explicit marker ("Rule: …", "Important: …", "forbidden", "mandatory").

Not a rule: a question, encouragement ("never give up", "always believe in yourself", "never
say never"), a speaker's own resolution ("From now on I'll run every day"), a guess ("It must
be awesome", "That must have been tough"), reminiscing ("Remember that time we …").

Each language's families are data (``RULE_PACKS``); a sentence's score is the number of
families that fire in it (the classifier's rule score).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

_A: Final = "['’]"


@dataclass(frozen=True, slots=True)
class RulePack:
    """One language's rule phrases, as regex sources on the lower-cased sentence.

    ``imperative``, ``remember`` and ``lead_in`` are matched at the sentence's start (after
    the ``discourse`` words); the others anywhere in it."""

    code: str
    imperative: tuple[str, ...]
    remember: tuple[str, ...] = ()
    addressed: tuple[str, ...] = ()
    scope: tuple[str, ...] = ()
    norm: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()  # encouragement that reads like an imperative: no rule
    personal: tuple[str, ...] = ()  # the speaker's own resolution or hope: no standing scope
    lead_in: str = ""  # "And remember our rule:" — a reminder, then the rule itself
    discourse: str = ""  # words a sentence may open with before its imperative ("and", "please")


# --- English -------------------------------------------------------------------------------

_EN_NOT_VERB = (r"(?:a|an|the|so|such|too|my|your|our|their|this|that|these|those|here|there|fun|great|good|nice"
                r"|happy|glad|welcome|easy|enough|been|had|was|were|did|thought|knew|imagined|heard|seen|again"
                r"|gonna|going|ever|once|before|mind|really|just|i|you|we|they|it|he|she|up|down|in|on|out|off"
                r"|ready|saw|knew|felt|got|went|came|made|said|took|found|told|gave|ran|[a-z]+ing|[a-z]+[^e]ed)\b")
_EN_DONT_OK = (r"(?:worry|forget\s+to|be\b|feel|stress|hesitate|mind|give\s+up|let|apologi[sz]e|get\s+me|panic|sweat"
               r"|even|you|we|they|i\b|know|think|get|have|care|want|need|like|love|miss|blame|rush|overdo|overthink"
               r"|push\s+yourself|beat\s+yourself|take\s+it|lose|listen|compare|doubt|see|remember|understand|mean"
               r"|say|tell\s+me|judge|quit|look\s+back|wait|hold\s+back|sell\s+yourself)")

_EN_AT_HAND = r"(?:this|that|these|those|there|here|it|them|my|me|him|her|us|now|yet)\b"

EN: Final = RulePack(
    code="en",
    discourse=r"(?:(?:and|also|so|but|oh|ok|okay|please|just|btw|fyi|hey|now|then|remember)[,:]?\s+)*",
    lead_in=(rf"(?:(?:always\s+)?remember|don{_A}?t\s+forget|keep\s+in\s+mind|note|reminder|important|rule|policy"
             r"|heads\s+up)(?:[,]?\s+(?:our|the|this|my|that|team)?\s*(?:rule|policy|principle))?\s*:\s*"),
    imperative=(
        rf"(?:always|never|never\s+ever|don{_A}t\s+ever|do\s+not\s+ever)\s+(?!{_EN_NOT_VERB})[a-z]+",
        # a prohibition that stands, not one about what is at hand ("don't fill these out", "don't sit there",
        # "Don't destroy my giraffe") nor a sentence begun again ("Don't don't say")
        rf"(?:don{_A}t|do\s+not)\s+(?!{_EN_DONT_OK}|do\b|don)(?!(?:\S+\s+){{0,3}}?{_EN_AT_HAND})[a-z]+",
    ),
    remember=(
        rf"(?:please\s+)?(?:remember|keep\s+in\s+mind|note|don{_A}?t\s+forget|never\s+forget)(?:\s+that\b|\s*:)"
        r"(?!\s+(?:time|day|night|trip|moment|summer|weekend|one)\b)",
    ),
    addressed=(
        r"\byou\s+(?:should|must|need\s+to|have\s+to|will|shall|are\s+to)\s+(?:always|never)\s+"
        r"(?!(?:be\s+(?:so|too|alone|afraid|my)|been|know|forget|guess|believe|stop|give\s+up|lose|fail|cease)\b)[a-z]+",
        rf"\byou\s+(?:must\s+not|mustn{_A}t|shall\s+not|are\s+not\s+allowed\s+to)\s+[a-z]+",
    ),
    # "in the future" and "by default" tell of what will be or what a thing does ("So in the future", "the
    # system will give 53.66 by default"); they scope an instruction only where it opens the sentence
    scope=(r"\b(?:from\s+now\s+on|going\s+forward|from\s+today\s+on|henceforth|as\s+a\s+(?:rule|policy))\b|^(?:in\s+(?:the\s+)?future|by\s+default)\s*,",),
    norm=(
        # a thing's norm: "Tests must be green", "The API must return JSON", "Authentication is required"
        # the subject is a thing: no person ("Then we shall start with a presentation" is a meeting's plan)
        r"^(?:(?:all|every|each|any|the|our|no)\s+)?(?!(?:it|that|this|he|she|they|you|i|there|what|which|who|we"
        r"|everyone|everything|someone|something|things|life|one|your|my|his|her|their|must|then|so|and|now|well"
        r"|but|ok|okay|also|um|uh|er|yeah|oh|right|just|maybe|perhaps)\b)[a-z][\w-]*"
        r"(?:\s+(?!(?:an?|we|i|you|they|he|she|it)\b)[a-z][\w-]*){0,3}?\s+(?:must(?:\s+not|n['’]t)?|shall(?:\s+not)?|(?:is|are)\s+(?:not\s+)?"
        r"(?:allowed|permitted|required|mandatory|forbidden|prohibited)|may\s+not)\s+(?!have\b|['’]ve\b"
        r"|be\s+(?:so|really|very|such|a|an|the|nice|great|awesome|amazing|fun|hard|tough|cool|exciting|lovely"
        r"|beautiful|wonderful|incredible|scary|crazy|tiring|worth|proud|happy)\b)",
        r"^we\s+(?:must|should|have\s+to|need\s+to|shall)\s+(?:always|never|not)\s+[a-z]+",
    ),
    markers=(r"\b(?:rule|policy|important|critical|constraint|invariant)\s*:",
             # said of a thing ("force-pushing is forbidden"), not told of a deed ("we have prohibited 1,500 firearms")
             r"\b(?:is|are|strictly|absolutely)\s+(?:strictly\s+)?(?:forbidden|mandatory|prohibited)\b"
             r"|^(?:forbidden|mandatory|prohibited)\b"),
    advice=(
        r"\b(?:never|don['’]?t\s+ever)\s+(?:quit|say\s+never|give\s+up|stop\s+\w+ing|lose\s+(?:hope|sight)|settle"
        r"|look\s+back|doubt"
        r"|underestimate|forget\s+(?:who|where|what|how|to\s+(?:smile|laugh|dream)))",
        r"\balways\s+(?:believe|remember\s+(?:who|that\s+you)|be\s+(?:yourself|proud|kind|true|there)|follow\s+your"
        r"|trust\s+your|chase\s+your|keep\s+(?:smiling|going|pushing|dreaming))",
        rf"\bdon{_A}?t\s+(?:ever\s+)?(?:give\s+up|stop\s+(?:believing|dreaming)|let\s+(?:anyone|anybody|anything|them"
        r"|others|it|fear))",
        r"\byourself\b|\byour\s+(?:dreams?|heart|passion|worth|gut|instincts?)\b",
        # life advice: "Remember that staying positive is very important"
        r"\bremember\s+that\s+(?:you|your|it['’]?s\s+ok|life|sometimes|staying|being|everyone|things|good\s+things"
        r"|tough|hard|every|nothing|no\s+one|we)\b",
    ),
    personal=(rf"\bi(?:{_A}ll|\s+will|{_A}m\s+(?:going|gonna)|\s+am\s+going|\s+want|{_A}d|\s+hope|\s+wish)\b"
              r"|\b(?:hope|wish|maybe|be\s+able\s+to|won['’]t)\b",),
)

# --- German --------------------------------------------------------------------------------

_DE_NOT_VERB = (r"(?:das|es|ich|wir|er|sie|du|ihr|man|der|die|den|dem|ein|eine|so|da|hier|dort|heute|schon|noch"
                r"|wieder|gut|schön|toll|mal|gern|gerne)\b")

DE: Final = RulePack(
    code="de",
    discourse=r"(?:(?:und|also|aber|oh|ok|okay|bitte|ach|übrigens|jetzt|dann)[,:]?\s+)*",
    lead_in=(r"(?:merk\s+dir|merke|denk\s+dran|vergiss\s+nicht|wichtig|regel|hinweis|beachte)"
             r"(?:[,]?\s+(?:unsere|unser|die|der|diese)?\s*(?:regel|grundsatz))?\s*:\s*"),
    imperative=(
        rf"(?:bitte\s+)?(?:immer|nie|niemals)\s+(?!{_DE_NOT_VERB})[\wäöüß-]+",
        rf"(?!{_DE_NOT_VERB})[\wäöüß]+e?\s+(?:bitte\s+)?(?:immer|nie|niemals)\s+[\wäöüß-]+",
    ),
    remember=(r"(?:bitte\s+)?(?:merk\s+dir|denk\s+(?:dran|daran)|vergiss\s+nicht|beachte|behalte\s+im\s+hinterkopf)"
              r"(?:\s*,?\s*dass|\s*:)",),
    addressed=(r"\bdu\s+(?:sollst|musst|solltest|darfst)\s+(?:\w+\s+)?(?:immer|nie|niemals|nicht|keine?n?)\b",),
    scope=(r"\b(?:ab\s+jetzt|ab\s+sofort|von\s+nun\s+an|von\s+jetzt\s+an|künftig|in\s+zukunft|zukünftig"
           r"|grundsätzlich|standardmäßig|jedes\s+mal,?\s+wenn\s+du)\b",),
    norm=(
        r"^(?:(?:alle|jeder|jede|jedes|der|die|das|unsere?|kein|keine)\s+)?(?!(?:es|das|dies|er|sie|du|ich|man|wer"
        r"|was|ihr|dein|deine|mein|meine|sein|seine|ihre|wir)\b)[\wäöüß-]+(?:\s+[\wäöüß-]+){0,3}?\s+"
        r"(?:muss|müssen|darf\s+nicht|dürfen\s+nicht|darf\s+nie|dürfen\s+nie|ist\s+verboten|sind\s+verboten"
        r"|ist\s+pflicht|ist\s+erforderlich|sind\s+erforderlich)\b(?!\s+(?:so|echt|wirklich|toll|schön)\b)",
        r"^wir\s+(?:dürfen|müssen|sollen|sollten)\s+(?:\w+\s+)?(?:niemals|nie|nicht|immer|keine?n?)\b",
    ),
    markers=(r"\b(?:regel|wichtig|kritisch|grundsatz)\s*:", r"\b(?:verboten|pflicht|zwingend)\b"),
    advice=(r"\bsag\s+niemals\s+nie\b|\bgib\s+(?:niemals|nie)\s+auf\b|\bgib\s+nicht\s+auf\b|\bdich\s+selbst\b"
            r"|\bdeine\s+träume\b",),
    personal=(r"\bich\s+(?:werde|will|möchte|würde|hoffe)\b|\bhoffentlich\b|\bvielleicht\b",),
)

# --- Spanish, French, Italian, Portuguese --------------------------------------------------

ES: Final = RulePack(
    code="es",
    discourse=r"(?:(?:y|pero|oye|bueno|vale|ah|por\s+favor|entonces)[,:]?\s+)*",
    lead_in=r"(?:recuerda|no\s+olvides|importante|regla|nota)(?:\s+(?:nuestra|la)\s+regla)?\s*:\s*",
    imperative=(r"(?:por\s+favor\s+)?(?:siempre|nunca|jamás)\s+(?!(?:he|ha|había|fue|era|es|me|te|lo|la|es)\b)[a-záéíóúñ]+",
                r"[a-záéíóúñ]+\s+siempre\s+(?:en|con|a|el|la|los|las)\b",
                r"no\s+(?:hagas|uses|despliegues|toques|borres|subas|envíes|compartas|publiques|cambies)\b"),
    remember=(r"(?:recuerda|no\s+olvides|ten\s+en\s+cuenta)\s+(?:que\b|:)",),
    addressed=(r"\b(?:debes|tienes\s+que)\s+(?:siempre|nunca)\b|\bno\s+debes\b",),
    scope=(r"\b(?:a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|en\s+adelante|en\s+el\s+futuro|por\s+defecto"
           r"|cada\s+vez\s+que\s+(?:tú\s+)?\w+as)\b",),
    norm=(r"\b(?:está\s+prohibido|es\s+obligatorio|no\s+se\s+(?:puede|debe))\b",
          r"^(?:(?:los|las|el|la|todos\s+los|todas\s+las|cada)\s+)?(?!(?:eso|esto|ella|él|tú|yo|ellos|que)\b)[\wáéíóúñ-]+"
          r"(?:\s+[\wáéíóúñ-]+){0,3}?\s+(?:deben|debe|tienen\s+que|tiene\s+que)\s+(?!de\s+ser\b|ser\s+(?:muy|tan)\b)"),
    markers=(r"\b(?:regla|importante|crítico)\s*:", r"\b(?:prohibido|obligatorio)\b"),
    advice=(r"\bnunca\s+(?:digas\s+nunca|te\s+rindas|dejes\s+de\s+soñar)\b|\bti\s+mism[oa]\b|\btus\s+sueños\b",),
    personal=(r"\b(?:voy\s+a|vamos\s+a|espero|ojalá|quizás|quizá|tal\s+vez)\b",),
)

FR: Final = RulePack(
    code="fr",
    discourse=r"(?:(?:et|mais|alors|bon|ok|oh|s['’]il\s+te\s+plaît|s['’]il\s+vous\s+plaît|donc)[,:]?\s+)*",
    lead_in=r"(?:rappelle-toi|n['’]oublie\s+pas|important|règle|note)(?:\s+(?:notre|la)\s+règle)?\s*:\s*",
    imperative=(r"(?:toujours|jamais)\s+(?!(?:été|eu|fait|vu)\b)[a-zàâçéèêëîïôûùüÿœ]+",
                r"ne\s+[a-zàâçéèêëîïôûùüÿœ'’]+\s+jamais\b",
                r"[a-zàâçéèêëîïôûùüÿœ]+(?:-\w+)?\s+toujours\s+(?:en|avec|à|au|le|la|les|par)\b"),
    remember=(r"(?:rappelle-toi|souviens-toi|n['’]oublie\s+pas|retiens|garde\s+en\s+tête)\s+(?:que\b|:)",),
    addressed=(r"\btu\s+(?:dois|devras)\s+(?:toujours|jamais)\b|\btu\s+ne\s+dois\s+(?:jamais|pas)\b",),
    scope=(r"(?:\bà\s+partir\s+de\s+maintenant|\bdésormais|\bdorénavant|\bà\s+l['’]avenir|\bpar\s+défaut"
           r"|\bchaque\s+fois\s+que\s+tu)\b",),
    norm=(r"\b(?:est\s+interdit|il\s+est\s+interdit|il\s+faut\s+toujours|il\s+ne\s+faut\s+jamais|est\s+obligatoire)\b",
          r"^(?:(?:les|le|la|l['’]|tous\s+les|toutes\s+les|chaque)\s*)?(?!(?:ça|cela|il|elle|tu|je|ce|c['’]|on|qui)\b)"
          r"[\wàâçéèêëîïôûùüÿœ-]+(?:\s+[\wàâçéèêëîïôûùüÿœ-]+){0,3}?\s+(?:doit|doivent)\s+(?!être\s+(?:trop|si|très)\b)"),
    markers=(r"\b(?:règle|important|critique)\s*:", r"\b(?:interdit|obligatoire)\b"),
    advice=(r"\bne\s+jamais\s+dire\s+jamais\b|\bjamais\s+dire\s+jamais\b|\bn['’]abandonne\s+jamais\b|\btoi-même\b"
            r"|\btes\s+rêves\b",),
    personal=(r"\bje\s+(?:vais|veux|voudrais|compte|espère)\b|\bpeut-être\b|\bj['’]espère\b",),
)

IT: Final = RulePack(
    code="it",
    discourse=r"(?:(?:e|ma|allora|ok|oh|per\s+favore|dunque|quindi)[,:]?\s+)*",
    lead_in=r"(?:ricorda|ricordati|non\s+dimenticare|importante|regola|nota)(?:\s+(?:la\s+nostra|la)\s+regola)?\s*:\s*",
    imperative=(r"(?:sempre|mai)\s+(?!(?:stato|stata|fatto|visto|avuto)\b)[a-zàèéìòù]+",
                r"non\s+[a-zàèéìòù'’]+\s+mai\b",
                r"[a-zàèéìòù]+\s+sempre\s+(?:in|con|a|il|la|lo|i|le)\b"),
    remember=(r"(?:ricorda|ricordati|non\s+dimenticare|tieni\s+presente)\s+(?:che\b|:)",),
    addressed=(r"\bdevi\s+(?:sempre|mai)\b|\bnon\s+devi\s+mai\b",),
    scope=(r"(?:\bd['’]ora\s+in\s+(?:poi|avanti)|\bda\s+ora\s+in\s+(?:poi|avanti)|\bin\s+futuro|\bper\s+default"
           r"|\bogni\s+volta\s+che\s+\w+i)\b",),
    norm=(r"\b(?:è\s+vietato|è\s+obbligatorio|non\s+si\s+deve)\b",
          r"^(?:(?:i|gli|le|il|la|lo|l['’]|tutti\s+i|tutte\s+le|ogni)\s*)?(?!(?:questo|quello|lui|lei|tu|io|che)\b)"
          r"[\wàèéìòù-]+(?:\s+[\wàèéìòù-]+){0,3}?\s+(?:deve|devono)\s+(?!essere\s+(?:molto|così|troppo)\b)"),
    markers=(r"\b(?:regola|importante|critico)\s*:", r"\b(?:vietato|obbligatorio)\b"),
    advice=(r"\bmai\s+dire\s+mai\b|\bnon\s+mollare\s+mai\b|\bnon\s+arrenderti\s+mai\b|\bte\s+stess[oa]\b"
            r"|\bi\s+tuoi\s+sogni\b",),
    personal=(r"\b(?:spero|vorrei|magari|forse)\b|\b(?:io\s+)?(?:farò|andrò|sarò)\b",),
)

PT: Final = RulePack(
    code="pt",
    discourse=r"(?:(?:e|mas|então|ok|oh|por\s+favor|olha)[,:]?\s+)*",
    lead_in=r"(?:lembre-se|lembra|não\s+esqueça|importante|regra|nota)(?:\s+(?:nossa|a)\s+regra)?\s*:\s*",
    imperative=(r"(?:sempre|nunca|jamais)\s+(?!(?:foi|era|é|fui|estive|tive|me|te)\b)[a-zàáâãçéêíóôõú]+",
                r"[a-zàáâãçéêíóôõú]+\s+sempre\s+(?:em|com|a|o|os|as|no|na)\b",
                r"não\s+(?:faça|use|mexa|apague|publique|envie|compartilhe|mude)\b"),
    remember=(r"(?:lembre-se(?:\s+de)?|lembra|não\s+esqueça|tenha\s+em\s+mente)\s+(?:que\b|:)",),
    addressed=(r"\b(?:você\s+)?(?:deve|tem\s+que)\s+(?:sempre|nunca)\b|\bvocê\s+não\s+deve\b",),
    scope=(r"\b(?:a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante|daqui\s+em\s+diante|no\s+futuro|por\s+padrão"
           r"|toda\s+vez\s+que\s+você)\b",),
    norm=(r"\b(?:é\s+proibido|é\s+obrigatório|não\s+se\s+deve)\b",
          r"^(?:(?:os|as|o|a|todos\s+os|todas\s+as|cada)\s+)?(?!(?:isso|isto|ele|ela|você|eu|que)\b)"
          r"[\wàáâãçéêíóôõú-]+(?:\s+[\wàáâãçéêíóôõú-]+){0,3}?\s+(?:deve|devem|tem\s+que|têm\s+que)\s+"
          r"(?!ser\s+(?:muito|tão)\b)"),
    markers=(r"\b(?:regra|importante|crítico)\s*:", r"\b(?:proibido|obrigatório)\b"),
    advice=(r"\bnunca\s+(?:diga\s+nunca|desista)\b|\bvocê\s+mesm[oa]\b|\bseus\s+sonhos\b",),
    personal=(r"\b(?:vou|vamos|espero|talvez|quem\s+sabe)\b",),
)

# --- Russian, Japanese, Korean, Chinese ----------------------------------------------------

RU: Final = RulePack(
    code="ru",
    discourse=r"(?:(?:и|а|но|ну|так|пожалуйста|кстати)[,:]?\s+)*",
    lead_in=r"(?:запомни|помни|не\s+забывай|важно|правило)(?:\s+(?:наше|это)\s+правило)?\s*:\s*",
    imperative=(r"(?:всегда|никогда\s+не)\s+(?!(?:был|была|было|были|знал|думал)(?!\w))[а-яё]+(?:й|и|те)(?!\w)",
                r"[а-яё]+(?:й|и|те)\s+всегда(?!\w)",
                r"не\s+(?:деплой|трогай|удаляй|пуш|коммить|отправляй|используй|меняй)(?:те)?(?!\w)"),
    remember=(r"(?:запомни|помни|не\s+забывай|учти|имей\s+в\s+виду)(?:\s*,?\s*что(?!\w)|\s*:)",),
    addressed=(r"(?<!\w)ты\s+(?:должен|должна)\s+(?:всегда|никогда)(?!\w)",),
    scope=(r"(?<!\w)(?:с\s+этого\s+момента|отныне|впредь|теперь\s+всегда|в\s+будущем|по\s+умолчанию"
           r"|каждый\s+раз,?\s+когда\s+ты)(?!\w)",),
    norm=(r"(?<!\w)(?:нельзя|запрещено|обязательно\s+нужно|не\s+допускается)(?!\w)",),
    markers=(r"(?<!\w)(?:правило|важно)\s*:", r"(?<!\w)(?:запрещено|обязательно)(?!\w)"),
    advice=(r"никогда\s+не\s+(?:говори\s+никогда|сдавайся)|(?<!\w)себя(?!\w)|(?<!\w)свои\s+мечты",),
    personal=(r"(?<!\w)(?:я\s+буду|я\s+хочу|надеюсь|может\s+быть|возможно)(?!\w)",),
)

JA: Final = RulePack(
    code="ja",
    imperative=(r"(?:常に|必ず|いつも|絶対に).{0,30}?(?:ください|こと|しなさい|してね)",
                r"(?!.*(?:心配|気にし|無理し|諦め|あきらめ)).{0,30}?ないで(?:ください|ね)"),
    remember=(r"(?:覚えておいて|忘れないで)",),
    scope=(r"(?:今後は|これからは|以後|以降は|デフォルトで)",),
    norm=(r"(?:てはいけません|てはいけない|ではいけません|禁止です|禁止|してはならない)",),
    markers=(r"(?:ルール|重要)[:：]",),
    advice=(r"(?:諦めないで|あきらめないで|心配しないで|気にしないで|自分を信じて)",),
    personal=(r"(?:つもり|たいです|たいと思|かもしれ)",),
)

KO: Final = RulePack(
    code="ko",
    imperative=(r"(?:항상|절대|늘|반드시|꼭).{0,30}?(?:세요|십시오|해\s*줘|해라|하지\s*마)",
                r"(?!.*(?:걱정|포기|신경)).{0,20}?(?:하지\s*마세요|하지\s*마|지\s*마세요)"),
    remember=(r"(?:기억해|잊지\s*마)",),
    scope=(r"(?:앞으로는|이제부터|앞으로|기본적으로)",),
    norm=(r"(?:하면\s*안\s*(?:돼요|됩니다|돼)|금지(?:입니다|예요)?)",),
    markers=(r"(?:규칙|중요)\s*[:：]",),
    advice=(r"(?:포기하지\s*마|걱정하지\s*마|신경\s*쓰지\s*마|너\s*자신을\s*믿)",),
    personal=(r"(?:할\s*거예요|하고\s*싶|할게요|것\s*같아요)",),
)

ZH: Final = RulePack(
    code="zh",
    imperative=(r"(?:请)?(?:总是|永远|一定要|务必|始终|每次都)",
                r"(?:请)?(?:不要|别|千万不要|永远不要|绝对不要)(?!担心|难过|放弃|害怕|客气|着急|生气)"),
    remember=(r"(?:请)?(?:记住|别忘了|不要忘记)",),
    scope=(r"(?:从现在开始|从今以后|以后都|今后|以后|默认)",),
    norm=(r"(?:禁止|不允许|不得|必须)",),
    markers=(r"(?:规则|重要)[:：]",),
    advice=(r"(?:不要放弃|别放弃|永远不要放弃|不要担心|别担心|相信自己)",),
    personal=(r"(?:我会|我要|我想|希望|也许|可能)",),
)

RULE_PACKS: Final[dict[str, RulePack]] = {p.code: p for p in (EN, DE, ES, FR, IT, PT, RU, JA, KO, ZH)}


@dataclass(frozen=True, slots=True, eq=False)
class CompiledRules:
    """The rule phrases of some languages, one regex per family."""

    at_start: re.Pattern[str] | None  # imperatives and reminders, after lead-ins and discourse words
    anywhere: tuple[re.Pattern[str], ...]  # addressed, scope, norm (one each)
    markers: re.Pattern[str] | None
    advice: re.Pattern[str] | None
    personal: re.Pattern[str] | None
    lead_in: re.Pattern[str] | None


def _union(sources: Iterable[str]) -> re.Pattern[str] | None:
    listed = [s for s in sources if s]
    return re.compile("|".join(f"(?:{s})" for s in listed)) if listed else None


# the families searched anywhere in a sentence, one regex each
_ANYWHERE: Final[tuple[Callable[[RulePack], tuple[str, ...]], ...]] = (
    lambda p: p.addressed, lambda p: p.scope, lambda p: p.norm)


@lru_cache(maxsize=32)
def compiled_rules(languages: tuple[str, ...]) -> CompiledRules:
    packs = [RULE_PACKS[c] for c in dict.fromkeys(languages) if c in RULE_PACKS]
    starts = [rf"(?:{p.discourse})(?:{s})" for p in packs for s in (*p.imperative, *p.remember)]
    families = [_union(s for p in packs for s in getter(p)) for getter in _ANYWHERE]
    anywhere = tuple(u for u in families if u is not None)
    return CompiledRules(
        at_start=_union(starts), anywhere=anywhere,
        markers=_union(s for p in packs for s in p.markers),
        advice=_union(s for p in packs for s in p.advice),
        personal=_union(s for p in packs for s in p.personal),
        lead_in=_union(rf"(?:{p.discourse}){p.lead_in}" for p in packs if p.lead_in),
    )


_SENTENCES: Final = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_BULLET: Final = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def _sentence_signals(sentence: str, rules: CompiledRules) -> int:
    """Families that fire in one lower-cased sentence."""
    if sentence.rstrip().endswith(("?", "？")) or (rules.advice is not None and rules.advice.search(sentence)):
        return 0
    signals = 0
    lead = rules.lead_in.match(sentence) if rules.lead_in is not None else None
    if lead is not None:  # "And remember our rule: never deploy on Fridays"
        signals += 1
        sentence = sentence[lead.end():]
    if rules.at_start is not None and rules.at_start.match(sentence):
        signals += 1
    personal = rules.personal is not None and rules.personal.search(sentence) is not None
    for family in rules.anywhere:
        if family.search(sentence) and not personal:
            signals += 1
    return signals


def rule_signals(text: str, languages: Iterable[str] = ("en", "de")) -> int:
    """How many signs of a standing instruction ``text`` shows: the families that fire in its
    sentences, and each explicit marker ("Rule:", "forbidden"). 0: no rule."""
    rules = compiled_rules(tuple(languages))
    lowered = text.lower()
    signals = max((_sentence_signals(_BULLET.sub("", s).strip(), rules)
                   for s in _SENTENCES.split(lowered) if s.strip()), default=0)
    if rules.markers is not None:
        signals += len({m.group() for m in rules.markers.finditer(lowered)})
    return signals
