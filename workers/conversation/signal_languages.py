"""Signal language packs: the words of the trace analyzer's conversational signals, as data.

The reference (openclaw-cortex ``src/trace-analyzer/signals/lang/signal-lang-*.ts``) has one
pack per language with the same five families: corrections (and the short negatives that
only answer a question), questions, dissatisfaction (with the satisfaction that overrides
it and the apologies that resolve it), completion claims, and claims about system state
(with the hedges that make them opinions). These packs are Cortex's own phrase lists for
the same families in the same ten languages, written for Python ``re``:

* Sources are lower case and search the lower-cased message (``patterns.MatchText``), as
  the conversation packs do; the CJK packs have no letter case to fold.
* ``\\b`` is Python's Unicode boundary, so "fait" does not match inside "parfait" and
  Cyrillic or accented words are bounded (JavaScript's ASCII ``\\b`` could not be used
  around them in the reference, which therefore matched inside longer words). CJK sources
  use no boundary at all.
* Apostrophes accept the typographic ``’`` too.
* Cortex goes further with ``negation``: a completion word with a negation shortly before
  it in the same clause ("not deployed", "noch nicht erledigt", "没完成") is no claim; the
  reference counted it. Japanese and Korean negate after the verb, so their completion
  sources carry the negation as a lookahead instead. And with ``failure``: a message that
  admits a failure ("Done checking: the deploy failed") claims no success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

_A: Final = "['’]"  # an apostrophe, straight or typographic


@dataclass(frozen=True, slots=True)
class SignalPack:
    """One language's phrase sources for the conversational signals."""

    code: str
    correction: tuple[str, ...]  # the user corrects the agent
    short_negative: tuple[str, ...]  # a whole message that only says no (an answer, after a question)
    question: tuple[str, ...]  # the agent asks rather than asserts
    dissatisfied: tuple[str, ...]  # the user gives up or is frustrated
    satisfied: tuple[str, ...]  # overrides dissatisfaction in the same message
    resolution: tuple[str, ...]  # the agent apologises or tries again
    completion: tuple[str, ...]  # the agent claims the work is done
    state_claim: tuple[str, ...]  # the agent states a fact about the system
    opinion: tuple[str, ...]  # hedges: a state claim with one is an opinion
    negation: tuple[str, ...] = ()  # negates a completion word shortly after it
    failure: tuple[str, ...] = ()  # admits a failure: the message claims no success


EN: Final = SignalPack(
    code="en",
    correction=(
        r"\b(?:wrong|incorrect)\b",
        rf"\bthat{_A}?s not (?:right|true|correct|it)\b",
        r"\bthat is not (?:right|true|correct)\b",
        rf"\byou{_A}?re (?:wrong|mistaken)\b",
        r"\bnot what i (?:asked|meant|wanted)\b",
        r"\byou made a mistake\b",
        r"\b(?:actually|wait),? no(?:[,.!]|\s*$)",
        r"\b(?:fix|undo) (?:that|this|it)\b",
        r"\bcorrection:",
    ),
    short_negative=(r"^\s*(?:no|nope|nah|stop|no thanks)\s*[.!]?\s*$",),
    question=(
        r"\b(?:shall|should|can|may) i\b",
        r"\b(?:do|would) you (?:want|like)\b",
        r"\bwant me to\b",
        r"\bis (?:that|this) (?:ok|okay|fine|alright)\b",
    ),
    dissatisfied=(
        r"\bforget (?:it|about it)\b",
        r"\bnever ?mind\b(?! (?:the|that|about|my))",
        rf"\bi{_A}?ll do it myself\b",
        r"\bi will do it myself\b",
        r"\b(?:useless|pointless|hopeless)\b",
        r"\bwaste of (?:my )?time\b",
        r"\bi give up\b",
        r"\bnot helpful\b",
        rf"\byou can{_A}?t do (?:this|it)\b",
        r"\bthis is (?:garbage|ridiculous|a joke)\b",
        rf"\b(?:still )?(?:doesn{_A}?t|does not) work\b",
        r"\bstill broken\b",
        rf"\b(?:this|that|it){_A}?s? (?:is )?(?:so |really |very |super |incredibly |getting )?"
        r"(?:frustrating|annoying|infuriating|maddening)\b",
        rf"\bi{_A}?m (?:so |really |very |getting )?(?:frustrated|annoyed|fed up)\b",
        r"\b(?:keeps?|kept) (?:on )?failing\b",
        r"\byou keep (?:saying|telling me)\b",
        r"\bstill (?:failing|not working)\b",
    ),
    satisfied=(
        r"\b(?:thanks|thank you|perfect|great|excellent|awesome|nice)\b",
        r"\b(?:good|great|nice) (?:job|work)\b",
        r"\bwell done\b",
        r"\bworks now\b",
    ),
    resolution=(
        r"\b(?:sorry|my apologies)\b",
        r"\bi apologi[sz]e\b",
        r"\blet me (?:try|fix|check|look)\b",
        rf"\bi{_A}?ll try (?:again|another)\b",
        rf"\bhere{_A}?s another\b",
    ),
    completion=(
        r"\b(?:done|completed|finished|fixed|resolved|deployed)\b",
        r"\bsuccessfully\b",
        r"\ball set\b",
        rf"\bit(?:{_A}s| is| has been) (?:now )?(?:live|running|up|working)\b",
    ),
    state_claim=(
        r"\b(?:disk usage|disk|memory|cpu|load) (?:usage )?is (?:at )?\d+",
        r"\b(?:service|server|daemon|process|database|container) is "
        r"(?:running|stopped|active|down|inactive|up|healthy)\b",
        r"\b(?:file|config|directory) (?:exists|is present)\b",
        r"\bthere (?:are|is) \d+ (?:errors?|warnings?|connections?|processes|files)\b",
        r"\bport \d+ is (?:open|closed|in use)\b",
    ),
    opinion=(
        r"\b(?:i think|i believe|probably|maybe|perhaps|might)\b",
        r"\b(?:it seems|seems to|looks like)\b",
    ),
    negation=(r"\bnot\b", rf"n{_A}t\b", r"\bnever\b", r"\bno longer\b", r"\bnothing\b"),
    failure=(r"\b(?:failed|failing|fails|error|errors)\b", rf"\b(?:could not|couldn{_A}t|can{_A}t|cannot|unable to)\b",
             rf"\b(?:didn{_A}t|did not|doesn{_A}t|does not) work\b"),
)

DE: Final = SignalPack(
    code="de",
    correction=(
        r"\bfalsch\b",
        r"\bdas stimmt (?:so )?nicht\b",
        r"\bso nicht\b",
        r"\bdu hast dich (?:geirrt|vertan)\b",
        r"\bdu hast einen fehler\b",
        r"\bnicht (?:korrekt|richtig)\b",
        r"\bdas (?:meine|meinte) ich nicht\b",
        r"\bkorrektur\b",
        r"\bvergiss das\b",
        r"\bstopp\b",
    ),
    short_negative=(r"^\s*(?:nein|nö|nee|halt|nicht das)\s*[.!]?\s*$",),
    question=(
        r"\b(?:soll|darf|kann) ich\b",
        r"\b(?:möchtest|willst) du\b",
        r"\bist das (?:ok|okay|in ordnung)\b",
        r"\bpasst das\b",
        r"\boder\s*\?",
    ),
    dissatisfied=(
        r"\bvergiss es\b",
        r"\blass (?:es )?gut sein\b",
        r"\blassen wir das\b",
        rf"\bich mach(?:e|{_A})?s selbst\b",
        r"\bich mache es selbst\b",
        r"\bschon gut\b",
        r"\bnicht hilfreich\b",
        r"\b(?:das )?bringt (?:doch )?nichts\b",
        r"\b(?:hoffnungslos|sinnlos|nutzlos|zwecklos)\b",
        r"\bdu kannst das nicht\b",
        r"\bfunktioniert (?:immer )?noch nicht\b",
        r"\b(?:das ist|ist) (?:echt |so |wirklich |total )?(?:frustrierend|nervig|ärgerlich)\b",
        r"\bich bin (?:so |echt |total )?(?:frustriert|genervt)\b",
        r"\bschlägt (?:immer )?(?:wieder|noch) fehl\b",
        r"\bdu sagst (?:immer|ständig|dauernd)\b",
    ),
    satisfied=(
        r"\b(?:danke|super|perfekt|prima|passt|wunderbar|klasse)\b",
        r"\bvielen dank\b",
        r"\bgut gemacht\b",
    ),
    resolution=(
        r"\b(?:entschuldigung|entschuldige)\b",
        r"\btut mir leid\b",
        r"\blass mich\b",
        r"\bich (?:versuche|probiere)\b",
        r"\bversuch(?:e)? ich\b",
    ),
    completion=(
        r"\b(?:erledigt|erfolgreich|fertig|gemacht|deployed|gefixt|gelöst|behoben|abgeschlossen)\b",
        r"\bist (?:jetzt |nun )?(?:online|live|aktiv)\b",
        rf"\bhab(?:e|{_A}s)? (?:ich )?(?:es |das )?(?:jetzt |nun )?(?:deployt|ausgerollt|eingespielt|repariert)\b",
    ),
    state_claim=(
        r"\b(?:speicherplatz|festplatte|festplattenauslastung|speicher|cpu|last) (?:ist|beträgt|liegt) (?:bei )?\d+",
        r"\b(?:service|dienst|server|daemon|prozess) ist (?:aktiv|gestoppt|gestartet|inaktiv|down|online)\b",
        r"\b(?:service|dienst|server|daemon|prozess) läuft\b",
        r"\b(?:datei|config|konfiguration) (?:existiert|ist vorhanden)\b",
        r"\bes gibt \d+ (?:fehler|warnungen|verbindungen|prozesse|dateien)\b",
    ),
    opinion=(
        r"\bich (?:glaube|denke|vermute)\b",
        r"\b(?:wahrscheinlich|vielleicht|vermutlich)\b",
        r"\b(?:es scheint|sieht (?:so )?aus)\b",
    ),
    negation=(r"\bnicht\b", r"\bkein(?:e|en)?\b", r"\bnie\b"),
    failure=(r"\b(?:fehlgeschlagen|gescheitert|fehler)\b", r"\b(?:konnte|kann) (?:\w+ )?nicht\b", r"\bnicht möglich\b"),
)

FR: Final = SignalPack(
    code="fr",
    correction=(
        r"\b(?:faux|incorrect|erreur)\b",
        rf"\bc{_A}est (?:pas ça|faux)\b",
        r"\b(?:tu te trompes|vous vous trompez)\b",
        rf"\bce n{_A}est pas (?:ça|correct|juste)\b",
        rf"\bc{_A}est pas ce que j{_A}ai demandé\b",
        r"\b(?:non en fait|attends,? non)\b",
        r"\b(?:corrige|recommence)\b",
    ),
    short_negative=(r"^\s*(?:non|nan|stop)\s*[.!]?\s*$",),
    question=(
        r"\best-ce que je (?:dois|peux)\b",
        r"\b(?:dois|puis)-je\b",
        r"\b(?:voulez-vous|veux-tu|tu veux)\b",
        rf"\bc{_A}est bon\s*\?",
    ),
    dissatisfied=(
        r"\blaisse tomber\b",
        r"\boublie(?:z)?(?: ça)?\b",
        r"\btant pis\b",
        r"\bje (?:vais le faire|le fais|fais) moi-même\b",
        rf"\bc{_A}est (?:inutile|nul)\b",
        r"\bça (?:ne )?sert à rien\b",
        r"\bperte de temps\b",
        r"\bça (?:ne )?marche (?:pas|toujours pas)\b",
        rf"\bn{_A}importe quoi\b",
        rf"\b(?:c{_A}est|ça devient) (?:vraiment |tellement |trop )?(?:frustrant|énervant|agaçant)\b",
        r"\bje suis (?:vraiment |tellement )?(?:frustrée?|agacée?|énervée?)\b",
        r"\béchoue (?:encore|toujours)\b",
        rf"\btu n{_A}arrêtes pas de dire\b",
    ),
    satisfied=(
        r"\b(?:merci|parfait|génial|super|excellent|bravo)\b",
        r"\bbon travail\b",
    ),
    resolution=(
        r"\b(?:désolé|désolée|pardon)\b",
        rf"\bje m{_A}excuse\b",
        r"\blaisse-moi (?:essayer|corriger|vérifier)\b",
        r"\bje réessaie\b",
    ),
    completion=(
        r"\b(?:terminé|fait|fini|résolu|déployé|déployée|corrigé|accompli)\b",
        rf"\bj{_A}ai (?:tout |maintenant )?(?:terminé|fait|fini|déployé|corrigé)\b",
        rf"\bc{_A}est (?:maintenant )?en ligne\b",
    ),
    state_claim=(
        r"\b(?:utilisation (?:du )?disque|mémoire|cpu|charge) (?:est|à) (?:de )?\d+",
        r"\b(?:service|serveur|daemon|processus) est (?:actif|arrêté|en marche|inactif|down)\b",
        r"\b(?:fichier|config) (?:existe|est présent)\b",
        r"\bil y a \d+ (?:erreurs?|avertissements?|connexions?|processus|fichiers)\b",
    ),
    opinion=(
        r"\bje (?:crois|pense)\b",
        r"\b(?:probablement|peut-être)\b",
        r"\b(?:il semble|on dirait)\b",
    ),
    negation=(r"\bpas\b", r"\bjamais\b", r"\bne\b"),
    failure=(r"\b(?:échoué|échec|erreur)\b", r"\bje n['’]ai pas pu\b", r"\bimpossible\b"),
)

ES: Final = SignalPack(
    code="es",
    correction=(
        r"\beso (?:está mal|no es(?: así)?)\b",
        r"\b(?:incorrecto|equivocado)\b",
        r"\bte equivocas\b",
        r"\bno es lo que (?:pedí|quise decir)\b",
        r"\b(?:en realidad no|espera,? no)\b",
        r"\bcorrige(?: eso)?\b",
    ),
    short_negative=(r"^\s*(?:no|para)\s*[.!]?\s*$",),
    question=(
        r"¿",
        r"\b(?:debo|quieres que|quiere que)\b",
        r"\bte parece bien\b",
    ),
    dissatisfied=(
        r"\b(?:olvídalo|déjalo|olvidémoslo)\b",
        r"\bya da igual\b",
        r"\blo hago yo\b",
        r"\b(?:esto es inútil|no sirve)\b",
        r"\bpérdida de tiempo\b",
        r"\bno funciona\b",
        r"\bme rindo\b",
        r"\bno tiene sentido\b",
        r"\b(?:es|esto es) (?:muy |tan |realmente )?frustrante\b",
        r"\bestoy (?:muy |tan )?(?:frustrad[oa]|hart[oa])\b",
        r"\bsigue fallando\b",
        r"\bsigues diciendo\b",
    ),
    satisfied=(
        r"\b(?:gracias|perfecto|genial|excelente|increíble)\b",
        r"\bbuen trabajo\b",
    ),
    resolution=(
        r"\b(?:lo siento|perdón|disculpa)\b",
        r"\bdéjame (?:intentar|probar|corregir)\b",
        r"\bvoy a intentar(?:lo)? de nuevo\b",
    ),
    completion=(
        r"\b(?:hecho|listo|completado|resuelto|desplegado|arreglado|terminado)\b",
        r"\b(?:ya lo|lo he) (?:hecho|completado|desplegado|arreglado)\b",
        r"\b(?:ya está|está listo|ha sido desplegado)\b",
    ),
    state_claim=(
        r"\b(?:uso de disco|memoria|cpu|carga) (?:es|está en|al) (?:de )?\d+",
        r"\b(?:servicio|servidor|daemon|proceso) está (?:activo|detenido|corriendo|inactivo|caído)\b",
        r"\b(?:archivo|config) (?:existe|está presente)\b",
        r"\bhay \d+ (?:errores?|advertencias?|conexiones?|procesos|archivos)\b",
    ),
    opinion=(
        r"\b(?:creo|pienso) que\b",
        r"\b(?:probablemente|quizás|quizá|tal vez)\b",
        r"\bparece (?:que|ser)\b",
    ),
    negation=(r"\bno\b", r"\btodavía no\b", r"\bnunca\b"),
    failure=(r"\b(?:falló|fallado|error|errores)\b", r"\bno (?:pude|he podido|fue posible)\b"),
)

PT: Final = SignalPack(
    code="pt",
    correction=(
        r"\b(?:errado|incorreto)\b",
        r"\bvocê errou\b",
        r"\bisso não está certo\b",
        r"\bnão é isso\b",
        r"\bnão (?:foi|é) o que (?:eu )?(?:pedi|quis dizer)\b",
        r"\b(?:na verdade não|espera,? não)\b",
        r"\bcorrija(?: isso)?\b",
    ),
    short_negative=(r"^\s*(?:não|nao|para)\s*[.!]?\s*$",),
    question=(
        r"\b(?:devo|quer que eu|você quer)\b",
        r"\b(?:tá|está) bom\s*\?",
    ),
    dissatisfied=(
        r"\bdeixa pra lá\b",
        r"\besquece(?: isso)?\b",
        r"\btanto faz\b",
        r"\beu mesmo faço\b",
        r"\beu faço (?:eu )?mesmo\b",
        r"\b(?:isso é inútil|não serve)\b",
        r"\bperda de tempo\b",
        r"\bnão funciona\b",
        r"\bdesisto\b",
        r"\bnão adianta\b",
        r"\b(?:é|isso é) (?:muito |tão |realmente )?(?:frustrante|irritante)\b",
        r"\bestou (?:muito |tão )?(?:frustrad[oa]|irritad[oa])\b",
        r"\bcontinua falhando\b",
        r"\bvocê continua dizendo\b",
    ),
    satisfied=(
        r"\b(?:obrigado|obrigada|perfeito|ótimo|excelente)\b",
        r"\bbom trabalho\b",
    ),
    resolution=(
        r"\b(?:desculpe|desculpa|perdão)\b",
        r"\b(?:me )?deixa (?:eu )?tentar\b",
        r"\bvou tentar de novo\b",
    ),
    completion=(
        r"\b(?:feito|pronto|completado|concluído|resolvido|implantado|corrigido|terminado)\b",
        r"\bjá (?:fiz|completei|implantei|corrigi)\b",
        r"\b(?:já está|está pronto|foi implantado)\b",
    ),
    state_claim=(
        r"\b(?:uso de disco|memória|cpu|carga) (?:é|está em|a) (?:de )?\d+",
        r"\b(?:serviço|servidor|daemon|processo) está (?:ativo|parado|rodando|inativo|fora)\b",
        r"\b(?:arquivo|config) (?:existe|está presente)\b",
        r"\b(?:existem|há) \d+ (?:erros?|avisos?|conexões?|processos|arquivos)\b",
    ),
    opinion=(
        r"\b(?:eu acho|acho que)\b",
        r"\b(?:provavelmente|talvez)\b",
        r"\bparece (?:que|ser)\b",
    ),
    negation=(r"\bnão\b", r"\bainda não\b", r"\bnunca\b"),
    failure=(r"\b(?:falhou|falha|erro)\b", r"\bnão (?:consegui|foi possível)\b"),
)

IT: Final = SignalPack(
    code="it",
    correction=(
        r"\b(?:è )?sbagliato\b",
        r"\bnon è corretto\b",
        r"\bhai sbagliato\b",
        r"\bquesto è errato\b",
        r"\bnon è quello che (?:ho chiesto|intendevo)\b",
        r"\b(?:in realtà no|aspetta,? no)\b",
        r"\b(?:correggi|rifai)\b",
    ),
    short_negative=(r"^\s*(?:no|basta)\s*[.!]?\s*$",),
    question=(
        r"\b(?:devo|vuoi che)\b",
        r"\bti va bene\b",
        r"\bva bene\s*\?",
    ),
    dissatisfied=(
        r"\blascia (?:perdere|stare)\b",
        r"\bnon importa\b",
        r"\bfaccio da solo\b",
        r"\b(?:è )?inutile\b",
        r"\bnon serve a niente\b",
        r"\bperdita di tempo\b",
        r"\bnon funziona\b",
        r"\bmi arrendo\b",
        r"\bnon ha senso\b",
        r"\b(?:è|questo è) (?:davvero |così |molto )?(?:frustrante|snervante|irritante)\b",
        r"\bsono (?:davvero |così )?(?:frustrat[oa]|stuf[oa])\b",
        r"\bcontinua a fallire\b",
        r"\bcontinui a dire\b",
    ),
    satisfied=(
        r"\b(?:grazie|perfetto|fantastico|eccellente|benissimo)\b",
        r"\bottimo lavoro\b",
    ),
    resolution=(
        r"\b(?:scusa|scusami|mi scuso|mi dispiace)\b",
        r"\blasciami (?:provare|correggere)\b",
        r"\briprovo\b",
    ),
    completion=(
        r"\b(?:fatto|pronto|completato|risolto|deployato|corretto|finito)\b",
        r"\bl['’]ho (?:fatto|completato|deployato|corretto)\b",
        r"\bè (?:ora )?(?:online|in linea)\b",
    ),
    state_claim=(
        r"\b(?:uso disco|memoria|cpu|carico) (?:è|è al|a) (?:del )?\d+",
        r"\b(?:servizio|server|daemon|processo) è (?:attivo|fermo|in esecuzione|inattivo|down)\b",
        r"\b(?:file|config) (?:esiste|è presente)\b",
        r"\bci sono \d+ (?:errori|avvisi|connessioni|processi|file)\b",
    ),
    opinion=(
        r"\b(?:penso|credo) che\b",
        r"\b(?:probabilmente|forse)\b",
        r"\b(?:sembra|pare) che\b",
    ),
    negation=(r"\bnon\b", r"\bmai\b", r"\bancora no\b"),
    failure=(r"\b(?:fallito|fallita|errore)\b", r"\bnon (?:sono riuscito|è stato possibile)\b"),
)

RU: Final = SignalPack(
    code="ru",
    correction=(
        r"\b(?:неправильно|неверно)\b",
        r"\bэто не так\b",
        r"\bты ошиб(?:ся|лась)\b",
        r"\bне то(?:,)? что я (?:просил|просила|имел в виду|имела в виду)\b",
        r"\b(?:на самом деле нет|подожди,? нет)\b",
        r"\b(?:исправь|переделай)\b",
        r"\bошибка\b",
    ),
    short_negative=(r"^\s*(?:нет|стоп|не надо)\s*[.!]?\s*$",),
    question=(
        r"\bмне (?:нужно|надо|стоит)\b",
        r"\b(?:хотите|хочешь)\b",
        r"\b(?:ладно|нормально)\s*\?",
    ),
    dissatisfied=(
        r"\bзабудь\b",
        r"\bвсё равно\b",
        r"\bя сам(?:а)?(?: сделаю)?\b",
        r"\b(?:бесполезно|безнадёжно|бессмысленно)\b",
        r"\bнет смысла\b",
        r"\bпустая трата времени\b",
        r"\bне работает\b",
        r"\bсдаюсь\b",
        r"\b(?:это )?(?:так |очень )?(?:раздражает|бесит)\b",
        r"\bя (?:так |очень )?(?:расстроен[а]?|зол|зла)\b",
        r"\b(?:опять|снова) (?:падает|не работает)\b",
        r"\bты (?:всё время|постоянно) говоришь\b",
    ),
    satisfied=(r"\b(?:спасибо|отлично|превосходно|молодец|прекрасно|замечательно)\b",),
    resolution=(
        r"\b(?:извини|извините|прости|простите)\b",
        r"\bпрошу прощения\b",
        r"\bпопробую (?:ещё|снова)\b",
    ),
    completion=(
        r"\b(?:готово|сделано|завершено|решено|задеплоено|исправлено|закончено)\b",
        r"\bя (?:уже |сейчас )?(?:сделал|сделала|завершил|задеплоил|исправил)\b",
        r"\b(?:уже|теперь) (?:работает|запущено|онлайн)\b",
    ),
    state_claim=(
        r"\b(?:использование диска|память|cpu|нагрузка) (?:составляет|равна|на) ?\d+",
        r"\b(?:сервис|сервер|демон|процесс) (?:работает|остановлен|активен|не активен|упал)\b",
        r"\b(?:файл|конфиг) (?:существует|присутствует)\b",
        r"\b(?:есть|имеется) \d+ (?:ошиб(?:ок|ки)|предупреждени[йя]|подключени[йя]|процесс(?:ов)?|файл(?:ов)?)\b",
    ),
    opinion=(
        r"\bя думаю\b",
        r"\b(?:наверное|возможно|может быть)\b",
        r"\b(?:похоже|кажется|видимо)\b",
    ),
    negation=(r"\bне\b", r"\bещё не\b", r"\bникогда\b"),
    failure=(r"\b(?:ошибка|ошибку|сбой|не удалось)\b", r"\bне (?:смог|получилось)\b"),
)

ZH: Final = SignalPack(
    code="zh",
    correction=(
        r"错了",
        r"不对",
        r"你搞错了",
        r"这是错的",
        r"不是(?:这样|那样|我要的|我的意思)",
        r"(?:重新来|改一下|纠正)",
    ),
    short_negative=(r"^\s*(?:不|不是|不要|别)\s*[.!。！]?\s*$",),
    question=(r"(?:要不要|需不需要|可以吗|好吗|行吗|吗[？?])",),
    dissatisfied=(
        r"算了",
        r"不管了",
        r"我自己来",
        r"(?:没用|没有用|没有意义)",
        r"浪费时间",
        r"(?:不好使|还是不行)",
        r"放弃",
        r"(?:烦人|让人沮丧|很沮丧|太烦了|烦死了)",
        r"(?:又|还是)(?:失败|不行|坏了)",
        r"你(?:一直|总是)说",
    ),
    satisfied=(r"(?:谢谢|感谢|太好了|完美|很棒|不错)",),
    resolution=(r"(?:抱歉|对不起|不好意思|让我再试|我重新试)",),
    completion=(
        r"(?:完成|做好了|搞定|解决了|部署了|修好了)",
        r"已经(?:完成|做好|搞定|部署|修好)",
        r"现在(?:好了|可以了|运行了|上线了)",
    ),
    state_claim=(
        r"(?:磁盘使用率|内存|cpu|负载)(?:是|为|在)\d+",
        r"(?:服务|服务器|守护进程|进程)(?:正在运行|已停止|在运行|停止了)",
        r"(?:文件|配置)(?:存在|已存在)",
        r"有\d+个(?:错误|警告|连接|进程|文件)",
    ),
    opinion=(r"(?:我觉得|我认为|大概|可能|也许)", r"(?:看起来|似乎|好像)"),
    negation=(r"[没未不]",),
    failure=(r"(?:失败|错误|无法|没能)",),
)

# Japanese and Korean negate after the verb: the negated forms are excluded by lookahead.
_JA_NOT: Final = r"(?!して(?:い)?ない|していません|できていない|されていない|じゃない|ではない)"
_KO_NOT: Final = r"(?!(?:되|하)지 (?:않|못))"

JA: Final = SignalPack(
    code="ja",
    correction=(
        r"違う",
        r"(?:間違い|間違って)",
        r"正しくない",
        r"それじゃない",
        r"頼んだのと違",
        r"そういう意味じゃない",
        r"(?:やり直し|訂正して|直して)",
    ),
    short_negative=(r"^\s*(?:いいえ|いや|ダメ|やめて)\s*[.!。！]?\s*$",),
    question=(r"(?:しましょうか|しますか|いいですか|よろしいですか|どうですか)",),
    dissatisfied=(
        r"もういい",
        r"どうでもいい",
        r"自分でやる",
        r"(?:使えない|役に立たない)",
        r"意味がない",
        r"時間の無駄",
        r"(?:動かない|諦め)",
        r"(?:イライラ|いらいら)する",
        r"(?:また|まだ)(?:失敗|動かない|壊れて)",
    ),
    satisfied=(r"(?:ありがとう|完璧|素晴らしい|すごい|いいね|よくできた)",),
    resolution=(r"(?:すみません|申し訳|ごめんなさい|もう一度試し)",),
    completion=(
        rf"(?:完了|完成){_JA_NOT}",
        r"(?:できました|できた)",
        r"(?:解決|デプロイ|修正)(?:した|しました)",
        r"(?:終わった|終わりました)",
    ),
    state_claim=(
        r"(?:ディスク使用率|メモリ|cpu|負荷)(?:は|が)\d+",
        r"(?:サービス|サーバー|デーモン|プロセス)(?:は|が)(?:稼働中|停止|アクティブ|ダウン|非アクティブ)",
        r"(?:ファイル|設定)(?:が存在|は存在|がある)",
        r"\d+(?:個|件)の(?:エラー|警告|接続|プロセス|ファイル)(?:がある|があり)",
    ),
    opinion=(r"(?:思う|思います|たぶん|多分|かもしれない|おそらく)", r"(?:みたい|ようだ|らしい)"),
    failure=(r"(?:失敗|エラー|できません|できなかった)",),
)

KO: Final = SignalPack(
    code="ko",
    correction=(
        r"틀렸",
        r"잘못",
        r"그건 아니",
        r"맞지 않",
        r"그게 아니",
        r"(?:내가 요청한|그런 뜻이) (?:게|것이)? ?아니",
        r"(?:다시 해|고쳐|수정해)",
    ),
    short_negative=(r"^\s*(?:아니|아니요|아뇨|안 돼|그만)\s*[.!。！]?\s*$",),
    question=(r"(?:할까요|할까|괜찮아요|어때요|드릴까요)",),
    dissatisfied=(
        r"(?:됐어|됐다|그냥 됐)",
        r"내가 할게",
        r"(?:쓸모없|쓸데없|의미없|무의미)",
        r"도움이? 안 돼",
        r"시간 낭비",
        r"포기",
        r"가망 없",
        r"짜증(?:나|이\s*나)",
        r"답답해",
        r"(?:또|계속)\s*(?:실패|안\s*돼)",
    ),
    satisfied=(r"(?:감사|고마워|고맙|완벽|훌륭|잘했어|대단해)",),
    resolution=(r"(?:죄송|미안|다시 시도|다시 해볼게)",),
    completion=(
        rf"(?:완료|해결|배포|수정|완성){_KO_NOT}(?:했|됐|되었|하였)",
        rf"완료{_KO_NOT}",
        r"다 됐",
        r"(?:이제|지금) (?:됐|돌아가|온라인)",
    ),
    state_claim=(
        r"(?:디스크 사용량|메모리|cpu|부하)(?:는|이|가) ?\d+",
        r"(?:서비스|서버|데몬|프로세스)(?:가|는) ?(?:실행 중|중지|활성|다운|비활성)",
        r"(?:파일|설정)(?:이|가) ?(?:존재|있)",
        r"\d+(?:개의|개) ?(?:오류|경고|연결|프로세스|파일)(?:가 있|이 있)",
    ),
    opinion=(r"(?:생각에|아마|어쩌면|그런 것 같)", r"(?:보이|듯하|같아)"),
    failure=(r"(?:실패|오류|에러|못 했|할 수 없)",),
)

SIGNAL_PACKS: Final[dict[str, SignalPack]] = {
    pack.code: pack for pack in (EN, DE, FR, ES, PT, IT, ZH, JA, KO, RU)
}

# Language-independent signs, as in the reference: a line ending in a question mark asks,
# a check mark claims completion, a thumbs-up or a party popper is satisfaction.
UNIVERSAL_QUESTION: Final = r"[?？]\s*$"
UNIVERSAL_COMPLETION: Final = r"[✅✓☑✔]"
UNIVERSAL_SATISFIED: Final = r"(?:👍|🎉|💯|❤)"
