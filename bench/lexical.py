"""Words beside meaning: does the head's logistic regression gain from lexical features?

    python bench/lexical.py [--data ../shared/data] [--seeds 13 15]

A measurement for a change that was then built and not kept (issue 31 item 2, "research
and measure"; README, "Words beside meaning"): the gains below did not survive the whole
head, whose routes wrong at >= 0.9 rose on every set. The head (`classifiers.head`) fits its
multinomial logistic regression on the encoder's unit vectors alone. Here the same fit (`head_fit.fit_logistic`, the same L2) runs on those vectors
and on the vectors with word features beside them: TF-IDF of words and word pairs over the
training texts (sublinear counts, smoothed idf, each row L2-normalised, then scaled by
`alpha`), written here in numpy, as the core would need it (no scikit-learn at run time).

Accuracy is the argmax over the modes on in-scope rows, nothing else: no calibration, no
in-scope step, no framing or conversation step, no learning. So it says whether the words
carry what the vectors miss, not what the router would score.

- **banking77** and **snips2017**: bench/head.py's sets and draws (its `load_sets`, `draw`:
  k = 20 examples per mode, the held-out intents' rows left out of the test), seeds 13 and
  15 by default (21 and 23 were kept for the whole head's check).
- **default pack**: its descriptions and examples as training rows; tested on the
  single-turn, in-scope lines of `default.jsonl` (tuned on) and of `default_heldout.jsonl`
  and `default_heldout_b.jsonl` (held out, each already scored as a whole before).
  `plain_heldout.jsonl` is not read here: it was kept for the whole router's check.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.head import draw, load_sets  # noqa: E402
from modes_tui.core.routing.classifiers.head_fit import fit_logistic  # noqa: E402

ALPHAS = (0.5, 1.0)
PACK_FILES = ("default.jsonl", "default_heldout.jsonl", "default_heldout_b.jsonl")
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def terms(text: str) -> list[str]:
    """Words and adjacent word pairs, lower-cased."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


class Lexical:
    """TF-IDF over the training texts' terms; `rows(texts)` gives L2-normalised rows."""

    def __init__(self, texts: Sequence[str]) -> None:
        counts = Counter(term for text in texts for term in set(terms(text)))
        self.index = {term: i for i, term in enumerate(sorted(counts))}
        n = len(texts)
        self.idf = np.array(
            [math.log((1 + n) / (1 + counts[t])) + 1.0 for t in sorted(counts)], dtype=np.float64
        )

    def rows(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), len(self.index)))
        for row, text in enumerate(texts):
            for term, count in Counter(terms(text)).items():
                column = self.index.get(term)
                if column is not None:
                    out[row, column] = (1.0 + math.log(count)) * self.idf[column]
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out


def accuracies(
    train: Sequence[str], labels: Sequence[str], test: Sequence[str], truth: Sequence[str], enc: Any
) -> dict[str, float]:
    """Argmax accuracy on `test`: the vectors alone, then with word features at each alpha."""
    names = sorted(set(labels))
    y = np.array([names.index(m) for m in labels])
    want = np.array([names.index(m) for m in truth])
    vectors, test_vectors = enc(train), enc(test)
    lexical = Lexical(train)
    words, test_words = lexical.rows(train), lexical.rows(test)
    out = {}
    for alpha in (0.0, *ALPHAS):
        x = np.hstack([vectors, alpha * words]) if alpha else vectors
        xt = np.hstack([test_vectors, alpha * test_words]) if alpha else test_vectors
        w, b = fit_logistic(x, y, len(names))
        out["vectors" if not alpha else f"+words {alpha}"] = float(
            ((xt @ w + b).argmax(axis=1) == want).mean()
        )
    return out


def pack_rows() -> tuple[list[str], list[str]]:
    import yaml

    texts, labels = [], []
    for profile in sorted((ROOT / "profiles" / "default").glob("*.yaml")):
        data = yaml.safe_load(profile.read_text(encoding="utf-8")) or {}
        if "examples" in data:
            for text in [data["description"], *data["examples"]]:
                texts.append(str(text))
                labels.append(str(data["name"]))
    return texts, labels


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--seeds", type=int, nargs="+", default=[13, 15])
    args = parser.parse_args(argv)
    from bench.routing import Vectors
    from modes_tui.llm.encoders import MiniLMEncoder

    encoder = MiniLMEncoder()
    enc = Vectors(encoder)
    print(f"encoder layers: {encoder.runtime}; alpha: the word features' scale\n")
    print(
        "| set | seed / file | test rows | vectors | " + " | ".join(f"+ words {a}" for a in ALPHAS)
    )
    print("|---|---|---|---|" + "---|" * len(ALPHAS))

    def line(name: str, where: str, rows: int, got: dict[str, float]) -> None:
        cells = " | ".join(f"{v:.3f}" for v in got.values())
        print(f"| {name} | {where} | {rows} | {cells} |", flush=True)

    for task in load_sets(args.data, 3080):
        test = [(t, m) for t, m in task.test if m is not None]
        for seed in args.seeds:
            drawn = draw(task, seed, 1000)
            train = [(t, m) for m, texts in drawn.examples.items() for t in texts]
            got = accuracies(
                [t for t, _ in train], [m for _, m in train], [t for t, _ in test],
                [m for _, m in test], enc,
            )  # fmt: skip
            line(task.name, str(seed), len(test), got)
    texts, labels = pack_rows()
    for name in PACK_FILES:
        lines = [json.loads(raw) for raw in (ROOT / "bench" / "evals" / name).open()]
        rows = [r for r in lines if r.get("mode") and not r.get("history")]
        got = accuracies(texts, labels, [r["text"] for r in rows], [r["mode"] for r in rows], enc)
        line("default pack", name, len(rows), got)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
