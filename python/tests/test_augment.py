"""feedline.transforms' colour and filter steps (ColorJitter, Grayscale, RandomGrayscale, GaussianBlur,
RandomErasing) and the colour ops of the automatic augmentations, against torchvision 0.14 and Pillow on the photos
in tests/data/images and on random images, with the random parameters forced by degenerate ranges."""

import itertools
import pathlib
import shutil

import numpy as np
import pytest
import torch

import feedline
from feedline import _feedline
from feedline import transforms as T

tv = pytest.importorskip("torchvision")
from PIL import Image  # noqa: E402
from torchvision import transforms as tvT  # noqa: E402
from torchvision.transforms import functional as F  # noqa: E402

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"
PHOTOS = ["chelsea.png", "china.jpg", "chelsea_444_progressive.jpg"]


def as_tensor(image):
    """A PIL image as a uint8 tensor, channels x height x width."""
    a = np.asarray(image)
    if a.ndim == 2:
        a = a[:, :, None]
    return torch.from_numpy(a.copy()).permute(2, 0, 1).contiguous()


def pictures(mode="RGB"):
    """The photos (a 96 x 128 centre) and random images of odd sizes, as PIL images of `mode`."""
    out = []
    for name in PHOTOS:
        with Image.open(IMAGES / name) as image:
            out.append(F.center_crop(image.convert(mode), [96, 128]))
    rng = np.random.default_rng(1)
    for h, w in ((37, 53), (5, 9), (64, 3)):
        a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        a[: h // 2, :, 0] //= 3  # a channel that does not span every level (autocontrast, equalize)
        out.append(Image.fromarray(a).convert(mode))
    return out


def run_step(transform, image, seed=0, index=0):
    """feedline's picture step `transform` on a PIL image, with the generator of (seed, epoch 0, index)."""
    return _feedline._picture_step(transform._step(), as_tensor(image), seed, 0, index)


def assert_close(ours, theirs, mean=0.5, most=3):
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == torch.uint8
    diff = (ours.int() - theirs.int()).abs()
    assert diff.float().mean() <= mean and diff.max() <= most


# --- values -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["RGB", "L"])
@pytest.mark.parametrize("factor", [0.0, 0.35, 0.8, 1.0, 1.25, 2.7])
def test_enhance_factors_exact(mode, factor):
    for image in pictures(mode):
        for name, fn in (("brightness", F.adjust_brightness), ("contrast", F.adjust_contrast),
                         ("saturation", F.adjust_saturation)):
            ours = run_step(T.ColorJitter(**{name: (factor, factor)}), image)
            assert torch.equal(ours, as_tensor(fn(image, factor))), (name, factor, image.size)


@pytest.mark.parametrize("hue", [-0.5, -0.23, -0.01, 0.07, 0.31, 0.5])
def test_hue_exact(hue):
    for image in pictures():
        assert torch.equal(run_step(T.ColorJitter(hue=(hue, hue)), image), as_tensor(F.adjust_hue(image, hue)))
    for image in pictures("L"):  # torchvision leaves grey images as they are
        assert torch.equal(run_step(T.ColorJitter(hue=(hue, hue)), image), as_tensor(image))


def test_color_jitter_order_is_drawn():
    """With all four factors fixed, every output is one of the 24 orders torchvision may apply, and several
    orders occur over the samples."""
    image = pictures()[0]
    factors = {"brightness": 1.4, "contrast": 0.6, "saturation": 1.7, "hue": 0.2}
    fns = [(F.adjust_brightness, 1.4), (F.adjust_contrast, 0.6), (F.adjust_saturation, 1.7), (F.adjust_hue, 0.2)]
    candidates = []
    for order in itertools.permutations(range(4)):
        out = image
        for i in order:
            out = fns[i][0](out, fns[i][1])
        candidates.append(as_tensor(out))
    jitter = T.ColorJitter(**{k: (v, v) for k, v in factors.items()})
    seen = set()
    for index in range(24):
        ours = run_step(jitter, image, index=index)
        matches = frozenset(i for i, c in enumerate(candidates) if torch.equal(ours, c))
        assert matches, index
        seen.add(matches)
    assert len(seen) > 1


@pytest.mark.parametrize("channels", [1, 3])
def test_grayscale_exact(channels):
    for image in pictures():
        ours = run_step(T.Grayscale(channels), image)
        assert torch.equal(ours, as_tensor(F.rgb_to_grayscale(image, channels)))
        assert torch.equal(run_step(T.RandomGrayscale(1.0), image), as_tensor(F.rgb_to_grayscale(image, 3)))
        assert torch.equal(run_step(T.RandomGrayscale(0.0), image), as_tensor(image))


@pytest.mark.parametrize("kernel,sigma", [(3, 0.5), (5, 1.3), ((3, 7), 2.0), ((9, 1), 0.8), (7, 0.1)])
def test_gaussian_blur_close(kernel, sigma):
    for image in pictures():
        ks = [kernel, kernel] if isinstance(kernel, int) else list(kernel)
        if min(image.size) <= max(ks) // 2:  # torch's reflect padding needs more pixels than the radius
            continue
        ours = run_step(T.GaussianBlur(kernel, (sigma, sigma)), image)
        assert_close(ours, as_tensor(F.gaussian_blur(image, ks, [sigma, sigma])))


# The ops of AutoAugment, RandAugment and TrivialAugmentWide (torchvision's _apply_op) at given magnitudes.
EXACT_OPS = [("Brightness", 0.45), ("Brightness", -0.9), ("Color", 0.3), ("Color", -0.6), ("Contrast", 0.75),
             ("Contrast", -0.2), ("Posterize", 2.0), ("Posterize", 7.0), ("Solarize", 128.0), ("Solarize", 33.7),
             ("AutoContrast", 0.0), ("Equalize", 0.0), ("Invert", 0.0)]


def torchvision_op(image, name, magnitude):
    return {
        "Brightness": lambda: F.adjust_brightness(image, 1.0 + magnitude),
        "Color": lambda: F.adjust_saturation(image, 1.0 + magnitude),
        "Contrast": lambda: F.adjust_contrast(image, 1.0 + magnitude),
        "Sharpness": lambda: F.adjust_sharpness(image, 1.0 + magnitude),
        "Posterize": lambda: F.posterize(image, int(magnitude)),
        "Solarize": lambda: F.solarize(image, magnitude),
        "AutoContrast": lambda: F.autocontrast(image),
        "Equalize": lambda: F.equalize(image),
        "Invert": lambda: F.invert(image),
    }[name]()


def augment_op(image, name, magnitude):
    return _feedline._augment_op(as_tensor(image), name, magnitude, "nearest", [0.0], False)


@pytest.mark.parametrize("mode", ["RGB", "L"])
@pytest.mark.parametrize("name,magnitude", EXACT_OPS)
def test_augment_colour_ops_exact(mode, name, magnitude):
    for image in pictures(mode):
        assert torch.equal(augment_op(image, name, magnitude), as_tensor(torchvision_op(image, name, magnitude)))


@pytest.mark.parametrize("magnitude", [-0.9, -0.3, 0.5, 0.99])
def test_sharpness_close(magnitude):
    for image in pictures():
        assert_close(augment_op(image, "Sharpness", magnitude), as_tensor(torchvision_op(image, "Sharpness",
                                                                                           magnitude)))


def test_random_parameters_are_deterministic():
    image = pictures()[0]
    for step in (T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.GaussianBlur(5), T.RandomGrayscale(0.5)):
        outputs = [run_step(step, image, seed=3, index=i) for i in range(8)]
        assert all(torch.equal(o, run_step(step, image, seed=3, index=i)) for i, o in enumerate(outputs))
        assert any(not torch.equal(outputs[0], o) for o in outputs[1:]), step


# --- the pipeline -----------------------------------------------------------------------------------------------

@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "train"
    for cls, name in (("a", "chelsea.png"), ("a", "chelsea_rgba.png"), ("b", "chelsea_palette_trns.png"),
                      ("b", "chelsea_lossless.webp")):
        (root / cls).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(IMAGES / name, root / cls / name)
    return root


def test_pipeline_matches_torchvision(folder):
    pipelines = [
        [tvT.CenterCrop((60, 80)), tvT.ColorJitter(brightness=(1.3, 1.3)), tvT.Grayscale(3), tvT.ToTensor(),
         tvT.Normalize([0.5], [0.25])],
        [tvT.CenterCrop((60, 80)), tvT.ColorJitter(saturation=(0.4, 0.4)), tvT.Grayscale(1), tvT.PILToTensor()],
        [tvT.Resize((50, 70)), tvT.RandomGrayscale(1.0), tvT.ColorJitter(contrast=(1.6, 1.6)), tvT.ToTensor()],
    ]
    for steps in pipelines:
        ours = feedline.ImageFolder(folder, transform=tvT.Compose(steps))
        theirs = tv.datasets.ImageFolder(str(folder), transform=tvT.Compose(steps))
        for i in range(len(ours)):
            a, b = ours[i][0], theirs[i][0]
            assert a.shape == b.shape and a.dtype == b.dtype
            if isinstance(steps[0], tvT.Resize):  # resampled: torchvision's values up to the resampling's
                assert (a - b).abs().mean() * 255 < 1
            else:
                assert torch.equal(a, b)


def test_random_erasing_on_tensor(folder):
    base = [T.CenterCrop((60, 80)), T.ToTensor(), T.Normalize([0.5, 0.4, 0.3], [0.2, 0.2, 0.2])]
    plain = feedline.ImageFolder(folder, transform=T.Compose(base))
    for value in (0.5, (1.0, -2.0, 3.0), "random"):
        erased = feedline.ImageFolder(folder, transform=T.Compose(base + [T.RandomErasing(p=1.0, value=value)]))
        for i in range(len(plain)):
            a, b = plain[i][0], erased[i][0]
            changed = (a != b).any(0)
            rows, cols = changed.any(1).nonzero().flatten(), changed.any(0).nonzero().flatten()
            assert len(rows) > 0
            box = (slice(int(rows[0]), int(rows[-1]) + 1), slice(int(cols[0]), int(cols[-1]) + 1))
            outside = torch.ones_like(changed)
            outside[box] = False
            assert torch.equal(a[:, outside], b[:, outside])
            area = (box[0].stop - box[0].start) * (box[1].stop - box[1].start)
            assert 0.02 * 60 * 80 * 0.8 <= area <= 0.33 * 60 * 80 * 1.2  # the scale, up to rounding of h and w
            inside = b[(slice(None),) + box]
            if value == "random":
                # standard normal noise: mean and deviation within a few standard errors of 0 and 1
                n = inside.numel()
                assert abs(float(inside.mean())) < 5 / n ** 0.5 and abs(float(inside.std()) - 1) < 5 / n ** 0.5
            else:
                expected = torch.tensor(value if isinstance(value, tuple) else (value,) * 3).view(3, 1, 1)
                assert torch.equal(inside, expected.expand_as(inside))
    uint8 = feedline.ImageFolder(folder, transform=T.Compose(
        [T.CenterCrop((60, 80)), T.PILToTensor(), T.RandomErasing(p=1.0, value=(10, 20, 30))]))
    x = uint8[0][0]
    assert x.dtype == torch.uint8 and ((x[0] == 10) & (x[1] == 20) & (x[2] == 30)).sum() >= 0.02 * 60 * 80 * 0.8
    never = feedline.ImageFolder(folder, transform=T.Compose(base + [T.RandomErasing(p=0.0)]))
    assert torch.equal(never[0][0], plain[0][0])


def test_compose_makes_batches(folder):
    recipe = T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1),
                        T.RandomGrayscale(0.2), T.GaussianBlur(3), T.ToTensor(),
                        T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), T.RandomErasing()])
    ds = feedline.ImageFolder(folder, transform=recipe)
    batches = [x for x, _ in feedline.DataLoader(ds, batch_size=2, num_workers=2, seed=5)]
    again = [x for x, _ in feedline.DataLoader(ds, batch_size=2, num_workers=2, seed=5)]
    assert [b.shape for b in batches] == [(2, 3, 32, 32)] * 2
    assert all(torch.equal(a, b) for a, b in zip(batches, again))
    assert all(torch.isfinite(b).all() for b in batches)
    gray = feedline.ImageFolder(folder, transform=T.Compose([T.CenterCrop(24), T.Grayscale(), T.ToTensor(),
                                                             T.Normalize([0.5], [0.5])]))
    x, y = next(iter(feedline.DataLoader(gray, batch_size=4)))
    assert x.shape == (4, 1, 24, 24) and y.shape == (4,)


def test_order_refused(folder):
    with pytest.raises(ValueError, match="CenterCrop.*before ColorJitter"):
        feedline.ImageFolder(folder, transform=T.Compose([T.ColorJitter(0.4), T.CenterCrop(24)]))
    with pytest.raises(ValueError, match="RandomErasing.*after ToTensor"):
        feedline.ImageFolder(folder, transform=T.Compose([T.CenterCrop(24), T.RandomErasing(), T.ToTensor()]))
    with pytest.raises(ValueError, match="Normalize.*RandomErasing"):
        feedline.ImageFolder(folder, transform=T.Compose([T.ToTensor(), T.RandomErasing(), T.Normalize([0.5], [1])]))
    with pytest.raises(ValueError, match="one per channel"):
        feedline.ImageFolder(folder, transform=T.Compose([T.Grayscale(), T.ToTensor(), T.Normalize([0.5] * 3, [1])]))


# --- classes ----------------------------------------------------------------------------------------------------

REPRS = [
    ("ColorJitter", (), {}),
    ("ColorJitter", (0.4, 0.4, 0.4, 0.1), {}),
    ("ColorJitter", (), {"brightness": (0.5, 1.5), "hue": [-0.2, 0.1]}),
    ("ColorJitter", (1.5,), {}),
    ("Grayscale", (), {}),
    ("Grayscale", (3,), {}),
    ("RandomGrayscale", (), {}),
    ("RandomGrayscale", (0.25,), {}),
    ("GaussianBlur", (5,), {}),
    ("GaussianBlur", ((3, 5), (0.5, 1.0)), {}),
    ("GaussianBlur", ([7], 1.5), {}),
    ("RandomErasing", (), {}),
    ("RandomErasing", (), {"p": 0.3, "value": "random"}),
    ("RandomErasing", (1.0, [0.1, 0.2], (0.5, 2.0), (1, 2, 3), True), {}),
]


@pytest.mark.parametrize("name,args,kwargs", REPRS)
def test_reprs_and_translation(name, args, kwargs):
    ours, theirs = getattr(T, name)(*args, **kwargs), getattr(tvT, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert repr(T.from_torchvision(theirs)) == repr(theirs)
    assert T.from_torchvision(theirs) == ours


BAD = [
    ("ColorJitter", (), {"brightness": -1}),
    ("ColorJitter", (), {"brightness": (2, 1)}),
    ("ColorJitter", (), {"contrast": "a"}),
    ("ColorJitter", (), {"saturation": (1, 2, 3)}),
    ("ColorJitter", (), {"hue": (-0.7, 0.2)}),
    ("GaussianBlur", (4,), {}),
    ("GaussianBlur", (0,), {}),
    ("GaussianBlur", ((3, 5, 7),), {}),
    ("GaussianBlur", (3,), {"sigma": 0}),
    ("GaussianBlur", (3,), {"sigma": (2.0, 1.0)}),
    ("GaussianBlur", (3,), {"sigma": (1.0, 2.0, 3.0)}),
    ("RandomErasing", (), {"value": "noise"}),
    ("RandomErasing", (), {"value": object()}),
    ("RandomErasing", (), {"scale": 0.5}),
    ("RandomErasing", (), {"ratio": 1}),
    ("RandomErasing", (), {"scale": (0.0, 2.0)}),
    ("RandomErasing", (), {"p": 1.5}),
]


@pytest.mark.parametrize("name,args,kwargs", BAD)
def test_errors_match_torchvision(name, args, kwargs):
    with pytest.raises((TypeError, ValueError)) as theirs:
        getattr(tvT, name)(*args, **kwargs)
    with pytest.raises(theirs.type):
        getattr(T, name)(*args, **kwargs)


def test_untranslatable_points_to_torch_loader(folder):
    with pytest.raises(TypeError, match="Lambda.*torch.utils.data.DataLoader"):
        T.from_torchvision(tvT.Compose([tvT.ToTensor(), tvT.Lambda(lambda x: x * 2)]))
    ds = feedline.ImageFolder(folder, transform=tvT.Compose([tvT.CenterCrop(16), tvT.RandomVerticalFlip()]))
    with pytest.raises(TypeError, match="torch.utils.data.DataLoader"):
        feedline.DataLoader(ds, batch_size=2)
    x, y = next(iter(torch.utils.data.DataLoader(ds, batch_size=2)))
    assert x.shape == (2, 3, 16, 16)


def test_convert_image_dtype_after_piltotensor_is_totensor(folder):
    """torchvision's reference recipe converts with PILToTensor then ConvertImageDtype(torch.float): x / 255."""
    tv_recipe = tvT.Compose([tvT.CenterCrop(64), tvT.PILToTensor(), tvT.ConvertImageDtype(torch.float),
                             tvT.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3])])
    ours = T.from_torchvision(tv_recipe)
    assert ours._feedline_steps()[1] == ("ToTensor", {})
    ds = feedline.ImageFolder(str(folder), transform=ours)
    theirs = tv.datasets.ImageFolder(str(folder), transform=tv_recipe)
    for i in range(len(ds)):
        assert torch.equal(ds[i][0], theirs[i][0]), i
    # uint8 stays uint8; elsewhere, or to another dtype, it is refused with what to do.
    assert T.Compose([T.PILToTensor(), T.ConvertImageDtype(torch.uint8)])._feedline_steps() == [("PILToTensor", {})]
    with pytest.raises(ValueError, match="right after PILToTensor"):
        T.Compose([T.ConvertImageDtype(torch.float32), T.CenterCrop(8)])._feedline_steps()
    with pytest.raises(ValueError, match="uint8 or float32"):
        T.ConvertImageDtype(torch.float64)
    with pytest.raises(TypeError):
        T.from_torchvision(tvT.ConvertImageDtype(torch.float64))
