# Type stubs for the feedline package (the docstrings live in __init__.py; help() shows them).
import os
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, overload

import torch

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
Source = Union[PathLike, Tuple[torch.Tensor, torch.Tensor], Sequence[torch.Tensor], torch.utils.data.TensorDataset]

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
    def num_samples(self) -> int: ...
    def epoch_indices(self, epoch: int) -> List[int]: ...
