"""Image transforms with torchvision's names, arguments and meanings, run in C++.

These are descriptions, not Python functions: a :class:`feedline.ImageDataset` turns them into C++ steps that
decode, crop, resize, flip and normalise each image on the loader's worker threads, without the GIL. They mean
what torchvision.transforms means on a PIL image (Pillow's resampling, bilinear or bicubic, antialiased):

    >>> from feedline import transforms as T
    >>> train = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
    ...                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    >>> val = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
    ...                  T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

The steps that change the picture (Resize, CenterCrop, RandomResizedCrop, RandomHorizontalFlip) come first, in
any order; then ToTensor (float32 in [0, 1]) or PILToTensor (uint8; also the output without either), then
Normalize (after ToTensor only). The pixel steps (ColorJitter, Grayscale, RandomGrayscale, GaussianBlur, and the
geometric and automatic augmentations) run between the two, and RandomErasing last, on the tensor. Random steps draw
from the loader's seed, the epoch and the sample's index.

A torchvision.transforms.Compose (or one transform) of these same classes, with bilinear or bicubic
interpolation, is translated by :func:`from_torchvision`; the dataset does so itself.
"""

import numbers as _numbers
from collections.abc import Sequence as _Sequence

__all__ = [
    "CenterCrop",
    "Compose",
    "ConvertImageDtype",
    "Normalize",
    "PILToTensor",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "Resize",
    "ToTensor",
    "from_torchvision",
]


def _whole(value, what):
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral):
        raise TypeError(f"{what} should be an int, got {type(value).__name__}")
    value = int(value)
    if value < 1:
        raise ValueError(f"{what} should be positive, got {value}")
    return value


_RESIZE_MODES = ("bilinear", "bicubic")


def _interpolation_mode(interpolation, name, modes):
    """The value (one of `modes`, e.g. "bilinear") of an InterpolationMode (torchvision's) or of its string."""
    value = getattr(interpolation, "value", interpolation)
    if isinstance(value, str) and value in modes:
        return value
    listed = " or ".join(f"InterpolationMode.{m.upper()}" for m in modes)
    if isinstance(value, str) or hasattr(interpolation, "value"):
        raise ValueError(f"{name}: interpolation {value} is not supported: feedline's {name} resamples with {listed}")
    raise TypeError(f"{name}: interpolation should be an InterpolationMode (or {', '.join(map(repr, modes))}), "
                    f"got {type(interpolation).__name__}")


def _resize_mode(interpolation, name):
    return _interpolation_mode(interpolation, name, _RESIZE_MODES)


def _setup_size(size, error_msg):
    """torchvision's _setup_size: an int is (size, size), a sequence of one (s, s), of two (h, w)."""
    if isinstance(size, _numbers.Number) and not isinstance(size, bool):
        size = _whole(size, "size")
        return size, size
    if not isinstance(size, _Sequence) or isinstance(size, str):
        raise TypeError(f"Size should be int or sequence. Got {type(size)}")
    if len(size) == 1:
        s = _whole(size[0], "size")
        return s, s
    if len(size) != 2:
        raise ValueError(error_msg)
    return _whole(size[0], "size"), _whole(size[1], "size")


def _pair_of_numbers(value, what):
    if not isinstance(value, _Sequence) or isinstance(value, str):
        raise TypeError(f"{what} should be a sequence")
    if len(value) != 2 or not all(isinstance(v, _numbers.Real) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{what} should be a sequence of two numbers (min, max), got {value!r}")
    return float(value[0]), float(value[1])


def _numbers_list(value, what):
    if isinstance(value, _numbers.Real) and not isinstance(value, bool):
        return [float(value)]
    if hasattr(value, "tolist"):  # a tensor or an array
        value = value.tolist()
        if not isinstance(value, list):
            value = [value]
    if not isinstance(value, _Sequence) or isinstance(value, str) or not value:
        raise TypeError(f"{what} should be a number or a sequence of numbers, got {type(value).__name__}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, _numbers.Real):
            raise TypeError(f"{what} should be a sequence of numbers, got an element of type {type(v).__name__}")
    return [float(v) for v in value]


class _Step:
    """One step; _feedline_steps() is what the C++ side reads: [(class name, {argument: value})]; _raw_steps() the
    same before a Compose merges PILToTensor and ConvertImageDtype into one conversion."""

    def _step(self):
        raise NotImplementedError

    def _feedline_steps(self):
        return [self._step()]

    def _raw_steps(self):
        return self._feedline_steps()

    def __eq__(self, other):
        return type(self) is type(other) and self._step() == other._step()

    def __hash__(self):
        return hash(repr(self))


class Compose(_Step):
    """Composes several transforms together, as torchvision.transforms.Compose: ``Compose([t1, t2, ...])``.

    Each element is a feedline transform (a Compose too, whose steps are taken in its place).
    """

    def __init__(self, transforms):
        if isinstance(transforms, (str, bytes)) or not isinstance(transforms, _Sequence):
            raise TypeError(f"Compose takes a list of transforms, not {type(transforms).__name__}")
        for t in transforms:
            if not isinstance(t, _Step):
                raise TypeError(f"Compose: {t!r} is not a feedline transform (feedline.transforms."
                                f"{', '.join(n for n in __all__ if n not in ('Compose', 'from_torchvision'))})")
        self.transforms = list(transforms)

    def _raw_steps(self):
        return [s for t in self.transforms for s in t._raw_steps()]

    def _feedline_steps(self):
        return _merge_conversions(self._raw_steps())

    def __eq__(self, other):
        return type(self) is type(other) and self._feedline_steps() == other._feedline_steps()

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        lines = [self.__class__.__name__ + "("]
        lines += [f"    {t}" for t in self.transforms]
        return "\n".join(lines) + "\n)"


class Resize(_Step):
    """Resize the image, as torchvision.transforms.Resize on a PIL image (antialiased).

    ``size`` an int (or a sequence of one): the smaller edge becomes ``size`` and the other keeps the aspect
    ratio (truncated, as torchvision computes it); ``max_size`` then bounds the longer edge. ``(h, w)``: exactly
    that size. A Resize to an int does not give every image one size: end the pipeline with a crop (or Resize to
    ``(h, w)``) to make batches. ``interpolation``: InterpolationMode.BILINEAR or BICUBIC (or their strings),
    Pillow's filters.
    """

    def __init__(self, size, interpolation="bilinear", max_size=None):
        if isinstance(size, _numbers.Number) and not isinstance(size, bool):
            sizes = [_whole(size, "size")]
        elif isinstance(size, _Sequence) and not isinstance(size, str):
            if len(size) not in (1, 2):
                raise ValueError("If size is a sequence, it should have 1 or 2 values")
            sizes = [_whole(s, "size") for s in size]
        else:
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if max_size is not None:
            if len(sizes) != 1:
                raise ValueError(f"max_size should only be passed if size specifies the length of the smaller edge, "
                                 f"i.e. size should be an int or a sequence of length 1, got {size}")
            max_size = _whole(max_size, "max_size")
            if max_size <= sizes[0]:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {sizes[0]}")
        self.size = size if isinstance(size, (_numbers.Number, tuple)) else list(size)  # as given, for the repr
        self.max_size = max_size
        self._sizes = sizes
        self._mode = _resize_mode(interpolation, type(self).__name__)
        self.interpolation = interpolation

    def _step(self):
        return "Resize", {"size": list(self._sizes), "max_size": self.max_size or 0, "interpolation": self._mode}

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, interpolation={self._mode}, max_size={self.max_size}, " \
               "antialias=True)"


class CenterCrop(_Step):
    """Crop the image's centre to ``size`` (an int for a square, or ``(h, w)``), as torchvision.transforms.CenterCrop;
    an image smaller than that is padded with zeros first."""

    def __init__(self, size):
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def _step(self):
        return "CenterCrop", {"size": list(self.size)}

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class RandomResizedCrop(_Step):
    """A random crop of a random area fraction (``scale``) and aspect ratio (``ratio``, log-uniform) resized to
    ``size``, as torchvision.transforms.RandomResizedCrop on a PIL image; ``interpolation``:
    InterpolationMode.BILINEAR or BICUBIC (or their strings)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation="bilinear"):
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        self.scale = _pair_of_numbers(scale, "Scale")
        self.ratio = _pair_of_numbers(ratio, "Ratio")
        if self.scale[0] > self.scale[1] or self.ratio[0] > self.ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        if self.scale[0] < 0:
            raise ValueError(f"Scale should not be negative, got {self.scale}")
        if self.ratio[0] <= 0:
            raise ValueError(f"Ratio should be positive, got {self.ratio}")
        self._mode = _resize_mode(interpolation, type(self).__name__)
        self.interpolation = interpolation

    def _step(self):
        return "RandomResizedCrop", {"size": list(self.size), "scale": list(self.scale), "ratio": list(self.ratio),
                                     "interpolation": self._mode}

    def __repr__(self):
        scale = tuple(round(s, 4) for s in self.scale)
        ratio = tuple(round(r, 4) for r in self.ratio)
        return f"{self.__class__.__name__}(size={self.size}, scale={scale}, ratio={ratio}, " \
               f"interpolation={self._mode}, antialias=True)"


class RandomHorizontalFlip(_Step):
    """Flip the image left to right with probability ``p``, as torchvision.transforms.RandomHorizontalFlip."""

    def __init__(self, p=0.5):
        if isinstance(p, bool) or not isinstance(p, _numbers.Real):
            raise TypeError(f"p should be a number, got {type(p).__name__}")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p should be a probability in [0, 1], got {p}")
        self.p = p

    def _step(self):
        return "RandomHorizontalFlip", {"p": float(self.p)}

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class ToTensor(_Step):
    """The image as a float32 tensor, channels x height x width, in [0, 1] (pixel / 255), as torchvision's ToTensor."""

    def _step(self):
        return "ToTensor", {}

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor(_Step):
    """The image as a uint8 tensor, channels x height x width, as torchvision's PILToTensor."""

    def _step(self):
        return "PILToTensor", {}

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ConvertImageDtype(_Step):
    """Convert a uint8 image tensor to ``dtype``, as torchvision.transforms.ConvertImageDtype: after PILToTensor,
    ``torch.float32`` (``torch.float``) gives x / 255, ToTensor's values, and ``torch.uint8`` leaves it as it is.
    feedline's batches are uint8 or float32, so other dtypes are refused."""

    def __init__(self, dtype):
        import torch
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"dtype should be a torch.dtype, got {type(dtype).__name__}")
        if dtype not in (torch.float32, torch.uint8):
            raise ValueError(f"ConvertImageDtype: feedline makes uint8 or float32 images, not {dtype}")
        self.dtype = dtype

    def _step(self):
        return "ConvertImageDtype", {"float": str(self.dtype) == "torch.float32"}

    def _raw_steps(self):
        return [self._step()]

    def _feedline_steps(self):
        return _merge_conversions(self._raw_steps())

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def _merge_conversions(steps):
    """PILToTensor then ConvertImageDtype as the one conversion they make: ToTensor for float32, PILToTensor for
    uint8. A ConvertImageDtype anywhere else is refused."""
    out = []
    for name, args in steps:
        if name != "ConvertImageDtype":
            out.append((name, args))
        elif out and out[-1][0] == "PILToTensor":
            if args["float"]:
                out[-1] = ("ToTensor", {})
        elif out and out[-1][0] == "ToTensor" and args["float"]:
            continue
        else:
            raise ValueError("ConvertImageDtype: feedline runs it right after PILToTensor (or ToTensor), where it "
                             "converts the uint8 image; put it there")
    return out


class Normalize(_Step):
    """``(x - mean[c]) / std[c]`` for each channel c, after ToTensor, as torchvision.transforms.Normalize; ``mean``
    and ``std`` are one number each or one per channel."""

    def __init__(self, mean, std, inplace=False):
        self.mean = _numbers_list(mean, "mean")
        self.std = _numbers_list(std, "std")
        if any(s == 0 for s in self.std):
            raise ValueError(f"std evaluated to zero, leading to division by zero: std={self.std}")
        self.inplace = inplace

    def _step(self):
        return "Normalize", {"mean": list(self.mean), "std": list(self.std)}

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


_TORCHVISION_MODULE = "torchvision.transforms"


def _torchvision_step(t):
    """A feedline step for one torchvision transform, or a str saying why there is none."""
    name = type(t).__name__
    if not type(t).__module__.startswith(_TORCHVISION_MODULE):
        return f"{type(t).__module__}.{name} is not a torchvision transform"
    if name in _geometry.TORCHVISION_NAMES:
        return _geometry.from_torchvision_step(t)
    if name in _color.TORCHVISION_NAMES:
        return _color.from_torchvision_step(t)
    interpolation = getattr(t, "interpolation", None)
    if interpolation is not None and getattr(interpolation, "value", interpolation) not in _RESIZE_MODES:
        return f"torchvision's {name} with interpolation={getattr(interpolation, 'value', interpolation)} " \
               "(feedline resizes bilinearly or bicubically)"
    if name == "Compose":
        steps = []
        for inner in t.transforms:
            step = _torchvision_step(inner)
            if isinstance(step, str):
                return step
            steps.append(step)
        return Compose(steps)
    if name == "Resize":
        return Resize(t.size, interpolation=t.interpolation, max_size=t.max_size)
    if name == "CenterCrop":
        return CenterCrop(t.size)
    if name == "RandomResizedCrop":
        return RandomResizedCrop(t.size, scale=t.scale, ratio=t.ratio, interpolation=t.interpolation)
    if name == "RandomHorizontalFlip":
        return RandomHorizontalFlip(t.p)
    if name == "ToTensor":
        return ToTensor()
    if name == "PILToTensor":
        return PILToTensor()
    if name == "ConvertImageDtype":
        import torch
        if t.dtype not in (torch.float32, torch.uint8):
            return f"torchvision's ConvertImageDtype({t.dtype}) (feedline makes uint8 or float32 images)"
        return ConvertImageDtype(t.dtype)
    if name == "Normalize":
        return Normalize(t.mean, t.std)
    return f"torchvision's {name} has no feedline equivalent"


def from_torchvision(transform):
    """The feedline transform for a torchvision.transforms.Compose (or one transform) of Resize, CenterCrop,
    RandomResizedCrop, RandomHorizontalFlip, ToTensor, PILToTensor and Normalize with bilinear or bicubic
    interpolation.

    Raises:
        TypeError: something else, naming the step that has no feedline equivalent and pointing to
            torch.utils.data.DataLoader, which runs any transform over the same feedline dataset.
    """
    step = _torchvision_step(transform)
    if isinstance(step, str):
        raise TypeError(f"cannot translate {type(transform).__name__} to feedline.transforms: {step}. feedline runs "
                        "the transforms of feedline.transforms in C++; to run any other transform, give it to the "
                        "feedline dataset (it is then called on each uint8 image tensor) and iterate with "
                        "torch.utils.data.DataLoader over that dataset, which calls it in its worker processes")
    return step

# Batch mixes (MixUp, CutMix), for DataLoader(batch_transform=): they act on whole batches, not on one image.
from ._mix import CutMix, MixUp, RandomChoice, RandomCutmix, RandomMixup  # noqa: E402

__all__ += ["CutMix", "MixUp", "RandomChoice", "RandomCutmix", "RandomMixup"]

# The geometric and automatic-augmentation steps (RandomRotation, RandomAffine, AutoAugment, RandAugment,
# TrivialAugmentWide), run on the picture after the crop, resize and flip steps.
from . import _geometry  # noqa: E402
from ._geometry import (AutoAugment, AutoAugmentPolicy, RandAugment, RandomAffine, RandomRotation,  # noqa: E402
                        TrivialAugmentWide)

__all__ += ["AutoAugment", "AutoAugmentPolicy", "RandAugment", "RandomAffine", "RandomRotation", "TrivialAugmentWide"]

# The colour and filter steps (ColorJitter, Grayscale, RandomGrayscale, GaussianBlur on the picture; RandomErasing
# on the tensor).
from . import _color  # noqa: E402
from ._color import ColorJitter, GaussianBlur, Grayscale, RandomErasing, RandomGrayscale  # noqa: E402

__all__ += ["ColorJitter", "GaussianBlur", "Grayscale", "RandomErasing", "RandomGrayscale"]
