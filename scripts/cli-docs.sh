#!/usr/bin/env bash
# Writes docs/cli.md from the tool's own --help, so that the page cannot drift from the flags: every command's help
# text goes in verbatim (Cli.DocsHoldEveryCommandsHelp checks it does).
# usage: scripts/cli-docs.sh [BUILD_DIR]   (default: build/; writes docs/cli.md through a temporary file)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$here/build}/feedline"
[ -x "$bin" ] || { echo "cli-docs: $bin not found; build first (scripts/build.sh)" >&2; exit 1; }
out="$here/docs/cli.md"
tmp="$out.tmp"

help_block() {
  echo '```'
  "$bin" "$@" --help
  echo '```'
}

{
  cat <<'TEXT'
# The command line

`feedline` is one command with subcommands. `prepare`, `inspect`, `cat` and `convert` need no LibTorch and start
in milliseconds; `train`, `bench` and `inspect` of image files load LibTorch (the tool hands them to its companion
program `feedline-torch`, installed in `libexec/feedline/`, with the same arguments). Every command answers `--help`; `feedline --version`
prints the version and the LibTorch it was built with.

Conventions for every command:
- A file's format is told by its extension: `.parquet` or `.csv` (any case). A file read under another name is
  Parquet when it begins as one does (Hive's `000000_0`, `x.parquet.encrypted`); a file written needs the extension.
- Where a command reads data (`train --data`/`--test-data`, `bench --data`, `inspect`, `cat`, `convert`), many
  Parquet files read as one table: a folder (every `*.parquet` under it, names starting with `.` or `_` left out), a
  quoted glob (`'data/train-*.parquet'`) or a comma-separated list, in the order of the sorted paths; `key=value`
  folders in the paths add Hive columns. See [parquet.md](parquet.md#datasets-of-many-files).
- `--threads` defaults to every core.
- A bad flag or value is refused before any work, naming the flag: `--epochs: 'abc' is not a whole number`. Exit
  status 0 on success, 1 for an error (which names the file and the problem), 2 and above for a refused command line
  (CLI11's codes, 105 for a wrong value).
- Outputs are written through a temporary file and renamed into place: an error leaves no half-written file.

This page is made by `scripts/cli-docs.sh` from the tool's own help; a test checks that it holds every command's
help verbatim.

## feedline

TEXT
  help_block
  for cmd in prepare train bench "bench loader" "bench images" "bench remote" inspect cat convert; do
    echo
    echo "## feedline $cmd"
    echo
    # shellcheck disable=SC2086
    help_block $cmd
  done
} > "$tmp"
mv "$tmp" "$out"
echo "cli-docs: wrote $out"
