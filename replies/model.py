"""The local reply classifier: linear models (scikit-learn) over character and word n-grams, trained on the
shipped corpus in data/replies/ (hand-written phrasings in 12 languages, JSON Lines, composed into messages by
replies.corpus.build).

Two heads over the same text: the intent of a person-written reply (`interested`, `not_interested`,
`unsubscribe`, `other`, `out_of_office`) and its language (ISO 639-1). No network and no download: the model is
built deterministically from the repository's own files (`make install` runs `python -m replies.model`; the
first use builds it if it is missing) and cached as `var/replies_model/model-<digest>.pkl`, where the digest
covers the corpus (its data files and its composer), this file, the text extraction (replies.mailtext) and the
scikit-learn version, so a change to any of them rebuilds it.
`REPLIES_MODEL_DIR` moves the cache.

    python -m replies.model            # build (or find) the model with every CPU, printing progress
    python -m replies.model --serial   # the same build in one process
    python -m replies.model --evaluate # also the validation figures
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import re
import sys
import tempfile
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

INTENTS = ("interested", "not_interested", "unsubscribe", "other", "out_of_office")
LANGS = ("en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "pl", "ja", "zh")
MAX_CHARS = 2000
_lock = threading.Lock()
_model = None
load_seconds: float | None = None  # how long the last load (or build) took, for the benchmark and the logs

URL_RE = re.compile(r"https?://\S+|www\.\S+")
EMAIL_RE = re.compile(r"\S+@\S+\.\w+")
DIGITS_RE = re.compile(r"\d")


@dataclass
class Prediction:
    label: str
    language: str | None
    confidence: float
    runner_up: str | None = None  # the second-best label
    margin: float = 0.0  # decision score of the label minus the runner-up's


def model_text(text: str) -> str:
    """What the model reads: the reply's own text (quotes and signature already removed), normalized. Never
    the subject: a reply's subject is the pitch's ("Re: …"), which says nothing of the person's intent, and a
    model that reads it learns the training pitches' subjects (a subject-only vote labelled empty replies and
    forwards on unseen mail)."""
    value = unicodedata.normalize("NFKC", (text or "")[:MAX_CHARS])
    value = value.replace("’", "'").replace("‘", "'")
    value = URL_RE.sub(" url ", value)
    value = EMAIL_RE.sub(" email ", value)
    value = DIGITS_RE.sub("0", value)
    return value.lower()


def _lang_text(text: str) -> str:
    value = unicodedata.normalize("NFKC", (text or "")[:MAX_CHARS])
    value = URL_RE.sub(" ", EMAIL_RE.sub(" ", value))
    return DIGITS_RE.sub(" ", value).lower()


def _digest() -> str:
    import sklearn

    from replies.corpus.build import sources_digest

    h = hashlib.sha256()
    h.update(sources_digest().encode())
    h.update(Path(__file__).read_bytes())
    h.update(Path(__file__).with_name("mailtext.py").read_bytes())  # the text extraction the model learns on
    h.update(sklearn.__version__.encode())
    return h.hexdigest()[:16]


def model_dir() -> Path:
    default = Path(__file__).resolve().parents[1] / "var" / "replies_model"
    return Path(os.environ.get("REPLIES_MODEL_DIR") or default)


def model_path() -> Path:
    return model_dir() / f"model-{_digest()}.pkl"


def _extract(raw: bytes) -> tuple[str, str] | None:
    """(model text, language text) of one corpus message, extracted as classify does; None when it has no text of
    its own (a forward without comment, an empty reply): nothing to learn."""
    from replies.mailtext import body_text, parse, strip_quotes_and_signature

    own = strip_quotes_and_signature(body_text(parse(raw)))
    if not own.strip():
        return None
    return model_text(own), _lang_text(own)


def _extract_row(row: dict):
    texts = _extract(row["raw"])
    return None if texts is None else (*texts, row["label"], row["lang"], row["split"])


def training_rows(split: str | None = "train"):
    """(model text, language text, label, lang, split) for each corpus message, extracted as classify does."""
    from replies.corpus.build import corpus

    for row in corpus():
        if split is not None and row["split"] != split:
            continue
        extracted = _extract_row(row)
        if extracted is not None:
            yield extracted


class _Progress:
    """Progress lines while the model builds: one every PROGRESS_SECONDS at most, and a heartbeat thread that says
    which step is running when a step (a fit) prints nothing itself, so the build never runs silently for long."""

    def __init__(self, out):
        self.out = out
        self.started = time.perf_counter()
        self.step = "starting"
        self.count = 0
        self.last = 0.0
        self._stop = threading.Event()
        self._thread = None

    def say(self, text: str) -> None:
        if self.out is not None:
            print(f"[replies model] {text} ({time.perf_counter() - self.started:.0f} s)", file=self.out, flush=True)
        self.last = time.perf_counter()

    def set_step(self, step: str) -> None:
        self.step, self.count = step, 0
        self.say(step)

    def tick(self, count: int) -> None:
        self.count = count
        if time.perf_counter() - self.last >= PROGRESS_SECONDS:
            self.say(f"{self.step}: {count:,} messages")

    def __enter__(self):
        def beat():
            while not self._stop.wait(1.0):
                if time.perf_counter() - self.last >= PROGRESS_SECONDS:
                    self.say(f"{self.step}: {self.count:,} messages" if self.count else f"{self.step}: still running")

        if self.out is not None:
            self._thread = threading.Thread(target=beat, name="replies-model-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


PROGRESS_SECONDS = 5.0


def _rows_parallel(workers: int, progress: _Progress) -> list:
    """Every corpus message's row, in corpus order, the text extraction (email parsing, quote and signature
    stripping: about half the build) spread over `workers` processes while this one composes the messages."""
    import multiprocessing

    from replies.corpus.build import corpus

    rows = []
    if workers <= 1:
        for n, row in enumerate(corpus(), 1):
            extracted = _extract_row(row)
            if extracted is not None:
                rows.append(extracted)
            progress.tick(n)
        return rows
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for n, extracted in enumerate(pool.imap(_extract_row, corpus(), chunksize=64), 1):
            if extracted is not None:
                rows.append(extracted)
            progress.tick(n)
    return rows


def _pipelines():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.svm import LinearSVC

    intent = Pipeline([
        ("features", FeatureUnion([
            ("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), min_df=2, sublinear_tf=True,
                                      max_features=300_000)),
            ("words", TfidfVectorizer(analyzer="word", ngram_range=(1, 2), min_df=2, sublinear_tf=True,
                                      token_pattern=r"(?u)\b\w+\b")),
        ])),
        ("clf", LinearSVC(C=0.5, class_weight="balanced", random_state=0, max_iter=5000)),
    ])
    language = Pipeline([
        ("features", TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), min_df=2, sublinear_tf=True)),
        ("clf", LinearSVC(C=0.5, random_state=0, max_iter=5000)),
    ])
    return intent, language


def _fit_language(rows):
    _, language = _pipelines()
    lang_rows = [r for r in rows if r[1].strip()]
    language.fit([r[1] for r in lang_rows], [r[3] for r in lang_rows])
    return language


def fit(rows, workers: int = 1, progress: _Progress | None = None):
    """Both heads on `rows`; with `workers` > 1 the language head is fitted in a second process meanwhile (the
    same estimator on the same rows: the same model as one process fits)."""
    progress = progress or _Progress(None)
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(1) as pool:
            language_job = pool.apply_async(_fit_language, ([(None, r[1], None, r[3]) for r in rows],))
            progress.set_step(f"fitting the intent and language heads on {len(rows):,} messages")
            intent, _ = _pipelines()
            intent.fit([r[0] for r in rows], [r[2] for r in rows])
            progress.set_step("intent head fitted; waiting for the language head")
            language = language_job.get()
    else:
        progress.set_step(f"fitting the intent head on {len(rows):,} messages")
        intent, _ = _pipelines()
        intent.fit([r[0] for r in rows], [r[2] for r in rows])
        progress.set_step("fitting the language head")
        language = _fit_language(rows)
    return {"intent": intent, "language": language}


def build(path: Path | None = None, workers: int = 1, out=None) -> Path:
    """Train both heads on the whole shipped corpus (both splits) and write them atomically; returns the path.
    The validation figures come from `evaluate()`, which trains a separate model on the train split only.
    `workers` processes share the work (the command line uses every CPU; a build on first use inside the service
    stays in its process); `out` (a text stream) receives progress lines."""
    path = path or model_path()
    with _Progress(out) as progress:
        progress.set_step("composing and reading the training corpus")
        rows = _rows_parallel(workers, progress)
        model = fit(rows, workers=workers, progress=progress)
        progress.set_step("writing the model")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".model-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump({**model, "digest": path.stem}, fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        for stale in path.parent.glob("model-*.pkl"):  # models of older sources are never loaded again
            if stale != path:
                with contextlib.suppress(OSError):
                    stale.unlink()
    return path


def load():
    """The model (built on first use if the cache has none for these sources)."""
    global _model, load_seconds
    if _model is not None:
        return _model
    with _lock:
        if _model is None:
            started = time.perf_counter()
            path = model_path()
            if not path.exists():
                build(path)
            with open(path, "rb") as fh:
                loaded = pickle.load(fh)  # noqa: S301 - our own artifact, built from the repository's files
            loaded["_fast"] = (_Linear(loaded["intent"]), _Linear(loaded["language"]))
            _model = loaded
            load_seconds = time.perf_counter() - started
    return _model


class _Block:
    """One fitted TfidfVectorizer as plain lookups: analyzer, vocabulary, idf (same numbers as transform())."""

    def __init__(self, vectorizer):
        self.analyze = vectorizer.build_analyzer()
        self.vocabulary = vectorizer.vocabulary_
        self.idf = vectorizer.idf_
        self.sublinear = vectorizer.sublinear_tf

    def features(self, text: str, offset: int):
        import math

        counts: dict[int, int] = {}
        vocab = self.vocabulary
        for gram in self.analyze(text):
            j = vocab.get(gram)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        idx = list(counts)
        vals = [((1 + math.log(c)) if self.sublinear else c) * self.idf[j] for j, c in counts.items()]
        norm = math.sqrt(sum(v * v for v in vals)) or 1.0
        return [offset + j for j in idx], [v / norm for v in vals]


class _Linear:
    """A fitted Pipeline(tf-idf blocks -> linear model) scored without scikit-learn's per-call overhead
    (validation, joblib dispatch): about 1 ms a message instead of 10. Same scores as decision_function()."""

    def __init__(self, pipeline):
        import numpy as np

        features, clf = pipeline.steps[0][1], pipeline.steps[-1][1]
        vectorizers = [t for _, t in features.transformer_list] if hasattr(features, "transformer_list") \
            else [features]
        self.blocks, self.offsets, offset = [], [], 0
        for vec in vectorizers:
            self.blocks.append(_Block(vec))
            self.offsets.append(offset)
            offset += len(vec.vocabulary_)
        self.weights = np.ascontiguousarray(clf.coef_.T)
        self.bias = clf.intercept_
        self.classes = [str(c) for c in clf.classes_]

    def scores(self, text: str):
        import numpy as np

        idx: list[int] = []
        vals: list[float] = []
        for block, offset in zip(self.blocks, self.offsets, strict=True):
            i, v = block.features(text, offset)
            idx += i
            vals += v
        if not idx:
            return self.bias.copy()
        return np.asarray(vals) @ self.weights[idx] + self.bias

    def predict(self, text: str) -> str:
        return self.classes[int(self.scores(text).argmax())]


def scorers():
    """(intent, language) fast scorers over the loaded model."""
    return load()["_fast"]


def _confidence(scores) -> float:
    import numpy as np

    s = np.asarray(scores, dtype="float64").ravel()
    e = np.exp((s - s.max()) * 3.0)
    return float(e.max() / e.sum())


HAS_LETTER_RE = re.compile(r"[^\W\d_]", re.U)


def predict(text: str) -> Prediction:
    intent, _ = scorers()
    scores = intent.scores(model_text(text))
    first, second = (int(i) for i in scores.argsort()[::-1][:2])
    language = detect_language(text)
    return Prediction(label=intent.classes[first], language=language, confidence=round(_confidence(scores), 3),
                      runner_up=intent.classes[second], margin=float(scores[first] - scores[second]))


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the text among the 12 trained languages, None when there are no letters to read."""
    value = _lang_text(text)
    if not HAS_LETTER_RE.search(value):
        return None
    if re.search(r"[\u3040-\u30ff]", value):  # kana is only Japanese
        return "ja"
    return scorers()[1].predict(value)


def evaluate() -> dict:
    """Accuracy on the validation split (phrasings the train split never contains) of a model trained on the
    train split only: overall, per label, per language, and the language identification."""
    from collections import Counter

    everything = list(training_rows(None))
    model = fit([r for r in everything if r[4] == "train"])
    hits, totals = Counter(), Counter()
    lang_hits = 0
    rows = [r for r in everything if r[4] == "validation"]
    predicted = model["intent"].predict([r[0] for r in rows])
    for r, p in zip(rows, predicted, strict=True):
        for key in ("all", f"label:{r[2]}", f"lang:{r[3]}"):
            totals[key] += 1
            hits[key] += int(p == r[2])
        lang_hits += int(detect_language_from(model, r[1]) == r[3])
    out = {k: (hits[k], totals[k]) for k in sorted(totals)}
    out["language_id"] = (lang_hits, len(rows))
    return out


def detect_language_from(model, lang_text: str) -> str | None:
    if not HAS_LETTER_RE.search(lang_text):
        return None
    if re.search(r"[\u3040-\u30ff]", lang_text):
        return "ja"
    return str(model["language"].predict([lang_text])[0])


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    path = model_path()
    if not path.exists():
        workers = 1 if "--serial" in argv else max(1, min(4, os.cpu_count() or 1))
        print(f"building the reply classifier's model (once per corpus change, {workers} processes) ...", flush=True)
        build(path, workers=workers, out=sys.stdout)
        print(f"built {path} in {time.perf_counter() - started:.1f}s")
    else:
        print(f"model up to date: {path}")
    if "--evaluate" in argv:
        for key, (hit, total) in evaluate().items():
            print(f"{key:24} {hit:5}/{total:<5} {hit / total:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
