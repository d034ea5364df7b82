"""A procedural three-domain medical-image generator (``medsynth``): radiology-, pathology- and
ophthalmology-like images with four findings each, templated reports and yes/no VQA.

Every finding has a per-image *contrast* c ~ U(contrast) that scales how visible it is (some findings are
barely visible, leaving room for retrieval), and written reports can disagree with the image with
probability ``label_noise`` (bad retrieved context). Rendering is vectorised numpy over the batch; smoothing
uses ``skimage.filters.gaussian``.

References: Xia et al., *MMed-RAG*, ICLR 2025 (the three domains of §4); the substitute data of the paper
note §5 (MIMIC-CXR, Quilt-1M and Harvard-FairVLMed cannot be downloaded).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.utils.io import DataFileError, read_npz, save_npz
from iclr25.utils.seeding import check_seed

__all__ = ["DOMAINS", "FINDINGS", "MedDataset", "generate", "generate_splits", "render", "make_report",
           "question", "vqa_items", "check_images", "domain_index", "load_dataset", "read_report", "harmonize"]

DOMAINS = ("radiology", "pathology", "ophthalmology")
FINDINGS = {
    "radiology": ("opacity", "cardiomegaly", "effusion", "nodule"),
    "pathology": ("hypercellularity", "atypia", "glands", "necrosis"),
    "ophthalmology": ("cupping", "hemorrhage", "drusen", "pallor"),
}
_INTRO = {"radiology": "chest x ray", "pathology": "tissue slide", "ophthalmology": "fundus photograph"}
# (positive variants, negative variants) per finding: two phrasings each so the text tower must read words
_SENTENCES = {
    "radiology": (
        (("opacity in the left lung", "left lung opacity"), ("no opacity", "lungs are clear")),
        (("heart is enlarged", "cardiomegaly"), ("heart size is normal", "no cardiomegaly")),
        (("pleural effusion", "effusion at the base"), ("no pleural effusion", "no effusion")),
        (("a nodule is seen", "lung nodule"), ("no nodule", "no nodule is seen")),
    ),
    "pathology": (
        (("high nuclear density", "hypercellular tissue"), ("normal nuclear density", "normal cellularity")),
        (("irregular nuclei", "nuclear atypia"), ("regular nuclei", "no atypia")),
        (("glands are present", "gland formation"), ("no glands", "no gland formation")),
        (("necrosis is present", "area of necrosis"), ("no necrosis", "necrosis is absent")),
    ),
    "ophthalmology": (
        (("large cup to disc ratio", "optic disc cupping"), ("normal cup to disc ratio", "no cupping")),
        (("retinal hemorrhages", "hemorrhage is seen"), ("no hemorrhage", "no retinal hemorrhages")),
        (("drusen are present", "macular drusen"), ("no drusen", "drusen are absent")),
        (("the disc is pale", "optic disc pallor"), ("disc color is normal", "no pallor")),
    ),
}
_QUESTIONS = {
    "radiology": ("is there an opacity", "is the heart enlarged", "is there an effusion", "is there a nodule"),
    "pathology": ("is the nuclear density high", "are the nuclei irregular", "are glands present",
                  "is there necrosis"),
    "ophthalmology": ("is the cup to disc ratio large", "is there a hemorrhage", "are there drusen",
                      "is the disc pale"),
}


def domain_index(domain: str | int) -> int:
    """The integer id of ``domain`` (a name in :data:`DOMAINS` or an id); ``ValueError`` names the choices."""
    if isinstance(domain, (int, np.integer)) and not isinstance(domain, bool):
        if 0 <= int(domain) < len(DOMAINS):
            return int(domain)
    elif isinstance(domain, str) and domain in DOMAINS:
        return DOMAINS.index(domain)
    raise ValueError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)} (or 0-{len(DOMAINS) - 1})")


def check_images(images: Any, *, name: str = "images") -> np.ndarray:
    """Validate an image batch and return it as float32 ``(N, 3, H, W)`` in [0, 1].

    Accepts ``(N, 3, H, W)`` or ``(N, H, W, 3)`` (channels last), uint8 (0-255) or float in [0, 1]. Raises
    ``ValueError`` naming ``name`` for a wrong rank or channel count, fewer than 8 pixels a side, NaN/inf, or
    float values outside [0, 1]; ``TypeError`` for a non-numeric dtype.
    """
    arr = np.asarray(images)
    if arr.dtype.kind not in "uif" or arr.dtype == np.bool_:
        raise TypeError(f"{name} must be a numeric array (uint8 or float), got dtype {arr.dtype}")
    if arr.ndim != 4:
        raise ValueError(f"{name} must have shape (N, 3, H, W) or (N, H, W, 3), got shape {arr.shape}")
    if arr.shape[1] != 3 and arr.shape[-1] == 3:
        arr = np.moveaxis(arr, -1, 1)
    if arr.shape[1] != 3:
        raise ValueError(f"{name} must have 3 colour channels, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 images)")
    if min(arr.shape[2:]) < 8:
        raise ValueError(f"{name} must be at least 8x8 pixels, got {arr.shape[2]}x{arr.shape[3]}")
    if arr.dtype.kind in "ui":
        if arr.min() < 0 or arr.max() > 255:
            raise ValueError(f"{name}: integer images must lie in 0..255, got [{arr.min()}, {arr.max()}]")
        return (arr.astype(np.float32) / 255.0)
    arr = arr.astype(np.float32)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf (corrupt images)")
    if arr.min() < -1e-6 or arr.max() > 1 + 1e-6:
        raise ValueError(f"{name}: float images must lie in [0, 1], got [{arr.min():.3g}, {arr.max():.3g}]")
    return np.clip(arr, 0.0, 1.0)


# ------------------------------------------------------------------------------------------------ rendering
def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.linspace(-1.0, 1.0, size, dtype=np.float32)
    yy, xx = np.meshgrid(t, t, indexing="ij")
    return yy[None], xx[None]


def _col(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float32)[:, None, None]


def _blob(yy, xx, cy, cx, sy, sx=None) -> np.ndarray:
    sx = sy if sx is None else sx
    return np.exp(-0.5 * (((yy - _col(cy)) / _col(sy)) ** 2 + ((xx - _col(cx)) / _col(sx)) ** 2))


def _smooth_noise(rng: np.random.Generator, n: int, size: int, sigma: float) -> np.ndarray:
    from skimage.filters import gaussian

    z = rng.standard_normal((n, size, size)).astype(np.float32)
    z = gaussian(z, sigma=(0, sigma, sigma), preserve_range=True).astype(np.float32)
    return z / (z.std(axis=(1, 2), keepdims=True) + 1e-6)


def _points(rng, n, k, yy, xx, cy, cx, r, stretch=None) -> np.ndarray:
    """Max over k Gaussian dots per image: (n, H, W); cy/cx/r are (n, k)."""
    out = np.zeros((n,) + yy.shape[1:], dtype=np.float32)
    for j in range(k):
        sx = r[:, j] if stretch is None else r[:, j] * stretch[:, j]
        out = np.maximum(out, _blob(yy, xx, cy[:, j], cx[:, j], r[:, j], sx))
    return out


def _radiology(rng, labels, c, size) -> np.ndarray:
    n = len(labels)
    yy, xx = _grid(size)
    img = 0.12 + 0.33 * (np.abs(xx) < 0.88) * (np.abs(yy) < 0.95)
    img = np.broadcast_to(img, (n, size, size)).astype(np.float32).copy()
    lung_x = 0.42 + 0.04 * rng.standard_normal(n)
    lung_ry = 0.62 + 0.05 * rng.standard_normal(n)
    lungs = np.zeros_like(img)
    for s in (-1, 1):
        e = (((xx - _col(s * lung_x)) / 0.3) ** 2 + ((yy + 0.05) / _col(lung_ry)) ** 2) < 1
        lungs = np.maximum(lungs, e.astype(np.float32))
    ribs = 0.07 * np.maximum(0.0, np.cos(yy * 15 + _col(rng.uniform(0, 6.28, n))))
    img = img - lungs * (0.27 - ribs)
    # heart: radius grows with cardiomegaly (a size finding: low contrast = borderline size)
    hr = (0.24 + 0.02 * rng.standard_normal(n)) * (1 + 0.5 * labels[:, 1] * c[:, 1])
    heart = (((xx - 0.08) / _col(hr * 1.1)) ** 2 + ((yy - 0.35) / _col(hr)) ** 2) < 1
    img = np.where(heart, 0.55, img)
    in_left = lungs * (xx < 0)
    opac_y = rng.uniform(-0.35, 0.3, n)
    img += 0.32 * _col(labels[:, 0] * c[:, 0]) * _blob(yy, xx, opac_y, -lung_x, np.full(n, 0.18)) * in_left
    eff = 1 / (1 + np.exp(-(yy - 0.38) / 0.04))
    img += 0.35 * _col(labels[:, 2] * c[:, 2]) * eff * lungs
    side = rng.choice([-1.0, 1.0], n)
    ny, nx = rng.uniform(-0.45, 0.2, n), side * (lung_x + rng.uniform(-0.1, 0.1, n))
    img += 0.45 * _col(labels[:, 3] * c[:, 3]) * _blob(yy, xx, ny, nx, np.full(n, 0.06))
    img += 0.035 * rng.standard_normal(img.shape).astype(np.float32)
    return np.repeat(img[:, None], 3, axis=1)


def _pathology(rng, labels, c, size) -> np.ndarray:
    n = len(labels)
    yy, xx = _grid(size)
    stroma = _smooth_noise(rng, n, size, sigma=size / 16)
    pink = np.array([0.92, 0.70, 0.82], np.float32)[None, :, None, None]
    img = pink + 0.04 * stroma[:, None]
    # glands: white lumen with a rim of nuclei
    gy, gx = rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n)
    gr = rng.uniform(0.22, 0.3, n)
    d = np.sqrt((yy - _col(gy)) ** 2 + (xx - _col(gx)) ** 2) / _col(gr)
    g = _col(labels[:, 2] * c[:, 2])
    lumen = g * (d < 0.75)
    rim = g * np.exp(-0.5 * ((d - 0.95) / 0.12) ** 2)
    img = img * (1 - lumen[:, None]) + lumen[:, None] * np.array([0.98, 0.96, 0.98], np.float32)[None, :, None, None]
    # necrosis: a pale patch with dark debris
    ny, nx = rng.uniform(-0.4, 0.4, n), rng.uniform(-0.4, 0.4, n)
    nec = _col(labels[:, 3] * c[:, 3]) * (_blob(yy, xx, ny, nx, np.full(n, 0.28)) > 0.5)
    img = img * (1 - nec[:, None]) + nec[:, None] * np.array([0.97, 0.55, 0.62], np.float32)[None, :, None, None]
    # nuclei: density and atypia (larger, elongated)
    k_max = 40
    k = np.round(16 * (1 + 1.4 * labels[:, 0] * c[:, 0])).astype(int)
    cy, cx = rng.uniform(-0.95, 0.95, (n, k_max)), rng.uniform(-0.95, 0.95, (n, k_max))
    r = np.full((n, k_max), 2.2 / size) * (1 + 0.9 * (labels[:, 1] * c[:, 1])[:, None]
                                          * rng.uniform(0.5, 1.0, (n, k_max)))
    stretch = 1 + 1.2 * (labels[:, 1] * c[:, 1])[:, None] * rng.uniform(0, 1, (n, k_max))
    r = np.where(np.arange(k_max)[None] < k[:, None], r, 1e-3)
    nuc = _points(rng, n, k_max, yy, xx, cy, cx, r, stretch)
    nuc = np.maximum(nuc * (1 - 0.8 * nec), rim)
    debris = _points(rng, n, 6, yy, xx, ny[:, None] + rng.uniform(-0.2, 0.2, (n, 6)),
                     nx[:, None] + rng.uniform(-0.2, 0.2, (n, 6)), np.full((n, 6), 1.2 / size)) * nec
    nuc = np.maximum(nuc, 0.7 * debris)
    purple = np.array([0.32, 0.16, 0.52], np.float32)[None, :, None, None]
    img = img * (1 - 0.85 * nuc[:, None]) + 0.85 * nuc[:, None] * purple
    img += 0.03 * rng.standard_normal(img.shape).astype(np.float32)
    return img


def _ophthalmology(rng, labels, c, size) -> np.ndarray:
    n = len(labels)
    yy, xx = _grid(size)
    rr = np.sqrt(yy ** 2 + xx ** 2)
    fundus = (rr < 0.93).astype(np.float32)
    base = np.array([0.78, 0.33, 0.14], np.float32)[None, :, None, None] * (1 - 0.35 * rr ** 2)[:, None]
    img = base * fundus[:, None] + 0.02 * _smooth_noise(rng, n, size, size / 10)[:, None] * fundus[:, None]
    dy, dx = 0.05 * rng.standard_normal(n), 0.45 + 0.05 * rng.standard_normal(n)
    # vessels: four lines through the disc
    ves = np.zeros((n, size, size), np.float32)
    for j, a0 in enumerate((0.6, -0.6, 2.4, -2.4)):
        a = a0 + 0.15 * rng.standard_normal(n)
        dist = np.abs(-(yy - _col(dy)) * _col(np.cos(a)) + (xx - _col(dx)) * _col(np.sin(a)))
        ves = np.maximum(ves, np.exp(-0.5 * (dist / (1.1 / size)) ** 2) * (j < 4))
    ves *= fundus
    img = img * (1 - 0.45 * ves[:, None]) + 0.45 * ves[:, None] * np.array([0.45, 0.05, 0.05], np.float32)[
        None, :, None, None]
    dr = 0.17 + 0.01 * rng.standard_normal(n)
    dd = np.sqrt((yy - _col(dy)) ** 2 + (xx - _col(dx)) ** 2) / _col(dr)
    pale = _col(labels[:, 3] * c[:, 3])[:, None]
    disc_col = (np.array([0.98, 0.78, 0.42], np.float32)[None, :, None, None] * (1 - pale)
                + pale * np.array([0.98, 0.95, 0.88], np.float32)[None, :, None, None])
    disc = (dd < 1)[:, None]
    img = np.where(disc, disc_col, img)
    cup_ratio = 0.35 + 0.04 * rng.standard_normal(n) + 0.4 * labels[:, 0] * c[:, 0]
    cup = (dd < _col(cup_ratio))[:, None]
    img = np.where(cup, np.array([1.0, 0.97, 0.85], np.float32)[None, :, None, None], img)
    hy, hx = rng.uniform(-0.6, 0.6, (n, 4)), rng.uniform(-0.7, 0.2, (n, 4))
    hem = _points(rng, n, 4, yy, xx, hy, hx, np.full((n, 4), 2.4 / size)) * _col(labels[:, 1] * c[:, 1]) * fundus
    img = img * (1 - 0.8 * hem[:, None]) + 0.8 * hem[:, None] * np.array([0.3, 0.02, 0.02], np.float32)[
        None, :, None, None]
    my, mx = rng.uniform(-0.25, 0.25, (n, 7)), -0.2 + rng.uniform(-0.25, 0.25, (n, 7))
    dru = _points(rng, n, 7, yy, xx, my, mx, np.full((n, 7), 1.3 / size)) * _col(labels[:, 2] * c[:, 2])
    img = img * (1 - 0.8 * dru[:, None]) + 0.8 * dru[:, None] * np.array([1.0, 0.92, 0.35], np.float32)[
        None, :, None, None]
    img += 0.025 * rng.standard_normal(img.shape).astype(np.float32) * fundus[:, None]
    return img


_RENDER = {"radiology": _radiology, "pathology": _pathology, "ophthalmology": _ophthalmology}


def render(domain: str | int, labels: Any, contrast: Any, *, size: int = 32, seed: int = 0) -> np.ndarray:
    """Render images of one domain: float32 ``(N, 3, size, size)`` in [0, 1].

    ``labels`` is an ``(N, 4)`` 0/1 array (the domain's findings, :data:`FINDINGS`), ``contrast`` an ``(N, 4)``
    array in [0, 1] scaling each finding's visibility (0 = invisible).
    """
    name = DOMAINS[domain_index(domain)]
    labels = np.asarray(labels)
    contrast = np.asarray(contrast, dtype=np.float32)
    if labels.ndim != 2 or labels.shape[1] != 4:
        raise ValueError(f"labels must have shape (N, 4), got {labels.shape}")
    if contrast.shape != labels.shape:
        raise ValueError(f"contrast must have the shape of labels {labels.shape}, got {contrast.shape}")
    if not isinstance(size, int) or size < 16 or size > 128:
        raise ValueError(f"size must be an integer in 16..128, got {size!r}")
    rng = np.random.default_rng(check_seed(seed))
    out = np.empty((len(labels), 3, size, size), np.float32)
    for s in range(0, len(labels), 256):  # chunks bound the (chunk, k, H, W) temporaries
        out[s:s + 256] = _RENDER[name](rng, labels[s:s + 256].astype(np.float32), contrast[s:s + 256], size)
    return np.clip(out, 0.0, 1.0)


def harmonize(images: Any) -> np.ndarray:
    """Remove what colour and brightness say about the domain: each image to grey (the channel mean, copied to
    the three channels), then its grey levels replaced by their rank among its pixels, scaled to [0, 1]
    (histogram equalisation). Every image then has the same grey-level histogram (mean 0.5 and the same spread,
    up to ties), so a router cannot tell the domains apart by mean colour or brightness; they differ only in
    structure (lungs, nuclei, a fundus disc), and a finding stays visible as far as it changes the order of grey
    levels (brighter or darker than its surroundings)."""
    x = check_images(images).mean(axis=1)
    n, h, w = x.shape
    flat = x.reshape(n, -1)
    rank = np.argsort(np.argsort(flat, axis=1, kind="stable"), axis=1, kind="stable")
    out = (rank / max(h * w - 1, 1)).astype(np.float32).reshape(n, 1, h, w)
    return np.repeat(out, 3, axis=1)


def make_report(domain: str | int, labels: Any, *, rng: np.random.Generator | None = None) -> str:
    """The templated report of one image: ``"<intro> . <finding 1> . ... . <finding 4> ."``."""
    name = DOMAINS[domain_index(domain)]
    rng = rng or np.random.default_rng(0)
    parts = [_INTRO[name]]
    for j, (pos, neg) in enumerate(_SENTENCES[name]):
        opts = pos if labels[j] else neg
        parts.append(opts[int(rng.integers(len(opts)))])
    return " . ".join(parts) + " ."


def _norm(text: str) -> str:
    return " ".join(w for w in text.lower().replace(".", " ").split())


# sentence (normalised) -> (finding, value) per domain, for reading reports back
_READ = {name: {_norm(phrase): (j, v) for j, pair in enumerate(sents) for v, opts in ((1, pair[0]), (0, pair[1]))
                for phrase in opts} for name, sents in _SENTENCES.items()}


def read_report(domain: str | int, text: str) -> np.ndarray:
    """The finding labels a (templated or generated) report states: (4,) int64, 1 present, 0 absent, −1 when
    the report states nothing, or both, about that finding. Sentences are read whole, so "no cardiomegaly"
    is not mistaken for "cardiomegaly"."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    table = _READ[DOMAINS[domain_index(domain)]]
    out = np.full(4, -1, np.int64)
    seen = np.zeros((4, 2), bool)
    for sentence in text.lower().split("."):
        hit = table.get(_norm(sentence))
        if hit is not None:
            seen[hit] = True
    out[seen[:, 1] & ~seen[:, 0]] = 1
    out[seen[:, 0] & ~seen[:, 1]] = 0
    return out


def question(domain: str | int, finding: int) -> str:
    """The yes/no question about ``finding`` (0-3) of ``domain``."""
    name = DOMAINS[domain_index(domain)]
    if not 0 <= int(finding) < 4:
        raise ValueError(f"finding must be in 0..3, got {finding!r}")
    return _QUESTIONS[name][int(finding)] + " ?"


# ------------------------------------------------------------------------------------------------ dataset
@dataclasses.dataclass(frozen=True)
class MedDataset:
    """Images with domains, true finding labels and (possibly noisy) written reports.

    Attributes: ``images`` float32 (N, 3, H, W) in [0, 1]; ``domains`` int64 (N,); ``labels`` int64 (N, 4)
    (what the image shows); ``report_labels`` int64 (N, 4) (what the report says: ``labels`` with
    ``label_noise`` flips); ``reports`` tuple of N strings; ``vocabulary``: None for the built-in four findings
    of each domain, else a :class:`~iclr25.mmed_rag.vocabulary.FindingVocabulary` of F findings (the user's own
    data; ``labels`` and ``report_labels`` are then (N, F)).
    """

    images: np.ndarray
    domains: np.ndarray
    labels: np.ndarray
    report_labels: np.ndarray
    reports: tuple[str, ...]
    vocabulary: Any = None

    def __post_init__(self) -> None:
        images = check_images(self.images)
        n = len(images)
        for name in ("domains", "labels", "report_labels"):
            arr = np.asarray(getattr(self, name))
            if len(arr) != n:
                raise ValueError(f"mismatched counts: {n} images but {len(arr)} {name}")
        if len(self.reports) != n:
            raise ValueError(f"mismatched counts: {n} images but {len(self.reports)} reports")
        domains = np.asarray(self.domains)
        if domains.ndim != 1 or domains.dtype.kind not in "iu" or domains.min() < 0 or domains.max() >= len(DOMAINS):
            raise ValueError(f"domains must be integers in 0..{len(DOMAINS) - 1}, got {np.unique(domains)[:5]}")
        for name in ("labels", "report_labels"):
            arr = np.asarray(getattr(self, name))
            if arr.shape != (n, self.n_findings) or not np.isin(arr, (0, 1)).all():
                raise ValueError(f"{name} must be an (N, {self.n_findings}) array of 0/1, got shape {arr.shape}")
        object.__setattr__(self, "images", images)
        object.__setattr__(self, "domains", domains.astype(np.int64))
        object.__setattr__(self, "labels", np.asarray(self.labels).astype(np.int64))
        object.__setattr__(self, "report_labels", np.asarray(self.report_labels).astype(np.int64))
        object.__setattr__(self, "reports", tuple(str(r) for r in self.reports))

    def __len__(self) -> int:
        return len(self.images)

    @property
    def n_findings(self) -> int:
        """Findings per image: 4 (built in) or the vocabulary's."""
        return 4 if self.vocabulary is None else len(self.vocabulary)

    def question(self, image: int, finding: int) -> str:
        """The yes/no question about ``finding`` of image ``image``."""
        if self.vocabulary is not None:
            return self.vocabulary.question(finding)
        return question(int(self.domains[int(image)]), int(finding))

    def read_report(self, image_domain: int, text: str) -> np.ndarray:
        """What ``text`` states about each finding (1, 0, −1; :func:`read_report` or the vocabulary's reading)."""
        return read_report(image_domain, text) if self.vocabulary is None else self.vocabulary.read(text)

    def subset(self, idx: Any) -> MedDataset:
        idx = np.asarray(idx)
        return MedDataset(self.images[idx], self.domains[idx], self.labels[idx], self.report_labels[idx],
                          tuple(self.reports[i] for i in np.arange(len(self))[idx]), vocabulary=self.vocabulary)

    def domain(self, domain: str | int) -> MedDataset:
        """The images of one domain."""
        return self.subset(np.flatnonzero(self.domains == domain_index(domain)))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write an ``.npz`` (images as uint8), atomically."""
        extra = {} if self.vocabulary is None else {"vocabulary": np.asarray(self.vocabulary.to_json(), np.str_)}
        return save_npz(path, images=np.round(self.images * 255).astype(np.uint8), domains=self.domains,
                        labels=self.labels, report_labels=self.report_labels,
                        reports=np.asarray(self.reports, dtype=np.str_), **extra)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> MedDataset:
        """Read a data set written by :meth:`save` (or your own ``.npz`` with ``images``, ``domains`` and
        ``reports``; ``labels``/``report_labels`` default to -1-free zeros when absent). Errors name the file."""
        arrays = read_npz(path, required=("images", "domains", "reports"), what="data set")
        n = len(arrays["images"])
        try:
            vocab = None
            if "vocabulary" in arrays:
                from .vocabulary import FindingVocabulary

                vocab = FindingVocabulary.from_mapping(json.loads(str(arrays["vocabulary"])))
            labels = arrays.get("labels", np.zeros((n, 4 if vocab is None else len(vocab)), np.int64))
            return cls(arrays["images"], arrays["domains"], labels, arrays.get("report_labels", labels),
                       tuple(str(r) for r in arrays["reports"]), vocabulary=vocab)
        except (ValueError, TypeError) as exc:
            raise DataFileError(path, str(exc)) from exc


def load_dataset(path: str | os.PathLike[str]) -> MedDataset:
    """:meth:`MedDataset.load`."""
    return MedDataset.load(path)


def generate(n_per_domain: int = 300, *, size: int = 32, prevalence: float = 0.3,
             contrast: tuple[float, float] = (0.15, 1.0), label_noise: float = 0.0,
             domains: tuple[str, ...] = DOMAINS, harmonized: bool = False, seed: int = 0) -> MedDataset:
    """Generate ``n_per_domain`` images of each domain with findings, contrasts and templated reports.

    Each finding is present with probability ``prevalence`` and, when present, has visibility
    c ~ U(contrast). Each written report label is flipped with probability ``label_noise``. ``harmonized``:
    every image through :func:`harmonize` (grey, same mean and contrast: the domain is not in the colour).
    """
    if not isinstance(n_per_domain, int) or n_per_domain < 1:
        raise ValueError(f"n_per_domain must be an integer >= 1, got {n_per_domain!r}")
    if not 0 < prevalence < 1:
        raise ValueError(f"prevalence must lie in (0, 1), got {prevalence!r}")
    lo, hi = contrast
    if not 0 <= lo <= hi <= 1:
        raise ValueError(f"contrast must be (lo, hi) with 0 <= lo <= hi <= 1, got {contrast!r}")
    if not 0 <= label_noise < 0.5:
        raise ValueError(f"label_noise must lie in [0, 0.5), got {label_noise!r}")
    rng = np.random.default_rng(check_seed(seed))
    parts = []
    for d in domains:
        di = domain_index(d)
        labels = (rng.random((n_per_domain, 4)) < prevalence).astype(np.int64)
        c = rng.uniform(lo, hi, (n_per_domain, 4)).astype(np.float32)
        imgs = render(di, labels, c, size=size, seed=int(rng.integers(2 ** 31)))
        if harmonized:
            imgs = harmonize(imgs)
        flips = (rng.random((n_per_domain, 4)) < label_noise).astype(np.int64)
        rep_labels = labels ^ flips
        reports = tuple(make_report(di, rl, rng=rng) for rl in rep_labels)
        parts.append((imgs, np.full(n_per_domain, di), labels, rep_labels, reports))
    perm = rng.permutation(n_per_domain * len(domains))
    reports = [r for p in parts for r in p[4]]
    return MedDataset(np.concatenate([p[0] for p in parts])[perm], np.concatenate([p[1] for p in parts])[perm],
                      np.concatenate([p[2] for p in parts])[perm], np.concatenate([p[3] for p in parts])[perm],
                      tuple(reports[i] for i in perm))


@dataclasses.dataclass(frozen=True)
class Splits:
    """The train (retriever + model training), db (retrieval database) and test splits."""

    train: MedDataset
    db: MedDataset
    test: MedDataset


def generate_splits(n_train: int = 600, n_db: int = 300, n_test: int = 200, *, size: int = 32,
                    contrast: tuple[float, float] = (0.15, 1.0), label_noise: float = 0.1, prevalence: float = 0.3,
                    harmonized: bool = False, seed: int = 0) -> Splits:
    """Three independent splits per domain; the DB's reports carry ``label_noise`` (train and test do not).
    ``prevalence``: each finding's probability (0.5: balanced yes/no answers, the answer prior at 0.5);
    ``harmonized``: grey images of equal mean and contrast (:func:`harmonize`)."""
    kw = dict(size=size, contrast=contrast, prevalence=prevalence, harmonized=harmonized)
    return Splits(generate(n_train, seed=seed, **kw),
                  generate(n_db, label_noise=label_noise, seed=seed + 1, **kw),
                  generate(n_test, seed=seed + 2, **kw))


def vqa_items(ds: MedDataset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (image, finding) question of ``ds``: ``(image_index, finding, answer)`` arrays, one per finding
    (4 per image, or the vocabulary's count)."""
    n, f = len(ds), ds.labels.shape[1]
    img = np.repeat(np.arange(n), f)
    fnd = np.tile(np.arange(f), n)
    return img, fnd, ds.labels[img, fnd]
