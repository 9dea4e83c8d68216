"""Settings: every knob from the environment, validated once; bad values name the variable."""

from __future__ import annotations

from typing import Annotated

import msgspec
import pytest

from shared.config import SettingsError, load_settings, parse_duration_s, parse_languages, settings_reference


def test_defaults_follow_the_plugin_design() -> None:
    s = load_settings({})
    assert (s.threads.prune_days, s.threads.max_threads) == (7, 50)
    assert (s.decisions.max_decisions, s.decisions.dedupe_window_hours) == (100, 24)
    assert s.boot.max_chars == 16000 and s.precompaction.max_snapshot_messages == 15
    assert s.languages == ("en", "de") and s.prefix == "cortex" and s.mode == "live"


def test_knobs_are_read_as_cortex_section_knob() -> None:
    s = load_settings({"CORTEX_THREADS_PRUNE_DAYS": "30", "CORTEX_BOOT_MAX_CHARS": "2000",
                       "CORTEX_BOOT_ON_SESSION_START": "false", "CORTEX_RECALL_DEDUP_THRESHOLD": "0.95",
                       "ANTHROPIC_API_KEY": "sk-x", "CORTEX_METRICS_PORT": "9464"})
    assert s.threads.prune_days == 30 and s.boot.max_chars == 2000 and not s.boot.on_session_start
    assert s.recall.dedup_threshold == 0.95 and s.anthropic_api_key == "sk-x" and s.metrics_port == 9464


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CORTEX_THREADS_PRUNE_DAYS": "0"}, "CORTEX_THREADS_PRUNE_DAYS='0': expected an integer between 1 and 90"),
        ({"CORTEX_THREADS_MAX_THREADS": "201"}, "between 5 and 200"),
        ({"CORTEX_BOOT_MAX_CHARS": "64001"},
         "CORTEX_BOOT_MAX_CHARS='64001': expected an integer between 2000 and 64000"),
        ({"CORTEX_DECISIONS_DEDUPE_WINDOW_HOURS": "x"}, "expected an integer between 1 and 168"),
        ({"CORTEX_PRECOMPACTION_MAX_SNAPSHOT_MESSAGES": "4"}, "between 5 and 50"),
        ({"CORTEX_BOOT_ENABLED": "perhaps"}, "expected true or false"),
        ({"CORTEX_MODE": "dark"}, "CORTEX_MODE='dark': expected one of live, shadow"),
        ({"CORTEX_LANGUAGE": "en,xx"}, "CORTEX_LANGUAGE='en,xx'"),
        ({"CORTEX_CHANNEL_MODES": "webchat=loud"}, "CORTEX_CHANNEL_MODES"),
        ({"CORTEX_TIMEZONE": "Nowhere/Land"}, "CORTEX_TIMEZONE='Nowhere/Land'"),
        ({"CORTEX_PREFIX": "a.b"}, "CORTEX_PREFIX='a.b'"),
        ({"CORTEX_DLQ_RETENTION": "forever"}, "bad duration 'forever'"),
        ({"CORTEX_PARTITIONS": "65"}, "CORTEX_PARTITIONS='65': expected an integer between 1 and 64"),
        ({"CORTEX_PARTITIONS": "2", "CORTEX_PARTITION": "2"}, "CORTEX_PARTITION='2': expected all, ordinal or a "
                                                              "number between 0 and 1"),
        ({"CORTEX_PARTITIONS": "2", "CORTEX_PARTITION": "ordinal", "HOSTNAME": "laptop"},
         "CORTEX_PARTITION=ordinal: the host name 'laptop' does not end in -<number>"),
    ],
)
def test_bad_values_stop_start_up_naming_the_variable_and_range(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(env)
    assert message in str(info.value)


def test_secrets_are_never_echoed_in_errors() -> None:
    with pytest.raises(SettingsError) as info:
        load_settings({"CORTEX_NATS_PASSWORD": "x", "CORTEX_LLM_DAILY_TOKENS": "-5"})
    assert "CORTEX_LLM_DAILY_TOKENS" in str(info.value)


def test_language_selection() -> None:
    assert parse_languages("both") == ("en", "de")
    assert parse_languages("fr") == ("fr",)
    assert parse_languages("de, en,de") == ("de", "en")
    assert len(parse_languages("all")) == 10


def test_durations() -> None:
    assert parse_duration_s("30d") == 30 * 86400 and parse_duration_s("90m") == 5400 and parse_duration_s("45") == 45


def test_every_setting_has_a_reference_row() -> None:
    rows = {name for name, _, _ in settings_reference()}
    assert {"CORTEX_NATS_URL", "CORTEX_THREADS_PRUNE_DAYS", "CORTEX_BOOT_MAX_CHARS", "ANTHROPIC_API_KEY",
            "CORTEX_RUNTIME_BATCH_SIZE"} <= rows


def test_partitions_a_process_runs() -> None:
    assert load_settings({}).own_partitions == [None]  # one partition: the unsuffixed consumer
    assert load_settings({"CORTEX_PARTITION": "ordinal", "HOSTNAME": "laptop"}).own_partitions == [None]
    assert load_settings({"CORTEX_PARTITIONS": "3"}).own_partitions == [0, 1, 2]  # all, in one process
    assert load_settings({"CORTEX_PARTITIONS": "3", "CORTEX_PARTITION": "1"}).own_partitions == [1]
    # a StatefulSet pod: ordinal k serves partition k mod N, so pods N..2N-1 are the standbys
    ordinal = {"CORTEX_PARTITIONS": "3", "CORTEX_PARTITION": "ordinal"}
    assert load_settings({**ordinal, "HOSTNAME": "cortex-threads-1"}).own_partitions == [1]
    assert load_settings({**ordinal, "HOSTNAME": "cortex-threads-4"}).own_partitions == [1]


class OwnSettings(msgspec.Struct, frozen=True, kw_only=True):
    limit: Annotated[int, msgspec.Meta(ge=1)] = 5
    url: str = ""


def test_a_workers_own_section_is_read_from_the_variables_no_built_in_setting_reads() -> None:
    settings = load_settings({"CORTEX_TOPICS_LIMIT": "7", "CORTEX_THREADS_ENABLED": "false", "OTHER": "x"})
    assert settings.others == {"CORTEX_TOPICS_LIMIT": "7"}
    assert settings.section("topics", OwnSettings) == OwnSettings(limit=7)
    assert load_settings({}).section("topics", OwnSettings) == OwnSettings()
    with pytest.raises(SettingsError, match="CORTEX_TOPICS_LIMIT='0': expected an integer >= 1"):
        load_settings({"CORTEX_TOPICS_LIMIT": "0"}).section("topics", OwnSettings)


@pytest.mark.parametrize(("worker", "taken"), [("nats", "CORTEX_NATS_URL"), ("boot", "the section boot")])
def test_a_workers_own_section_cannot_take_a_built_in_name(worker: str, taken: str) -> None:
    with pytest.raises(SettingsError, match=f"share the names of built-in ones \\({taken}\\)"):
        load_settings({}).section(worker, OwnSettings)


def _context(root: object, name: str, **fields: str) -> None:
    from pathlib import Path

    base = Path(str(root)) / "nats"
    (base / "context").mkdir(parents=True, exist_ok=True)
    (base / "context" / f"{name}.json").write_text(msgspec.json.encode({"description": "", **fields}).decode())


def test_without_cortex_nats_url_nats_url_names_the_server() -> None:
    """The NATS tools' convention (issue 44 item 1): a nats user's NATS_URL is read when
    CORTEX_NATS_URL is unset, and never over it."""
    s = load_settings({"NATS_URL": "nats://n1:4222,nats://n2:4222"})
    assert (s.nats_url, s.nats_origin) == ("nats://n1:4222,nats://n2:4222", "NATS_URL")
    s = load_settings({"NATS_URL": "nats://n1:4222", "CORTEX_NATS_URL": "nats://mine:4222"})
    assert (s.nats_url, s.nats_origin) == ("nats://mine:4222", "")


def test_the_nats_cli_context_names_the_server_and_its_credentials(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    _context(root, "dev", url="nats://dev:4222", user="alice", password="pw", creds="~/dev.creds", ca="$CAS/ca.pem")
    _context(root, "prod", url="tls://prod:4222", token="t0k")
    (root / "nats" / "context.txt").write_text("dev\n")
    env = {"XDG_CONFIG_HOME": str(root), "HOME": "/home/alice", "CAS": "/etc/cas"}
    s = load_settings(env)
    assert (s.nats_url, s.nats_origin) == ("nats://dev:4222", "the nats CLI's context 'dev'")
    assert (s.nats_user, s.nats_password, s.nats_creds, s.nats_tls_ca) == (
        "alice", "pw", "/home/alice/dev.creds", "/etc/cas/ca.pem")
    s = load_settings({**env, "NATS_CONTEXT": "prod"})  # the CLI's own selector
    assert (s.nats_url, s.nats_token, s.nats_user) == ("tls://prod:4222", "t0k", None)
    # Cortex's own credentials are never mixed with a context's; NATS_URL comes before any context
    s = load_settings({**env, "CORTEX_NATS_TOKEN": "mine"})
    assert (s.nats_token, s.nats_user, s.nats_password) == ("mine", None, None)
    assert load_settings({**env, "NATS_URL": "nats://x:1"}).nats_user is None
    # no context selected, a selection naming a missing file or a path: nothing
    (root / "nats" / "context.txt").write_text("../../etc/passwd")
    assert load_settings(env).nats_url is None
    assert load_settings({**env, "NATS_CONTEXT": "gone"}).nats_url is None
    assert load_settings({"HOME": str(root / "nobody")}).nats_url is None


def test_the_embedded_port_is_4222_unless_set() -> None:
    assert load_settings({}).nats_port is None  # 4222, or a free port when 4222 is taken
    assert load_settings({"CORTEX_NATS_PORT": "0"}).nats_port == 0
    with pytest.raises(SettingsError, match="CORTEX_NATS_PORT='70000'"):
        load_settings({"CORTEX_NATS_PORT": "70000"})


def test_a_provider_is_configured_only_when_named_or_by_anthropics_key() -> None:
    """Issue 38: no LLM on any path unless configured; ANTHROPIC_API_KEY alone still means
    Anthropic (the contract); an OpenAI key alone in the environment means nothing."""
    from shared.llm import make_provider

    assert load_settings({}).model_provider is None and make_provider(load_settings({})) is None
    assert load_settings({"OPENAI_API_KEY": "sk-o"}).model_provider is None
    anthropic = load_settings({"ANTHROPIC_API_KEY": "sk-a"})
    assert (anthropic.model_provider, anthropic.model_key) == ("anthropic", "sk-a")
    local = load_settings({"CORTEX_LLM_PROVIDER": "openai", "CORTEX_LLM_BASE_URL": "http://localhost:11434/v1",
                           "CORTEX_LLM_MODEL": "llama3.1:8b"})
    assert (local.model_provider, local.model_key) == ("openai", None)
    assert load_settings({"CORTEX_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o", "CORTEX_LLM_API_KEY": "sk-l",
                          "CORTEX_LLM_MODEL": "gpt-4.1-mini"}).model_key == "sk-l"


@pytest.mark.parametrize(("env", "message"), [
    ({"CORTEX_LLM_PROVIDER": "anthropic"}, "set ANTHROPIC_API_KEY"),
    ({"CORTEX_LLM_PROVIDER": "openai", "CORTEX_LLM_MODEL": "gpt-4.1-mini"}, "OPENAI_API_KEY .* CORTEX_LLM_BASE_URL"),
    ({"CORTEX_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-o"}, "set CORTEX_LLM_MODEL"),
    ({"CORTEX_LLM_PROVIDER": "mistral"}, "CORTEX_LLM_PROVIDER='mistral': expected one of anthropic, openai"),
])
def test_a_provider_named_without_what_it_needs_names_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load_settings(env)

