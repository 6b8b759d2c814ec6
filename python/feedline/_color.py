"""The colour and filter transforms of feedline.transforms: ColorJitter, Grayscale, RandomGrayscale, GaussianBlur
and RandomErasing, with torchvision 0.14's arguments, errors and reprs. The first four run in C++ on the picture
after the crop, resize and flip steps, computing what torchvision computes on a PIL image (Pillow's ImageEnhance,
convert("L"), HSV); RandomErasing runs on the tensor, after ToTensor or PILToTensor and Normalize, as
torchvision's does."""

import numbers as _numbers
from collections.abc import Sequence as _Sequence

from .transforms import _Step


def _number(value):
    return isinstance(value, _numbers.Number) and not isinstance(value, bool)


class ColorJitter(_Step):
    """Randomly change the brightness, contrast, saturation and hue, as torchvision.transforms.ColorJitter: the
    four in a random order, each factor uniform in its range. A number x means [max(0, 1 - x), 1 + x] (for hue,
    [-x, x], within [-0.5, 0.5]); (min, max) gives the range itself."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if _number(value):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            if not all(_number(v) for v in value):
                raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
            if not bound[0] <= value[0] <= value[1] <= bound[1]:
                raise ValueError(f"{name} values should be between {bound}")
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if value[0] == value[1] == center:
            value = None
        return value

    def _step(self):
        ranges = {}
        for name in ("brightness", "contrast", "saturation", "hue"):
            value = getattr(self, name)
            ranges[name] = None if value is None else [float(value[0]), float(value[1])]
        return "ColorJitter", ranges

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class Grayscale(_Step):
    """The image as grey (Pillow's convert("L"): ITU-R 601-2 luma in 16-bit fixed point), with 1 channel or 3
    equal ones, as torchvision.transforms.Grayscale."""

    def __init__(self, num_output_channels=1):
        if isinstance(num_output_channels, bool) or not isinstance(num_output_channels, _numbers.Integral):
            raise TypeError(f"num_output_channels should be an int, got {type(num_output_channels).__name__}")
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def _step(self):
        return "Grayscale", {"num_output_channels": int(self.num_output_channels)}

    def __repr__(self):
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(_Step):
    """Grayscale keeping the number of channels, with probability ``p``, as torchvision.transforms.RandomGrayscale."""

    def __init__(self, p=0.1):
        if not _number(p):
            raise TypeError(f"p should be a number, got {type(p).__name__}")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p should be a probability in [0, 1], got {p}")
        self.p = p

    def _step(self):
        return "RandomGrayscale", {"p": float(self.p)}

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class GaussianBlur(_Step):
    """Blur with a Gaussian kernel of ``kernel_size`` (odd; an int or (kx, ky)) and a sigma uniform in ``sigma``
    (a number, or (min, max)), as torchvision.transforms.GaussianBlur (reflect padding)."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        if _number(kernel_size):
            kernel_size = (int(kernel_size), int(kernel_size))
        elif isinstance(kernel_size, _Sequence) and len(kernel_size) == 1:
            kernel_size = (kernel_size[0], kernel_size[0])
        elif not hasattr(kernel_size, "__len__"):
            raise TypeError(f"kernel_size should be an int or a sequence of two ints, got "
                            f"{type(kernel_size).__name__}")
        elif len(kernel_size) != 2:
            raise ValueError("Kernel size should be a tuple/list of two integers")
        for ks in kernel_size:
            if isinstance(ks, bool) or not isinstance(ks, _numbers.Integral):
                raise TypeError(f"Kernel size values should be ints, got {type(ks).__name__}")
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        self.kernel_size = kernel_size
        if _number(sigma):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, _Sequence) and len(sigma) == 2:
            if not all(_number(s) for s in sigma) or not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    def _step(self):
        return "GaussianBlur", {"kernel_size": [int(k) for k in self.kernel_size],
                                "sigma": [float(s) for s in self.sigma]}

    def __repr__(self):
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class RandomErasing(_Step):
    """With probability ``p``, erase a box of the area fraction ``scale`` and the aspect ratio ``ratio``
    (log-uniform) with ``value`` (a number, one per channel, or 'random' for standard normal noise), as
    torchvision.transforms.RandomErasing. It works on the tensor: put it after ToTensor or PILToTensor (and
    Normalize)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        if not isinstance(value, (_numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, (tuple, list)):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, (tuple, list)):
            raise TypeError("Ratio should be a sequence")
        if len(scale) != 2 or len(ratio) != 2 or not all(_number(v) for v in (*scale, *ratio)):
            raise ValueError("Scale and ratio should be of kind (min, max)")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        if ratio[0] <= 0:
            raise ValueError("Ratio should be positive")
        if isinstance(value, (tuple, list)) and (not value or not all(_number(v) for v in value)):
            raise TypeError("Argument value should be either a number or str or a sequence of numbers")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    def _step(self):
        if isinstance(self.value, str):
            value = "random"
        elif _number(self.value):
            value = [float(self.value)]
        else:
            value = [float(v) for v in self.value]
        return "RandomErasing", {"p": float(self.p), "scale": [float(s) for s in self.scale],
                                 "ratio": [float(r) for r in self.ratio], "value": value,
                                 "inplace": bool(self.inplace)}

    def __repr__(self):
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, value={self.value}, "
                f"inplace={self.inplace})")


TORCHVISION_NAMES = ("ColorJitter", "Grayscale", "RandomGrayscale", "GaussianBlur", "RandomErasing")


def from_torchvision_step(t):
    """The feedline transform for torchvision's instance `t` of one of TORCHVISION_NAMES, or a str saying why
    there is none."""
    name = type(t).__name__
    try:
        if name == "ColorJitter":
            def given(value):
                return 0 if value is None else value
            return ColorJitter(given(t.brightness), given(t.contrast), given(t.saturation), given(t.hue))
        if name == "Grayscale":
            return Grayscale(t.num_output_channels)
        if name == "RandomGrayscale":
            return RandomGrayscale(t.p)
        if name == "GaussianBlur":
            return GaussianBlur(t.kernel_size, t.sigma)
        return RandomErasing(t.p, t.scale, t.ratio, t.value, t.inplace)
    except (TypeError, ValueError) as e:
        return f"torchvision's {name}: {e}"
