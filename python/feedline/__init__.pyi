# Type stubs for the feedline package (the docstrings live in __init__.py; help() shows them).
import os
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, overload

import torch
import torch.utils.data

from . import transforms as transforms

__version__: str

PathLike = Union[str, bytes, "os.PathLike[str]"]
Value = Union[torch.Tensor, List[torch.Tensor], List[Any], List[Optional[str]], List[Optional[bytes]]]
Columns = Dict[str, Value]
Masks = Dict[str, Union[torch.Tensor, List[torch.Tensor]]]

class InvalidFileError(ValueError): ...
class UnsupportedError(ValueError): ...
class InvalidArgumentError(ValueError): ...

@overload
def read_parquet(path: PathLike, columns: Optional[Union[str, Sequence[str]]] = ...,
                 row_groups: Optional[Sequence[int]] = ..., threads: Optional[int] = ...,
                 nulls: Literal["raise", "zero"] = ...) -> Columns: ...
@overload
def read_parquet(path: PathLike, columns: Optional[Union[str, Sequence[str]]] = ...,
                 row_groups: Optional[Sequence[int]] = ..., threads: Optional[int] = ...,
                 *, nulls: Literal["mask"]) -> Tuple[Columns, Masks]: ...
@overload
def read_csv(path: PathLike, columns: Optional[Union[str, Sequence[str]]] = ..., threads: Optional[int] = ...,
             nulls: Literal["raise", "zero"] = ...) -> Columns: ...
@overload
def read_csv(path: PathLike, columns: Optional[Union[str, Sequence[str]]] = ..., threads: Optional[int] = ...,
             *, nulls: Literal["mask"]) -> Tuple[Columns, Masks]: ...
def inspect(path: PathLike) -> Dict[str, Any]: ...
def convert(input: PathLike, output: PathLike, columns: Optional[Union[str, Sequence[str]]] = ..., limit: int = ...,
            pack: Optional[Dict[str, Union[str, Sequence[str]]]] = ..., pack_as: Literal["bytes", "list"] = ...,
            narrow_ints: bool = ...,
            codec: Literal["zstd", "snappy", "gzip", "brotli", "lz4_raw", "uncompressed"] = ...,
            level: Optional[int] = ..., row_group_rows: int = ..., dictionary: bool = ...,
            threads: Optional[int] = ...) -> Dict[str, Any]: ...

Batch = Tuple[torch.Tensor, torch.Tensor]
Transform = Union[Callable[[torch.Tensor, torch.Tensor], Batch],
                  Callable[[torch.Tensor, torch.Tensor, Tuple[int, int, int]], Batch]]
ImageSource = Union[PathLike, Sequence[PathLike]]
MAX_IMAGE_PIXELS: int

class ImageDataset(torch.utils.data.Dataset[Tuple[Any, int]]):
    transform: Any
    on_error: str
    def __init__(self, source: ImageSource, transform: Optional[Any] = ..., label_column: str = ...,
                 image_column: str = ..., on_error: Literal["raise", "skip"] = ..., max_pixels: int = ...,
                 reduced_decode: bool = ...) -> None: ...
    @property
    def kind(self) -> Literal["folder", "parquet", "tar shards"]: ...
    @property
    def root(self) -> str: ...
    @property
    def classes(self) -> Optional[List[str]]: ...
    @property
    def class_to_idx(self) -> Optional[Dict[str, int]]: ...
    @property
    def samples(self) -> Optional[List[Tuple[str, int]]]: ...
    @property
    def imgs(self) -> Optional[List[Tuple[str, int]]]: ...
    @property
    def targets(self) -> List[int]: ...
    @property
    def class_names(self) -> Optional[List[str]]: ...
    @property
    def shards(self) -> Optional[List[str]]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Tuple[Any, int]: ...

class ImageFolder(ImageDataset):
    def __init__(self, root: PathLike, transform: Optional[Any] = ..., on_error: Literal["raise", "skip"] = ...,
                 max_pixels: int = ..., reduced_decode: bool = ...) -> None: ...

Source = Union[PathLike, Tuple[torch.Tensor, torch.Tensor], Sequence[torch.Tensor], torch.utils.data.TensorDataset,
               ImageDataset]

class DataLoader:
    batch_size: int
    drop_last: bool
    num_workers: int
    seed: int
    rank: int
    world_size: int
    def __init__(self, source: Source, batch_size: int = ..., shuffle: bool = ..., drop_last: bool = ...,
                 num_workers: int = ..., pin_memory: bool = ..., prefetch_factor: Optional[int] = ...,
                 persistent_workers: bool = ..., seed: Optional[int] = ..., transform: Optional[Transform] = ...,
                 rank: Optional[int] = ..., world_size: Optional[int] = ..., even_shards: bool = ...,
                 label_column: str = ..., feature_columns: Optional[Union[str, Sequence[str]]] = ...,
                 shape: Sequence[int] = ..., mode: Literal["tensor", "tensor-uint8", "row", "stream"] = ...,
                 limit: int = ..., row_groups: Optional[Sequence[int]] = ..., threads: Optional[int] = ...) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Batch]: ...
    def close(self) -> None: ...
    def set_epoch(self, epoch: int) -> None: ...
    def state_dict(self) -> Dict[str, int]: ...
    def load_state_dict(self, state: Dict[str, int]) -> None: ...
    @property
    def skipped(self) -> int: ...
    @property
    def num_samples(self) -> int: ...
    def epoch_indices(self, epoch: int) -> List[int]: ...
