#include "feedline/io/columns.h"

#include "feedline/io/error.h"

namespace feedline {

ImageShape parse_image_shape(const std::string& text) {
  ImageShape shape;
  int64_t* dims[] = {&shape.channels, &shape.height, &shape.width};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? text.find('x', start) : text.size();
    const std::string part = end == std::string::npos ? "" : text.substr(start, end - start);
    const bool digits = !part.empty() && part.size() <= 6 &&
                        part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(part) < 1) {
      throw OptionError("image_shape",
                        "'" + text + "': expected CxHxW, three whole numbers of at least 1 (e.g. 3x32x32)");
    }
    *dims[i] = std::stoll(part);
    start = end + 1;
  }
  return shape;
}

}  // namespace feedline
