"""The retrieval claims decided only at the repro rung, at fresh seeds (issue 58): per-domain-beats-pooled and
gap-rule-precision at ``REGISTRY.fresh_seeds("repro")`` (>= 1000, drawn from the version and the date), the
retrieval stage only (:func:`iclr25.mmed_rag.experiments.run_retrieval`, about 25 s of CPU per seed).

``iclr25 claims mmed-rag --fresh`` decides the test rung's claims at fresh seeds (``claims-fresh.json``); the
test rung does not decide per-domain vs pooled retrieval (its retrievers are barely trained), so this script
does it at the repro rung and writes ``retrieval-fresh-repro.json`` (the format of ``claims.json``) in ``--out``::

    python benchmarks/retrieval_fresh.py --out packages/mmed-rag/benchmarks
"""

from __future__ import annotations

from iclr25.mmed_rag.claims import REGISTRY
from iclr25.utils.bench import benchmark_parser
from iclr25.utils.claims import ClaimsReport

CLAIMS = ("per-domain-beats-pooled", "gap-rule-precision")
RUNG = "repro"


def main() -> None:
    p = benchmark_parser(__doc__, out="results/mmed-rag-retrieval-fresh", raw=True)
    args = p.parse_args()
    seeds = REGISTRY.fresh_seeds(RUNG)
    results = [REGISTRY.decide(cid, RUNG, seeds) for cid in CLAIMS]
    report = ClaimsReport(REGISTRY.package, REGISTRY.version(), RUNG, results, seeds_from="fresh",
                          command="python benchmarks/retrieval_fresh.py")
    args.out.mkdir(parents=True, exist_ok=True)
    path = report.save(args.out / "retrieval-fresh-repro.json")
    for r in results:
        print(r.explain())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
