"""``cortex eval recall FILE``: the recall evaluation harness on the command line
(``register`` adds the ``eval`` commands to ``workers.cli``'s parser)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from shared.config import Settings
from workers.evals import SAMPLE_LOCOMO
from workers.evals.locomo import DatasetError


def register(sub: Any) -> None:
    ev = sub.add_parser("eval", help="measure a worker against a labelled dataset")
    esub = ev.add_subparsers(dest="eval_target", required=True, metavar="TARGET")
    rec = esub.add_parser(
        "recall",
        help="evidence recall@1/5/10 and MRR of the recall API on a LoCoMo-format file",
        description="Ingests each conversation of a LoCoMo-format JSON file through an embedded nats-server and "
                    "the recall worker (temporary data dir), asks every question of categories 1-4 through "
                    "cortex.api.recall.<agent> and prints evidence recall@k and MRR by category, query "
                    f"latency and the ingest rate. FILE 'sample' means the shipped sample ({SAMPLE_LOCOMO.name}).",
    )
    rec.add_argument("file", help="a LoCoMo-format JSON file (e.g. locomo10.json), or 'sample'")
    rec.add_argument("--out", help="also write the report as JSON to this file")
    rec.add_argument("--limit-conversations", type=int, metavar="N", help="evaluate only the first N conversations")
    rec.add_argument("--embedder", help="CORTEX_EMBEDDER for this run: default (static e5 word vectors), "
                                        "e5, hashing[:dim] or ollama[:url]; default: the setting")
    rec.add_argument("--limit", type=int, default=10, help="memories asked for per question (default 10)")
    rec.add_argument("--captions", action=argparse.BooleanOptionalAction, default=True,
                     help="a turn that shared a photo carries the dataset's caption as the image description a "
                          "gateway with media understanding publishes (default); --no-captions: its text alone")
    rec.add_argument("--access-feedback", action="store_true",
                     help="apply the recall_access feedback of replies while asking (order-dependent scores)")
    rec.add_argument("--traffic", choices=("both", "eval", "live"), default="both",
                     help="eval: session events, replies' feedback not applied; live: every turn just a message, "
                          "each reply's feedback applied before the next question (as a deployment); "
                          "both (default): one run each, reported side by side")
    rec.add_argument("--details", action="store_true", help="per-question ranks in the JSON report")
    rec.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    rec.set_defaults(handler=cmd_eval_recall)
    _register_briefing(esub)
    _register_traces(esub)


def _register_traces(esub: Any) -> None:
    tr = esub.add_parser(
        "traces",
        help="precision/recall of the trace analyzer's failure signals on labelled cases",
        description="Runs labelled cases (FILE, 'sample': the shipped set, or 'heldout': the set written after it "
                    "was tuned) through the pure trace core with every signal enabled and prints precision and "
                    "recall per signal, the cases missed and the false alarms; clean cases must give no finding.",
    )
    tr.add_argument("file", nargs="?", default="sample", help="a trace dataset (JSON), 'sample' or 'heldout'")
    tr.set_defaults(handler=cmd_eval_traces)


def _register_briefing(esub: Any) -> None:
    brief = esub.add_parser(
        "briefing",
        help="precision/recall of threads, decisions and commitments, and the briefing's reader-visible defects",
        description="Runs labelled conversations (FILE, or 'sample': the shipped set) through the pure cores and "
                    "then through an embedded nats-server and every worker, and prints precision and recall of "
                    "threads, decisions and commitments, the accuracy of reasons, due dates and statuses, and the "
                    "defects a reader meets in the stored BOOTSTRAP (repeated why, duplicate decision, cut "
                    "without an ellipsis or leaving a stub, boilerplate summary, missing narrative, lag line, one "
                    "fact said twice, an empty heading, a miscount, a pasted heading, two clocks).",
    )
    brief.add_argument("file", nargs="?", default="sample", help="a briefing dataset (JSON), or 'sample' (default)")
    brief.add_argument("--core-only", action="store_true", help="score the pure cores only (no server, seconds)")
    brief.add_argument("--conversation", action="append", metavar="NAME", help="only this conversation (repeatable)")
    brief.add_argument("--embedder", help="CORTEX_EMBEDDER for the pipeline run (default: the setting)")
    brief.add_argument("--examples", action="store_true", help="print every defect found with its text")
    brief.add_argument("--out", help="also write the report as JSON to this file")
    brief.add_argument("--llm", action="store_true",
                       help="also run the pipeline with the configured model (ANTHROPIC_API_KEY, or "
                            "CORTEX_LLM_PROVIDER with its key or CORTEX_LLM_BASE_URL) and report its scores beside "
                            "the structured path's")
    real = brief.add_argument_group(
        "real conversations (docs/briefing-eval.md)",
        "--real scores the next morning's BOOTSTRAP of public conversations nobody on the project wrote (LoCoMo's "
        "chats, QMSum's AMI meetings) against the shipped hand labels; the corpora are read from the given paths.")
    real.add_argument("--real", action="store_true", help="the real-conversation set instead of FILE")
    real.add_argument("--split", choices=("dev", "heldout", "acceptance"), default="dev",
                      help="dev: LoCoMo 0-4, QMSum train; heldout: LoCoMo 5-6, QMSum val (default dev)")
    real.add_argument("--locomo", metavar="PATH", help="LoCoMo's data/locomo10.json")
    real.add_argument("--qmsum", metavar="DIR", help="QMSum's data/ALL (or the repository holding it)")
    real.add_argument("--acceptance", action="store_true",
                      help="allow the acceptance split (LoCoMo 7-9, QMSum test): the project's final check only")
    real.add_argument("--labels", metavar="DIR", help="a labels directory (DIR/<split>/*.json) instead of the shipped "
                                                      "workers/evals/data/real")
    real.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    brief.set_defaults(handler=cmd_eval_briefing)


def _progress(quiet: bool) -> Any:
    def say(message: str) -> None:
        if not quiet:
            print(message, file=sys.stderr, flush=True)

    return say


async def cmd_eval_recall(args: argparse.Namespace, settings: Settings) -> int:
    from workers.evals.harness import (  # the recall stack
        TRAFFIC,
        EvalError,
        EvalOptions,
        format_table,
        report,
        run_eval,
    )

    path = SAMPLE_LOCOMO if args.file == "sample" else Path(args.file)
    if args.limit_conversations is not None and args.limit_conversations < 1:
        print("cortex: --limit-conversations must be at least 1", file=sys.stderr)
        return 2
    if not 1 <= args.limit <= 200:
        print("cortex: --limit must be between 1 and 200", file=sys.stderr)
        return 2
    reports: list[dict[str, Any]] = []
    for traffic in TRAFFIC if args.traffic == "both" else (args.traffic,):
        options = EvalOptions(embedder=args.embedder, limit_conversations=args.limit_conversations, limit=args.limit,
                              captions=args.captions, access_feedback=args.access_feedback, traffic=traffic,
                              details=args.details)
        try:
            result = await run_eval(path, options, settings, _progress(args.quiet))
        except (DatasetError, EvalError) as exc:
            print(f"cortex: {exc}", file=sys.stderr)
            return 1
        reports.append(report(result))
        print(("\n" if len(reports) > 1 else "") + format_table(reports[-1]), end="", flush=True)
    # the first run's report, and the other traffic's beside it under its name
    rep = {**reports[0], **{r["options"]["traffic"]: r for r in reports[1:]}}
    if args.out:
        await asyncio.to_thread(Path(args.out).write_text, json.dumps(rep, indent=2) + "\n", "utf-8")
        print(f"report written to {args.out}", file=sys.stderr)
    return 0


async def cmd_eval_briefing(args: argparse.Namespace, settings: Settings) -> int:
    from workers.evals import briefing
    from workers.evals.briefing_e2e import run_pipeline_eval
    from workers.evals.harness import EvalError  # what the pipeline run raises (it loads this module anyway)

    if args.llm and (args.core_only or settings.model_provider is None):
        print("cortex: --llm runs the pipeline with a model: set ANTHROPIC_API_KEY, or CORTEX_LLM_PROVIDER with its "
              "key or CORTEX_LLM_BASE_URL (docs/briefing-eval.md), and leave out --core-only", file=sys.stderr)
        return 2
    if args.real:
        return await _cmd_real(args, settings)
    path = briefing.SAMPLE_BRIEFING if args.file == "sample" else Path(args.file)
    try:
        dataset = briefing.load_dataset(path)
        core, per_core = briefing.run_core_eval(dataset, briefing.eval_settings(dataset, settings), args.conversation)
    except briefing.DatasetError as exc:
        print(f"cortex: {exc}", file=sys.stderr)
        return 1
    n = len(per_core)
    rep: dict[str, Any] = {"dataset": str(path), "conversations": n, "language": dataset.language,
                           "timezone": dataset.timezone, "core": briefing.score_report(core)}
    print(briefing.format_score(f"briefing eval: {path.name}, {n} conversations — cores", rep["core"]), end="")
    examples = list(core.examples)
    for llm in ([False, True] if args.llm else [False]) if not args.core_only else []:
        key, title = ("pipeline_llm", f"pipeline with the model ({_model_of(settings)})") if llm \
            else ("pipeline", "pipeline (stored documents and the session-start BOOTSTRAP)")
        _progress(False)(f"running the conversations through every worker (embedded nats-server"
                         f"{', with the model' if llm else ''})…")
        try:
            pipe, _ = await run_pipeline_eval(dataset, settings, args.conversation, args.embedder, _progress(False),
                                              llm=llm)
        except EvalError as exc:
            print(f"cortex: {exc}", file=sys.stderr)
            return 1
        rep[key] = briefing.score_report(pipe)
        print(briefing.format_score(title, rep[key]), end="")
        examples += [f"{key}: {e}" for e in pipe.examples]
    if args.llm:
        rep["model"] = _model_of(settings)
    rep["examples"] = examples
    if args.examples:
        print("\n".join(examples))
    if args.out:
        await asyncio.to_thread(Path(args.out).write_text, json.dumps(rep, indent=2, ensure_ascii=False) + "\n",
                                "utf-8")
        print(f"report written to {args.out}", file=sys.stderr)
    return 0


async def _cmd_real(args: argparse.Namespace, settings: Settings) -> int:
    from workers.evals import real_eval
    from workers.evals.harness import EvalError

    if args.file != "sample" or args.core_only:
        print("cortex: --real takes no FILE and no --core-only (it runs the whole pipeline)", file=sys.stderr)
        return 2
    options = real_eval.RealOptions(split=args.split, locomo=args.locomo, qmsum=args.qmsum,
                                    acceptance=args.acceptance, only=args.conversation or [], embedder=args.embedder,
                                    labels=args.labels)
    reports: list[dict[str, Any]] = []
    for llm in [False, True] if args.llm else [False]:
        try:
            result = await real_eval.run_real_eval(msgspec.structs.replace(options, llm=llm), settings,
                                                   _progress(args.quiet))
        except (DatasetError, EvalError) as exc:
            print(f"cortex: {exc}", file=sys.stderr)
            return 1
        reports.append(real_eval.report(result))
        if llm:
            print(f"\nwith the model ({_model_of(settings)}):")
        print(real_eval.format_report(reports[-1]), end="")
    rep = reports[0]
    if args.llm:  # the model's run beside the structured one
        rep = {**rep, "llm": {**reports[1], "model": _model_of(settings)}}
    if args.examples:
        for level in real_eval.LEVELS:
            print(f"\n{level}:")
            print("\n".join(rep["examples"][level]))
    if args.out:
        await asyncio.to_thread(Path(args.out).write_text, json.dumps(rep, indent=2, ensure_ascii=False) + "\n",
                                "utf-8")
        print(f"report written to {args.out}", file=sys.stderr)
    return 0


def _model_of(settings: Settings) -> str:
    """The provider and the models of each role, as a report names them."""
    from shared.llm.client import role_models

    models = sorted(set(role_models(settings).values()))
    return f"{settings.model_provider} {', '.join(models)}"


async def cmd_eval_traces(args: argparse.Namespace, settings: Settings) -> int:
    from workers.evals import traces

    named = {"sample": traces.SAMPLE_TRACES, "heldout": traces.HELDOUT_TRACES}
    path = named.get(args.file, Path(args.file))
    try:
        dataset = traces.load_dataset(path)
    except (OSError, ValueError) as exc:  # msgspec's DecodeError is a ValueError
        print(f"cortex: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    print(f"trace eval: {path.name}")
    every_signal = msgspec.structs.replace(settings.traces, signals="all")
    print(traces.render(traces.score(dataset, every_signal)))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m workers.evals.cli eval recall FILE``: the same command without the wrapper."""
    from workers.cli.base import Command, run_command

    parser = argparse.ArgumentParser(prog="python -m workers.evals.cli")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    handler: Command = args.handler
    return run_command(lambda settings: handler(args, settings), quiet=True)


if __name__ == "__main__":
    sys.exit(main())
