"""MixUp and CutMix over whole batches (feedline.transforms.MixUp, CutMix, RandomMixup, RandomCutmix, RandomChoice
and DataLoader(batch_transform=)) against a NumPy statement of torchvision's reference classification scripts
(references/classification/transforms.py: RandomMixup, RandomCutmix), given the same lambda and box: the draw
feedline made, read back with _feedline.mix_draw for the batch's seed."""

import pathlib
import shutil

import numpy as np
import pytest
import torch

import feedline
from feedline import _feedline
from feedline import transforms as T

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "images"
EPS32 = float(np.finfo(np.float32).eps)


def reference_mix(images, labels, num_classes, draw):
    """torchvision's reference RandomMixup / RandomCutmix after its coin came up, in NumPy, for a given lambda
    and box: one-hot targets in the images' dtype, the batch mixed with itself rolled by one."""
    x = images.numpy()
    target = np.eye(num_classes, dtype=x.dtype)[labels.numpy()]
    if draw["kind"] == "none":
        return x, target
    lam = draw["lam"]
    x_rolled = np.roll(x, 1, axis=0)
    t_rolled = np.roll(target, 1, axis=0)
    if draw["kind"] == "mixup":
        out = x * np.float32(lam) + x_rolled * np.float32(1.0 - lam)
    else:
        x1, y1, x2, y2 = draw["box"]
        out = x.copy()
        out[:, :, y1:y2, x1:x2] = x_rolled[:, :, y1:y2, x1:x2]
        height, width = x.shape[2:]
        lam = 1.0 - (x2 - x1) * (y2 - y1) / (width * height)  # the box's true share, as the reference sets it
        assert draw["lam"] == pytest.approx(lam, abs=1e-15)
    return out, target * np.float32(lam) + t_rolled * np.float32(1.0 - lam)


def a_batch(n=6, channels=3, height=9, width=13, classes=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, channels, height, width, generator=g), torch.randint(0, classes, (n,), generator=g)


def check_against_reference(images, labels, out_images, out_targets, num_classes, draw):
    want_images, want_targets = reference_mix(images, labels, num_classes, draw)
    # Two float32 products and a sum of values in [0, 1]: within a few float32 roundings of the reference.
    np.testing.assert_allclose(out_images.numpy(), want_images, rtol=0, atol=4 * EPS32)
    np.testing.assert_allclose(out_targets.numpy(), want_targets, rtol=0, atol=4 * EPS32)
    np.testing.assert_allclose(out_targets.sum(1).numpy(), np.ones(len(labels)), rtol=0, atol=4 * EPS32)


@pytest.mark.parametrize("mix", [T.MixUp(alpha=0.2, num_classes=5), T.CutMix(alpha=1.0, num_classes=5),
                                 T.RandomMixup(5, p=0.5, alpha=1.0), T.RandomCutmix(5, p=0.5, alpha=0.5),
                                 T.RandomChoice([T.RandomMixup(5, p=1.0, alpha=0.2),
                                                 T.RandomCutmix(5, p=1.0, alpha=1.0)])])
def test_mix_matches_the_reference_for_its_draw(mix):
    images, labels = a_batch()
    kinds = set()
    for seed in range(40):
        draw = _feedline.mix_draw(mix._spec(), 9, 13, seed)
        kinds.add(draw["kind"])
        out_images, out_targets = _feedline.mix_batch(images, labels, mix._spec(), seed)
        assert out_images.shape == images.shape and out_images.dtype == torch.float32
        assert out_targets.shape == (6, 5) and out_targets.dtype == torch.float32
        check_against_reference(images, labels, out_images, out_targets, 5, draw)
        if draw["kind"] == "cutmix":
            # The box follows from lambda and a centre inside the image, as the reference draws it.
            x1, y1, x2, y2 = draw["box"]
            assert 0 <= x1 <= x2 <= 13 and 0 <= y1 <= y2 <= 9
    expected = {"MixUp": {"mixup"}, "CutMix": {"cutmix"}, "RandomMixup": {"mixup", "none"},
                "RandomCutmix": {"cutmix", "none"}, "RandomChoice": {"mixup", "cutmix"}}[type(mix).__name__]
    assert kinds == expected
    # The input is left as it was (the reference's inplace=False).
    again, _ = a_batch()
    assert torch.equal(images, again)


def test_direct_call_follows_torch_seed():
    images, labels = a_batch()
    mix = T.RandomChoice([T.MixUp(alpha=1.0, num_classes=5), T.CutMix(alpha=1.0, num_classes=5)])
    torch.manual_seed(3)
    a = mix(images, labels)
    torch.manual_seed(3)
    b = mix(images, labels)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_errors_as_torchvision_raises_them():
    images, labels = a_batch()
    mix = T.MixUp(alpha=1.0, num_classes=5)
    with pytest.raises(TypeError, match="floating point"):
        mix((images * 255).to(torch.uint8), labels)
    with pytest.raises(ValueError, match="N, C, H, W"):
        mix(images[0], labels)
    with pytest.raises(TypeError, match="int64"):
        mix(images, labels.to(torch.int32))
    with pytest.raises(ValueError, match=r"label 4 .* outside \[0, 4\)"):
        T.MixUp(alpha=1.0, num_classes=4)(images, torch.tensor([0, 1, 2, 3, 4, 0]))
    with pytest.raises(ValueError, match="alpha"):
        T.RandomMixup(5, alpha=0)
    with pytest.raises(ValueError, match="num_classes"):
        T.RandomCutmix(0)
    with pytest.raises(ValueError, match="p="):
        T.RandomCutmix(3, p=2)
    with pytest.raises(TypeError, match="num_classes"):
        T.MixUp(alpha=1.0)
    with pytest.raises(ValueError, match="num_classes differ"):
        T.RandomChoice([T.MixUp(num_classes=3), T.CutMix(num_classes=4)])
    with pytest.raises(TypeError, match="batch_transform"):
        feedline.DataLoader(a_batch(), batch_size=2, batch_transform=lambda x, y: (x, y))


def test_loader_mixes_each_batch_as_the_reference_for_any_worker_count():
    features, labels = a_batch(n=23, classes=7, seed=1)
    mix = T.RandomChoice([T.RandomMixup(7, p=0.8, alpha=0.2), T.RandomCutmix(7, p=0.8, alpha=1.0)])
    runs = []
    for workers in (0, 3):
        seen = {}

        def record(x, y, info, seen=seen):
            seen[info[1]] = (x.clone(), y.clone(), info[2])
            return x, y

        loader = feedline.DataLoader((features, labels), batch_size=4, shuffle=True, seed=9, num_workers=workers,
                                     transform=record, batch_transform=mix)
        batches = list(loader)
        assert len(batches) == 6
        kinds = set()
        for k, (x, t) in enumerate(batches):
            unmixed_x, unmixed_y, seed = seen[k]
            draw = _feedline.mix_draw(mix._spec(), 9, 13, seed)
            kinds.add(draw["kind"])
            assert t.shape == (len(unmixed_y), 7)
            check_against_reference(unmixed_x, unmixed_y, x, t, 7, draw)
        assert "mixup" in kinds and "cutmix" in kinds
        runs.append(batches)
    for (xa, ta), (xb, tb) in zip(*runs):
        assert torch.equal(xa, xb) and torch.equal(ta, tb)


@pytest.fixture
def photos(tmp_path):
    root = tmp_path / "train"
    for cls, names in {"a": ["chelsea.png", "china.jpg"], "b": ["chelsea_gray.jpg", "chelsea_lossy.webp"]}.items():
        (root / cls).mkdir(parents=True)
        for name in names:
            shutil.copyfile(IMAGES / name, root / cls / name)
    return root


def test_loader_over_images_mixes_floats_and_refuses_uint8(photos):
    ds = feedline.ImageDataset(photos, transform=T.Compose([T.Resize(24), T.CenterCrop(24), T.ToTensor()]))
    loader = feedline.DataLoader(ds, batch_size=4, num_workers=2, batch_transform=T.CutMix(num_classes=2))
    (x, t), = list(loader)
    assert x.shape == (4, 3, 24, 24) and t.shape == (4, 2)
    np.testing.assert_allclose(t.sum(1).numpy(), np.ones(4), rtol=0, atol=4 * EPS32)
    uint8 = feedline.ImageDataset(photos, transform=T.Compose([T.Resize(24), T.CenterCrop(24), T.PILToTensor()]))
    with pytest.raises(ValueError, match="the images are Byte.*ToTensor"):
        list(feedline.DataLoader(uint8, batch_size=4, batch_transform=T.MixUp(num_classes=2)))
    too_few = feedline.DataLoader(ds, batch_size=4, batch_transform=T.MixUp(num_classes=1))
    with pytest.raises(ValueError, match=r"label 1 \(image \d of the batch\) is outside \[0, 1\)"):
        list(too_few)


def test_soft_targets_train_with_label_smoothing_as_torch_defines_it():
    # The train loop's loss: cross entropy with probabilities and label smoothing, which torch defines as the
    # targets blended with the uniform distribution; checked against that statement in NumPy.
    images, labels = a_batch(classes=5)
    _, targets = T.MixUp(alpha=1.0, num_classes=5)(images, labels)
    logits = torch.randn(6, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    got = torch.nn.functional.cross_entropy(logits, targets.double(), label_smoothing=0.1).item()
    logp = logits.numpy() - np.log(np.exp(logits.numpy()).sum(1, keepdims=True))
    smoothed = targets.double().numpy() * 0.9 + 0.1 / 5
    assert got == pytest.approx(float(-(smoothed * logp).sum(1).mean()), rel=1e-12)
