"""feedline.transforms' RandomRotation, RandomAffine, AutoAugment, RandAugment and TrivialAugmentWide against
torchvision 0.14 on PIL images (tests/data/images and random pictures): the warps with their random parameters
forced (degenerate ranges) against F.rotate / F.affine, each automatic-augmentation op at a given magnitude against
torchvision's _apply_op, every output of the whole transforms against the outputs torchvision's draws can give,
the reprs, the errors, and the draws' dependence on (seed, epoch, sample) alone."""

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
from torchvision.transforms import autoaugment as tv_autoaugment  # noqa: E402
from torchvision.transforms import functional as F  # noqa: E402
from torchvision.transforms import InterpolationMode  # noqa: E402

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"
MODES = [InterpolationMode.NEAREST, InterpolationMode.BILINEAR]
OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast",
       "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize", "Invert"]


def random_picture(height, width, mode="RGB", seed=0):
    rng = np.random.default_rng(seed)
    shape = (height, width, 3) if mode == "RGB" else (height, width)
    return Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode)


def photo(name, size=None):
    img = Image.open(IMAGES / name)
    img = img.convert("L" if img.mode in ("L", "LA") else "RGB")
    return img.resize(size, Image.BILINEAR) if size else img


def pictures():
    """Photos (RGB and gray, one at its full size) and random pictures of odd and even sizes."""
    return [photo("chelsea.png"), photo("china.jpg", (157, 104)), photo("chelsea_gray.jpg", (90, 60)),
            random_picture(31, 45, seed=1), random_picture(40, 40, seed=2), random_picture(23, 17, "L", seed=3)]


def planes(img):
    """A PIL image as feedline's planes: uint8, channels x height x width."""
    return tvT.PILToTensor()(img)


def run_step(transform, img, seed=0, epoch=0, index=0):
    """feedline's C++ op of a one-step transform on `img`, drawing from (seed, epoch, index)."""
    (step,) = transform._feedline_steps()
    return _feedline._picture_step(step, planes(img), seed, epoch, index)


def assert_same(ours, theirs, what):
    assert ours.shape == theirs.shape, what
    diff = (ours.int() - theirs.int()).abs()
    assert diff.max().item() == 0, f"{what}: {int((diff > 0).sum())} values differ, up to {diff.max().item()}"


def fill_for(img, fill):
    return fill if img.mode == "RGB" or not isinstance(fill, (tuple, list)) else fill[:1]


# Pillow's warps compute each pixel in double precision from the matrix torchvision computes in Python; feedline
# repeats the same operations in the same order, so nearest and bilinear alike give exactly the same bytes.
@pytest.mark.parametrize("interpolation", MODES)
def test_rotation_matches_torchvision(interpolation):
    for k, img in enumerate(pictures()):
        for angle, expand, center, fill in [(30.0, False, None, 0), (-45.0, True, None, (10, 200, 30)),
                                            (90.0, False, None, 7), (90.0, True, None, 0), (180.0, False, None, 0),
                                            (-90.0, True, [3, 5], 0), (12.5, False, [0, 0], (1, 2, 3)),
                                            (359.0, True, None, 255), (0.0, False, None, 0), (270.0, False, None, 9)]:
            fill = fill_for(img, fill)
            ours = run_step(T.RandomRotation((angle, angle), interpolation=interpolation, expand=expand,
                                             center=center, fill=fill), img)
            theirs = planes(F.rotate(img, angle, interpolation, expand, center, fill))
            assert_same(ours, theirs, f"picture {k}, rotate({angle}, expand={expand}, center={center})")


@pytest.mark.parametrize("interpolation", MODES)
def test_affine_matches_torchvision(interpolation):
    cases = [(30.0, 1.2, (10.0, 5.0), None), (0.0, 0.7, (0.0, 0.0), None), (-20.0, 1.0, (0.0, -25.0), [2, 7]),
             (45.0, 0.5, (30.0, 0.0), None), (0.0, 2.0, (0.0, 0.0), [0, 0]), (137.0, 1.0, (-40.0, 40.0), None)]
    for k, img in enumerate(pictures()):
        for angle, scale, (shear_x, shear_y), center in cases:
            fill = fill_for(img, (5, 6, 7))
            ours = run_step(T.RandomAffine((angle, angle), scale=(scale, scale),
                                           shear=(shear_x, shear_x, shear_y, shear_y), interpolation=interpolation,
                                           fill=fill, center=center), img)
            theirs = planes(F.affine(img, angle, [0, 0], scale, [shear_x, shear_y], interpolation, fill=fill,
                                     center=center))
            assert_same(ours, theirs, f"picture {k}, affine({angle}, {scale}, {shear_x}, {shear_y}, {center})")


def test_affine_translation_is_one_torchvision_can_draw():
    """A translation is drawn from a symmetric range, so it cannot be forced: each output must be F.affine's for
    one of the whole-pixel translations in range, and the draws must reach more than one of them."""
    img = random_picture(20, 30, seed=4)
    t = T.RandomAffine(0, translate=(0.1, 0.2))
    candidates = {}
    for tx, ty in itertools.product(range(-3, 4), range(-4, 5)):
        candidates[(tx, ty)] = planes(F.affine(img, 0.0, [tx, ty], 1.0, [0.0, 0.0]))
    seen = set()
    for index in range(40):
        ours = run_step(t, img, index=index)
        found = [key for key, theirs in candidates.items() if torch.equal(ours, theirs)]
        assert found, f"sample {index}: no translation within (3, 4) pixels gives feedline's output"
        seen.add(found[0])
    assert len(seen) > 5


def magnitudes(space, op, bins, size):
    """torchvision's magnitudes of `op` in an augmentation space (its own table), [0.0] for the ops without."""
    height, width = size
    if space == "AutoAugment":
        table = tvT.AutoAugment()._augmentation_space(bins, (height, width))
    elif space == "RandAugment":
        table = tvT.RandAugment()._augmentation_space(bins, (height, width))
    else:
        table = tvT.TrivialAugmentWide()._augmentation_space(bins)
    if op not in table:
        return []
    values, signed = table[op]
    values = [float(v) for v in values.reshape(-1)] if values.ndim > 0 else [0.0]
    return [v for m in values for v in ((m, -m) if signed else (m,))]


@pytest.mark.parametrize("interpolation", MODES)
def test_each_op_matches_apply_op(interpolation):
    """Every op of the automatic augmentations at every magnitude of their tables (and a few more) against
    torchvision's _apply_op with the same magnitude."""
    for k, img in enumerate([photo("china.jpg", (96, 64)), random_picture(29, 37, seed=5),
                             random_picture(19, 26, "L", seed=6)]):
        size = (img.height, img.width)
        for op in OPS:
            values = set([0.0, 0.5, -0.5, 90.0, 5.0] if op != "Posterize" else [0, 1, 4, 8])
            for space, bins in [("AutoAugment", 10), ("RandAugment", 31), ("TrivialAugmentWide", 31)]:
                values.update(magnitudes(space, op, bins, size))
            for fill in [None, 17, (3, 4, 5)]:
                fill = fill_for(img, fill)
                sequence = isinstance(fill, (tuple, list))
                for magnitude in sorted(values):
                    theirs = planes(tv_autoaugment._apply_op(img, op, magnitude, interpolation,
                                                             list(fill) if sequence else fill))
                    ours = _feedline._augment_op(planes(img), op, magnitude, interpolation.value,
                                                 [] if fill is None else [float(v) for v in
                                                                          (fill if sequence else [fill])],
                                                 sequence)
                    assert_same(ours, theirs, f"picture {k}, {op}({magnitude}), fill={fill}")


def outputs_of(img, sequences, interpolation=InterpolationMode.NEAREST):
    """torchvision's _apply_op applied in turn for each sequence of (op, magnitude)."""
    out = []
    for seq in sequences:
        x = img
        for op, magnitude in seq:
            x = tv_autoaugment._apply_op(x, op, magnitude, interpolation, None)
        out.append(planes(x))
    return out


def assert_each_output_is_one_of(transform, img, candidates, samples=40):
    """Every sample's output is one torchvision's draws can give; returns which ones were seen."""
    seen = set()
    for index in range(samples):
        ours = run_step(transform, img, seed=3, index=index)
        found = [i for i, theirs in enumerate(candidates) if torch.equal(ours, theirs)]
        assert found, f"{transform!r}, sample {index}: no draw of torchvision's gives feedline's output"
        seen.add(found[0])
    return seen


RAND_OPS = [op for op in OPS if op != "Invert"]  # RandAugment's and TrivialAugmentWide's 14, in their order


def test_rand_augment_outputs_are_draws_of_torchvision():
    img = random_picture(18, 22, seed=7)
    for magnitude, bins in [(9, 31), (5, 10), (0, 2)]:
        sequences = []
        for op in RAND_OPS:
            table = tvT.RandAugment()._augmentation_space(bins, (img.height, img.width))
            values, signed = table[op]
            m = float(values[magnitude]) if values.ndim > 0 else 0.0
            sequences += [[(op, m)]] + ([[(op, -m)]] if signed else [])
        seen = assert_each_output_is_one_of(T.RandAugment(num_ops=1, magnitude=magnitude, num_magnitude_bins=bins),
                                            img, outputs_of(img, sequences))
        if magnitude > 0:  # at bin 0 most ops change nothing and their outputs coincide
            assert len(seen) > 8  # 14 ops: the draws reach most of them
    # Two ops: each output one of the pairs (the bins of 10 keep the candidates few).
    table = tvT.RandAugment()._augmentation_space(10, (img.height, img.width))
    singles = []
    for op in RAND_OPS:
        values, signed = table[op]
        m = float(values[3]) if values.ndim > 0 else 0.0
        singles += [(op, m)] + ([(op, -m)] if signed else [])
    pairs = list(itertools.product(singles, repeat=2))
    assert_each_output_is_one_of(T.RandAugment(num_ops=2, magnitude=3, num_magnitude_bins=10), img,
                                 outputs_of(img, [list(p) for p in pairs]), samples=12)


def test_trivial_augment_outputs_are_draws_of_torchvision():
    img = random_picture(16, 21, seed=8)
    bins = 8
    table = tvT.TrivialAugmentWide()._augmentation_space(bins)
    sequences = []
    for op in RAND_OPS:
        values, signed = table[op]
        for m in ([float(v) for v in values] if values.ndim > 0 else [0.0]):
            sequences += [[(op, m)]] + ([[(op, -m)]] if signed else [])
    seen = assert_each_output_is_one_of(T.TrivialAugmentWide(num_magnitude_bins=bins), img,
                                        outputs_of(img, sequences), samples=60)
    assert len(seen) > 20


def test_auto_augment_outputs_are_draws_of_torchvision():
    img = random_picture(17, 20, seed=9)
    policy = tvT.AutoAugment()
    table = policy._augmentation_space(10, (img.height, img.width))
    sequences = []
    for sub_policy in policy.policies:
        options = []
        for op, _, bin_ in sub_policy:
            values, signed = table[op]
            m = float(values[bin_]) if bin_ is not None else 0.0
            options.append([[]] + [[(op, m)]] + ([[(op, -m)]] if signed else []))
        sequences += [a + b for a, b in itertools.product(*options)]
    seen = assert_each_output_is_one_of(T.AutoAugment(), img, outputs_of(img, sequences), samples=60)
    assert len(seen) > 10


@pytest.mark.parametrize("make", [
    lambda m: m.RandomRotation(30),
    lambda m: m.RandomRotation((-10, 20.5), expand=True, center=(3, 4), fill=(1, 2, 3)),
    lambda m: m.RandomRotation([5, 6], interpolation=InterpolationMode.BILINEAR, fill=None),
    lambda m: m.RandomAffine(10),
    lambda m: m.RandomAffine((-5, 5), translate=(0.1, 0.2), scale=(0.8, 1.2), shear=8),
    lambda m: m.RandomAffine(0, shear=(1, 2, 3, 4), interpolation=InterpolationMode.BILINEAR, fill=[4, 5, 6],
                             center=[1, 2]),
    lambda m: m.AutoAugment(),
    lambda m: m.AutoAugment(fill=[1, 2, 3]),
    lambda m: m.RandAugment(),
    lambda m: m.RandAugment(num_ops=3, magnitude=4, num_magnitude_bins=10,
                            interpolation=InterpolationMode.BILINEAR, fill=7),
    lambda m: m.TrivialAugmentWide(),
    lambda m: m.TrivialAugmentWide(num_magnitude_bins=15, fill=[0, 0, 0]),
])
def test_reprs_and_translation_match_torchvision(make):
    theirs = make(tvT)
    ours = make(T)
    assert repr(ours) == repr(theirs)
    translated = T.from_torchvision(theirs)
    assert repr(translated) == repr(theirs)
    assert translated == ours


@pytest.mark.parametrize("call", [
    lambda m: m.RandomRotation(-1),
    lambda m: m.RandomRotation((1, 2, 3)),
    lambda m: m.RandomRotation(object()),
    lambda m: m.RandomRotation(10, center=(1,)),
    lambda m: m.RandomRotation(10, center=5),
    lambda m: m.RandomRotation(10, fill=object()),
    lambda m: m.RandomAffine(-3),
    lambda m: m.RandomAffine(10, translate=(0.5, 1.5)),
    lambda m: m.RandomAffine(10, translate=0.5),
    lambda m: m.RandomAffine(10, scale=(0, 1)),
    lambda m: m.RandomAffine(10, scale=(1, 2, 3)),
    lambda m: m.RandomAffine(10, shear=(1, 2, 3)),
    lambda m: m.RandomAffine(10, shear=-2),
    lambda m: m.RandomAffine(10, center=(1, 2, 3)),
])
def test_errors_are_torchvisions(call):
    with pytest.raises(Exception) as theirs:
        call(tvT)
    with pytest.raises(theirs.type) as ours:
        call(T)
    assert str(ours.value) == str(theirs.value)


def test_what_feedline_does_not_run_is_refused_clearly():
    with pytest.raises(ValueError, match="ImageNet policy only"):
        T.AutoAugment(T.AutoAugmentPolicy.CIFAR10)
    with pytest.raises(ValueError, match="NEAREST or InterpolationMode.BILINEAR"):
        T.RandomRotation(10, interpolation=InterpolationMode.BICUBIC)
    with pytest.raises(ValueError, match="magnitude"):
        T.RandAugment(magnitude=31)
    with pytest.raises(TypeError, match="policy=AutoAugmentPolicy.SVHN"):
        T.from_torchvision(tvT.AutoAugment(tv_autoaugment.AutoAugmentPolicy.SVHN))
    with pytest.raises(TypeError, match="interpolation=bicubic"):
        T.from_torchvision(tvT.RandAugment(interpolation=InterpolationMode.BICUBIC))
    # A fill of the wrong length for the picture: torchvision's ValueError, when the picture is met.
    img = random_picture(8, 8, seed=1)
    with pytest.raises(ValueError) as theirs:
        F.rotate(img, 10.0, fill=[1, 2])
    with pytest.raises(ValueError, match="does not match the number of channels") as ours:
        run_step(T.RandomRotation(10, fill=[1, 2]), img)
    assert str(theirs.value).lower() in str(ours.value).lower()


@pytest.mark.parametrize("transform", [
    T.RandomRotation(45), T.RandomAffine(20, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=(-5, 5, -5, 5)),
    T.AutoAugment(), T.RandAugment(), T.TrivialAugmentWide()])
def test_draws_depend_on_seed_epoch_and_sample_alone(transform):
    img = random_picture(24, 30, seed=10)
    outputs = [run_step(transform, img, seed=1, epoch=2, index=i) for i in range(16)]
    for i in range(16):
        assert torch.equal(run_step(transform, img, seed=1, epoch=2, index=i), outputs[i])
    assert len({o.numpy().tobytes() for o in outputs}) > 3
    others = [run_step(transform, img, seed=s, epoch=e, index=i) for s, e in ((2, 2), (1, 3)) for i in range(8)]
    assert sum(not torch.equal(o, outputs[i % 8]) for i, o in enumerate(others)) > 2


def test_pipeline_runs_the_steps_as_torchvision(tmp_path):
    """The steps inside an ImageDataset's pipeline, after a crop, as torchvision's Compose on the PIL image."""
    root = tmp_path / "train"
    (root / "cat").mkdir(parents=True)
    for name in ("chelsea.png", "china.jpg", "chelsea_gray.jpg"):
        shutil.copyfile(IMAGES / name, root / "cat" / name)
    for steps in ([tvT.CenterCrop((96, 120)), tvT.RandomRotation((33, 33), expand=True), tvT.PILToTensor()],
                  [tvT.Resize(80), tvT.CenterCrop(64),
                   tvT.RandomAffine((-10, -10), scale=(1.1, 1.1), shear=(4, 4),
                                    interpolation=InterpolationMode.BILINEAR, fill=(9, 9, 9)), tvT.ToTensor()]):
        theirs = tvT.Compose(steps)
        ds = feedline.ImageDataset(root, transform=theirs)
        loader_images = tv.datasets.ImageFolder(root, transform=theirs)
        for i in range(len(ds)):
            ours, _ = ds[i]
            expected, _ = loader_images[i]
            assert ours.shape == expected.shape
            if ours.dtype == torch.uint8:
                assert_same(ours, expected, f"{steps}, sample {i}")
            else:  # Resize resamples as Pillow does, to within a few levels (test_images.py)
                assert (ours - expected).abs().mean().item() < 1.0 / 255
