"""reduced_decode, on by default: the JPEG and WebP photos of tests/data/images decoded only in the window the
first step's box needs give torchvision's values on the whole decode (within a mean difference of 0.5 and a
largest of 3 levels) and the same tensors as reduced_decode=False; corrupt files are still refused by name."""

import inspect
import pathlib
import shutil

import pytest
import torch

import feedline
from feedline import transforms as T

tv = pytest.importorskip("torchvision")
from PIL import Image  # noqa: E402
from torchvision import transforms as tvT  # noqa: E402
from torchvision.datasets.folder import default_loader  # noqa: E402

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"
PHOTOS = ["china.jpg", "chelsea_gray.jpg", "chelsea_cmyk.jpg", "chelsea_444_progressive.jpg",
          "chelsea_lossy.webp", "chelsea_lossless.webp", "chelsea_alpha.webp"]
MEAN_TOLERANCE, MAX_TOLERANCE = 0.5, 3


def one_photo_folder(tmp_path, name):
    """A folder of one class holding one photo: ImageFolder's sample 0."""
    dst = tmp_path / name.replace(".", "_") / "c" / name
    dst.parent.mkdir(parents=True)
    shutil.copyfile(IMAGES / name, dst)
    return dst.parents[1]


def centre_box(height, width, ratio):
    """RandomResizedCrop's fallback box (top, left, height, width): the centre crop of `ratio` clamped to the
    picture, which it takes when no drawn area fits, as with scale=(2, 2)."""
    box_h, box_w = height, width
    if width / height < ratio:
        box_h = int(round(width / ratio))
    elif width / height > ratio:
        box_w = int(round(height * ratio))
    return (height - box_h) // 2, (width - box_w) // 2, box_h, box_w


def check_close(got, want, what):
    diff = (got.int() - want.int()).abs()
    assert got.shape == want.shape, what
    assert diff.float().mean().item() <= MEAN_TOLERANCE and diff.max().item() <= MAX_TOLERANCE, \
        f"{what}: mean {diff.float().mean().item():.3f}, largest {diff.max().item()}"


@pytest.mark.parametrize("name", PHOTOS)
def test_windows_of_every_photo_give_torchvisions_values(tmp_path, name):
    root = one_photo_folder(tmp_path, name)
    img = default_loader(str(IMAGES / name))
    width, height = img.size
    # Boxes known in advance (RandomResizedCrop's centre fallback), off every block and even boundary: a window
    # of the picture, at outputs smaller and larger than the box.
    for stretch in (0.7, 0.83, 1.21, 1.5):
        ratio = width / height * stretch
        top, left, box_h, box_w = centre_box(height, width, ratio)
        for size in (24, 100, 180, 350):
            crop = T.RandomResizedCrop(size, scale=(2.0, 2.0), ratio=(ratio, ratio))
            outs = {reduced: feedline.ImageFolder(root, transform=T.Compose([crop, T.PILToTensor()]),
                                                  reduced_decode=reduced)[0][0] for reduced in (True, False)}
            want = tvT.PILToTensor()(img.crop((left, top, left + box_w, top + box_h)).resize((size, size),
                                                                                            Image.BILINEAR))
            what = f"{name}: box ({top}, {left}, {box_h}, {box_w}) to {size}"
            assert torch.equal(outs[True], outs[False]), what
            check_close(outs[True], want, what)
    for resize, crop in ((256, 224), (120, 100), (40, 36)):
        pipeline = T.Compose([T.Resize(resize), T.CenterCrop(crop), T.PILToTensor()])
        got = feedline.ImageFolder(root, transform=pipeline)[0][0]
        want = tvT.Compose([tvT.Resize(resize), tvT.CenterCrop(crop), tvT.PILToTensor()])(img)
        check_close(got, want, f"{name}: Resize({resize}) CenterCrop({crop})")


@pytest.mark.parametrize("name", PHOTOS)
def test_random_crops_are_the_whole_decodes(tmp_path, name):
    root = one_photo_folder(tmp_path, name)
    pipeline = T.Compose([T.RandomResizedCrop(48, scale=(0.05, 1.0)), T.RandomHorizontalFlip(), T.ToTensor()])
    batches = {}
    for reduced in (True, False):
        ds = feedline.ImageFolder(root, transform=pipeline, reduced_decode=reduced)
        loader = feedline.DataLoader(ds, batch_size=1, shuffle=False, seed=5)
        batches[reduced] = [x for _ in range(12) for x, _ in loader]  # an epoch, another crop
    assert all(torch.equal(a, b) for a, b in zip(batches[True], batches[False]))
    assert not all(torch.equal(batches[True][0], b) for b in batches[True][1:])  # the crops differ


def test_the_default_is_on_and_corrupt_files_are_still_refused(tmp_path):
    assert inspect.signature(feedline.ImageFolder).parameters["reduced_decode"].default is True
    assert inspect.signature(feedline.ImageDataset).parameters["reduced_decode"].default is True
    for name in ("china_truncated.jpg", "chelsea_lossy_truncated.webp"):
        root = one_photo_folder(tmp_path, name)
        ds = feedline.ImageFolder(root, transform=T.Compose([T.RandomResizedCrop(32), T.PILToTensor()]))
        with pytest.raises(ValueError, match=f"{name}: corrupt or truncated"):
            ds[0]
