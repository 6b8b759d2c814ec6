"""The geometric and automatic-augmentation transforms of feedline.transforms: RandomRotation, RandomAffine,
AutoAugment (the ImageNet policy), RandAugment and TrivialAugmentWide, with torchvision 0.14's arguments, errors and
reprs. They run in C++ on the picture after the crop, resize and flip steps, resampling as Pillow's
Image.rotate / Image.transform do (what torchvision computes on a PIL image), nearest by default."""

import enum as _enum
import numbers as _numbers
from collections.abc import Sequence as _Sequence

from .transforms import _Step, _interpolation_mode

_MODES = ("nearest", "bilinear")


class AutoAugmentPolicy(_enum.Enum):
    """torchvision's AutoAugmentPolicy; feedline's AutoAugment runs IMAGENET."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


def _mode(interpolation, name):
    return _interpolation_mode(interpolation, name, _MODES)


def _mode_repr(interpolation):
    """torchvision's repr of an InterpolationMode: InterpolationMode.NEAREST."""
    return f"InterpolationMode.{getattr(interpolation, 'value', interpolation).upper()}"


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join([str(s) for s in req_sizes])
    if not isinstance(x, _Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, _numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _fill_arguments(fill, name):
    """The C++ step's fill: (values, whether one per channel). None is no fill (0)."""
    if fill is None:
        return [], False
    if isinstance(fill, _numbers.Real) and not isinstance(fill, bool):
        return [float(fill)], False
    if isinstance(fill, _Sequence) and not isinstance(fill, str) and \
            all(isinstance(v, _numbers.Real) and not isinstance(v, bool) for v in fill):
        return [float(v) for v in fill], True
    raise TypeError(f"{name}: fill should be a number or a sequence of numbers, got {fill!r}")


def _warp_fill(fill):
    """RandomRotation's and RandomAffine's fill as torchvision keeps it: None is 0; else a number or a sequence."""
    if fill is None:
        return 0
    if not isinstance(fill, (_Sequence, _numbers.Number)):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


def _pair(values):
    return [float(v) for v in values] if values is not None else None


class RandomRotation(_Step):
    """Rotate the image by an angle uniform in ``degrees`` (counter-clockwise), as
    torchvision.transforms.RandomRotation on a PIL image: ``degrees`` a number d for (-d, d) or (min, max);
    ``interpolation`` NEAREST or BILINEAR; ``expand`` enlarges the output to hold the whole rotated image (the
    output size then varies); ``center`` (x, y) in pixels from the top-left corner, the image's centre by default;
    ``fill`` the value (one, or one per channel) of the area outside the rotated image."""

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0):
        self._mode = _mode(interpolation, type(self).__name__)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.interpolation = interpolation
        self.expand = expand
        self.fill = _warp_fill(fill)
        self._fill = _fill_arguments(self.fill, type(self).__name__)

    def _step(self):
        return "RandomRotation", {
            "degrees": list(self.degrees), "interpolation": self._mode, "expand": bool(self.expand),
            "center": _pair(self.center), "fill": self._fill[0], "fill_sequence": self._fill[1]}

    def __repr__(self):
        format_string = self.__class__.__name__ + f"(degrees={self.degrees}"
        format_string += f", interpolation={self._mode}"
        format_string += f", expand={self.expand}"
        if self.center is not None:
            format_string += f", center={self.center}"
        if self.fill is not None:
            format_string += f", fill={self.fill}"
        format_string += ")"
        return format_string


class RandomAffine(_Step):
    """A random affine transformation keeping the centre, as torchvision.transforms.RandomAffine on a PIL image: an
    angle uniform in ``degrees``; a translation uniform in ``(-translate[0] * width, translate[0] * width)``
    (rounded) and likewise in y; a scale uniform in ``scale``; shears (degrees) uniform in ``shear`` (a number s
    for x in (-s, s), (min, max) for x, or four numbers for x and y); ``interpolation``, ``fill`` and ``center``
    as RandomRotation's."""

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation="nearest", fill=0,
                 center=None):
        self._mode = _mode(interpolation, type(self).__name__)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not (0.0 <= t <= 1.0):
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        if shear is not None:
            self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4))
        else:
            self.shear = shear
        self.interpolation = interpolation
        self.fill = _warp_fill(fill)
        self._fill = _fill_arguments(self.fill, type(self).__name__)
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    def _step(self):
        return "RandomAffine", {
            "degrees": list(self.degrees), "translate": _pair(self.translate), "scale": _pair(self.scale),
            "shear": list(self.shear) if self.shear is not None else [], "interpolation": self._mode,
            "fill": self._fill[0], "fill_sequence": self._fill[1], "center": _pair(self.center)}

    def __repr__(self):
        s = f"{self.__class__.__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        s += f", interpolation={self._mode}" if self._mode != "nearest" else ""
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        s += ")"
        return s


def _whole_number(value, what, name):
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral):
        raise TypeError(f"{name}: {what} should be an int, got {type(value).__name__}")
    return int(value)


class AutoAugment(_Step):
    """AutoAugment with torchvision's ImageNet policy (torchvision.transforms.AutoAugment on a PIL image): one of
    its 25 sub-policies, uniformly, each of whose two ops runs with its probability at its magnitude (the sign of a
    signed one drawn). ``fill`` (None: 0) is the value of the area a rotation or shear brings in."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation="nearest", fill=None):
        value = getattr(policy, "value", policy)
        if value not in ("imagenet", "cifar10", "svhn"):
            raise ValueError(f"The provided policy {policy} is not recognized.")
        if value != "imagenet":
            raise ValueError(f"AutoAugment: feedline runs the ImageNet policy only (AutoAugmentPolicy.IMAGENET), "
                             f"not {policy}")
        self._mode = _mode(interpolation, type(self).__name__)
        self._fill = _fill_arguments(fill, type(self).__name__)
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill

    def _step(self):
        return "AutoAugment", {"policy": "imagenet", "interpolation": self._mode, "fill": self._fill[0],
                               "fill_sequence": self._fill[1]}

    def __repr__(self):
        policy = self.policy if not isinstance(self.policy, str) else AutoAugmentPolicy(self.policy)
        return f"{self.__class__.__name__}(policy={policy}, fill={self.fill})"


class RandAugment(_Step):
    """RandAugment (torchvision.transforms.RandAugment on a PIL image): ``num_ops`` ops, each uniform among 14
    (Identity, ShearX/Y, TranslateX/Y, Rotate, Brightness, Color, Contrast, Sharpness, Posterize, Solarize,
    AutoContrast, Equalize), at bin ``magnitude`` of ``num_magnitude_bins``, signed ones negated with probability
    1/2. ``magnitude`` must be a bin, 0 <= magnitude < num_magnitude_bins."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation="nearest", fill=None):
        name = type(self).__name__
        self.num_ops = _whole_number(num_ops, "num_ops", name)
        self.magnitude = _whole_number(magnitude, "magnitude", name)
        self.num_magnitude_bins = _whole_number(num_magnitude_bins, "num_magnitude_bins", name)
        if self.num_ops < 0:
            raise ValueError(f"{name}: num_ops should not be negative, got {num_ops}")
        if self.num_magnitude_bins < 2:
            raise ValueError(f"{name}: num_magnitude_bins should be at least 2, got {num_magnitude_bins}")
        if not 0 <= self.magnitude < self.num_magnitude_bins:
            raise ValueError(f"{name}: magnitude should be in [0, num_magnitude_bins), got magnitude={magnitude} "
                             f"with num_magnitude_bins={num_magnitude_bins}")
        self._mode = _mode(interpolation, name)
        self._fill = _fill_arguments(fill, name)
        self.interpolation = interpolation
        self.fill = fill

    def _step(self):
        return "RandAugment", {"num_ops": self.num_ops, "magnitude": self.magnitude,
                               "num_magnitude_bins": self.num_magnitude_bins, "interpolation": self._mode,
                               "fill": self._fill[0], "fill_sequence": self._fill[1]}

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={_mode_repr(self.interpolation)}, "
                f"fill={self.fill})")


class TrivialAugmentWide(_Step):
    """TrivialAugmentWide (torchvision.transforms.TrivialAugmentWide on a PIL image): one op uniform among
    RandAugment's 14 at a bin uniform among ``num_magnitude_bins`` of its wider ranges."""

    def __init__(self, num_magnitude_bins=31, interpolation="nearest", fill=None):
        name = type(self).__name__
        self.num_magnitude_bins = _whole_number(num_magnitude_bins, "num_magnitude_bins", name)
        if self.num_magnitude_bins < 2:
            raise ValueError(f"{name}: num_magnitude_bins should be at least 2, got {num_magnitude_bins}")
        self._mode = _mode(interpolation, name)
        self._fill = _fill_arguments(fill, name)
        self.interpolation = interpolation
        self.fill = fill

    def _step(self):
        return "TrivialAugmentWide", {"num_magnitude_bins": self.num_magnitude_bins, "interpolation": self._mode,
                                      "fill": self._fill[0], "fill_sequence": self._fill[1]}

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={_mode_repr(self.interpolation)}, fill={self.fill})")


TORCHVISION_NAMES = ("RandomRotation", "RandomAffine", "AutoAugment", "RandAugment", "TrivialAugmentWide")


def from_torchvision_step(t):
    """The feedline transform for torchvision's instance `t` of one of TORCHVISION_NAMES, or a str saying why
    there is none."""
    name = type(t).__name__
    mode = getattr(t.interpolation, "value", t.interpolation)
    if mode not in _MODES:
        return f"torchvision's {name} with interpolation={mode} (feedline's {name} resamples with nearest or " \
               "bilinear)"
    try:
        if name == "RandomRotation":
            return RandomRotation(t.degrees, interpolation=mode, expand=t.expand, center=t.center, fill=t.fill)
        if name == "RandomAffine":
            return RandomAffine(t.degrees, translate=t.translate, scale=t.scale, shear=t.shear, interpolation=mode,
                                fill=t.fill, center=t.center)
        if name == "AutoAugment":
            policy = getattr(t.policy, "value", t.policy)
            if policy != "imagenet":
                return f"torchvision's AutoAugment with policy={t.policy} (feedline runs AutoAugmentPolicy.IMAGENET)"
            return AutoAugment(AutoAugmentPolicy.IMAGENET, interpolation=t.interpolation, fill=t.fill)
        if name == "RandAugment":
            return RandAugment(t.num_ops, t.magnitude, t.num_magnitude_bins, interpolation=t.interpolation,
                               fill=t.fill)
        return TrivialAugmentWide(t.num_magnitude_bins, interpolation=t.interpolation, fill=t.fill)
    except (TypeError, ValueError) as e:
        return f"torchvision's {name}: {e}"
