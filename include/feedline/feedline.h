// feedline in one include: every public header, layer by layer. Data flows one way, io -> catalog -> dataset ->
// loader -> train -> dist -> lab; a layer includes only the layers before it. The io and catalog headers need no
// LibTorch (a project that links feedline::feedline_io alone includes those it uses, not this file).
#pragma once

// io: files, IDX, CSV, Parquet, codecs, tables, column choice, conversion, the parallel loop. No LibTorch.
#include "feedline/io/arg.h"
#include "feedline/io/column_choice.h"
#include "feedline/io/columns.h"
#include "feedline/io/convert.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/image_decode.h"
#include "feedline/io/image_encode.h"
#include "feedline/io/inspect.h"
#include "feedline/io/parallel.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/table.h"
#include "feedline/io/value_text.h"

// catalog: the experiment's datasets (MNIST, FashionMNIST): where they are installed and prepared, their
// class count. No LibTorch.
#include "feedline/catalog/catalog.h"

// dataset: tables made into tensors and datasets (row, tensor, device-resident, streamed Parquet, PNG images), and
// samples stored encoded made whole by a per-sample transform.
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/dataset_mode.h"
#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image.h"
#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_file.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/dataset/sample_rng.h"
#include "feedline/dataset/stream_dataset.h"

// loader: shuffled batches from worker threads, pinned, in sampler order.
#include "feedline/loader/loader.h"

// train: SimpleCNN, the experiment's training loop, the compute floor, CPU settings.
#include "feedline/train/model.h"
#include "feedline/train/process_settings.h"
#include "feedline/train/train.h"

// dist: data-parallel training on c10d, the one-host launcher, a whole training job as the tool runs it.
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
#include "feedline/dist/launch.h"
#include "feedline/dist/train_job.h"

// lab: the benchmark lab (`feedline bench`) as a library, its results as plain structs.
#include "feedline/lab/lab.h"
#include "feedline/lab/results.h"
