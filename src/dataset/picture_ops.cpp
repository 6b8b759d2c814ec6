// make_picture_op: each source file's part in turn.
#include "dataset/picture_ops.h"

namespace feedline {

PictureOpPtr make_picture_op(const ImageStep& step) {
  if (PictureOpPtr op = make_color_op(step)) return op;
  return make_geometry_op(step);
}

}  // namespace feedline
