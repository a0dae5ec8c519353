"""`python -m bench`: the quick benchmarks (engine and matching); intake has its own CLI.

`python -m bench quality [...]` runs the digest-quality report instead (bench/bench_quality.py);
`python -m bench repo-config [...]` the repository-config report (bench/bench_repo_config.py);
`python -m bench writer [...]` the language-model writer on the corpus (bench/bench_writer.py);
`python -m bench corpus [...]` builds and uses the real-PR corpus (bench/corpus/cli.py);
`python -m bench neighbours [...]` how often each neighbours signal fires on the corpus
(bench/bench_neighbours.py);
`python -m bench conversation [...]` reviewers' asks and the thread's GitHub calls
(bench/bench_conversation.py).
"""

from __future__ import annotations

import sys

if sys.argv[1:2] == ["writer"]:
    from bench import bench_writer

    sys.exit(bench_writer.main(sys.argv[2:]))
if sys.argv[1:2] == ["corpus"]:
    from bench.corpus import cli

    sys.exit(cli.main(sys.argv[2:]))

from bench import bench_engine, bench_match, bench_quality

if sys.argv[1:2] == ["quality"]:
    sys.exit(bench_quality.main(sys.argv[2:]))
if sys.argv[1:2] == ["repo-config"]:
    from bench import bench_repo_config

    sys.exit(bench_repo_config.main(sys.argv[2:]))
if sys.argv[1:2] == ["neighbours"]:
    from bench import bench_neighbours

    sys.exit(bench_neighbours.main(sys.argv[2:]))
if sys.argv[1:2] == ["conversation"]:
    from bench import bench_conversation

    sys.exit(bench_conversation.main(sys.argv[2:]))
print("== rule matching (bench.bench_match) ==")
bench_match.main()
print("\n== whole digest (bench.bench_engine) ==")
bench_engine.main()
print("\nWebhook intake: python -m bench.bench_intake (see bench/README.md)")
print("Digest quality on real PRs: python -m bench quality (see bench/README.md)")
