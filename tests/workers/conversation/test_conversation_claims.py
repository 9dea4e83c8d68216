"""Claims beyond the copula, in every language pack (issue 41): a newer statement replaces
an older one when a number, version, name or date at its end changes ("since", "now", "no
longer" set aside), and a statement of the past or of one occasion claims nothing."""

from __future__ import annotations

import pytest

from workers.conversation.claims import claim_of, conflicts


@pytest.mark.parametrize(("old", "new"), [
    ("The API runs on Postgres 14.", "The API runs on Postgres 16 since the upgrade."),
    ("Maria works at Acme Analytics GmbH.", "Maria works at Globex now."),
    ("I have 2 kids.", "I have 3 kids."),
    ("We deploy on Tuesdays.", "We deploy on Thursdays now."),
    ("The standup is at 9:30.", "The standup is at 10:00 from now on."),
    ("The server IP is 10.0.0.11.", "The server IP is 10.0.0.12."),
    ("We use Postgres 14.", "We use Postgres 16."),
    ("Die API läuft auf Postgres 14.", "Die API läuft seit dem Upgrade auf Postgres 16."),
    ("Der Deploy-Tag ist Dienstag.", "Der Deploy-Tag ist jetzt Donnerstag."),
    ("El día de despliegue es el martes.", "El día de despliegue ahora es el jueves."),
    ("Le jour de déploiement est le mardi.", "Le jour de déploiement est désormais le jeudi."),
    ("Le serveur est à Paris.", "Le serveur n'est plus à Paris."),
    ("Il giorno di rilascio è martedì.", "Il giorno di rilascio è giovedì."),
    ("O dia de deploy é terça.", "O dia de deploy agora é quinta."),
    ("Сервер работает на Postgres 14.", "Сервер теперь работает на Postgres 16."),
    ("デプロイ日は火曜日です。", "デプロイ日は木曜日です。"),
    ("배포일은 화요일입니다.", "배포일은 이제 목요일입니다."),
    ("部署日是星期二。", "部署日现在是星期四。"),
])
def test_a_changed_value_replaces_the_older_statement_in_every_language(old: str, new: str) -> None:
    assert conflicts(claim_of(new, "al"), claim_of(old, "al")), (claim_of(old, "al"), claim_of(new, "al"))


@pytest.mark.parametrize(("old", "new"), [
    ("I ran 5 miles today.", "I ran 10 miles today."),  # two runs
    ("Caroline went to 3 concerts last year.", "Caroline went to 5 concerts last year."),
    ("I painted 2 pictures.", "I painted 3 pictures."),  # the past
    ("I have 2 kids.", "I have 3 cats."),  # another thing counted
    ("I love Paris.", "I love Rome."),  # a name after a verb that holds many
    ("We use Postgres.", "We use Redis."),
    ("No, the deploy day is Tuesday.", "The deploy day is Tuesday."),  # an interjection, not a negation
    ("The API runs on Postgres 14.", "The web app runs on Postgres 16."),  # another subject
])
def test_what_is_no_change_of_value(old: str, new: str) -> None:
    assert not conflicts(claim_of(new, "al"), claim_of(old, "al"))


def test_a_restatement_with_now_is_the_same_claim() -> None:
    assert claim_of("Our deploy day is Thursday now.") == claim_of("The deploy day is Thursday.")
    assert claim_of("The API runs on Postgres 16 since the upgrade.") == claim_of("The API runs on Postgres 16.")
