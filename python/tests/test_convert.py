"""feedline.convert: files the tests write, converted and read back value for value, and inputs it refuses."""

import os

import pytest
import torch

import feedline

ROWS = 60


def pixel(r, k):
    return (r * 7 + k * 31) % 256


def write_csv(path, rows=ROWS):
    """label = r % 10, p1..p4 = pixel(r, k), w = r * 1000 - 5, name = "n<r>"."""
    lines = ["label,p1,p2,p3,p4,w,name"]
    for r in range(rows):
        lines.append(",".join([str(r % 10)] + [str(pixel(r, k)) for k in range(1, 5)] + [str(r * 1000 - 5), f"n{r}"]))
    path.write_text("\n".join(lines) + "\n")
    return path


def expected_pixels(rows=ROWS):
    return torch.tensor([[pixel(r, k) for k in range(1, 5)] for r in range(rows)], dtype=torch.int64)


def column_types(path):
    return {c["name"]: c for c in feedline.inspect(path)["schema"]}


def test_csv_to_parquet_packs_bytes_and_narrows(tmp_path):
    source = write_csv(tmp_path / "in.csv")
    out = tmp_path / "out.parquet"
    result = feedline.convert(source, out, pack={"image": "p*"}, narrow_ints=True)
    assert result["rows"] == ROWS
    assert result["columns"] == ["label", "image", "w", "name"]
    assert result["packed"] == {"image": ["p1", "p2", "p3", "p4"]}
    assert result["narrowed"] == ["label", "w"]
    assert result["input_bytes"] == os.path.getsize(source)
    assert result["output_bytes"] == os.path.getsize(out)

    columns = feedline.read_parquet(out)
    assert columns["label"].dtype == torch.uint8
    assert torch.equal(columns["label"].to(torch.int64), torch.arange(ROWS) % 10)
    assert torch.equal(columns["w"].to(torch.int64), torch.arange(ROWS) * 1000 - 5)
    assert columns["name"] == [f"n{r}" for r in range(ROWS)]
    images = torch.tensor([list(b) for b in columns["image"]], dtype=torch.int64)
    assert torch.equal(images, expected_pixels())
    types = column_types(out)
    assert types["image"]["physical_type"] == "FIXED_LEN_BYTE_ARRAY"


def test_parquet_to_csv_and_to_packed_lists(tmp_path):
    wide = tmp_path / "wide.parquet"
    feedline.convert(write_csv(tmp_path / "in.csv"), wide, row_group_rows=25, threads=1)
    assert [g["num_rows"] for g in feedline.inspect(wide)["row_groups"]] == [25, 25, 10]

    # columns and limit, as the command's --columns and --limit: file order, the first rows.
    head = tmp_path / "head.csv"
    result = feedline.convert(wide, head, columns=["p2", "label*"], limit=7)
    assert result["rows"] == 7 and result["columns"] == ["label", "p2"]
    columns = feedline.read_csv(head)
    assert list(columns) == ["label", "p2"]
    assert torch.equal(columns["label"], torch.arange(7) % 10)
    assert torch.equal(columns["p2"], expected_pixels(7)[:, 1])

    lists = tmp_path / "lists.parquet"
    result = feedline.convert(wide, lists, pack={"v": ["p1", "p3"], "u": "w"}, pack_as="list", codec="gzip", level=9,
                              dictionary=False)
    assert result["packed"] == {"v": ["p1", "p3"], "u": ["w"]}
    columns = feedline.read_parquet(lists)
    assert list(columns) == ["label", "v", "p2", "p4", "u", "name"]
    assert torch.equal(columns["v"].to(torch.int64), expected_pixels()[:, [0, 2]])
    assert torch.equal(columns["u"].to(torch.int64), (torch.arange(ROWS) * 1000 - 5).reshape(-1, 1))
    chunk = feedline.inspect(lists)["row_groups"][0]["columns"][0]
    assert chunk["codec"].lower() == "gzip"
    assert not any("DICTIONARY" in e for e in chunk["encodings"])


def test_a_prepared_image_table_packs_into_the_idx_images(prepared, idx_test, tmp_path):
    images, labels = idx_test
    out = tmp_path / "packed.parquet"
    result = feedline.convert(prepared["csv"], out, pack={"image": "pixel*"}, narrow_ints=True)
    assert result["rows"] == len(labels) and result["columns"] == ["label", "image"]
    columns = feedline.read_parquet(out)
    assert torch.equal(columns["label"].to(torch.int64), labels)
    packed = torch.frombuffer(bytearray(b"".join(columns["image"])), dtype=torch.uint8)
    assert torch.equal(packed.reshape(images.shape), images)


def test_bad_inputs_and_options_are_refused_and_nothing_is_written(tmp_path):
    source = write_csv(tmp_path / "in.csv")
    out = tmp_path / "out.parquet"
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n")
    with pytest.raises(feedline.InvalidFileError, match="ragged.csv"):
        feedline.convert(ragged, out)
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        feedline.convert(tmp_path / "missing.csv", out)
    with pytest.raises(feedline.InvalidArgumentError, match="column 'w' row 0 holds -5"):
        feedline.convert(source, out, pack={"v": ["p1", "w"]})
    with pytest.raises(ValueError, match="zstd's levels are 1 to 22"):
        feedline.convert(source, out, level=23)
    with pytest.raises(ValueError, match="cannot tell the format"):
        feedline.convert(source, tmp_path / "out.txt")
    with pytest.raises(ValueError, match="does not exist"):
        feedline.convert(source, tmp_path / "none" / "out.parquet")
    with pytest.raises(ValueError, match="no column matches 'nothing"):
        feedline.convert(source, out, columns="nothing*")
    with pytest.raises(ValueError, match="unknown Parquet codec 'zip'"):
        feedline.convert(source, out, codec="zip")
    with pytest.raises(ValueError, match="pack_as='rows'"):
        feedline.convert(source, out, pack={"v": "p*"}, pack_as="rows")
    with pytest.raises(TypeError, match="pack must be a dict"):
        feedline.convert(source, out, pack="v=p*")
    with pytest.raises(ValueError, match="limit=-1"):
        feedline.convert(source, out, limit=-1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "ragged.csv"]
