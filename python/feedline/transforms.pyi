# Type stubs for feedline.transforms (the docstrings live in transforms.py).
from typing import Any, List, Optional, Sequence, Tuple, Union

Size = Union[int, Sequence[int]]
Numbers = Union[float, Sequence[float]]

class Compose:
    transforms: List[Any]
    def __init__(self, transforms: Sequence[Any]) -> None: ...
class Resize:
    size: Union[int, List[int]]
    max_size: Optional[int]
    def __init__(self, size: Size, max_size: Optional[int] = ...) -> None: ...
class CenterCrop:
    size: Tuple[int, int]
    def __init__(self, size: Size) -> None: ...
class RandomResizedCrop:
    size: Tuple[int, int]
    scale: Tuple[float, float]
    ratio: Tuple[float, float]
    def __init__(self, size: Size, scale: Tuple[float, float] = ..., ratio: Tuple[float, float] = ...) -> None: ...
class RandomHorizontalFlip:
    p: float
    def __init__(self, p: float = ...) -> None: ...
class ToTensor:
    def __init__(self) -> None: ...
class PILToTensor:
    def __init__(self) -> None: ...
class Normalize:
    mean: List[float]
    std: List[float]
    def __init__(self, mean: Numbers, std: Numbers, inplace: bool = ...) -> None: ...
Transform = Union[Compose, Resize, CenterCrop, RandomResizedCrop, RandomHorizontalFlip, ToTensor, PILToTensor,
                  Normalize]
def from_torchvision(transform: Any) -> Transform: ...
