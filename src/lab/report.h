// How the benchmark lab's results are reported: terminal tables, results.json, results.md and gnuplot plots. No
// LibTorch, so reports can be built and tested without running anything.
#pragma once

#include <string>
#include <vector>

#include "feedline/lab/lab.h"
#include "feedline/lab/results.h"

namespace feedline::lab {

// Terminal tables, in the experiment's layout.
std::string storage_table(const LabResults& r);
std::string loader_table(const LabResults& r);
std::string training_table(const LabResults& r, const std::string& group);
// The image bench's rows: images/s, against (a) torchvision and (d) the decoding limit, memory, the runs.
std::string image_bench_table(const std::vector<ImageBenchRow>& rows);

// The lab's image rung (LabOptions::skip_images): a short `bench images` over the photo set into `results.images`
// when the set exists; else one line saying so, kept in the notes.
void run_image_rung(const LabOptions& options, LabResults& results, Reporter& reporter);

std::string to_json(const LabResults& r);
// Reads back what to_json() wrote (`feedline bench --from`), so that its tables, results.md and plots can be made
// again elsewhere: from a GPU machine's run, say, on one with gnuplot. Throws Error naming `path` and what is
// wrong (not JSON, not feedline bench's, a field missing or of the wrong type).
LabResults from_json(const std::string& text, const std::string& path);
std::string to_markdown(const LabResults& r);

// Every table of the results, in the order a run announces them.
std::vector<std::string> all_tables(const LabResults& r);

// Writes results.json and results.md into `out_dir` (each to a temporary file, then renamed), then the plots into
// `out_dir`/plots unless `plots` is false, and tells `reporter` what it wrote.
void write_lab_outputs(const LabResults& r, const std::string& out_dir, bool plots, Reporter& reporter);

// Writes gnuplot data and scripts into `dir` and runs gnuplot for SVG and PNG versions of each plot. Returns the
// files made; when gnuplot is missing or fails, returns none and sets `problem`.
std::vector<std::string> write_plots(const LabResults& r, const std::string& dir, std::string* problem);
// The image bench's plot alone (images/s of each pipeline that ran, a bar each) as write_plots() draws it.
std::vector<std::string> write_image_plot(const ImageBenchResult& r, const std::string& dir, std::string* problem);

}  // namespace feedline::lab
