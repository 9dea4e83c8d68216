"""A promise's due phrase as a date: "tomorrow", "bis Freitag", "明天" → ``YYYY-MM-DD``.

The date is counted from the promise's event time in the agent's time zone
(``CORTEX_TIMEZONE``), never from the wall clock, so a replay gives the same dates. The
phrases are those of the language packs' ``due`` patterns; a phrase this table does not
know keeps no date (the commitment then has no due date rather than a wrong one).

Rules a person would apply: "today", "tonight", "EOD" are the same day; "this week" and
"end of the week" the Friday of this week (the day itself when it is later in the week);
"next week" the Friday of next week; "this weekend" the Sunday of this week and "next weekend"
the Sunday after; a weekday the next such day after today; "end of the month", "this month"
and "later this month" the month's last day and "next month" the last day of next month ("I'm
going to a conference this month" is owed by the month's end, issue 37); "in 3 days" or "in
two weeks" that many days on; "in 5 hours" the day five hours on; an ISO date itself. A preposition in front of
the day ("by tomorrow", "bis Freitag", "pour vendredi", "entro domani") names the same day.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

# The names of the days and the months in the packs' languages (what a date word is to the
# claim and memory comparisons: not a name of a thing).
DAY_AND_MONTH_NAMES: Final = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "januar", "februar",
    "märz", "juni", "juli", "oktober", "dezember", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado",
    "domingo", "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
    "noviembre", "diciembre", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "janvier",
    "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre",
    "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica", "gennaio", "febbraio", "aprile",
    "maggio", "giugno", "luglio", "settembre", "ottobre", "dicembre", "segunda", "terça", "quarta", "quinta",
    "sexta", "janeiro", "fevereiro", "março", "maio", "junho", "julho", "setembro", "outubro", "dezembro",
    "понедельник", "вторник", "среда", "среду", "четверг", "пятница", "пятницу", "суббота", "субботу",
    "воскресенье", "январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь", "октябрь",
    "ноябрь", "декабрь",
})

_OFFSETS: Final[dict[str, int]] = {
    **dict.fromkeys((
        "today", "tonight", "this morning", "this afternoon", "this evening", "eod", "end of day",
        "end of the day", "by end of day", "by end of the day", "heute", "heute abend", "heute nachmittag", "hoy",
        "esta tarde", "esta noche", "aujourd'hui", "aujourd’hui", "ce soir", "oggi", "stasera", "hoje", "сегодня",
        "今日", "今夜", "今晩", "今天", "今晚", "오늘", "오늘 밤"), 0),
    **dict.fromkeys(("tomorrow", "morgen", "morgen früh", "mañana", "demain", "domani", "amanhã", "завтра",
                     "明日", "明天", "내일"), 1),
    **dict.fromkeys(("übermorgen", "pasado mañana", "après-demain", "dopodomani", "depois de amanhã",
                     "послезавтра", "明後日", "后天", "모레"), 2),
}
_THIS_WEEK: Final = frozenset((
    "this week", "end of week", "end of the week", "the end of the week", "by end of week", "by end of the week",
    "diese woche",
    "bis ende der woche", "esta semana", "cette semaine", "questa settimana", "на этой неделе", "今週", "本周", "这周",
    "이번 주"))
_NEXT_WEEK: Final = frozenset((
    "next week", "nächste woche", "la próxima semana", "la semana que viene", "la semaine prochaine",
    "la prossima settimana", "próxima semana", "na próxima semana", "semana que vem", "на следующей неделе", "来週",
    "下周", "다음 주"))
_THIS_WEEKEND: Final = frozenset((
    "this weekend", "later this weekend", "dieses wochenende", "am wochenende", "este fin de semana", "ce week-end",
    "questo fine settimana", "este fim de semana", "neste fim de semana", "на этих выходных", "今週末", "이번 주말",
    "本周末", "这周末"))
_NEXT_WEEKEND: Final = frozenset((
    "next weekend", "nächstes wochenende", "el próximo fin de semana", "le week-end prochain",
    "il prossimo fine settimana", "no próximo fim de semana", "на следующих выходных", "来週末", "다음 주말", "下周末"))
_END_OF_MONTH: Final = frozenset((
    "end of month", "end of the month", "the end of the month", "by end of month", "by end of the month",
    "this month", "later this month",
    "ende des monats", "diesen monat", "este mes", "fin de mes", "ce mois-ci", "la fin du mois", "questo mese",
    "fine mese", "este mês", "neste mês", "fim do mês", "o fim do mês", "в этом месяце", "к концу месяца", "今月",
    "이번 달", "这个月", "本月"))
_NEXT_MONTH: Final = frozenset((
    "next month", "nächsten monat", "el próximo mes", "el mes que viene", "le mois prochain", "il prossimo mese",
    "il mese prossimo", "no próximo mês", "o próximo mês", "mês que vem", "в следующем месяце", "来月", "다음 달",
    "下个月"))
_COUNTS: Final[dict[str, int]] = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_WEEKDAYS: Final[dict[str, int]] = {
    **{d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))},
    **{d: i for i, d in enumerate(("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"))},
    **{d: i for i, d in enumerate(("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"))},
    **{d: i for i, d in enumerate(("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"))},
    **{d: i for i, d in enumerate(("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"))},
    **{d: i for i, d in enumerate(("segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira",
                                   "sábado", "domingo"))},
    **{d: i for i, d in enumerate(("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу",
                                   "воскресенье"))},
    **{d: i for i, d in enumerate(("понедельнику", "вторнику", "среде", "четвергу", "пятнице", "субботе",
                                   "воскресенью"))},
}
_LEADING: Final = re.compile(r"^(?:by|on|until|next|bis|am|nächsten|el|в|ко?)\s+")
# "by tomorrow", "bis morgen", "para el viernes", "pour vendredi", "entro domani", "até amanhã":
# the day is the date, the preposition before it only says the work is done by then
_BY: Final = re.compile(r"^(?:by|until|before|bis|para|hasta|antes del?|pour|d['’]ici|avant|jusqu['’]à|entro|per"
                        r"|prima di|até)\s+")
_IN: Final = re.compile(r"^in (\d{1,3}|a|one|two|three|four) (hours?|days?|weeks?|stunden|tagen|wochen)$")
_ISO: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FRIDAY: Final = 4
_SUNDAY: Final = 6


def _friday_of(day: date, weeks: int) -> date:
    friday = day + timedelta(days=_FRIDAY - day.weekday() + 7 * weeks)
    return max(friday, day)


def _sunday_of(day: date, weeks: int) -> date:
    return day + timedelta(days=_SUNDAY - day.weekday() + 7 * weeks)


def _month_end(day: date, months: int) -> date:
    year, month = divmod(day.month - 1 + months, 12)
    year += day.year
    return date(year, month + 1, calendar.monthrange(year, month + 1)[1])


def _weekday(phrase: str, today: date) -> date | None:
    name = _LEADING.sub("", phrase).removesuffix(" prochain").strip()
    if name not in _WEEKDAYS:
        return None
    ahead = (_WEEKDAYS[name] - today.weekday() - 1) % 7 + 1  # the next such day after today
    return today + timedelta(days=ahead)


def _relative(phrase: str, local: datetime) -> date | None:
    found = _IN.match(phrase)
    if found is None:
        return None
    count, unit = found.group(1), found.group(2)
    n = _COUNTS[count] if count in _COUNTS else int(count)
    if unit.startswith(("hour", "stunde")):
        return (local + timedelta(hours=n)).date()
    days = n * 7 if unit.startswith(("week", "woche")) else n
    return local.date() + timedelta(days=days)


def due_date(phrase: str, ts: datetime, tz: ZoneInfo) -> date | None:
    """The day ``phrase`` names, counted from ``ts`` in ``tz``; None when it names none."""
    text = " ".join(phrase.lower().split())
    local = ts.astimezone(tz)
    day = _day(text, local)  # as written first: "bis ende der woche", "by end of day" are phrases of their own
    if day is None and (bare := _BY.sub("", text, count=1)) != text:
        day = _day(bare, local)
    return day


def _day(text: str, local: datetime) -> date | None:
    today = local.date()
    if text in _OFFSETS:
        return today + timedelta(days=_OFFSETS[text])
    if text in _THIS_WEEK:
        return _friday_of(today, 0)
    if text in _NEXT_WEEK:
        return _friday_of(today, 1)
    if text in _THIS_WEEKEND:
        return _sunday_of(today, 0)
    if text in _NEXT_WEEKEND:
        return _sunday_of(today, 1)
    if text in _END_OF_MONTH:
        return _month_end(today, 0)
    if text in _NEXT_MONTH:
        return _month_end(today, 1)
    if _ISO.match(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return None
    return _weekday(text, today) or _relative(text, local)


def due_string(phrase: str | None, ts: datetime, tz: ZoneInfo) -> str | None:
    """``due_date`` as the contract's ``due`` string (``YYYY-MM-DD``), or None."""
    if not phrase:
        return None
    day = due_date(phrase, ts, tz)
    return day.isoformat() if day is not None else None
