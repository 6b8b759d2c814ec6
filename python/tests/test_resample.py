"""feedline's Resize and RandomResizedCrop resample as Pillow's Image.resize does (BILINEAR and BICUBIC,
antialiased): the same bytes, through the public pipeline (ImageFolder with Resize((h, w)) and PILToTensor), on the
photos in tests/data/images and on synthetic images, at shrinks up to 90 times and at enlargements."""

import pathlib
import shutil

import numpy as np
import pytest
import torch

import feedline
from feedline import transforms as T

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"
PHOTOS = ["chelsea.png", "china.jpg", "chelsea_444_progressive.jpg", "chelsea_gray.jpg", "chelsea_lossy.webp"]
FILTERS = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}


def pillow(path, size, mode):
    """Pillow's resize to size = (h, w) of the image as torchvision's default_loader opens it, channels first."""
    with Image.open(path) as img:
        out = img.convert("RGB").resize((size[1], size[0]), FILTERS[mode])
    return torch.from_numpy(np.asarray(out).copy()).permute(2, 0, 1)


def ours(root, size, mode):
    """feedline's resize of the one image under root (a class folder), through ImageFolder."""
    ds = feedline.ImageFolder(root, transform=T.Compose([T.Resize(size, interpolation=mode), T.PILToTensor()]))
    assert len(ds) == 1
    return ds[0][0]


def one_image_folder(tmp_path, src, name):
    root = tmp_path / name
    (root / "x").mkdir(parents=True)
    shutil.copyfile(src, root / "x" / pathlib.Path(src).name)
    return root, root / "x" / pathlib.Path(src).name


def assert_same(a, b, what):
    assert a.shape == b.shape, what
    diff = (a.int() - b.int()).abs()
    assert diff.max().item() == 0, f"{what}: max |diff| {diff.max().item()}, mean {diff.float().mean().item():.4f}"


def sizes_for(height, width):
    """Output sizes (h, w) for an image: shrinks of 1.5 to 90 times each way, enlargements, mixed, one pixel."""
    out = {(1, 1), (1, width), (height, 1), (height * 3, width * 2), (height + 1, max(1, width - 1))}
    for factor in (1.5, 2, 2.3, 3, 4.7, 8, 15, 31, 45, 90):
        out.add((max(1, round(height / factor)), max(1, round(width / factor))))
    out.add((max(1, height // 90), width * 2))
    out.add((height * 2, max(1, width // 60)))
    out.add((224, 224))
    return sorted(out)


@pytest.mark.parametrize("mode", FILTERS)
@pytest.mark.parametrize("photo", PHOTOS)
def test_photos_resize_as_pillow(tmp_path, photo, mode):
    root, path = one_image_folder(tmp_path, IMAGES / photo, "photos")
    with Image.open(path) as img:
        width, height = img.size
    for size in sizes_for(height, width):
        assert_same(ours(root, size, mode), pillow(path, size, mode), f"{photo} -> {size} {mode}")


def synthetic(path, height, width, rng, kind):
    """A lossless PNG: random noise, or ramps with noise (smooth areas show rounding), or hard stripes (ringing)."""
    if kind == "noise":
        pixels = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    elif kind == "ramp":
        y, x = np.mgrid[0:height, 0:width]
        base = np.stack([(x * 255) // max(1, width - 1), (y * 255) // max(1, height - 1), (x + y) % 256], axis=-1)
        pixels = np.clip(base + rng.integers(-3, 4, base.shape), 0, 255).astype(np.uint8)
    else:
        stripes = (np.arange(width) // 3 % 2 * 255).astype(np.uint8)
        pixels = np.repeat(np.repeat(stripes[None, :, None], height, axis=0), 3, axis=2)
    Image.fromarray(pixels, "RGB").save(path)


@pytest.mark.parametrize("mode", FILTERS)
def test_synthetic_images_resize_as_pillow(tmp_path, mode):
    rng = np.random.default_rng(5)
    shapes = [(1, 1), (1, 37), (29, 1), (2, 3), (17, 23), (64, 48), (180, 270), (900, 180)]
    for i, (height, width) in enumerate(shapes):
        for kind in ("noise", "ramp", "stripes"):
            root = tmp_path / f"{i}_{kind}"
            (root / "x").mkdir(parents=True)
            path = root / "x" / "img.png"
            synthetic(path, height, width, rng, kind)
            for size in sizes_for(height, width):
                assert_same(ours(root, size, mode), pillow(path, size, mode), f"{kind} {height}x{width} -> {size}")


def test_random_resized_crop_bicubic_is_pillows_crop_and_resize(tmp_path):
    """RandomResizedCrop's output for a crop of the whole image (scale and ratio pinned to it) is Pillow's resize."""
    root, path = one_image_folder(tmp_path, IMAGES / "chelsea.png", "rrc")
    with Image.open(path) as img:
        width, height = img.size
    ratio = width / height
    for mode in FILTERS:
        crop = T.RandomResizedCrop((37, 53), scale=(1.0, 1.0), ratio=(ratio, ratio), interpolation=mode)
        ds = feedline.ImageFolder(root, transform=T.Compose([crop, T.PILToTensor()]))
        assert_same(ds[0][0], pillow(path, (37, 53), mode), f"RandomResizedCrop {mode}")


def test_interpolation_arguments_and_reprs():
    tv = pytest.importorskip("torchvision")
    modes = tv.transforms.InterpolationMode
    assert repr(T.Resize(256, interpolation=modes.BICUBIC)) == \
        "Resize(size=256, interpolation=bicubic, max_size=None, antialias=True)"
    assert repr(T.RandomResizedCrop(224, interpolation="bicubic")) == \
        "RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 1.3333), interpolation=bicubic, " \
        "antialias=True)"
    assert T.Resize(8)._step()[1]["interpolation"] == "bilinear"
    with pytest.raises(ValueError, match="nearest is not supported"):
        T.Resize(8, interpolation=modes.NEAREST)
    with pytest.raises(ValueError, match="lanczos is not supported"):
        T.RandomResizedCrop(8, interpolation="lanczos")
    with pytest.raises(TypeError, match="InterpolationMode"):
        T.Resize(8, interpolation=2)


def test_from_torchvision_keeps_bicubic(tmp_path):
    tv = pytest.importorskip("torchvision")
    tvT = tv.transforms
    bicubic = tvT.InterpolationMode.BICUBIC
    translated = T.from_torchvision(tvT.Compose([tvT.Resize((20, 30), interpolation=bicubic),
                                                 tvT.RandomResizedCrop(16, interpolation=bicubic)]))
    assert [s._step()[1]["interpolation"] for s in translated.transforms] == ["bicubic", "bicubic"]
    with pytest.raises(TypeError, match="interpolation=nearest"):
        T.from_torchvision(tvT.Resize(20, interpolation=tvT.InterpolationMode.NEAREST))
    # Through a dataset, the same bytes as torchvision's own pipeline.
    root, path = one_image_folder(tmp_path, IMAGES / "china.jpg", "tv")
    pipeline = tvT.Compose([tvT.Resize((41, 67), interpolation=bicubic), tvT.PILToTensor()])
    theirs = pipeline(tv.datasets.folder.default_loader(str(path)))
    assert_same(feedline.ImageFolder(root, transform=pipeline)[0][0], theirs, "from_torchvision bicubic")
