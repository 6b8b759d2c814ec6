"""MixUp and CutMix over whole batches, run in C++ (feedline.transforms re-exports these).

Give one to :class:`feedline.DataLoader` as ``batch_transform=``: the loader's worker threads mix each finished
batch, and the batches' labels become soft targets (batch x num_classes, float) for
``torch.nn.functional.cross_entropy``. The names and arguments are torchvision's: ``MixUp(alpha=1.0,
num_classes=...)`` and ``CutMix`` as in torchvision.transforms.v2 (every batch mixed), ``RandomMixup(num_classes,
p=0.5, alpha=1.0)`` and ``RandomCutmix`` as in torchvision's reference classification scripts (a batch mixed with
probability p), and ``RandomChoice([mixup, cutmix])`` to pick one of the two for each batch, as the reference
train.py does. The mix is theirs: the batch with itself rolled by one, lambda ~ Beta(alpha, alpha), CutMix's box
of area (1 - lambda) about a uniform centre, clamped, and lambda made the box's true share.

In a loader the draws come from the loader's seed, the epoch and the batch's number alone (the same batches for
any num_workers). Called directly, ``mix(images, labels)`` draws its seed from torch's generator, so
torch.manual_seed fixes it.
"""

import numbers as _numbers

import torch as _torch

from . import _feedline

__all__ = ["CutMix", "MixUp", "RandomChoice", "RandomCutmix", "RandomMixup"]


def _num_classes(value):
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral):
        raise TypeError(f"num_classes must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"num_classes={value}: use 1 or more")
    return int(value)


def _alpha(value):
    if isinstance(value, bool) or not isinstance(value, _numbers.Real):
        raise TypeError(f"alpha must be a number, not {type(value).__name__}")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"alpha={value}: use a finite number above 0")
    return float(value)


def _probability(value):
    if isinstance(value, bool) or not isinstance(value, _numbers.Real):
        raise TypeError(f"p must be a number, not {type(value).__name__}")
    if not 0 <= value <= 1:
        raise ValueError(f"p={value}: use a probability in [0, 1]")
    return float(value)


class _BatchMix:
    """A batch mix: its description for the C++ loader (``_spec()``), and a call that mixes one batch."""

    def _spec(self):
        raise NotImplementedError

    def __call__(self, images, labels):
        """Mix ``images`` (N, C, H, W, floating point) and ``labels`` (N, int64): returns new ``(images,
        targets)``, the targets one-hot and mixed (N x num_classes, the images' dtype)."""
        if not isinstance(images, _torch.Tensor) or not isinstance(labels, _torch.Tensor):
            raise TypeError("a batch mix takes (images, labels) tensors")
        if images.ndim != 4:
            raise ValueError(f"images must be a batch (N, C, H, W); got {images.ndim} dimensions")
        if labels.ndim != 1:
            raise ValueError(f"labels must have one dimension (N,); got {labels.ndim}")
        if not images.is_floating_point():
            raise TypeError(f"images must be floating point (after ToTensor or ConvertImageDtype), not {images.dtype}")
        if labels.dtype != _torch.int64:
            raise TypeError(f"labels must be torch.int64, not {labels.dtype}")
        seed = int(_torch.empty((), dtype=_torch.int64).random_().item())
        return _feedline.mix_batch(images, labels, self._spec(), seed)


class _OneMix(_BatchMix):
    _kind = ""

    def __init__(self, num_classes, p, alpha):
        self.num_classes = _num_classes(num_classes)
        self.p = _probability(p)
        self.alpha = _alpha(alpha)

    def _spec(self):
        return {"num_classes": self.num_classes, "p": self.p,
                "mixup_alpha": self.alpha if self._kind == "mixup" else 0.0,
                "cutmix_alpha": self.alpha if self._kind == "cutmix" else 0.0}

    def __repr__(self):
        return f"{type(self).__name__}(num_classes={self.num_classes}, p={self.p}, alpha={self.alpha})"


class RandomMixup(_OneMix):
    """torchvision's reference RandomMixup: MixUp with probability ``p`` (else the labels are only made one-hot)."""

    _kind = "mixup"

    def __init__(self, num_classes, p=0.5, alpha=1.0):
        super().__init__(num_classes, p, alpha)


class RandomCutmix(_OneMix):
    """torchvision's reference RandomCutmix: CutMix with probability ``p`` (else the labels are only made
    one-hot)."""

    _kind = "cutmix"

    def __init__(self, num_classes, p=0.5, alpha=1.0):
        super().__init__(num_classes, p, alpha)


class MixUp(_OneMix):
    """torchvision.transforms.v2.MixUp: every batch mixed, lambda ~ Beta(alpha, alpha)."""

    _kind = "mixup"

    def __init__(self, *, alpha=1.0, num_classes=None):
        if num_classes is None:
            raise TypeError("MixUp needs num_classes (the targets are one-hot over them)")
        super().__init__(num_classes, 1.0, alpha)

    def __repr__(self):
        return f"MixUp(alpha={self.alpha}, num_classes={self.num_classes})"


class CutMix(_OneMix):
    """torchvision.transforms.v2.CutMix: every batch mixed, lambda ~ Beta(alpha, alpha)."""

    _kind = "cutmix"

    def __init__(self, *, alpha=1.0, num_classes=None):
        if num_classes is None:
            raise TypeError("CutMix needs num_classes (the targets are one-hot over them)")
        super().__init__(num_classes, 1.0, alpha)

    def __repr__(self):
        return f"CutMix(alpha={self.alpha}, num_classes={self.num_classes})"


class RandomChoice(_BatchMix):
    """One of ``transforms`` for each batch, each equally likely, as torchvision's RandomChoice chooses between
    the reference scripts' RandomMixup and RandomCutmix. Here it chooses between batch mixes only: at most one
    MixUp-kind and one CutMix-kind, with the same num_classes and p."""

    def __init__(self, transforms, p=None):
        transforms = list(transforms)
        if not transforms or not all(isinstance(t, _OneMix) for t in transforms):
            raise TypeError("RandomChoice takes a list of batch mixes (MixUp, CutMix, RandomMixup, RandomCutmix)")
        kinds = [t._kind for t in transforms]
        if len(set(kinds)) != len(kinds):
            raise ValueError("RandomChoice: give at most one MixUp and one CutMix")
        if len({t.num_classes for t in transforms}) != 1:
            raise ValueError("RandomChoice: the mixes' num_classes differ")
        if len({t.p for t in transforms}) != 1:
            raise ValueError("RandomChoice: the mixes' probabilities p differ; feedline mixes with one p")
        if p is not None and len(set(float(w) for w in p)) != 1:
            raise ValueError("RandomChoice: only equal weights are supported for batch mixes")
        self.transforms = transforms

    def _spec(self):
        spec = self.transforms[0]._spec()
        for t in self.transforms[1:]:
            other = t._spec()
            spec["mixup_alpha"] = spec["mixup_alpha"] or other["mixup_alpha"]
            spec["cutmix_alpha"] = spec["cutmix_alpha"] or other["cutmix_alpha"]
        return spec

    def __repr__(self):
        return f"RandomChoice({self.transforms!r})"
