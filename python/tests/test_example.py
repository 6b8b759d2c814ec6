"""The complete example of docs/python.md: the file in examples/ is the one the page shows, and it trains."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "train_fashion_mnist.py"


def test_the_docs_show_the_example_as_it_is():
    page = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert EXAMPLE.read_text() in blocks


def test_the_example_trains_and_prints_the_experiments_lines(prepared):
    env = dict(os.environ)
    out = subprocess.run([sys.executable, str(EXAMPLE), "--data-dir", str(prepared["parquet"].parents[1]),
                          "--epochs", "1", "--limit", "2048"], check=True, capture_output=True, text=True, env=env,
                         timeout=600).stdout
    accuracy = float(re.search(r"test accuracy ([0-9.]+)%", out).group(1))
    assert accuracy > 30  # one epoch on 2,048 samples: well above chance (10%)
    for line in ("Average Train Time per Epoch: ", "Average Test Time per Epoch: ", "Total Train Time: ",
                 "Total Test Time: "):
        assert line in out
