"""feedline's readers over s3:// URLs, as a user reaches them from Python: read_parquet, read_csv, ImageDataset and
DataLoader over tar shards and a folder of class folders, each against the same files read from disk. Needs the test
servers (tests/remote/servers.py; CTest's fixture remote_servers starts them and sets FEEDLINE_TEST_SERVERS)."""

import io
import os
import pathlib
import sys
import tarfile
import uuid

import pytest
import torch

import feedline
from feedline import transforms as T

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVERS = os.environ.get("FEEDLINE_TEST_SERVERS")

pytestmark = pytest.mark.skipif(
    not SERVERS, reason="FEEDLINE_TEST_SERVERS is not set: these tests read from the test S3 server that "
                        "tests/remote/servers.py starts (CTest's remote_servers fixture sets it)")

BUCKET = "feedline-python"
PNG = ROOT / "tests" / "data" / "images" / "chelsea.png"
JPEG = ROOT / "tests" / "data" / "images" / "chelsea_444_progressive.jpg"
HF = ROOT / "tests" / "data" / "images" / "hf"


@pytest.fixture(scope="module")
def s3():
    """The S3 client of the independent uploader, and this run's key prefix; the process reads the server's keys."""
    sys.path.insert(0, str(ROOT / "tests" / "remote"))
    import s3tool  # noqa: E402  (botocore, only where the servers are)

    info = s3tool.s3_info(SERVERS)
    env = {"AWS_ACCESS_KEY_ID": info["access_key"], "AWS_SECRET_ACCESS_KEY": info["secret_key"],
           "AWS_ENDPOINT_URL": info["endpoint"], "AWS_REGION": info["region"], "AWS_CONFIG_FILE": os.devnull,
           "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
    saved = {name: os.environ.get(name) for name in list(env) + ["AWS_PROFILE", "AWS_SESSION_TOKEN"]}
    os.environ.update(env)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        os.environ.pop(name, None)
    client = s3tool.client(info)
    s3tool.make_bucket(client, BUCKET)
    yield s3tool, client, f"py-{uuid.uuid4().hex[:12]}/"
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def upload(s3, local, name):
    """Uploads the files under `local`; their s3:// folder URL."""
    s3tool, client, prefix = s3
    s3tool.put_dir(client, BUCKET, prefix + name + "/", str(local))
    return f"s3://{BUCKET}/{prefix}{name}/"


def batches(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def same_batches(a, b):
    return len(a) == len(b) and all(torch.equal(x, u) and torch.equal(y, v) for (x, y), (u, v) in zip(a, b))


def test_read_parquet_from_s3_equals_the_local_read(s3):
    url = upload(s3, HF, "hf")
    for local, remote in ((HF / "plain.parquet", url + "plain.parquet"), (HF / "train", url + "train"),
                          (HF / "train" / "*.parquet", url + "train/*.parquet")):
        want = feedline.read_parquet(str(local), columns=["label"])
        got = feedline.read_parquet(remote, columns=["label"])
        assert list(got) == list(want)
        assert torch.equal(got["label"], want["label"]), remote
    with pytest.raises(ValueError, match="no object matches"):
        feedline.read_parquet(url + "train/nothing-*.parquet")


def test_read_csv_from_s3_equals_the_local_read(s3, tmp_path):
    folder = tmp_path / "csv"
    folder.mkdir()
    rows = ["label,x,y"] + [f"{i % 10},{i * 3},{i / 7:.5f}" for i in range(500)]
    (folder / "train.csv").write_text("\n".join(rows) + "\n")
    url = upload(s3, folder, "csv")
    want = feedline.read_csv(str(folder / "train.csv"))
    got = feedline.read_csv(url + "train.csv")
    assert list(got) == list(want)
    for name in want:
        assert torch.equal(got[name], want[name]), name


def make_shards(folder, shards=3, per_shard=6):
    """WebDataset shards of the test photos, labels 0..3."""
    folder.mkdir()
    photos = [PNG.read_bytes(), JPEG.read_bytes()]
    n = 0
    for s in range(shards):
        with tarfile.open(folder / f"train-{s:06d}.tar", "w") as tar:
            for _ in range(per_shard):
                for suffix, data in ((("png", "jpg")[n % 2], photos[n % 2]), ("cls", str(n % 4).encode())):
                    member = tarfile.TarInfo(f"s{n:06d}.{suffix}")
                    member.size = len(data)
                    tar.addfile(member, io.BytesIO(data))
                n += 1


def make_tree(folder):
    for path, photo in (("cat/a.png", PNG), ("cat/sub/b.jpg", JPEG), ("dog/c.jpg", JPEG), ("dog/d.png", PNG),
                        ("eel/e.png", PNG)):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(photo.read_bytes())


@pytest.mark.parametrize("name, pattern", [("brace", "train-{000000..000002}.tar"), ("glob", "train-*.tar")])
def test_dataloader_over_s3_tar_shards_equals_the_local_one(s3, tmp_path, name, pattern):
    local = tmp_path / "shards"
    make_shards(local)
    url = upload(s3, local, "shards-" + name)
    pipeline = T.Compose([T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.PILToTensor()])
    want_ds = feedline.ImageDataset(str(local / pattern), transform=pipeline)
    got_ds = feedline.ImageDataset(url + pattern, transform=pipeline)
    assert got_ds.kind == "tar shards"
    assert got_ds.targets == want_ds.targets
    for workers in (0, 2):
        want = batches(feedline.DataLoader(want_ds, batch_size=4, shuffle=True, num_workers=workers, seed=9))
        got = batches(feedline.DataLoader(got_ds, batch_size=4, shuffle=True, num_workers=workers, seed=9))
        assert same_batches(want, got), workers


def test_image_folder_over_s3_equals_the_local_one(s3, tmp_path):
    local = tmp_path / "tree"
    make_tree(local)
    url = upload(s3, local, "tree")
    pipeline = T.Compose([T.Resize(12), T.CenterCrop(12), T.ToTensor()])
    want_ds = feedline.ImageFolder(str(local), transform=pipeline)
    got_ds = feedline.ImageFolder(url, transform=pipeline)
    assert got_ds.classes == want_ds.classes == ["cat", "dog", "eel"]
    assert got_ds.class_to_idx == want_ds.class_to_idx
    assert [(p[len(url):], c) for p, c in got_ds.samples] == [(p[len(str(local)) + 1:], c) for p, c in want_ds.samples]
    assert torch.equal(got_ds[1][0], want_ds[1][0])
    want = batches(feedline.DataLoader(want_ds, batch_size=2, shuffle=True, num_workers=2, seed=4))
    got = batches(feedline.DataLoader(got_ds, batch_size=2, shuffle=True, num_workers=2, seed=4))
    assert same_batches(want, got)
    with pytest.raises(FileNotFoundError):
        feedline.ImageFolder(url + "no-such-folder/")
