// `feedline inspect` of image files: a class-folder tree, WebDataset tar shards or a Hugging Face image Parquet,
// read through the dataset layer's sources (feedline/dataset/image_dataset.h), so that it shows the classes,
// labels and samples `train --data` would see. Run by feedline-torch; `feedline` hands such paths over (see
// names_images()). Main thread only.
#pragma once

#include "cli/commands.h"

namespace feedline::cli {

// The layout, the sample count, the classes (names where the source has them) with their counts, the formats
// the files' bytes say, the range of image sizes and channels, and the files that could not be read or probed
// (named, counted, not fatal). With more than args.sample images, that many spread evenly over the set are
// probed, and the output says so.
int run_inspect_images(const InspectArgs& args);

// Several sets read as one mixture (InspectArgs::paths, mix): each set's path, samples, weight, samples an epoch
// and share of the epoch, and the epoch's samples, as `train` with a --data for each would mix them.
int run_inspect_mixture(const InspectArgs& args);

}  // namespace feedline::cli
