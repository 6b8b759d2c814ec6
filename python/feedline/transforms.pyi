# Type stubs for feedline.transforms (the docstrings live in transforms.py).
from typing import Any, List, Optional, Sequence, Tuple, Union

Size = Union[int, Sequence[int]]
Numbers = Union[float, Sequence[float]]

class Compose:
    transforms: List[Any]
    def __init__(self, transforms: Sequence[Any]) -> None: ...
class Resize:
    size: Union[int, List[int]]
    interpolation: Any  # torchvision's InterpolationMode.BILINEAR or BICUBIC, or "bilinear", "bicubic"
    max_size: Optional[int]
    def __init__(self, size: Size, interpolation: Any = ..., max_size: Optional[int] = ...) -> None: ...
class CenterCrop:
    size: Tuple[int, int]
    def __init__(self, size: Size) -> None: ...
class RandomResizedCrop:
    size: Tuple[int, int]
    scale: Tuple[float, float]
    ratio: Tuple[float, float]
    interpolation: Any
    def __init__(self, size: Size, scale: Tuple[float, float] = ..., ratio: Tuple[float, float] = ...,
                 interpolation: Any = ...) -> None: ...
class RandomHorizontalFlip:
    p: float
    def __init__(self, p: float = ...) -> None: ...
class ToTensor:
    def __init__(self) -> None: ...
class PILToTensor:
    def __init__(self) -> None: ...
class ConvertImageDtype:
    dtype: Any  # torch.float32 or torch.uint8
    def __init__(self, dtype: Any) -> None: ...
class Normalize:
    mean: List[float]
    std: List[float]
    def __init__(self, mean: Numbers, std: Numbers, inplace: bool = ...) -> None: ...
Transform = Union[Compose, Resize, CenterCrop, RandomResizedCrop, RandomHorizontalFlip, ToTensor, PILToTensor,
                  Normalize]
def from_torchvision(transform: Any) -> Transform: ...

# Batch mixes (DataLoader(batch_transform=)); a call mixes one batch: (images, labels) -> (images, soft targets).
class RandomMixup:
    num_classes: int
    p: float
    alpha: float
    def __init__(self, num_classes: int, p: float = ..., alpha: float = ...) -> None: ...
    def __call__(self, images: Any, labels: Any) -> Tuple[Any, Any]: ...
class RandomCutmix:
    num_classes: int
    p: float
    alpha: float
    def __init__(self, num_classes: int, p: float = ..., alpha: float = ...) -> None: ...
    def __call__(self, images: Any, labels: Any) -> Tuple[Any, Any]: ...
class MixUp:
    num_classes: int
    alpha: float
    def __init__(self, *, alpha: float = ..., num_classes: Optional[int] = ...) -> None: ...
    def __call__(self, images: Any, labels: Any) -> Tuple[Any, Any]: ...
class CutMix:
    num_classes: int
    alpha: float
    def __init__(self, *, alpha: float = ..., num_classes: Optional[int] = ...) -> None: ...
    def __call__(self, images: Any, labels: Any) -> Tuple[Any, Any]: ...
class RandomChoice:
    transforms: List[Any]
    def __init__(self, transforms: Sequence[Any], p: Optional[Sequence[float]] = ...) -> None: ...
    def __call__(self, images: Any, labels: Any) -> Tuple[Any, Any]: ...
BatchMix = Union[MixUp, CutMix, RandomMixup, RandomCutmix, RandomChoice]

# The geometric and automatic-augmentation steps; `interpolation` is torchvision's InterpolationMode (NEAREST or
# BILINEAR) or its value, "nearest" or "bilinear".
Fill = Optional[Union[float, Sequence[float]]]
class RandomRotation:
    degrees: List[float]
    interpolation: Any
    expand: bool
    center: Optional[Sequence[float]]
    fill: Fill
    def __init__(self, degrees: Numbers, interpolation: Any = ..., expand: bool = ...,
                 center: Optional[Sequence[float]] = ..., fill: Fill = ...) -> None: ...
class RandomAffine:
    degrees: List[float]
    translate: Optional[Sequence[float]]
    scale: Optional[Sequence[float]]
    shear: Optional[List[float]]
    interpolation: Any
    fill: Fill
    center: Optional[Sequence[float]]
    def __init__(self, degrees: Numbers, translate: Optional[Sequence[float]] = ...,
                 scale: Optional[Sequence[float]] = ..., shear: Optional[Numbers] = ..., interpolation: Any = ...,
                 fill: Fill = ..., center: Optional[Sequence[float]] = ...) -> None: ...
class AutoAugmentPolicy:
    IMAGENET: AutoAugmentPolicy
    CIFAR10: AutoAugmentPolicy
    SVHN: AutoAugmentPolicy
    value: str
class AutoAugment:
    policy: Any
    interpolation: Any
    fill: Fill
    def __init__(self, policy: Any = ..., interpolation: Any = ..., fill: Fill = ...) -> None: ...
class RandAugment:
    num_ops: int
    magnitude: int
    num_magnitude_bins: int
    interpolation: Any
    fill: Fill
    def __init__(self, num_ops: int = ..., magnitude: int = ..., num_magnitude_bins: int = ...,
                 interpolation: Any = ..., fill: Fill = ...) -> None: ...
class TrivialAugmentWide:
    num_magnitude_bins: int
    interpolation: Any
    fill: Fill
    def __init__(self, num_magnitude_bins: int = ..., interpolation: Any = ..., fill: Fill = ...) -> None: ...

# The colour and filter steps (on the picture) and RandomErasing (on the tensor, after the conversion).
Range = Union[float, Sequence[float]]
class ColorJitter:
    brightness: Optional[Sequence[float]]
    contrast: Optional[Sequence[float]]
    saturation: Optional[Sequence[float]]
    hue: Optional[Sequence[float]]
    def __init__(self, brightness: Range = ..., contrast: Range = ..., saturation: Range = ...,
                 hue: Range = ...) -> None: ...
class Grayscale:
    num_output_channels: int
    def __init__(self, num_output_channels: int = ...) -> None: ...
class RandomGrayscale:
    p: float
    def __init__(self, p: float = ...) -> None: ...
class GaussianBlur:
    kernel_size: Sequence[int]
    sigma: Sequence[float]
    def __init__(self, kernel_size: Union[int, Sequence[int]], sigma: Range = ...) -> None: ...
class RandomErasing:
    p: float
    scale: Sequence[float]
    ratio: Sequence[float]
    value: Union[float, str, Sequence[float]]
    inplace: bool
    def __init__(self, p: float = ..., scale: Sequence[float] = ..., ratio: Sequence[float] = ...,
                 value: Union[float, str, Sequence[float]] = ..., inplace: bool = ...) -> None: ...
