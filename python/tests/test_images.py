"""feedline.ImageDataset, ImageFolder, feedline.transforms and DataLoader over images, against torchvision and
Pillow on the photos in tests/data/images (class folders, tar shards and Parquet files built from them)."""

import io
import pathlib
import shutil
import tarfile
import warnings

import pytest
import torch

import feedline
from feedline import transforms as T

tv = pytest.importorskip("torchvision")
from torchvision import transforms as tvT  # noqa: E402
from torchvision.datasets.folder import default_loader  # noqa: E402

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"

# class folder -> [(file in tests/data/images, name in the class folder)]
TREE = {
    "cat": [("chelsea_444_progressive.jpg", "a.jpg"), ("chelsea.png", "b.png"), ("chelsea_lossy.webp", "sub/c.webp")],
    "dog": [("china.jpg", "x.JPG"), ("chelsea_gray.jpg", "y.jpeg"), ("chelsea_cmyk.jpg", "z.jpg")],
    "owl": [("chelsea_rgba.png", "rgba.png"), ("chelsea_palette_trns.png", "p.png")],
}


def pil_tensor(path):
    return tvT.PILToTensor()(default_loader(str(path)))


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "train"
    for cls, files in TREE.items():
        for src, name in files:
            dst = root / cls / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(IMAGES / src, dst)
    (root / "cat" / "notes.txt").write_text("not an image")
    return root


@pytest.fixture
def bad_folder(folder):
    """The folder with one file that is no image, named so that it sorts last in its class."""
    shutil.copyfile(IMAGES / "not_an_image.jpg", folder / "dog" / "zz_broken.jpg")
    return folder


def write_shard(path, members):
    """A WebDataset shard: for each (key, image file, label), key.<ext> and key.cls."""
    with tarfile.open(path, "w") as tar:
        for key, src, label in members:
            for name, data in ((f"{key}{pathlib.Path(src).suffix}", (IMAGES / src).read_bytes()),
                               (f"{key}.cls", f"{label}\n".encode())):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


SHARDS = [
    [("s0/000", "china.jpg", 1), ("s0/001", "chelsea.png", 0), ("s0/002", "chelsea_lossy.webp", 2)],
    [("s1/000", "chelsea_gray.jpg", 0), ("s1/001", "chelsea_rgba.png", 1)],
]


@pytest.fixture
def shards(tmp_path):
    paths = []
    for k, members in enumerate(SHARDS):
        path = tmp_path / f"train-{k:06d}.tar"
        write_shard(path, members)
        paths.append(path)
    return paths


def batches(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


# --- folders ---------------------------------------------------------------------------------------------------

def test_image_folder_matches_torchvision(folder):
    ours = feedline.ImageFolder(folder)
    theirs = tv.datasets.ImageFolder(str(folder))
    assert ours.classes == theirs.classes
    assert ours.class_to_idx == theirs.class_to_idx
    assert ours.samples == theirs.samples
    assert ours.targets == theirs.targets
    assert ours.class_names == theirs.classes
    assert len(ours) == len(theirs) == 8
    assert ours.kind == "folder"
    assert "folder" in repr(ours) and "8 samples" in repr(ours)


def test_getitem_is_pillows_decode(folder):
    ds = feedline.ImageDataset(folder)
    for i, (path, label) in enumerate(ds.samples):
        image, target = ds[i]
        expected = pil_tensor(path)
        assert image.dtype == torch.uint8
        assert image.shape == expected.shape
        assert torch.equal(image, expected), path
        assert target == label and isinstance(target, int)
    assert torch.equal(ds[-1][0], ds[len(ds) - 1][0])
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_resize_center_crop_close_to_torchvision(folder):
    ours = feedline.ImageFolder(folder, transform=T.Compose([T.Resize(64), T.CenterCrop(56)]))
    theirs = tv.datasets.ImageFolder(str(folder), transform=tvT.Compose(
        [tvT.Resize(64), tvT.CenterCrop(56), tvT.PILToTensor()]))
    for i in range(len(ours)):
        a, b = ours[i][0], theirs[i][0]
        assert a.dtype == torch.uint8 and a.shape == b.shape == (3, 56, 56)
        assert (a.float() - b.float()).abs().mean() < 1, ours.samples[i][0]


def test_normalized_floats_close_to_torchvision(folder):
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    ours = feedline.ImageFolder(folder, transform=T.Compose(
        [T.Resize((40, 48)), T.ToTensor(), T.Normalize(mean, std)]))
    theirs = tv.datasets.ImageFolder(str(folder), transform=tvT.Compose(
        [tvT.Resize((40, 48)), tvT.ToTensor(), tvT.Normalize(mean, std)]))
    scale = torch.tensor(std).view(3, 1, 1) * 255  # back to levels
    for i in range(len(ours)):
        a, b = ours[i][0], theirs[i][0]
        assert a.dtype == torch.float32 and a.shape == b.shape == (3, 40, 48)
        assert ((a - b) * scale).abs().mean() < 1


def test_torchvision_compose_is_translated(folder):
    pipeline = tvT.Compose([tvT.Resize(50), tvT.CenterCrop((30, 40)), tvT.ToTensor()])
    translated = feedline.ImageFolder(folder, transform=pipeline)
    native = feedline.ImageFolder(folder, transform=T.Compose([T.Resize(50), T.CenterCrop((30, 40)), T.ToTensor()]))
    assert torch.equal(translated[0][0], native[0][0])
    assert T.from_torchvision(pipeline) == T.Compose([T.Resize(50), T.CenterCrop((30, 40)), T.ToTensor()])
    # a translated pipeline makes batches
    loader = feedline.DataLoader(translated, batch_size=4)
    x, y = next(iter(loader))
    assert x.shape == (4, 3, 30, 40) and y.dtype == torch.int64


def test_python_callable_transform(folder):
    ds = feedline.ImageFolder(folder, transform=lambda img: img.flip(-1))
    path = ds.samples[0][0]
    assert torch.equal(ds[0][0], pil_tensor(path).flip(-1))
    with pytest.raises(TypeError, match="feedline.transforms"):
        feedline.DataLoader(ds, batch_size=2)
    # a torchvision step feedline has not is a Python callable too, for torch's DataLoader
    flip = feedline.ImageFolder(folder, transform=tvT.Compose([tvT.CenterCrop(20), tvT.RandomVerticalFlip()]))
    assert flip[0][0].shape == (3, 20, 20)
    with pytest.raises(TypeError, match="torch.utils.data.DataLoader"):
        feedline.DataLoader(flip, batch_size=2)
    x, _ = next(iter(torch.utils.data.DataLoader(flip, batch_size=2)))
    assert x.shape == (2, 3, 20, 20)
    with pytest.raises(TypeError, match="RandomVerticalFlip.*torch.utils.data.DataLoader"):
        T.from_torchvision(tvT.Compose([tvT.RandomVerticalFlip()]))


# --- transforms ------------------------------------------------------------------------------------------------

def test_transform_reprs():
    assert repr(T.Resize(256)) == "Resize(size=256, interpolation=bilinear, max_size=None, antialias=True)"
    assert repr(T.Resize((3, 4))) == "Resize(size=(3, 4), interpolation=bilinear, max_size=None, antialias=True)"
    assert repr(T.CenterCrop(224)) == "CenterCrop(size=(224, 224))"
    assert repr(T.RandomResizedCrop(224)) == ("RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), "
                                              "ratio=(0.75, 1.3333), interpolation=bilinear, antialias=True)")
    assert repr(T.RandomHorizontalFlip()) == "RandomHorizontalFlip(p=0.5)"
    assert repr(T.Normalize([0.5, 0.5, 0.5], [0.2, 0.2, 0.2])) == "Normalize(mean=[0.5, 0.5, 0.5], std=[0.2, 0.2, 0.2])"
    assert repr(T.Compose([T.CenterCrop(2), T.ToTensor()])) == \
        "Compose(\n    CenterCrop(size=(2, 2))\n    ToTensor()\n)"
    # the same as torchvision's, where torchvision's state the same things
    assert repr(T.CenterCrop((3, 5))) == repr(tvT.CenterCrop((3, 5)))
    assert repr(T.RandomHorizontalFlip(0.25)) == repr(tvT.RandomHorizontalFlip(0.25))
    assert repr(T.ToTensor()) == repr(tvT.ToTensor()) and repr(T.PILToTensor()) == repr(tvT.PILToTensor())


def test_transform_argument_errors():
    with pytest.raises(TypeError, match="Size should be int or sequence"):
        T.Resize("big")
    with pytest.raises(ValueError, match="1 or 2 values"):
        T.Resize((1, 2, 3))
    with pytest.raises(ValueError, match="max_size"):
        T.Resize((10, 20), max_size=30)
    with pytest.raises(ValueError, match="strictly greater"):
        T.Resize(10, max_size=10)
    with pytest.raises(ValueError, match="only two dimensions"):
        T.CenterCrop((1, 2, 3))
    with pytest.raises(ValueError, match="positive"):
        T.CenterCrop(0)
    with pytest.raises(TypeError, match="Scale should be a sequence"):
        T.RandomResizedCrop(8, scale=0.5)
    with pytest.raises(ValueError, match=r"\(min, max\)"):
        T.RandomResizedCrop(8, scale=(1.0, 0.5))
    with pytest.raises(ValueError, match="probability"):
        T.RandomHorizontalFlip(1.5)
    with pytest.raises(ValueError, match="zero"):
        T.Normalize([0.5], [0.0])
    with pytest.raises(TypeError, match="not a feedline transform"):
        T.Compose([T.ToTensor(), len])


def test_pipeline_errors_from_the_steps(folder):
    # Normalize needs floats: torchvision refuses it on uint8 too
    with pytest.raises(ValueError):
        feedline.ImageFolder(folder, transform=T.Compose([T.CenterCrop(8), T.Normalize([0.5], [0.5])]))


# --- DataLoader ------------------------------------------------------------------------------------------------

def test_loader_batches_are_the_samples(folder):
    ds = feedline.ImageFolder(folder, transform=T.Compose([T.Resize((24, 32)), T.PILToTensor()]))
    loader = feedline.DataLoader(ds, batch_size=3, shuffle=False)
    assert len(loader) == 3
    got = batches(loader)
    assert [len(y) for _, y in got] == [3, 3, 2]
    images = torch.cat([x for x, _ in got])
    labels = torch.cat([y for _, y in got])
    assert images.dtype == torch.uint8 and images.shape == (8, 3, 24, 32)
    assert labels.dtype == torch.int64 and labels.tolist() == ds.targets
    for i in range(len(ds)):
        assert torch.equal(images[i], ds[i][0])


def test_loader_same_batches_for_any_worker_count(folder):
    pipeline = T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ToTensor()])
    ds = feedline.ImageFolder(folder, transform=pipeline)
    runs = []
    for workers in (0, 2):
        loader = feedline.DataLoader(ds, batch_size=3, shuffle=True, num_workers=workers, seed=7)
        runs.append([batches(loader), batches(loader)])  # two epochs
    for (x0, y0), (x2, y2) in zip(runs[0][0] + runs[0][1], runs[1][0] + runs[1][1]):
        assert x0.dtype == torch.float32 and x0.shape[1:] == (3, 32, 32)
        assert torch.equal(x0, x2) and torch.equal(y0, y2)
    epoch0 = torch.cat([y for _, y in runs[0][0]])
    assert sorted(epoch0.tolist()) == sorted(ds.targets)
    # another epoch, another permutation and other crops
    assert not all(torch.equal(a[0], b[0]) for a, b in zip(runs[0][0], runs[0][1]))


def test_loader_resume_gives_the_rest_of_the_epoch(folder):
    ds = feedline.ImageFolder(folder, transform=T.Compose([T.RandomResizedCrop(16), T.ToTensor()]))
    full = batches(feedline.DataLoader(ds, batch_size=2, shuffle=True, seed=3))
    loader = feedline.DataLoader(ds, batch_size=2, shuffle=True, seed=3, num_workers=2)
    it = iter(loader)
    next(it)
    next(it)
    state = loader.state_dict()
    loader.close()
    resumed = feedline.DataLoader(ds, batch_size=2, shuffle=True, seed=3, num_workers=2)
    resumed.load_state_dict(state)
    rest = batches(resumed)
    assert len(rest) == len(full) - 2
    for (a, b), (c, d) in zip(rest, full[2:]):
        assert torch.equal(a, c) and torch.equal(b, d)


def test_loader_ranks_and_batch_transform(folder):
    ds = feedline.ImageFolder(folder, transform=T.Compose([T.CenterCrop(8), T.ToTensor()]))
    seen = []
    for rank in (0, 1):
        loader = feedline.DataLoader(ds, batch_size=2, shuffle=True, seed=11, rank=rank, world_size=2,
                                     transform=lambda x, y: (x * 2, y + 100))
        loader.set_epoch(3)
        got = batches(loader)
        assert len(got) == len(loader) == 2
        for x, y in got:
            assert x.max() <= 2 and x.max() > 1 and y.min() >= 100  # the batch transform ran
        seen += loader.epoch_indices(3)
    assert sorted(seen) == list(range(len(ds)))  # the two shares cover the epoch


def test_loader_needs_a_fixed_size(folder):
    ds = feedline.ImageFolder(folder, transform=T.Resize(32))
    assert ds[0][0].shape[1] == 32  # one sample has a size
    with pytest.raises(ValueError, match="CenterCrop|RandomResizedCrop"):
        feedline.DataLoader(ds, batch_size=2)
    with pytest.raises(ValueError):
        feedline.DataLoader(feedline.ImageFolder(folder), batch_size=2)  # no transform: every image its own size


# --- errors and skipping ---------------------------------------------------------------------------------------

def test_skip_leaves_bad_samples_out_and_warns(bad_folder):
    ds = feedline.ImageFolder(bad_folder, transform=T.Compose([T.CenterCrop(16)]), on_error="skip")
    bad = [i for i, (p, _) in enumerate(ds.samples) if p.endswith("zz_broken.jpg")]
    assert len(bad) == 1
    loader = feedline.DataLoader(ds, batch_size=4, num_workers=2)
    with pytest.warns(UserWarning) as record:
        got = batches(loader)
    messages = [str(w.message) for w in record if "on_error" in str(w.message)]
    assert len(messages) == 1
    assert "1 sample" in messages[0] and "zz_broken.jpg" in messages[0]
    assert loader.skipped == 1
    labels = torch.cat([y for _, y in got]).tolist()
    assert len(labels) == len(ds) - 1
    assert labels == [t for i, t in enumerate(ds.targets) if i != bad[0]]
    # ds[i] of the bad sample has nothing to return
    with pytest.raises((ValueError, OSError), match="zz_broken.jpg"):
        ds[bad[0]]
    # a second epoch warns again, counting from zero
    with pytest.warns(UserWarning, match="1 sample"):
        batches(loader)
    assert loader.skipped == 1


def test_raise_fails_the_batch_naming_the_file(bad_folder):
    ds = feedline.ImageFolder(bad_folder, transform=T.CenterCrop(16))
    with pytest.raises((ValueError, OSError), match="zz_broken.jpg"):
        batches(feedline.DataLoader(ds, batch_size=4))


def test_good_epoch_does_not_warn(folder):
    loader = feedline.DataLoader(feedline.ImageFolder(folder, transform=T.CenterCrop(8), on_error="skip"),
                                 batch_size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sum(len(y) for _, y in loader) == 8
    assert loader.skipped == 0


def test_max_pixels_refuses_large_images_by_name(folder):
    ds = feedline.ImageFolder(folder)
    pixels = [ds[i][0].shape[1] * ds[i][0].shape[2] for i in range(len(ds))]
    bound = min(pixels)  # the smallest image passes, every larger one is refused
    small = feedline.ImageFolder(folder, max_pixels=bound, on_error="skip")
    assert small[pixels.index(bound)][0].shape == ds[pixels.index(bound)][0].shape
    larger = [i for i, p in enumerate(pixels) if p > bound]
    assert larger
    with pytest.raises(ValueError, match="pixels") as info:
        small[larger[0]]
    assert pathlib.Path(ds.samples[larger[0]][0]).name in str(info.value)
    loader = feedline.DataLoader(feedline.ImageFolder(folder, transform=T.CenterCrop(8), max_pixels=bound,
                                                      on_error="skip"), batch_size=4)
    with pytest.warns(UserWarning, match=f"{len(larger)} sample"):
        got = batches(loader)
    assert sum(len(y) for _, y in got) == len(ds) - len(larger)
    assert feedline.MAX_IMAGE_PIXELS == 89478485
    with pytest.raises(ValueError, match="max_pixels"):
        feedline.ImageFolder(folder, max_pixels=0)
    with pytest.raises(TypeError, match="max_pixels"):
        feedline.ImageFolder(folder, max_pixels=1.5)


def test_argument_errors(folder, tmp_path, shards):
    with pytest.raises(FileNotFoundError):
        feedline.ImageFolder(tmp_path / "missing")
    with pytest.raises(FileNotFoundError):
        feedline.ImageDataset(tmp_path / "missing")
    with pytest.raises(ValueError, match="on_error"):
        feedline.ImageFolder(folder, on_error="ignore")
    with pytest.raises(ValueError, match="ImageDataset"):
        feedline.ImageFolder(shards[0])
    with pytest.raises(TypeError):
        feedline.ImageDataset(folder, transform=42)
    with pytest.raises(TypeError):
        feedline.ImageDataset(12)


# --- tar shards ------------------------------------------------------------------------------------------------

def test_tar_shards(shards, tmp_path):
    members = [m for shard in SHARDS for m in shard]
    for source in (shards, [str(p) for p in shards], str(tmp_path / "train-{000000..000001}.tar")):
        ds = feedline.ImageDataset(source)
        assert ds.kind == "tar shards"
        assert len(ds) == len(members)
        assert ds.targets == [label for _, _, label in members]
        assert ds.classes is None and ds.class_names is None
        assert ds.shards == [str(p) for p in shards]
        for i, (_, src, label) in enumerate(members):
            image, target = ds[i]
            assert torch.equal(image, pil_tensor(IMAGES / src)) and target == label
    ds = feedline.ImageDataset(shards, transform=T.Compose([T.Resize((20, 20)), T.ToTensor()]))
    loader = feedline.DataLoader(ds, batch_size=2, shuffle=True, seed=1)
    assert sorted(torch.cat([y for _, y in loader]).tolist()) == sorted(ds.targets)
    one = feedline.ImageDataset(shards[0])
    assert len(one) == len(SHARDS[0]) and "tar shards" in repr(one)


# --- Parquet ---------------------------------------------------------------------------------------------------

HF = IMAGES / "hf" / "train"
HF_ROWS = [("png_named.jpg", 0), ("chelsea_lossy.webp", 1), ("foo3x5x4indexed.png", 2), ("green_palette.png", 0),
           ("chelsea_alpha.webp", 1), ("gray16.png", 2), ("chelsea_gray.jpg", 0), ("chelsea_1bit.png", 1)]


@pytest.mark.skipif(not HF.is_dir(), reason="no Parquet image files in tests/data/images/hf")
def test_parquet_images():
    ds = feedline.ImageDataset(HF)
    assert ds.kind == "parquet"
    assert len(ds) == len(HF_ROWS)
    assert ds.targets == [label for _, label in HF_ROWS]
    assert ds.class_names == ["cat", "dog", "bird"]
    assert ds.classes is None
    for i, (src, label) in enumerate(HF_ROWS):
        image, target = ds[i]
        expected = pil_tensor(IMAGES / src)
        if src == "gray16.png":  # 16-bit gray: feedline keeps the high byte where Pillow clips to 255
            assert image.shape == expected.shape
        else:
            assert torch.equal(image, expected), src
        assert target == label
    loader = feedline.DataLoader(feedline.ImageDataset(HF, transform=T.Compose([T.Resize((8, 8)), T.ToTensor()])),
                                 batch_size=3, shuffle=True, seed=5, num_workers=2)
    assert sorted(torch.cat([y for _, y in loader]).tolist()) == sorted(ds.targets)
    with pytest.raises(ValueError, match="nope"):
        feedline.ImageDataset(HF, label_column="nope")
