"""`python -m bench corpus COMMAND …`: build and use the real-PR corpus (issue 44).

  releases VERSION…            fetch vLLM sdists, verify their sha256, commit + tag each
  cut [--spec FILE…]           specs (bench/corpus/specs/pr<N>.yaml) -> corpus cases
                               (tests/fixtures/cases/real/corpus/pr<N>.json)
  show-blocks --spec FILE      each file's numbered diff blocks, to choose a spec's `blocks:`
  config RELEASE…              a release's repository config -> tests/fixtures/vllm_config/
  import FILE [--holdout]      old-style case lists (real_prs.json) -> one corpus file per PR
  packets OUT_DIR [--only pr…] blind judge packets, one folder per PR; with --rejudge only
                               the PRs whose digest changed, their new items marked JUDGE
  merge DIR                    fold re-judged YAML (DIR/pr*.yaml) into bench/judged/corpus
  content [--writer DIR]       record each judgement's content sha (its digest without the
                               hidden marker): a rule edit that moves only the marker's
                               rules version leaves that digest judged

The cache (sdists and the release repository) is --cache, else $PR_DIGEST_CORPUS_DIR,
else ~/.cache/pr-digest/corpus.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.corpus import releases
from bench.corpus.cut import CutError, ReleaseRepo, blocks_of, cut_case, find_window
from bench.corpus.spec import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "bench/corpus/specs"
CORPUS = ROOT / "tests/fixtures/cases/real/corpus"


def _repo(args: argparse.Namespace) -> ReleaseRepo:
    return ReleaseRepo(releases.repo_dir(releases.cache_dir(args.cache)))


def _releases(args: argparse.Namespace) -> int:
    cache = releases.cache_dir(args.cache)
    try:
        added = releases.build(args.versions, cache)
    except releases.ReleaseError as error:
        print(f"error: {error}")
        return 1
    repo = releases.repo_dir(cache)
    if added:
        releases.checkout_newest(repo)
    print(f"{repo}: {' '.join('v' + v for v in releases.tags(repo))}")
    return 0


def write_case(case: dict[str, object], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{case['name']}.json"
    target.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def _cut(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.spec] if args.spec else sorted(SPECS.glob("pr*.yaml"))
    if not paths:
        print(f"no specs given and none in {SPECS}")
        return 1
    repo = _repo(args)
    failed = 0
    for path in paths:
        try:
            case = cut_case(repo, load_spec(path))
        except (SpecError, CutError) as error:
            print(f"error: {error}")
            failed += 1
            continue
        target = write_case(case, args.out)
        source = case["source"]
        assert isinstance(source, dict)
        pair = "->".join(source["release_pair"])
        sizes = ", ".join(f"{p} {s}" for p, s in source["per_file"].items())
        print(f"{case['name']}: {pair} · {sizes} · {target}")
    return 1 if failed else 0


def _show_blocks(args: argparse.Namespace) -> int:
    try:
        spec = load_spec(Path(args.spec))
        repo = _repo(args)
        pair = spec.release_pair or find_window(repo, spec.tokens, spec.files).pair
    except (SpecError, CutError) as error:
        print(f"error: {error}")
        return 1
    print(f"{spec.name}: v{pair[0]} -> v{pair[1]}")
    for path in spec.files:
        old, new = repo.text(pair[0], path), repo.text(pair[1], path)
        _, _, blocks = blocks_of(old or "", new or "")
        state = "added" if old is None else "removed" if new is None else f"{len(blocks)} blocks"
        print(f"\n=== {path} ({state})")
        for block in blocks:
            hit = any(t in "".join(block.old_lines + block.new_lines) for t in spec.tokens)
            print(
                f"--- [{block.index}] {block.tag} A{block.old[0] + 1}-{block.old[1]} "
                f"B{block.new[0] + 1}-{block.new[1]}{'  ← token' if hit else ''}"
            )
            shown = [f"-{line}" for line in block.old_lines] + [
                f"+{line}" for line in block.new_lines
            ]
            for line in shown[: args.lines]:
                print("    " + line.rstrip("\n"))
            if len(shown) > args.lines:
                print(f"    … {len(shown) - args.lines} more lines")
    return 0


def _config(args: argparse.Namespace) -> int:
    from bench.corpus.config import write_config

    repo = _repo(args)
    for release in args.releases:
        try:
            written = write_config(repo, release)
        except CutError as error:
            print(f"error: {error}")
            return 1
        print(f"{release}: {len(written)} files in tests/fixtures/vllm_config/{release}/")
    return 0


def _import(args: argparse.Namespace) -> int:
    from bench.corpus.cases import import_legacy

    for case in import_legacy(Path(args.file), holdout=args.holdout):
        write_case(case, args.out)
        print(f"{case['name']}: holdout={case['holdout']}")
    return 0


def _packets(args: argparse.Namespace) -> int:
    from bench.corpus.packets import write_packets

    written = write_packets(args.out_dir, only=set(args.only or ()), rejudge=args.rejudge,
                            writer=args.writer)
    print(f"{len(written)} packets in {args.out_dir}")
    return 0


def _merge(args: argparse.Namespace) -> int:
    import yaml

    from bench.corpus.cases import digest_document, load_corpus, render_case
    from bench.corpus.items import split_items
    from bench.corpus.rejudge import merge, record_content
    from bench.corpus.written import WRITER_JUDGED, renderer
    from bench.quality_corpus import JUDGED_DIR, JudgementError, parse_judgement

    render = render_case if args.writer is None else renderer(args.writer)
    into = JUDGED_DIR if args.writer is None else WRITER_JUDGED
    into.mkdir(parents=True, exist_ok=True)
    cases = {case.name: case for case in load_corpus()}
    for path in sorted(Path(args.dir).glob("pr*.yaml")):
        case = cases.get(path.stem)
        if case is None:
            print(f"{path}: no corpus case {path.stem}", file=sys.stderr)
            return 2
        stored = into / path.name
        # A written digest's first judgement carries the plain digest's verdicts on the
        # items both show (the judge was told they are kept).
        carried = stored if stored.exists() else JUDGED_DIR / path.name
        try:
            new = yaml.safe_load(path.read_text(encoding="utf-8"))
            old = yaml.safe_load(carried.read_text(encoding="utf-8")) if carried.exists() else None
            rendered = render(case)
            document = digest_document(rendered)
            merged = merge(old, new, split_items(rendered.markdown), str(path))
            record_content(merged, document)
            parse_judgement(merged, str(path))
        except (yaml.YAMLError, JudgementError) as error:
            print(f"{path}: {error}", file=sys.stderr)
            return 2
        stored.write_text(yaml.safe_dump(merged, allow_unicode=True, sort_keys=False,
                                         width=100), encoding="utf-8")
        print(f"{path.stem}: {len(merged['items'])} verdicts")
    return 0


def _content(args: argparse.Namespace) -> int:
    """Record `content` (the digest's sha without its marker line) in each stored
    judgement made on today's digest, so a later rule edit that only moves the marker's
    rules version does not send unchanged digests back to the judges."""
    import yaml

    from bench.corpus.cases import digest_document, load_corpus, render_case
    from bench.corpus.rejudge import record_content
    from bench.corpus.written import WRITER_JUDGED, renderer
    from bench.quality_corpus import JUDGED_DIR

    render = render_case if args.writer is None else renderer(args.writer)
    into = JUDGED_DIR if args.writer is None else WRITER_JUDGED
    recorded = 0
    for case in load_corpus():
        stored = into / f"{case.name}.yaml"
        if not stored.exists():
            continue
        judged = yaml.safe_load(stored.read_text(encoding="utf-8"))
        if judged.get("content") or not record_content(judged, digest_document(render(case))):
            continue
        stored.write_text(yaml.safe_dump(judged, allow_unicode=True, sort_keys=False,
                                         width=100), encoding="utf-8")
        recorded += 1
    print(f"content recorded in {recorded} judgements in {into}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m bench corpus",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--cache", help="the corpus cache dir")
    commands = top.add_subparsers(dest="command", required=True)
    rel = commands.add_parser("releases", help="fetch sdists into the release git repository")
    rel.add_argument("versions", nargs="+", metavar="VERSION")
    rel.set_defaults(run=_releases)
    cut = commands.add_parser("cut", help="cut spec files into corpus cases")
    cut.add_argument(
        "--spec", nargs="+", help="spec files (default: every bench/corpus/specs/pr*.yaml)"
    )
    cut.add_argument("--out", type=Path, default=CORPUS, help="where the cases go")
    cut.set_defaults(run=_cut)
    show = commands.add_parser("show-blocks", help="print each file's numbered diff blocks")
    show.add_argument("--spec", required=True)
    show.add_argument("--lines", type=int, default=14, help="lines shown per block")
    show.set_defaults(run=_show_blocks)
    config = commands.add_parser("config", help="copy a release's repository config")
    config.add_argument("releases", nargs="+", metavar="RELEASE")
    config.set_defaults(run=_config)
    imp = commands.add_parser("import", help="split an old case list into corpus files")
    imp.add_argument("file")
    imp.add_argument("--holdout", action="store_true", help="mark them held out")
    imp.add_argument("--out", type=Path, default=CORPUS)
    imp.set_defaults(run=_import)
    packets = commands.add_parser("packets", help="write blind judge packets")
    packets.add_argument("out_dir", type=Path)
    packets.add_argument("--only", nargs="+", metavar="prN")
    packets.add_argument(
        "--rejudge", action="store_true",
        help="only the PRs whose digest changed since judged, new items marked JUDGE",
    )
    packets.add_argument(
        "--writer", type=Path, metavar="DIR",
        help="the written digests from the recorded completions in DIR (issue 41), "
             "judged apart in bench/judged/writer",
    )
    packets.set_defaults(run=_packets)
    merge = commands.add_parser(
        "merge", help="fold re-judged YAML files (DIR/pr*.yaml) into bench/judged/corpus"
    )
    merge.add_argument("dir", type=Path)
    merge.add_argument(
        "--writer", type=Path, metavar="DIR",
        help="the judgements are of the written digests of DIR's completions: into "
             "bench/judged/writer",
    )
    merge.set_defaults(run=_merge)
    content = commands.add_parser(
        "content", help="record each judgement's content sha (its digest without the marker)")
    content.add_argument("--writer", type=Path, default=None,
                         help="the written digests' judgements (recorded completions DIR)")
    content.set_defaults(run=_content)
    return top


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    code: int = args.run(args)
    return code
