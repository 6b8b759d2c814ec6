"""Fixtures: FashionMNIST's test split from Debian's packaged IDX files, read here by numpy (the reference) and
written as Parquet and CSV by `feedline prepare` (the files feedline reads)."""

import gzip
import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

IDX_DIR = pathlib.Path(os.environ.get("FEEDLINE_FASHION_MNIST_IDX", "/usr/share/datasets/fashion-mnist"))
ROOT = pathlib.Path(__file__).resolve().parents[2]


def read_idx(path):
    """An IDX file (gzip or plain) as a numpy array, read as the format says: magic, dims, big-endian sizes."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def feedline_tool():
    build = pathlib.Path(os.environ.get("FEEDLINE_BUILD_DIR", ROOT / "build"))
    tool = build / "feedline"
    if not tool.exists():
        pytest.skip(f"the feedline tool is not built at {tool}")
    return str(tool)


@pytest.fixture(scope="session")
def idx_test():
    """FashionMNIST's 10,000 test images [N, 28, 28] uint8 and labels [N] int64, as torch tensors."""
    images = IDX_DIR / "t10k-images-idx3-ubyte.gz"
    labels = IDX_DIR / "t10k-labels-idx1-ubyte.gz"
    if not images.exists():
        pytest.skip(f"{images} is missing (Debian: apt install dataset-fashion-mnist)")
    return (torch.from_numpy(read_idx(images).copy()), torch.from_numpy(read_idx(labels).astype(np.int64)))


@pytest.fixture(scope="session")
def prepared(tmp_path_factory):
    """`feedline prepare` output for FashionMNIST: {"parquet": path, "csv": path} of the test split."""
    out = tmp_path_factory.mktemp("data")
    subprocess.run([feedline_tool(), "prepare", "--data-dir", str(out), "--dataset", "fashion-mnist",
                    "--fashion-mnist-idx", str(IDX_DIR)], check=True, stdout=subprocess.DEVNULL)
    folder = out / "FashionMNIST"
    return {"parquet": folder / "test.parquet", "csv": folder / "test.csv"}
