"""feedline: fast, shuffled batches and zero-copy Parquet and CSV reads for PyTorch.

The work happens in C++ (feedline's library, the same one the ``feedline`` command-line tool runs); tensors
cross into Python without copies. See docs/python.md.

    >>> import feedline
    >>> columns = feedline.read_parquet("train.parquet", columns=["label", "pixel1"])
    >>> loader = feedline.DataLoader("train.parquet", batch_size=512, shuffle=True, num_workers=2)
    >>> for features, labels in loader:
    ...     ...
    >>> from feedline import transforms as T
    >>> images = feedline.ImageFolder("train/", transform=T.Compose([T.RandomResizedCrop(224), T.ToTensor()]))
    >>> loader = feedline.DataLoader(images, batch_size=256, shuffle=True, num_workers=8)
"""

import inspect as _inspect_module
import json as _json
import operator as _operator
import os as _os
import warnings as _warnings

import torch as _torch  # first: the extension module needs torch's own library loaded

from . import _feedline
from . import transforms
from ._mix import _BatchMix

__all__ = [
    "DataLoader",
    "ImageDataset",
    "ImageFolder",
    "InvalidArgumentError",
    "InvalidFileError",
    "Mixture",
    "Stream",
    "UnsupportedError",
    "convert",
    "inspect",
    "read_csv",
    "read_parquet",
    "remote_options",
    "remote_stats",
    "set_remote_options",
    "transforms",
]
__version__ = _feedline.__version__

InvalidFileError = _feedline.InvalidFileError
UnsupportedError = _feedline.UnsupportedError
InvalidArgumentError = _feedline.InvalidArgumentError
for _error in (InvalidFileError, UnsupportedError, InvalidArgumentError):
    _error.__module__ = __name__  # shown as feedline.InvalidFileError, where users catch it

_NULLS = ("raise", "zero", "mask")
_UNSET = object()


def _path(path, what="path"):
    if isinstance(path, (str, bytes, _os.PathLike)):
        return _os.fsdecode(path)
    raise TypeError(f"{what} must be a file path (str or os.PathLike), not {type(path).__name__}")


def _names(columns, what):
    if columns is None:
        return None
    if isinstance(columns, str):
        return [columns]
    columns = list(columns)
    for c in columns:
        if not isinstance(c, str):
            raise TypeError(f"{what} must be column names (str), not {type(c).__name__}")
    return columns


def _threads(threads):
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be an int or None, not {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads={threads}: use 1 or more, or None for every core")
    return threads


def _size(value, name):
    if isinstance(value, str):
        return _feedline._parse_size(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a number of bytes (int) or a size such as '20G', not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name}={value}: use 1 byte or more")
    return value


def set_remote_options(cache_dir=_UNSET, cache_limit=None, memory_limit=None, max_attempts=None, timeout=None,
                       max_in_flight=None):
    """Set how this process reads remote data (``s3://``, ``gs://``, ``http://``, ``https://`` paths).

    Only the arguments given change; the others keep their values (see :func:`remote_options`). Credentials,
    region and endpoint come from the environment and the AWS files as AWS's tools read them
    (``AWS_ACCESS_KEY_ID``, ``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ...), never from arguments.

    Args:
        cache_dir: a folder that keeps remote shards and ranges between reads and runs, shared by the processes
            of a host (what one downloads, the others wait for); None: no disk cache, bytes stay in memory.
            Default: the environment's ``FEEDLINE_CACHE_DIR``, else none.
        cache_limit: the cache's size on disk, in bytes or as ``"20G"``; the entries no one reads and used least
            recently go first.
        memory_limit: bytes fetched ahead and held in memory without a disk cache.
        max_attempts: attempts a request gets before the read fails (1: no retry).
        timeout: seconds a transfer may stall, or a connection take to open, before it is tried again.
        max_in_flight: requests in flight at once over the process.
    """
    changes = {}
    if cache_dir is not _UNSET:
        changes["cache_dir"] = None if cache_dir is None else _path(cache_dir, "cache_dir")
    if cache_limit is not None:
        changes["cache_limit"] = _size(cache_limit, "cache_limit")
    if memory_limit is not None:
        changes["memory_limit"] = _size(memory_limit, "memory_limit")
    for name, value in (("max_attempts", max_attempts), ("max_in_flight", max_in_flight)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            changes[name] = value
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout={timeout!r}: use a number of seconds above 0")
        changes["timeout"] = float(timeout)
    _feedline._set_remote_options(changes)


def remote_options():
    """The process's remote options, as a dict (see :func:`set_remote_options`)."""
    return _feedline._remote_options()


def remote_stats():
    """What this process's remote reads have cost so far: a dict of ``requests``, ``bytes`` (over the network),
    ``retries``, ``failures``, ``cache_hits``, ``cache_misses``, ``cache_evictions`` and ``wait_seconds`` (time
    the readers waited for bytes)."""
    return _feedline._remote_stats()


def read_parquet(path, columns=None, row_groups=None, threads=None, nulls="raise"):
    """Read a Parquet file's columns into tensors.

    Returns a dict of column name to value, in the order asked for (file order when ``columns`` is None):

    - numbers: a 1-D tensor, made without a copy where the stored type is the tensor's. BOOLEAN is torch.bool;
      INT32 int32 and INT64 int64; INT(8) int8 or uint8; INT(16) int16 (unsigned: int32); UINT32 int64; UINT64
      keeps its bits in int64; FLOAT float32; DOUBLE float64; FLOAT16 float16; DECIMAL float64 (scaled); DATE,
      TIME and TIMESTAMP their stored integers (days, or units since midnight or the epoch).
    - lists of numbers (DECIMAL among them, as float64): one [rows, n] tensor when every row holds n of them (a
      list of lists: [rows, n, m, ...]), else a list of 1-D tensors, one a row. A list of lists of another shape
      a row each: a tensor when the row's lists have one shape (``[n, 4]`` for n boxes), else a list of its lists,
      each the same way.
    - byte strings: a list of str for STRING columns (ENUM and JSON among them; bytes that are not UTF-8 become
      U+FFFD), UUID columns (canonical form), INTERVAL columns (as DuckDB prints them, ``"1 year 2 months 3 days
      04:05:06.789"``) and VARIANT columns (each value's JSON text, for ``json.loads``), of bytes for other byte
      arrays (BSON among them); None for a null. A list of them: a list of such lists, and a list of lists of
      them lists nested as deep; None for a null list or element.

    Args:
        path: the file, or a dataset of many: a folder of .parquet files, a glob (``"shards/train-*.parquet"``)
            or a comma-separated list, read as one table in the order of their sorted paths; ``key=value``
            folders (Hive partitions) add columns.
        columns: names to read (nested fields by their dotted path, ``"s.x"``); None reads every column.
        row_groups: row group numbers to read, in the order given; None reads all.
        threads: threads to read with; None uses every core.
        nulls: what a null in a column of numbers or a list of numbers becomes: ``"raise"`` (a ValueError naming
            the column and row), ``"zero"`` (0; a null list zeros of the other rows' length when they all hold as
            many elements, else an empty tensor), or ``"mask"``: as ``"zero"``, and the call returns
            ``(columns, masks)`` where masks maps each column that holds nulls to a bool tensor (for a list
            column, shaped as its values), True where a value is present.

    Raises:
        FileNotFoundError, PermissionError, OSError: the file cannot be read.
        InvalidFileError (a ValueError): the file is not valid Parquet; the message names the file and where.
        UnsupportedError (a ValueError): a valid feature feedline does not read.
        InvalidArgumentError (a ValueError): an unknown column or row group, a null under nulls="raise".
    """
    if nulls not in _NULLS:
        raise ValueError(f"nulls={nulls!r}: use 'raise', 'zero' or 'mask'")
    if row_groups is not None:
        row_groups = [int(g) for g in row_groups]
    return _feedline.read_parquet(_path(path), _names(columns, "columns"), row_groups, _threads(threads), nulls)


def read_csv(path, columns=None, threads=None, nulls="raise"):
    """Read a CSV file (a header row, then comma-separated rows) into tensors.

    A column of whole numbers becomes int64, of other numbers float64, and any other column a list of str
    (an empty field is None there). ``columns``, ``threads`` and ``nulls`` (an empty field in a column of
    numbers) work as in :func:`read_parquet`.

    Raises:
        FileNotFoundError, PermissionError, OSError: the file cannot be read.
        InvalidFileError (a ValueError): a ragged row or an unclosed quote, naming the file and line.
        InvalidArgumentError (a ValueError): a column the header lacks, a null under nulls="raise".
    """
    if nulls not in _NULLS:
        raise ValueError(f"nulls={nulls!r}: use 'raise', 'zero' or 'mask'")
    return _feedline.read_csv(_path(path), _names(columns, "columns"), _threads(threads), nulls)


def inspect(path):
    """Describe a Parquet or CSV file, or a dataset of Parquet files: what ``feedline inspect --json`` prints, as a dict.

    Parquet: file, bytes, created_by, num_rows, schema (name, physical_type, nullable, logical_type, ...),
    unsupported_columns, row_groups (num_rows, and per column codec, encodings, sizes, null_count, min, max)
    and key_value_metadata; only the footer is read. CSV: file, format, bytes, num_rows and schema.
    """
    return _json.loads(_feedline.inspect_json(_path(path)))


def _packs(pack):
    """``{name: pattern or [patterns]}`` as a list of (name, [patterns])."""
    if pack is None:
        return []
    if not isinstance(pack, dict):
        raise TypeError(f"pack must be a dict of column name to pattern(s), not {type(pack).__name__}")
    packs = []
    for name, patterns in pack.items():
        if not isinstance(name, str):
            raise TypeError(f"pack: a column name must be a str, not {type(name).__name__}")
        patterns = _names(patterns, f"pack[{name!r}]")
        if not patterns:
            raise ValueError(f"pack[{name!r}]: give at least one pattern")
        packs.append((name, patterns))
    return packs


def _whole(value, name, least):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name}={value}: use {least} or more")
    return value


def convert(input, output, columns=None, limit=0, pack=None, pack_as="bytes", narrow_ints=False, codec="zstd",
            level=None, row_group_rows=0, dictionary=True, threads=None):
    """Rewrite a CSV or Parquet file as CSV or Parquet, by the output's extension: ``feedline convert``.

    It reads a block at a time (a Parquet row group, about 64 MB of CSV), so a file larger than memory converts,
    and writes through a temporary file renamed onto ``output`` at the end: a failed conversion leaves nothing
    there. The arguments are the command's flags:

    Args:
        input: a ``.csv`` or ``.parquet`` file, or Parquet files read as one table (a folder, a glob or a
            comma-separated list, as :func:`read_parquet` takes them).
        output: a ``.csv`` or ``.parquet`` file; its folder must exist.
        columns: only these columns, in file order (names or ``*``/``?`` globs); None keeps every column.
        limit: only the first ``limit`` rows; 0 keeps all.
        pack: ``{name: pattern or [patterns]}``: the numeric columns matching the patterns become one column
            ``name``, in their place, one row-major value a row (``{"image": "pixel*"}``), in the dict's order.
        pack_as: ``"bytes"`` (FIXED_LEN_BYTE_ARRAY, one byte a column: every value must be 0..255) or ``"list"``
            (a list of numbers).
        narrow_ints: store each integer column in the narrowest INT(8/16/32) that holds its values (the ranges
            come from a CSV reader's typing pass or a Parquet footer's statistics where it can, else a pass).
        codec: the Parquet codec: ``"zstd"``, ``"snappy"``, ``"gzip"``, ``"brotli"``, ``"lz4_raw"`` or
            ``"uncompressed"``.
        level: the compression level (zstd 1..22, gzip 0..9, brotli 0..11); None: the codec's default.
        row_group_rows: rows per Parquet row group; 0: up to 1048576, fewer to keep one near 256 MB in memory.
        dictionary: False writes PLAIN values only (``--no-dictionary``).
        threads: threads to read and write with; None uses every core.

    Returns:
        A dict: ``rows`` written, ``columns`` (the output's names, in order), ``input_bytes``, ``output_bytes``,
        ``packed`` (each pack's name to the columns that went into it) and ``narrowed`` (the columns stored in a
        narrower type). :func:`inspect` tells the output's types.

    Raises:
        FileNotFoundError, PermissionError, OSError: the input cannot be read or the output written.
        InvalidFileError (a ValueError): the input is not valid CSV or Parquet; the message names it and where.
        UnsupportedError (a ValueError): a valid feature feedline does not read.
        InvalidArgumentError (a ValueError): an output of another extension or in a missing folder, a level its
            codec does not take, a pattern that matches no column, a value a pack or narrowing cannot hold
            (naming the column and row).
    """
    if pack_as not in ("bytes", "list"):
        raise ValueError(f"pack_as={pack_as!r}: use 'bytes' or 'list'")
    if not isinstance(codec, str):
        raise TypeError(f"codec must be a str, not {type(codec).__name__}")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise TypeError(f"level must be an int or None, not {type(level).__name__}")
    return _feedline.convert(_path(input, "input"), _path(output, "output"), _names(columns, "columns") or [],
                             _whole(limit, "limit", 0), _packs(pack), pack_as, bool(narrow_ints), codec, level,
                             _whole(row_group_rows, "row_group_rows", 0), bool(dictionary), _threads(threads))


_ON_ERROR = ("raise", "skip")

#: Pillow's ``Image.MAX_IMAGE_PIXELS``: ImageDataset's default bound on an image's declared pixels.
MAX_IMAGE_PIXELS = 89478485


def _image_spec(source):
    """An image source as the C++ spec takes it: a path or pattern, or a list of them joined by commas."""
    if isinstance(source, (str, bytes, _os.PathLike)):
        return _os.fsdecode(source)
    if isinstance(source, (list, tuple)):
        paths = [_path(p, "source") for p in source]
        if not paths:
            raise ValueError("source: an empty list of files")
        for p in paths:
            if "," in p:
                raise ValueError(f"source: {p!r} holds a comma, which separates the files of a list")
        return ",".join(paths)
    raise TypeError("source must be a folder, a Parquet file or dataset, or tar shards (a path, a pattern or a list "
                    f"of paths), not {type(source).__name__}")


def _image_transform(transform):
    """(feedline steps, Python callable or None) for ImageDataset's transform argument."""
    if transform is None:
        return [], None
    if isinstance(transform, transforms._Step):
        return transform._feedline_steps(), None
    if type(transform).__module__.startswith("torchvision.transforms"):
        step = transforms._torchvision_step(transform)
        if not isinstance(step, str):
            return step._feedline_steps(), None
    if not callable(transform):
        raise TypeError(f"transform must be a feedline.transforms transform or a callable, not "
                        f"{type(transform).__name__}")
    return [], transform


def _sample_index(index, n, where=""):
    """`index` as a sample number in [0, n), negative ones counted from the end, as a sequence takes them."""
    if isinstance(index, bool) or not isinstance(index, int):
        try:
            index = _operator.index(index)
        except TypeError:
            raise TypeError(f"indices must be integers, not {type(index).__name__}") from None
    if index < 0:
        index += n
    if not 0 <= index < n:
        raise IndexError(f"index {index} out of range for {n} samples{where}")
    return index


class ImageDataset(_torch.utils.data.Dataset):
    """Labelled images decoded in C++: a folder of class folders, a Parquet file or dataset, or tar shards.

    ``ds[i]`` is ``(image, label)``: without a transform, the image as a uint8 tensor, channels x height x width,
    RGB, with the values Pillow's ``convert("RGB")`` gives (torchvision's ``PILToTensor()(default_loader(path))``);
    with one, what the transform makes of it. ``feedline.DataLoader(ds, ...)`` makes batches of it on C++ worker
    threads.

    Args:
        source: where the images are, told apart by what it names:

            - a folder of class folders, ``root/<class>/**/<image>``, read as torchvision's ImageFolder reads it
              (``classes``, ``class_to_idx`` and ``samples`` are the same);
            - a ``.parquet`` file, a pattern or list of them, or a folder of ``.parquet`` files: an image column
              (Hugging Face's ``{bytes, path}`` struct, or binary) and an integer label column;
            - WebDataset tar shards: a ``.tar`` file, a brace pattern (``"train-{000000..000099}.tar"``) or a
              list of ``.tar`` files; each sample a ``<key>.jpg`` (png, webp) and a ``<key>.cls`` label.
        transform: a feedline.transforms transform (or a torchvision.transforms.Compose of the same classes,
            translated). Any other callable is called by ``ds[i]`` on the uint8 tensor, but cannot be used by
            feedline.DataLoader, whose batches are made without Python.
        label_column, image_column: the Parquet columns.
        on_error: ``"raise"``: a sample that cannot be read or decoded fails its batch; ``"skip"``: the loader
            leaves it out of its batch (which is one shorter), counts it (``DataLoader.skipped``) and warns at
            the end of the epoch. ``ds[i]`` of such a sample raises either way: there is nothing to return.
        max_pixels: an image whose header declares more pixels (width x height) is refused before any pixel
            memory is allocated, as a corrupt one is; Pillow's ``Image.MAX_IMAGE_PIXELS`` by default.
        reduced_decode: decode JPEGs and WebPs only in the window the first step's box needs when that step is
            a RandomResizedCrop or Resize (on by default): faster, with the whole decode's values. False decodes
            every pixel.

    Raises:
        FileNotFoundError, OSError: the source does not exist or cannot be read.
        InvalidFileError (a ValueError): a tar shard or Parquet file that is not valid, naming it.
        ValueError: a transform torchvision would refuse, an unknown on_error.
    """

    def __init__(self, source, transform=None, label_column="label", image_column="image", on_error="raise",
                 max_pixels=MAX_IMAGE_PIXELS, reduced_decode=True):
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error={on_error!r}: use 'raise' or 'skip'")
        if isinstance(max_pixels, bool) or not isinstance(max_pixels, int):
            raise TypeError(f"max_pixels must be an int, not {type(max_pixels).__name__}")
        if max_pixels < 1:
            raise ValueError(f"max_pixels={max_pixels}: use 1 or more")
        for name, value in (("label_column", label_column), ("image_column", image_column)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, not {type(value).__name__}")
        self._spec = _image_spec(source)
        steps, self._python_transform = _image_transform(transform)
        self.transform = transform
        self.on_error = on_error
        self._core = _feedline._ImageDataset(self._spec, steps, label_column, image_column, on_error, max_pixels,
                                             bool(reduced_decode))

    @property
    def kind(self):
        """``"folder"``, ``"parquet"`` or ``"tar shards"``."""
        return self._core.kind()

    @property
    def root(self):
        """The source as given (paths of a list joined by commas)."""
        return self._spec

    @property
    def classes(self):
        """A folder's class names, sorted, as torchvision's ImageFolder has them; None for other sources."""
        return self._core.folder_attribute("classes")

    @property
    def class_to_idx(self):
        """A folder's ``{class name: class number}``; None for other sources."""
        return self._core.folder_attribute("class_to_idx")

    @property
    def samples(self):
        """A folder's ``[(path, class number)]`` in sample order; None for other sources."""
        return self._core.folder_attribute("samples")

    @property
    def imgs(self):
        """The same as ``samples`` (torchvision's ImageFolder has both)."""
        return self.samples

    @property
    def targets(self):
        """Every sample's class number, in sample order (read without decoding an image)."""
        return self._core.targets()

    @property
    def class_names(self):
        """The class names by class number where the source has them (a folder's classes, a Parquet file's
        Hugging Face ClassLabel names); None where it has numbers only (tar shards)."""
        names = self._core.class_names()
        return names if names else None

    @property
    def shards(self):
        """The tar shards, in order; None for other sources."""
        return self._core.shards()

    def __len__(self):
        return len(self._core)

    def __getitem__(self, index):
        index = _sample_index(index, len(self._core))
        image, label = self._core.get(index)
        if self._python_transform is not None:
            image = self._python_transform(image)
        return image, label

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.kind} {self._spec!r}, {len(self)} samples"
                 + (f", {len(self.class_names)} classes" if self.class_names else "")
                 + (f", on_error={self.on_error!r}" if self.on_error != "raise" else "") + ")"]
        if self.transform is not None:
            lines.append("    transform: " + repr(self.transform).replace("\n", "\n    "))
        return "\n".join(lines)


class ImageFolder(ImageDataset):
    """A folder of class folders, ``root/<class>/**/<image>``, as torchvision.datasets.ImageFolder reads it: the
    same ``classes``, ``class_to_idx``, ``samples`` and ``targets``. ImageDataset for folders only; see it for
    ``transform``, ``on_error``, ``max_pixels`` and ``reduced_decode``.

    Raises:
        FileNotFoundError: root does not exist, has no class folder, or a class folder has no image.
        ValueError: root names Parquet files or tar shards (use feedline.ImageDataset).
    """

    def __init__(self, root, transform=None, on_error="raise", max_pixels=MAX_IMAGE_PIXELS, reduced_decode=True):
        spec = _path(root, "root")
        kind = _feedline.image_source_kind(spec)
        if kind != "folder":
            raise ValueError(f"ImageFolder: {spec!r} names {kind}, not a folder of class folders; "
                             "read it with feedline.ImageDataset")
        super().__init__(spec, transform=transform, on_error=on_error, max_pixels=max_pixels,
                         reduced_decode=reduced_decode)


def _share(value, name):
    """A proportion or a repeat: a finite number above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"Stream: {name} must be a number, not {type(value).__name__}")
    if not (value > 0 and value != float("inf")):
        raise ValueError(f"Stream: {name}={value!r}: use a finite number above 0")
    return float(value)


class Stream:
    """One source of a :class:`Mixture` and its share of every epoch, as MosaicML Streaming's ``Stream`` gives it.

    Args:
        dataset: an :class:`ImageDataset` (or ImageFolder), a ``(features, labels)`` pair of tensors, or a
            torch.utils.data.TensorDataset of two tensors.
        proportion: the source's share of the epoch, relative to the other sources' proportions (0.8 and 0.2, or
            4 and 1, say the same). Proportions go with proportions only.
        repeat: its samples an epoch over its size: 1 gives every sample once an epoch, 2 each twice, 0.5 half of
            them (the other half the next epoch).
        choose: a number of samples an epoch.
        label_offset: added to each of the source's labels (after ``label_map``).
        label_map: class ``l`` of the source becomes ``label_map[l]``; a list, or a dict ``{class: new class}``
            that names every class from 0 to its largest.

    At most one of proportion, repeat and choose; none means ``repeat=1``.
    """

    def __init__(self, dataset, proportion=None, repeat=None, choose=None, label_offset=0, label_map=None):
        given = [name for name, value in (("proportion", proportion), ("repeat", repeat), ("choose", choose))
                 if value is not None]
        if len(given) > 1:
            raise ValueError(f"Stream: give at most one of proportion, repeat and choose, not {' and '.join(given)}")
        if proportion is not None:
            self.kind, self.value = "proportion", _share(proportion, "proportion")
        elif choose is not None:
            if isinstance(choose, bool) or not isinstance(choose, int):
                raise TypeError(f"Stream: choose must be an int (samples an epoch), not {type(choose).__name__}")
            if choose < 1:
                raise ValueError(f"Stream: choose={choose}: use 1 sample or more")
            self.kind, self.value = "count", choose
        else:
            self.kind, self.value = "repeat", _share(1 if repeat is None else repeat, "repeat")
        if isinstance(label_offset, bool) or not isinstance(label_offset, int):
            raise TypeError(f"Stream: label_offset must be an int, not {type(label_offset).__name__}")
        self.dataset = dataset
        self.label_offset = label_offset
        self.label_map = self._label_map(label_map)

    @staticmethod
    def _label_map(label_map):
        if label_map is None:
            return []
        if isinstance(label_map, dict):
            for key in label_map:
                if isinstance(key, bool) or not isinstance(key, int) or key < 0:
                    raise ValueError(f"Stream: label_map's keys must be class numbers 0 or more, not {key!r}")
            missing = [k for k in range(max(label_map, default=-1) + 1) if k not in label_map]
            if missing:
                raise ValueError(f"Stream: label_map has no entry for class {missing[0]}: a dict must name every "
                                 f"class from 0 to {max(label_map)}")
            label_map = [label_map[k] for k in range(len(label_map))]
        if isinstance(label_map, (str, bytes)) or not hasattr(label_map, "__iter__"):
            raise TypeError(f"Stream: label_map must be a list or a dict, not {type(label_map).__name__}")
        out = []
        for v in label_map:
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Stream: label_map's labels must be class numbers 0 or more, not {v!r}")
            out.append(v)
        return out

    @property
    def proportion(self):
        return self.value if self.kind == "proportion" else None

    @property
    def repeat(self):
        return self.value if self.kind == "repeat" else None

    @property
    def choose(self):
        return self.value if self.kind == "count" else None

    def __repr__(self):
        share = {"proportion": "proportion", "repeat": "repeat", "count": "choose"}[self.kind]
        extra = (f", label_offset={self.label_offset}" if self.label_offset else "") + (
            f", label_map={self.label_map}" if self.label_map else "")
        return f"Stream({type(self.dataset).__name__}, {share}={self.value!r}{extra})"


def _tensor_pair(source):
    """A (features, labels) pair of tensors or a TensorDataset of two, as a pair; None for anything else."""
    tensors = getattr(source, "tensors", source)
    if isinstance(tensors, (tuple, list)) and len(tensors) == 2 and all(
            isinstance(t, _torch.Tensor) for t in tensors):
        return tensors[0], tensors[1]
    return None


class Mixture(_torch.utils.data.Dataset):
    """Several datasets read as one, each giving its share of every epoch; ``feedline.DataLoader(mixture, ...)``
    serves it as any other source (shuffle, seed, workers, ranks, state_dict).

    The samples each source gives an epoch are fixed (``counts``), and which ones is a function of the seed and
    the epoch alone: the same batches for any num_workers, and a resumed run continues exactly. A source with
    ``repeat=1`` gives each of its samples once an epoch; one with a proportion or a count below its size gives
    different samples each epoch, every one of them before any comes again.

    Args:
        sources: a list of datasets or :class:`Stream` s: all :class:`ImageDataset` s with the same
            feedline.transforms transform (every sample is made by it), or all tensor pairs / TensorDatasets of
            samples of one shape and dtype. A dataset given bare is ``Stream(dataset)``: ``repeat=1``.
        weights: proportions for the sources, ``[0.8, 0.2]``: shorthand for ``Stream(d, proportion=w)``; not with
            Streams that set their own share.
        epoch_size: the samples of an epoch; by default the sum of the sources' sizes for proportions, else the
            sum of what the repeats and counts give. With repeats or counts, they are rescaled to it.

    ``len(mixture)`` is the epoch's length. ``mixture[i]`` is sample ``i`` of the sources one after another
    (source 0's, then source 1's, ...: ``sum(mixture.sizes)`` of them), relabelled as its Stream says;
    :meth:`epoch_order` gives an epoch's indices, for a sampler of torch's DataLoader.

    Raises:
        ValueError: images mixed with tensors, image datasets of different transforms, tensor sources that
            disagree on a sample's shape or dtype (naming the source), a share that is not above 0, a label map
            that does not hold a label.
    """

    def __init__(self, sources, weights=None, epoch_size=None):
        if isinstance(sources, (str, bytes, _os.PathLike, ImageDataset, Stream)) or not hasattr(sources, "__iter__"):
            raise TypeError("Mixture: sources must be a list of datasets or feedline.Stream objects, not "
                            f"{type(sources).__name__}")
        sources = list(sources)
        if not sources:
            raise ValueError("Mixture: give at least one source")
        if weights is not None:
            weights = list(weights)
            if len(weights) != len(sources):
                raise ValueError(f"Mixture: {len(weights)} weights for {len(sources)} sources")
            for s in sources:
                if isinstance(s, Stream) and (s.kind != "repeat" or s.value != 1.0):
                    raise ValueError(f"Mixture: weights are proportions for the sources, but {s!r} sets its own "
                                     "share; give each Stream its proportion instead")
            streams = [Stream(s.dataset if isinstance(s, Stream) else s, proportion=w,
                              label_offset=s.label_offset if isinstance(s, Stream) else 0,
                              label_map=s.label_map if isinstance(s, Stream) else None)
                       for s, w in zip(sources, weights)]
        else:
            streams = [s if isinstance(s, Stream) else Stream(s) for s in sources]
        if epoch_size is not None:
            if isinstance(epoch_size, bool) or not isinstance(epoch_size, int):
                raise TypeError(f"Mixture: epoch_size must be an int, not {type(epoch_size).__name__}")
            if epoch_size < 1:
                raise ValueError(f"Mixture: epoch_size={epoch_size}: use 1 sample or more")
        self.streams = streams
        self.epoch_size = epoch_size
        datasets = [s.dataset for s in streams]
        images = [isinstance(d, ImageDataset) for d in datasets]
        if all(images):
            self._core = self._images(streams)
        elif any(images):
            k = images.index(False)
            raise ValueError(f"Mixture: source {k + 1} ({type(datasets[k]).__name__}) is not an image dataset but "
                             f"source {images.index(True) + 1} is: a mixture is of image datasets only or of tensors "
                             "only")
        else:
            pairs = []
            for k, d in enumerate(datasets):
                pair = _tensor_pair(d)
                if pair is None:
                    raise TypeError(f"Mixture: source {k + 1} must be a feedline.ImageDataset, a (features, labels) "
                                    f"pair of tensors or a TensorDataset of two tensors, not {type(d).__name__}")
                pairs.append(pair)
            parts = [(s.kind, float(s.value), s.label_offset, s.label_map, "") for s in streams]
            self._core = _feedline._Mixture.tensors(pairs, parts, epoch_size or 0)

    def _images(self, streams):
        first = streams[0].dataset
        for k, s in enumerate(streams):
            d = s.dataset
            if d._python_transform is not None:
                raise TypeError(f"Mixture: source {k + 1} ({d.root})'s transform {d._python_transform!r} is a Python "
                                "callable; a mixture makes its samples in C++: give the datasets feedline.transforms")
            if d._core.describe_steps() != first._core.describe_steps():
                raise ValueError(f"Mixture: source 1 ({first.root}) and source {k + 1} ({d.root}) have different "
                                 f"transforms, {first.transform!r} and {d.transform!r}: a mixture makes every sample "
                                 "with one transform, give them the same")
            if d.on_error != first.on_error:
                raise ValueError(f"Mixture: source 1 ({first.root}) has on_error={first.on_error!r} and source {k + 1} "
                                 f"({d.root}) on_error={d.on_error!r}: give them the same")
        self.transform = first.transform
        parts = [(s.kind, float(s.value), s.label_offset, s.label_map, s.dataset.root) for s in streams]
        return _feedline._Mixture.images([s.dataset._core for s in streams], parts, self.epoch_size or 0)

    def __len__(self):
        """The samples of an epoch."""
        return len(self._core)

    @property
    def sizes(self):
        """Each source's samples."""
        return self._core.sizes()

    @property
    def counts(self):
        """Each source's samples an epoch (summing to ``len(self)``)."""
        return self._core.counts()

    @property
    def names(self):
        """Each source's name in messages: ``"source <number>"``, from 1, and an image dataset's root."""
        return self._core.names()

    @property
    def class_names(self):
        """For image datasets, the class names by class number after relabelling: the union of the sources'
        (where two name the same number, they must name the same class); None for tensors, or sources with
        numbers only."""
        names = self._core.class_names()
        return names if names else None

    @property
    def classes(self):
        """The same as ``class_names``."""
        return self.class_names

    def epoch_order(self, epoch, shuffle=True, seed=0):
        """Epoch ``epoch``'s ``len(self)`` indices (of ``self[i]``'s space, some maybe repeated), as the loader
        of one rank draws them with this shuffle and seed."""
        return self._core.epoch_order(bool(shuffle), int(seed) % (1 << 64), int(epoch))

    def __getitem__(self, index):
        return self._core.get(_sample_index(index, self._core.total_size(),
                                            " (the sources' samples, one after another)"))

    def __repr__(self):
        lines = [f"Mixture({len(self.streams)} sources, {len(self)} samples an epoch)"]
        for name, stream, count in zip(self.names, self.streams, self.counts):
            lines.append(f"    {name}: {stream!r}, {count} an epoch")
        return "\n".join(lines)


def _distributed_default(rank, world_size):
    """rank and world_size as given, else torch.distributed's when it is initialised, else 0 and 1."""
    if rank is not None and world_size is not None:
        return int(rank), int(world_size)
    dist = getattr(_torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        if rank is None:
            rank = dist.get_rank()
        if world_size is None:
            world_size = dist.get_world_size()
    return (0 if rank is None else int(rank)), (1 if world_size is None else int(world_size))


def _transform_takes_info(transform):
    try:
        params = _inspect_module.signature(transform).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in params)


class DataLoader:
    """Shuffled batches made by C++ worker threads, as torch.utils.data.DataLoader makes them.

    ``source`` is a file path (Parquet or CSV: an image table as ``feedline train`` reads it), a pair
    ``(features, labels)`` of tensors, a torch.utils.data.TensorDataset of two tensors, or an
    :class:`ImageDataset` whose transform (feedline.transforms) ends in one size: its images are decoded and
    transformed by the workers, or a :class:`Mixture` of either kind (each epoch its sources' shares, see
    ``source_samples``). Iterating yields ``(features, labels)`` batches.

    The arguments that torch's DataLoader also has mean what they mean there: batch_size, shuffle, drop_last,
    num_workers (threads here, not processes: 0 makes batches in the calling thread), pin_memory (a no-op
    without CUDA), prefetch_factor (batches in flight per worker), persistent_workers. Beyond them:

    Args:
        seed: the shuffle's seed; the same seed gives the same batches for every num_workers. None draws one
            from torch's generator (so torch.manual_seed fixes it), or 0 when world_size is above 1, as
            DistributedSampler does.
        transform: called on every batch in the worker thread that made it, ``transform(features, labels)``
            -> ``(features, labels)``; with a third parameter it also gets ``(epoch, batch, seed)``, a seed
            drawn from the loader's seed, the epoch and the batch alone, for randomness that does not depend
            on which worker runs first. It runs with the GIL held.
        batch_transform: a batch mix from feedline.transforms (MixUp, CutMix, RandomMixup, RandomCutmix, or a
            RandomChoice of a MixUp and a CutMix, as torchvision's reference train.py applies them in its
            collate_fn), applied in C++ by the worker thread to each finished batch, after ``transform`` and
            without the GIL. The labels become mixed one-hot targets (batch x num_classes, the images' float
            dtype), for ``torch.nn.functional.cross_entropy``; its draws come from the seed, the epoch and the
            batch alone. The images must be floating point (ToTensor, not PILToTensor).
        rank, world_size: this process's share of every epoch (as DistributedSampler gives it: the same
            global permutation on every rank, padded by wrapping or cut with drop_last). Default: those of
            torch.distributed when it is initialised, else 0 and 1.
        even_shards: False gives evaluation shares: no padding, each sample on exactly one rank.
        prefetch_blocks: for remote data (``s3://``, ``https://``): the shuffle blocks (tar shards, Parquet row
            groups) fetched ahead of the reads in the sampler's order; a folder of images fetches this many
            batches' files ahead. 0: none. See :func:`set_remote_options`.
        label_column, feature_columns, shape, mode, limit, row_groups, threads: for a file source. The label
            column holds class numbers; feature_columns are names or globs (default ``pixel*``, or the file's
            PNG ``image`` column); shape is (channels, height, width) of a sample, (1, 28, 28) by default.
            mode: ``"tensor"`` decodes the file once into float32 divided by 255 (the experiment's v2);
            ``"tensor-uint8"`` keeps uint8; ``"row"`` converts every sample as it is asked for (the
            experiment's naive v1); ``"stream"`` (Parquet) reads row groups as the epoch reaches them, in
            bounded memory. limit: the first rows only (0: all). threads: for reading the file.
    """

    def __init__(self, source, batch_size=1, shuffle=False, drop_last=False, num_workers=0, pin_memory=False,
                 prefetch_factor=None, persistent_workers=False, seed=None, transform=None, rank=None,
                 world_size=None, even_shards=True, label_column="label", feature_columns=None,
                 shape=(1, 28, 28), mode="tensor", limit=0, row_groups=None, threads=None, prefetch_blocks=4,
                 batch_transform=None):
        for name, value in (("batch_size", batch_size), ("num_workers", num_workers),
                            ("prefetch_blocks", prefetch_blocks)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size}: use 1 or more")
        if num_workers < 0:
            raise ValueError(f"num_workers={num_workers}: use 0 or more")
        if prefetch_blocks < 0:
            raise ValueError(f"prefetch_blocks={prefetch_blocks}: use 0 or more")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError("prefetch_factor needs num_workers > 0: it counts batches in flight per worker")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if transform is not None and not callable(transform):
            raise TypeError(f"transform must be callable, not {type(transform).__name__}")
        if batch_transform is not None and not isinstance(batch_transform, _BatchMix):
            raise TypeError("batch_transform must be a feedline.transforms batch mix (MixUp, CutMix, RandomMixup, "
                            f"RandomCutmix, RandomChoice of them), not {type(batch_transform).__name__}")
        rank, world_size = _distributed_default(rank, world_size)
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank={rank}, world_size={world_size}: need 0 <= rank < world_size")
        if seed is None:
            seed = 0 if world_size > 1 else int(_torch.empty((), dtype=_torch.int64).random_().item())
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed={seed!r}: use a whole number 0 or more")
        options = {
            "batch_size": batch_size,
            "shuffle": bool(shuffle),
            "drop_last": bool(drop_last),
            "num_workers": num_workers,
            "persistent_workers": bool(persistent_workers),
            "pin_memory": bool(pin_memory),
            "prefetch_factor": 2 if prefetch_factor is None else int(prefetch_factor),
            "prefetch_blocks": prefetch_blocks,
            "seed": seed % (1 << 64),
            "rank": rank,
            "world_size": world_size,
            "even_shards": bool(even_shards),
            "transform": transform,
            "transform_info": transform is not None and _transform_takes_info(transform),
            "mix": None if batch_transform is None else batch_transform._spec(),
        }
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self.num_workers = num_workers
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self._iterator = None
        self._sources = None  # a Mixture's sources
        self._source_samples = None  # a Mixture's source_samples of an epoch closed early
        if isinstance(source, ImageDataset):
            if source._python_transform is not None:
                raise TypeError(
                    f"DataLoader: the dataset's transform {source._python_transform!r} is a Python callable; batches "
                    "are made in C++ threads without the GIL, so give the dataset feedline.transforms (see "
                    "feedline.transforms.__all__), or iterate this same dataset with torch.utils.data.DataLoader, "
                    "which calls the transform in its worker processes")
            self._loader = _feedline.loader_from_images(source._core, options)
        elif isinstance(source, Mixture):
            self._loader = _feedline.loader_from_mixture(source._core, options)
            self._sources = len(source.sizes)
        elif isinstance(source, (str, bytes, _os.PathLike)):
            path = _path(source, "source")
            shape = tuple(int(d) for d in shape)
            if len(shape) != 3:
                raise ValueError(f"shape={shape}: give (channels, height, width)")
            if row_groups is not None:
                row_groups = [int(g) for g in row_groups]
            self._loader = _feedline.loader_from_file(path, label_column, _names(feature_columns, "feature_columns"),
                                                      list(shape), mode, int(limit), row_groups, _threads(threads),
                                                      options)
        else:
            features, labels = self._tensors(source)
            self._loader = _feedline.loader_from_tensors(features, labels, options)
        if pin_memory and not self._loader.pin_memory_active():
            _warnings.warn("pin_memory=True, but CUDA is not available: batches are not pinned", stacklevel=2)

    @staticmethod
    def _tensors(source):
        tensors = getattr(source, "tensors", source)  # torch.utils.data.TensorDataset keeps them in .tensors
        if isinstance(tensors, (tuple, list)) and len(tensors) == 2 and all(
                isinstance(t, _torch.Tensor) for t in tensors):
            return tensors[0], tensors[1]
        raise TypeError("source must be a file path, a (features, labels) pair of tensors or a TensorDataset of "
                        f"two tensors, not {type(source).__name__}")

    def __len__(self):
        """Batches an epoch yields on this rank."""
        return len(self._loader)

    def __iter__(self):
        """Start the next epoch. An epoch still being iterated is closed first (its batches are not made)."""
        if self._iterator is not None:
            self._iterator.close()
        self._iterator = self._loader.epoch()
        return self._iterator

    def close(self):
        """Stop the epoch in progress, if any; its worker threads end. Iterating again starts the next one."""
        if self._iterator is not None:
            self._iterator.close()
            self._source_samples = self._iterator.source_samples()
            self._iterator = None

    def set_epoch(self, epoch):
        """Make the next iteration epoch ``epoch`` (its permutation), as DistributedSampler.set_epoch does."""
        self.close()
        self._loader.set_epoch(int(epoch))

    def state_dict(self):
        """Where the loader stands: the epoch, the batches of it handed out, and what they mean (seed, world
        size, batch size, samples). Small and plain: save it with the model's checkpoint."""
        return self._loader.state_dict()

    def load_state_dict(self, state):
        """Continue from ``state``: the next iteration yields the batches after those already handed out, the
        same batches the interrupted run would have yielded, for any num_workers. Refuses a state of another
        seed, world size, batch size or dataset size, naming what differs."""
        self.close()
        self._loader.load_state_dict(dict(state))

    @property
    def skipped(self):
        """For an ImageDataset with on_error="skip": the samples left out of the epoch in progress so far, or of
        the last epoch once it ended (0 otherwise)."""
        return self._loader.skipped()

    @property
    def source_samples(self):
        """For a :class:`Mixture`: the samples each source gave this rank in the epoch in progress so far, or in
        the last epoch once it ended (zeros before the first; after load_state_dict, the batches handed out
        since); summed over the ranks of a whole epoch, the mixture's ``counts``. None for other sources."""
        if self._sources is None:
            return None
        if self._iterator is not None:
            return self._iterator.source_samples()
        return self._source_samples or [0] * self._sources

    @property
    def num_samples(self):
        """Samples in the dataset (all ranks together)."""
        return self._loader.samples()

    def epoch_indices(self, epoch):
        """The dataset indices this rank sees in epoch ``epoch``, in order."""
        return self._loader.epoch_indices(int(epoch))
