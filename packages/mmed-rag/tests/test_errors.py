"""Claim 4: bad input raises ValueError/TypeError whose message names the argument and what was expected."""

import numpy as np
import pytest
import torch

from iclr25.mmed_rag import (
    DomainIndex,
    MedDataset,
    VectorIndex,
    check_images,
    domain_index,
    dpo_loss,
    gap_select,
    generate,
    load_dataset,
    select_contexts,
)
from iclr25.utils.io import DataFileError


@pytest.fixture(scope="module")
def small():
    return generate(4, seed=0)


def test_unknown_domain():
    with pytest.raises(ValueError, match="unknown domain 'dermatology'"):
        domain_index("dermatology")
    di = DomainIndex().add_shard("radiology", np.eye(3), ["a", "b", "c"], np.zeros((3, 4)))
    with pytest.raises(ValueError, match="unknown domain 'pathology'.*radiology"):
        di.search("pathology", np.ones(3), 1)


def test_empty_index():
    with pytest.raises(ValueError, match="index is empty"):
        VectorIndex(4, backend="faiss-flat").search(np.ones(4), 1)
    with pytest.raises(ValueError, match="non-empty"):
        DomainIndex().add_shard("radiology", np.zeros((0, 4)), [], np.zeros((0, 4)))


def test_index_arguments():
    with pytest.raises(ValueError, match="backend must be one of"):
        VectorIndex(4, backend="annoy")
    idx = VectorIndex(4, backend="numpy").add(np.eye(4))
    with pytest.raises(ValueError, match="dimension 3"):
        idx.search(np.ones(3), 1)
    with pytest.raises(ValueError, match="k must be"):
        idx.search(np.ones(4), 0)
    with pytest.raises(ValueError, match="NaN"):
        idx.add(np.full((1, 4), np.nan))


def test_mismatched_counts(small):
    with pytest.raises(ValueError, match="mismatched counts: 12 images but 11 reports"):
        MedDataset(small.images, small.domains, small.labels, small.report_labels, small.reports[:-1])
    with pytest.raises(ValueError, match="mismatched counts"):
        DomainIndex().add_shard("radiology", np.eye(3), ["a", "b"], np.zeros((3, 4)))


def test_corrupt_images():
    with pytest.raises(ValueError, match="images contains NaN"):
        check_images(np.full((2, 3, 16, 16), np.nan, np.float32))
    with pytest.raises(ValueError, match=r"images must have shape \(N, 3, H, W\)"):
        check_images(np.zeros((3, 16, 16)))
    with pytest.raises(ValueError, match="3 colour channels"):
        check_images(np.zeros((2, 4, 16, 16)))
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        check_images(np.full((1, 3, 16, 16), 2.0))
    with pytest.raises(TypeError, match="numeric"):
        check_images(np.array([[["a"]]]))


def test_corrupt_dataset_file(tmp_path, small):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    with pytest.raises(DataFileError, match="bad.npz"):
        load_dataset(bad)
    np.savez(tmp_path / "short.npz", images=small.images, domains=small.domains, reports=np.asarray(small.reports[:3]))
    with pytest.raises(DataFileError, match="short.npz.*mismatched counts"):
        load_dataset(tmp_path / "short.npz")


def test_selection_arguments():
    with pytest.raises(ValueError, match="sorted in decreasing order"):
        gap_select([0.5, 0.9], gamma=0.1)
    with pytest.raises(ValueError, match="gamma must be"):
        gap_select([0.9, 0.5], gamma=-1)
    with pytest.raises(ValueError, match="rule must be one of"):
        select_contexts([0.9], rule="topp")


def test_dpo_arguments():
    t = torch.zeros(3)
    with pytest.raises(ValueError, match="beta must be"):
        dpo_loss(t, t, t, t, beta=0)
    with pytest.raises(ValueError, match="reference_rejected_logps has shape"):
        dpo_loss(t, t, t, torch.zeros(2))
    with pytest.raises(TypeError, match="policy_chosen_logps must be a torch.Tensor"):
        dpo_loss([0.0], t, t, t)
