#!/usr/bin/env python
"""Reply classification throughput of the complete default classifier (`replies.classify.classify`: rules plus
the local model, one thread) over the labelled corpus (tests/data/replies), against a baseline measured in the
same run: parsing each message with the stdlib `email` package (policy=default) and reading its text body,
which every classifier has to do anyway. Also reports the local model's load time at start-up (unpickling the
cached artifact; the first build after a corpus change is reported separately by `python -m replies.model`).

    .venv/bin/python bench/replies_classify.py [--rounds 20]
"""

import argparse
import email
import email.policy
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    from replies import classify as cl
    from replies import model

    model.model_path()  # digest computed outside the timing
    started = time.perf_counter()
    model.load()
    print(f"model load at start-up: {time.perf_counter() - started:.2f} s ({model.model_path().name})")

    corpus = [p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "replies").glob("*/*.eml"))]
    n = len(corpus) * args.rounds

    def baseline():
        for raw in corpus:
            msg = email.message_from_bytes(raw, policy=email.policy.default)
            body = msg.get_body(("plain", "html"))
            if body is not None:
                try:
                    body.get_content()
                except (LookupError, KeyError):
                    pass

    def rules():
        for raw in corpus:
            cl.classify(raw)

    results = {}
    for name, fn in (("baseline: parse + body", baseline), ("classify (rules+model)", rules)):
        fn()  # warm-up (regex compilation, imports)
        start = time.perf_counter()
        for _ in range(args.rounds):
            fn()
        elapsed = time.perf_counter() - start
        results[name] = elapsed
        print(f"{name:24s} {n / elapsed:8.0f} messages/s  ({elapsed / n * 1e3:.3f} ms each)")
    ratio = results["classify (rules+model)"] / results["baseline: parse + body"]
    print(f"classify costs {ratio:.1f}x a bare parse; {len(corpus)} corpus messages x {args.rounds} rounds")


if __name__ == "__main__":
    main()
