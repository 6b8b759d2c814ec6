"""feedline.read_parquet, read_csv and inspect against the IDX data they were written from."""

import json
import os
import pathlib
import subprocess

import pytest
import torch

import feedline
from conftest import feedline_tool


def pixels(columns):
    return torch.stack([columns[f"pixel{i}"] for i in range(1, 785)], dim=1)


def test_parquet_columns_hold_the_idx_values(prepared, idx_test):
    images, labels = idx_test
    columns = feedline.read_parquet(prepared["parquet"])
    assert list(columns)[:2] == ["label", "pixel1"] and len(columns) == 785
    assert columns["label"].dtype == torch.int64 or columns["label"].dtype == torch.uint8
    assert torch.equal(columns["label"].to(torch.int64), labels)
    assert torch.equal(pixels(columns).to(torch.uint8), images.reshape(-1, 784))


def test_csv_columns_hold_the_idx_values(prepared, idx_test):
    images, labels = idx_test
    columns = feedline.read_csv(prepared["csv"], columns=["label"] + [f"pixel{i}" for i in range(1, 785)])
    assert columns["label"].dtype == torch.int64
    assert torch.equal(columns["label"], labels)
    assert torch.equal(pixels(columns).to(torch.uint8), images.reshape(-1, 784))


def test_columns_and_row_groups_are_chosen_in_the_order_asked(prepared, idx_test):
    _, labels = idx_test
    info = feedline.inspect(prepared["parquet"])
    sizes = [g["num_rows"] for g in info["row_groups"]]
    picked = feedline.read_parquet(prepared["parquet"], columns=["pixel9", "label"], row_groups=[len(sizes) - 1],
                                   threads=1)
    assert list(picked) == ["pixel9", "label"]
    assert torch.equal(picked["label"].to(torch.int64), labels[-sizes[-1]:])


def test_inspect_is_the_document_of_inspect_json(prepared):
    out = subprocess.run([feedline_tool(), "inspect", "--json", str(prepared["parquet"])], check=True,
                         capture_output=True, text=True).stdout
    assert feedline.inspect(prepared["parquet"]) == json.loads(out)
    csv = feedline.inspect(prepared["csv"])
    assert csv["format"] == "csv" and csv["num_rows"] == 10000 and csv["schema"][0]["name"] == "label"


def write_csv(path, text):
    path.write_text(text)
    return path


def test_nulls_are_refused_zeroed_or_masked_as_asked(tmp_path):
    path = write_csv(tmp_path / "nulls.csv", "a,b,name\n1,0.5,x\n,1.5,\n3,,z\n")
    with pytest.raises(ValueError, match=r"nulls\.csv: column 'a' holds 1 null value \(the first in row 1\)"):
        feedline.read_csv(path)
    zero = feedline.read_csv(path, nulls="zero")
    assert zero["a"].tolist() == [1, 0, 3] and zero["b"].tolist() == [0.5, 1.5, 0.0]
    assert zero["name"] == ["x", None, "z"]
    values, masks = feedline.read_csv(path, nulls="mask")
    assert values["a"].tolist() == [1, 0, 3]
    assert masks["a"].tolist() == [True, False, True] and masks["b"].tolist() == [True, True, False]
    assert "name" not in masks


def test_parquet_types_become_their_tensors(tmp_path):
    csv = write_csv(tmp_path / "t.csv", "small,big,ratio,word\n1,10000000000,0.25,é\n200,-3,1e300,b\n")
    parquet = tmp_path / "t.parquet"
    subprocess.run([feedline_tool(), "convert", str(csv), str(parquet)], check=True, stdout=subprocess.DEVNULL)
    columns = feedline.read_parquet(parquet)
    assert columns["big"].dtype == torch.int64 and columns["big"].tolist() == [10000000000, -3]
    assert columns["ratio"].dtype == torch.float64 and columns["ratio"].tolist() == [0.25, 1e300]
    assert columns["word"] == ["é", "b"]
    assert columns["small"].tolist() == [1, 200]


def test_a_missing_file_is_file_not_found_naming_it(tmp_path):
    missing = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        feedline.read_parquet(missing)
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        feedline.read_csv(tmp_path / "nope.csv")
    with pytest.raises(FileNotFoundError):
        feedline.inspect(missing)


def test_an_unknown_column_is_a_value_error_naming_file_and_column(prepared):
    with pytest.raises(ValueError, match=r"test\.parquet.*'pixel9999'|'pixel9999'.*test\.parquet"):
        feedline.read_parquet(prepared["parquet"], columns=["pixel9999"])
    with pytest.raises(ValueError, match=r"'nothere'"):
        feedline.read_csv(prepared["csv"], columns=["nothere"])


def test_a_truncated_file_is_an_invalid_file_error_naming_it(prepared, tmp_path):
    data = prepared["parquet"].read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(feedline.InvalidFileError, match="cut.parquet"):
        feedline.read_parquet(cut)
    assert issubclass(feedline.InvalidFileError, ValueError)
    ragged = write_csv(tmp_path / "ragged.csv", "a,b\n1,2\n3\n")
    with pytest.raises(ValueError, match=r"ragged\.csv:3: 1 fields, the header has 2"):
        feedline.read_csv(ragged)


def test_wrong_arguments_are_refused_by_name(prepared):
    with pytest.raises(ValueError, match="nulls"):
        feedline.read_parquet(prepared["parquet"], nulls="drop")
    with pytest.raises(ValueError, match="threads"):
        feedline.read_parquet(prepared["parquet"], threads=0)
    with pytest.raises(TypeError, match="path"):
        feedline.read_parquet(42)


def test_uuid_columns_read_as_their_canonical_text():
    from conftest import ROOT
    path = ROOT / "tests" / "data" / "duckdb-parquet-testing" / "uuid_v2.parquet"
    column = feedline.read_parquet(path)["uuid"]
    assert column[0] == "0196e8fb-0adf-7355-ba39-d4c2e62dc4bd"
    assert all(isinstance(u, str) and len(u) == 36 for u in column)
    assert feedline.inspect(path)["schema"][0]["logical_type"] == "UUID"


def test_interval_columns_read_as_duckdbs_text(tmp_path):
    from conftest import ROOT
    cache = pathlib.Path(os.environ.get("FEEDLINE_CACHE", ROOT / ".cache")) / "npm"
    if not (cache / "node_modules" / "@duckdb" / "node-api").exists():
        pytest.skip(f"@duckdb/node-api is missing from {cache} (scripts/install-deps.sh installs it)")
    # DuckDB writes a table with INTERVAL columns and prints each cell; an interval's is I:months,days,micros=text.
    path = tmp_path / "duck.parquet"
    out = subprocess.run(["node", str(ROOT / "tests" / "io" / "duckdb_parquet.mjs"), str(cache), "write", str(path),
                          "snappy", "60", "25"], check=True, capture_output=True, text=True).stdout.splitlines()
    count = int(out[0].split("\t")[1])
    names = [line.split("\t")[0] for line in out[1:1 + count]]
    rows = [line.split("\t") for line in out[1 + count:]]
    at = names.index("iv_opt")
    expected = [None if row[at] == "N" else row[at].split("=", 1)[1] for row in rows]
    assert None in expected and any("month" in e and "day" in e and ":" in e for e in expected if e)
    assert feedline.read_parquet(path, columns=["iv_opt"])["iv_opt"] == expected
    schema = {c["name"]: c for c in feedline.inspect(path)["schema"]}
    assert schema["iv_opt"]["logical_type"] == "INTERVAL"


def test_variant_columns_read_as_json_text():
    from conftest import ROOT
    path = ROOT / "tests" / "data" / "duckdb-parquet-testing" / "snowflake_variant.parquet"
    column = feedline.read_parquet(path, columns=["PAYLOAD"])["PAYLOAD"]
    assert json.loads(column[0]) == {"age": 30, "name": "alice"}
    assert json.loads(column[5]) == {"x": {"y": [1, 2]}}
    assert column[6] is None
    assert feedline.inspect(path)["schema"][0]["logical_type"] == "VARIANT"


def test_lists_of_strings_read_as_lists_of_str():
    from conftest import ROOT
    path = ROOT / "tests" / "data" / "parquet-testing" / "data" / "list_columns.parquet"
    column = feedline.read_parquet(path, columns=["utf8_list"])["utf8_list"]
    assert column == [["abc", "efg", "hij"], None, ["efg", None, "hij", "xyz"]]
    # A list of numbers with a null element is refused by default, naming the file, column and row.
    with pytest.raises(ValueError, match=r"list_columns\.parquet: column 'int64_list' row 1 holds a null element; "
                                         r"read it with nulls='zero'"):
        feedline.read_parquet(path, columns=["int64_list"])
    # nulls="zero" and "mask": the null element is 0; a mask of the elements present, shaped as the values.
    ints = feedline.read_parquet(path, columns=["int64_list"], nulls="zero")["int64_list"]
    assert [t.tolist() for t in ints] == [[1, 2, 3], [0, 1], [4]]
    values, masks = feedline.read_parquet(path, columns=["int64_list", "utf8_list"], nulls="mask")
    assert [t.tolist() for t in values["int64_list"]] == [[1, 2, 3], [0, 1], [4]]
    assert [m.tolist() for m in masks["int64_list"]] == [[True, True, True], [False, True], [True]]
    assert list(masks) == ["int64_list"]  # strings keep their None


def duckdb_copy(tmp_path, name, select):
    """A Parquet file DuckDB writes from a SELECT (skips the test when @duckdb/node-api is not installed)."""
    from conftest import ROOT
    cache = pathlib.Path(os.environ.get("FEEDLINE_CACHE", ROOT / ".cache")) / "npm"
    if not (cache / "node_modules" / "@duckdb" / "node-api").exists():
        pytest.skip(f"@duckdb/node-api is missing from {cache} (scripts/install-deps.sh installs it)")
    path = tmp_path / name
    subprocess.run(["node", str(ROOT / "tests" / "io" / "duckdb_parquet.mjs"), str(cache), "copy", str(path), select],
                   check=True, capture_output=True)
    return path


def test_null_embeddings_read_as_zero_vectors_when_asked(tmp_path):
    path = duckdb_copy(tmp_path, "emb.parquet",
                       "SELECT * FROM (VALUES (1, [0.5, 1.5]), (2, NULL), (3, [2.5, NULL])) t(id, e)")
    with pytest.raises(ValueError, match=r"emb\.parquet: column 'e' row 1 is null; read it with nulls="):
        feedline.read_parquet(path)
    zero = feedline.read_parquet(path, nulls="zero")
    assert zero["e"].shape == (3, 2) and zero["e"].tolist() == [[0.5, 1.5], [0.0, 0.0], [2.5, 0.0]]
    values, masks = feedline.read_parquet(path, nulls="mask")
    assert torch.equal(values["e"], zero["e"])
    assert masks["e"].tolist() == [[True, True], [False, False], [True, False]]
    assert list(masks) == ["e"]


def test_lists_of_lists_of_strings_read_as_nested_lists_of_str():
    from conftest import ROOT
    path = ROOT / "tests" / "data" / "parquet-testing" / "data" / "nested_lists.snappy.parquet"
    column = feedline.read_parquet(path, columns=["a"])["a"]  # list<list<list<string>>>, a null inner list in each
    assert column == [[[["a", "b"], ["c"]], [None, ["d"]]],
                      [[["a", "b"], ["c", "d"]], [None, ["e"]]],
                      [[["a", "b"], ["c", "d"], ["e"]], [None, ["f"]]]]


def test_a_folder_of_shards_reads_as_one_table_with_its_hive_keys(prepared, tmp_path):
    import shutil
    for split in (0, 1):
        (tmp_path / f"split={split}").mkdir()
        shutil.copy(prepared["parquet"], tmp_path / f"split={split}" / "part-0.parquet")
    one = feedline.read_parquet(prepared["parquet"], columns=["label"])["label"]
    both = feedline.read_parquet(tmp_path, columns=["label", "split"])
    assert torch.equal(both["label"], torch.cat([one, one]))
    assert both["split"].tolist() == [0] * len(one) + [1] * len(one)
    glob = feedline.read_parquet(str(tmp_path / "split=*" / "*.parquet"), columns=["label"])["label"]
    assert torch.equal(glob, both["label"])
    info = feedline.inspect(tmp_path)
    assert len(info["files"]) == 2
    with pytest.raises(ValueError, match="no file matches"):
        feedline.read_parquet(str(tmp_path / "nothing-*.parquet"))


def test_ragged_lists_of_lists_of_numbers_read_a_row_at_a_time(tmp_path):
    # Boxes of four numbers, a varying count a row (as detection datasets keep them): a [n, 4] tensor a row.
    path = duckdb_copy(tmp_path, "boxes.parquet",
                       "SELECT * FROM (VALUES (1, [[1, 2, 3, 4], [5, 6, 7, 8]]), (2, []), (3, [[9, 10, 11, 12]]),"
                       " (4, [[1, 2], [3]])) t(id, b) ORDER BY id")
    boxes = feedline.read_parquet(path)["b"]
    assert len(boxes) == 4
    assert boxes[0].tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]] and boxes[0].dtype == torch.int32
    assert boxes[1].shape == (0, 0)
    assert boxes[2].tolist() == [[9, 10, 11, 12]]
    # A row whose own lists differ in length: a list of 1-D tensors.
    assert [t.tolist() for t in boxes[3]] == [[1, 2], [3]]
    # Regular throughout: one tensor.
    regular = duckdb_copy(tmp_path, "regular.parquet", "SELECT [[i, i + 1], [i + 2, i + 3]] AS b FROM range(3) r(i)")
    assert feedline.read_parquet(regular)["b"].shape == (3, 2, 2)
    # Nulls: refused by default, zeros (a null list empty) or masked when asked.
    nulls = duckdb_copy(tmp_path, "nulls.parquet",
                        "SELECT * FROM (VALUES (1, [[1, NULL], [2, 3]]), (2, NULL), (3, [NULL, [4]])) t(id, b)"
                        " ORDER BY id")
    with pytest.raises(ValueError, match=r"nulls\.parquet: column 'b' row 0 holds a null element; read it with nulls="):
        feedline.read_parquet(nulls)
    values, masks = feedline.read_parquet(nulls, nulls="mask")
    assert values["b"][0].tolist() == [[1, 0], [2, 3]] and masks["b"][0].tolist() == [[True, False], [True, True]]
    assert values["b"][1].numel() == 0 and masks["b"][1].numel() == 0
    assert [t.tolist() for t in values["b"][2]] == [[], [4]]
    assert [t.tolist() for t in masks["b"][2]] == [[], [True]]


@pytest.mark.parametrize("script,package,columns", [
    ("arrow_rs_parquet.mjs", "parquet-wasm", ["i16", "f16", "u64"]),
    ("polars_parquet.mjs", "nodejs-polars", ["i16", "u64"]),
])
def test_every_column_other_producers_write_reads_with_nulls_masked(tmp_path, script, package, columns):
    """The files of another producer's script in tests/io (one table written several ways) read whole, nulls
    masked, as `cat` shows them."""
    from conftest import ROOT
    cache = pathlib.Path(os.environ.get("FEEDLINE_CACHE", ROOT / ".cache")) / "npm"
    if not (cache / "node_modules" / package).exists():
        pytest.skip(f"{package} is missing from {cache} (scripts/install-deps.sh installs it)")
    files = subprocess.run(["node", str(ROOT / "tests" / "io" / script), str(cache), str(tmp_path), "300"],
                           check=True, capture_output=True, text=True).stdout.split()
    first = None
    for path in files:
        values, masks = feedline.read_parquet(path, nulls="mask")
        assert values["id"].tolist() == list(range(300))
        # Each column's nulls as `cat` shows them: the mask is False exactly where the JSON value is null.
        lines = subprocess.run([feedline_tool(), "cat", "--format", "jsonl", "--columns", ",".join(columns), path],
                               check=True, capture_output=True, text=True).stdout.splitlines()
        rows = [json.loads(line) for line in lines]
        assert masks["i16"].tolist() == [r["i16"] is not None for r in rows]
        assert values["i16"].tolist() == [r["i16"] or 0 for r in rows]
        if "f16" in columns:
            assert values["f16"].dtype == torch.float16
            assert values["f16"].tolist() == [r["f16"] or 0.0 for r in rows]
        as_bits = [(r["u64"] or 0) - (1 << 64 if (r["u64"] or 0) >= 1 << 63 else 0) for r in rows]
        assert values["u64"].tolist() == as_bits  # UINT64 keeps its bits in int64
        if first is None:
            first = values
        else:  # every file holds the same table
            for name, column in values.items():
                if isinstance(column, torch.Tensor):
                    assert torch.equal(column.nan_to_num(), first[name].nan_to_num()), name
