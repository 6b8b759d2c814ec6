#include "io/parquet/schema.h"

#include <stdexcept>

#include "feedline/io/error.h"
#include "io/parquet/variant.h"

namespace feedline::parquet {
namespace {

// Applies an INT(bit_width, signed) annotation, checking that it fits the physical type.
void set_int(Leaf* leaf, int bit_width, bool is_signed) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64) {
    throw InvalidFile("column '" + leaf->name + "': INT annotation of bit width " + std::to_string(bit_width));
  }
  const bool fits = (leaf->physical_type == format::type::kInt32 && bit_width <= 32) ||
                    (leaf->physical_type == format::type::kInt64 && bit_width == 64);
  if (!fits) {
    throw InvalidFile("column '" + leaf->name + "': INT(" + std::to_string(bit_width) + ") annotation on " +
                      format::type_name(leaf->physical_type));
  }
  leaf->schema.int_annotation = IntAnnotation{bit_width, is_signed};
}

// STRING (UTF8), ENUM, JSON: text; BSON: bytes. `kind` names the last three.
void set_text(Leaf* leaf, bool is_string, const char* what, LogicalKind kind = LogicalKind::kNone) {
  if (leaf->physical_type != format::type::kByteArray) {
    throw InvalidFile("column '" + leaf->name + "': " + what + " annotation on " + format::type_name(leaf->physical_type));
  }
  leaf->schema.is_string = is_string;
  leaf->schema.logical.kind = kind;
}

bool physical_is(const Leaf* leaf, int32_t type) { return leaf->physical_type == type; }

void bad_annotation(const Leaf* leaf, const std::string& what) {
  throw InvalidFile("column '" + leaf->name + "': " + what + " annotation on " + format::type_name(leaf->physical_type) +
                    (leaf->physical_type == format::type::kFixedLenByteArray
                         ? "(" + std::to_string(leaf->schema.type_length) + ")"
                         : std::string()));
}

void set_date(Leaf* leaf) {
  if (!physical_is(leaf, format::type::kInt32)) bad_annotation(leaf, "DATE");
  leaf->schema.logical.kind = LogicalKind::kDate;
}

// unit: 1 MILLIS, 2 MICROS, 3 NANOS (parquet.thrift's TimeUnit member ids).
void set_time(Leaf* leaf, bool timestamp, int32_t unit, bool utc) {
  const char* what = timestamp ? "TIMESTAMP" : "TIME";
  if (unit < 1 || unit > 3) throw InvalidFile("column '" + leaf->name + "': " + what + " with unknown unit " + std::to_string(unit));
  const int32_t want = !timestamp && unit == 1 ? format::type::kInt32 : format::type::kInt64;
  if (!physical_is(leaf, want)) bad_annotation(leaf, what);
  LogicalAnnotation& a = leaf->schema.logical;
  a.kind = timestamp ? LogicalKind::kTimestamp : LogicalKind::kTime;
  a.unit = unit == 1 ? TimeUnit::kMillis : unit == 2 ? TimeUnit::kMicros : TimeUnit::kNanos;
  a.utc = utc;
}

void set_decimal(Leaf* leaf, int32_t precision, int32_t scale) {
  if (precision < 1 || scale < 0 || scale > precision) {
    throw InvalidFile("column '" + leaf->name + "': DECIMAL(" + std::to_string(precision) + ", " + std::to_string(scale) + ")");
  }
  const int32_t t = leaf->physical_type;
  const bool fits = (t == format::type::kInt32 && precision <= 9) || (t == format::type::kInt64 && precision <= 18) ||
                    t == format::type::kByteArray || t == format::type::kFixedLenByteArray;
  if (!fits) bad_annotation(leaf, "DECIMAL(" + std::to_string(precision) + ")");
  LogicalAnnotation& a = leaf->schema.logical;
  a.kind = LogicalKind::kDecimal;
  a.precision = precision;
  a.scale = scale;
}

void set_float16(Leaf* leaf) {
  if (!physical_is(leaf, format::type::kFixedLenByteArray) || leaf->schema.type_length != 2) bad_annotation(leaf, "FLOAT16");
  leaf->schema.logical.kind = LogicalKind::kFloat16;
}

void set_uuid(Leaf* leaf) {
  if (!physical_is(leaf, format::type::kFixedLenByteArray) || leaf->schema.type_length != 16) bad_annotation(leaf, "UUID");
  leaf->schema.logical.kind = LogicalKind::kUuid;
}

void apply_logical(Leaf* leaf, const format::LogicalType& lt) {
  switch (lt.kind) {
    case format::logical::kDate: return set_date(leaf);
    case format::logical::kTime: return set_time(leaf, false, lt.time_unit, lt.time_utc);
    case format::logical::kTimestamp: return set_time(leaf, true, lt.time_unit, lt.time_utc);
    case format::logical::kDecimal: return set_decimal(leaf, lt.decimal_precision, lt.decimal_scale);
    case format::logical::kFloat16: return set_float16(leaf);
    case format::logical::kUuid: return set_uuid(leaf);
    case format::logical::kNone:
    case format::logical::kUnknown:  // NullType: every value is null; the physical values are what we read
      return;
    case format::logical::kInteger: return set_int(leaf, lt.int_bit_width, lt.int_is_signed);
    case format::logical::kString: return set_text(leaf, true, "STRING");
    case format::logical::kEnum: return set_text(leaf, true, "ENUM", LogicalKind::kEnum);
    case format::logical::kJson: return set_text(leaf, true, "JSON", LogicalKind::kJson);
    case format::logical::kBson: return set_text(leaf, false, "BSON", LogicalKind::kBson);
    case format::logical::kGeometry:
    case format::logical::kGeography:
      // Well-known binary in a BYTE_ARRAY: the bytes are the value (as DuckDB without its spatial extension reads
      // them).
      if (!physical_is(leaf, format::type::kByteArray)) bad_annotation(leaf, lt.kind == format::logical::kGeometry ? "GEOMETRY" : "GEOGRAPHY");
      leaf->note = std::string(lt.kind == format::logical::kGeometry ? "GEOMETRY" : "GEOGRAPHY") +
                   ": read as its well-known binary bytes";
      return;
    default: {
      static const char* const kNames[] = {"?", "STRING", "MAP", "LIST", "ENUM", "DECIMAL", "DATE", "TIME",
                                           "TIMESTAMP", "?", "INTEGER", "UNKNOWN", "JSON", "BSON", "UUID",
                                           "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY"};
      const bool known = lt.kind > 0 && lt.kind < static_cast<int32_t>(sizeof kNames / sizeof kNames[0]);
      if (known) {  // MAP or LIST on a primitive, VARIANT on a primitive, the reserved id 9: malformed or unsupported
        leaf->unsupported = std::string("logical type ") + kNames[lt.kind] + " is not supported";
        return;
      }
      // A logical type of a newer format than this reader's: its values are still the physical type's, which is
      // what a reader that does not know it reads (the format's rule for unknown union members).
      leaf->note = "logical type with unknown id " + std::to_string(lt.kind) + ": read as " +
                   format::type_name(leaf->physical_type);
    }
  }
}

void apply_converted(Leaf* leaf, const format::SchemaElement& e) {
  const int32_t ct = *e.converted_type;
  switch (ct) {
    case format::converted::kDecimal: return set_decimal(leaf, e.precision.value_or(0), e.scale.value_or(0));
    case format::converted::kDate: return set_date(leaf);
    case format::converted::kTimeMillis: return set_time(leaf, false, 1, true);
    case format::converted::kTimeMicros: return set_time(leaf, false, 2, true);
    case format::converted::kTimestampMillis: return set_time(leaf, true, 1, true);
    case format::converted::kTimestampMicros: return set_time(leaf, true, 2, true);
    case format::converted::kUtf8: return set_text(leaf, true, "UTF8");
    case format::converted::kEnum: return set_text(leaf, true, "ENUM", LogicalKind::kEnum);
    case format::converted::kJson: return set_text(leaf, true, "JSON", LogicalKind::kJson);
    case format::converted::kBson: return set_text(leaf, false, "BSON", LogicalKind::kBson);
    case format::converted::kUint8: return set_int(leaf, 8, false);
    case format::converted::kUint16: return set_int(leaf, 16, false);
    case format::converted::kUint32: return set_int(leaf, 32, false);
    case format::converted::kUint64: return set_int(leaf, 64, false);
    case format::converted::kInt8: return set_int(leaf, 8, true);
    case format::converted::kInt16: return set_int(leaf, 16, true);
    case format::converted::kInt32: return set_int(leaf, 32, true);
    case format::converted::kInt64: return set_int(leaf, 64, true);
    case format::converted::kInterval:
      if (physical_is(leaf, format::type::kFixedLenByteArray) && leaf->schema.type_length == 12) {
        leaf->schema.logical.kind = LogicalKind::kInterval;
        return;
      }
      break;  // of another type: malformed, read as that type, with the note below
    case format::converted::kMap:
    case format::converted::kMapKeyValue:
    case format::converted::kList:  // a group's annotation on a primitive: the file's nesting is not what it says
      leaf->unsupported = std::string("converted type ") + format::converted_type_name(ct) + " on a primitive column";
      return;
    default: break;
  }
  // INTERVAL on a type it does not fit, or an id of a newer format: read as the physical type, as readers that do
  // not know it read it.
  leaf->note = std::string("converted type ") + format::converted_type_name(ct) + " (" + std::to_string(ct) +
               "): read as " + format::type_name(leaf->physical_type);
}

constexpr int kMaxSchemaDepth = 64;  // deeper nesting is refused as hostile (it would only recurse)

bool is_group(const format::SchemaElement& e) { return e.num_children.value_or(0) != 0 || !e.type; }

int32_t repetition_of(const format::SchemaElement& e) {
  const int32_t rep = e.repetition_type.value_or(format::repetition::kRequired);
  if (rep != format::repetition::kRequired && rep != format::repetition::kOptional && rep != format::repetition::kRepeated) {
    throw InvalidFile("column '" + e.name + "': repetition type " + std::to_string(rep));
  }
  return rep;
}

// The leaf's physical type and annotations, from its SchemaElement `e`.
void set_primitive(Leaf* leaf, const format::SchemaElement& e) {
  leaf->physical_type = *e.type;
  switch (*e.type) {
    case format::type::kBoolean: leaf->schema.type = PhysicalType::kBoolean; break;
    case format::type::kInt32: leaf->schema.type = PhysicalType::kInt32; break;
    case format::type::kInt64: leaf->schema.type = PhysicalType::kInt64; break;
    case format::type::kFloat: leaf->schema.type = PhysicalType::kFloat; break;
    case format::type::kDouble: leaf->schema.type = PhysicalType::kDouble; break;
    case format::type::kByteArray: leaf->schema.type = PhysicalType::kByteArray; break;
    case format::type::kFixedLenByteArray:
      // Bounded so that one value can never be an allocation of unbounded size.
      if (!e.type_length || *e.type_length < 1 || *e.type_length > kMaxTypeLength) {
        throw InvalidFile("column '" + leaf->name + "': FIXED_LEN_BYTE_ARRAY with type_length " +
                          (e.type_length ? std::to_string(*e.type_length) : std::string("missing")));
      }
      leaf->schema.type = PhysicalType::kFixedLenByteArray;
      leaf->schema.type_length = *e.type_length;
      break;
    case format::type::kInt96:
      // Decoded as 12-byte values, then turned into INT64 microseconds (see output_schema).
      leaf->schema.type = PhysicalType::kFixedLenByteArray;
      leaf->schema.type_length = 12;
      leaf->int96 = true;
      break;
    default:
      throw InvalidFile("column '" + leaf->name + "': unknown physical type " + std::to_string(*e.type));
  }
  if (e.logical_type && e.logical_type->kind != format::logical::kNone) {
    apply_logical(leaf, *e.logical_type);
    // A logical type this reader does not know, beside a legacy converted type it may: the converted type then.
    if (!leaf->note.empty() && e.converted_type) {
      leaf->note.clear();
      apply_converted(leaf, e);
    }
  } else if (e.converted_type) {
    apply_converted(leaf, e);
  }
}

// What a group's annotation makes it: 'L' list, 'M' map, 'S' plain group (struct), or '?' another logical type
// (its name in *other).
char group_kind(const format::SchemaElement& e, std::string* other) {
  if (e.logical_type && e.logical_type->kind != format::logical::kNone) {
    const int32_t k = e.logical_type->kind;
    if (k == format::logical::kList) return 'L';
    if (k == format::logical::kMap) return 'M';
    *other = k == 16 ? "VARIANT" : "logical type " + std::to_string(k);
    return '?';
  }
  if (e.converted_type) {
    if (*e.converted_type == format::converted::kList) return 'L';
    if (*e.converted_type == format::converted::kMap || *e.converted_type == format::converted::kMapKeyValue) return 'M';
  }
  return 'S';
}

// Where a walk down the schema stands: Dremel's definition level so far and the repeated fields passed, each a
// level of lists.
struct Levels {
  int def = 0;                  // optional and repeated fields passed
  int after_repeated = 0;       // the definition level just below the last repeated field (0 above the first)
  std::vector<int> empty_defs;  // for each repeated field: the level of a present but empty list there
  std::vector<bool> nullable;   // for each: whether an optional field between it and the one above (or the
                                // root) can make its list null

  // The levels below a field of repetition `rep`.
  Levels below(int32_t rep) const {
    Levels l = *this;
    if (rep == format::repetition::kOptional) ++l.def;
    if (rep == format::repetition::kRepeated) {
      l.empty_defs.push_back(l.def);
      l.nullable.push_back(l.def > l.after_repeated);
      l.after_repeated = ++l.def;
    }
    return l;
  }
};

// Every leaf of the schema as a flat column, by one walk (Dremel's model): a primitive under no repeated field is
// a flat column, null below its maximum definition level; under repeated fields, a list with a level for each.
// Structs (plain groups), LIST and MAP groups, and repeated groups are walked through: a struct's fields are
// named by their dotted path, a list's element and a map's entries by the list's or map's, so that a list of
// structs `objects` of fields `bbox`, `label` gives lists `objects.bbox` and `objects.label`, and a map `m` lists
// `m.key` and `m.value`. A list is null where an optional field above it, and below the repeated field above it,
// is null; an element, where an optional field below its innermost repeated field is.
class SchemaWalker {
 public:
  explicit SchemaWalker(const format::FileMetaData& md) : md_(md) {}

  std::vector<Leaf> walk() {
    if (md_.schema.empty()) throw InvalidFile("empty schema");
    const int64_t children = md_.schema[0].num_children.value_or(0);
    if (children < 0) throw InvalidFile("negative child count in the schema root");
    size_t next = 1;
    for (int64_t c = 0; c < children; ++c) {
      const std::string& name = at(next).name;
      next = field(next, name, name, Levels(), 0);
    }
    if (next != md_.schema.size()) {
      throw InvalidFile("schema root has " + std::to_string(children) + " children but " +
                        std::to_string(md_.schema.size() - 1) + " elements follow");
    }
    return std::move(leaves_);
  }

 private:
  const format::SchemaElement& at(size_t i) const {
    if (i >= md_.schema.size()) {
      throw InvalidFile("schema groups declare more children than its " + std::to_string(md_.schema.size()) +
                        " elements hold");
    }
    return md_.schema[i];
  }

  static void check_depth(int depth) {
    if (depth > kMaxSchemaDepth) throw InvalidFile("schema nested deeper than " + std::to_string(kMaxSchemaDepth));
  }

  static int64_t children_of(const format::SchemaElement& g, const std::string& path) {
    const int64_t children = g.num_children.value_or(0);
    if (children < 0) throw InvalidFile("column '" + path + "': negative child count");
    return children;
  }

  // The field at schema[i], named `path`, in the top-level field `top`, below `above`: its repetition counted,
  // then a leaf or the group's content. Returns the index after its subtree.
  size_t field(size_t i, const std::string& path, const std::string& top, const Levels& above, int depth) {
    check_depth(depth);
    const format::SchemaElement& e = at(i);
    const Levels levels = above.below(repetition_of(e));
    if (is_group(e)) return group(i, path, top, levels, depth);
    Leaf& leaf = add_leaf(path, top);
    set_primitive(&leaf, e);
    set_levels(&leaf, levels);
    return i + 1;
  }

  // The content of the group at schema[i], whose own repetition `levels` counts already.
  size_t group(size_t i, const std::string& path, const std::string& top, const Levels& levels, int depth) {
    check_depth(depth);
    const format::SchemaElement& g = at(i);
    const int64_t children = children_of(g, path);
    std::string other;
    char kind = group_kind(g, &other);
    // MAP_KEY_VALUE on the repeated group of a map's entries (legacy writers): those entries, a struct.
    if (kind == 'M' && repetition_of(g) == format::repetition::kRepeated) kind = 'S';
    if (kind == '?' && other == "VARIANT") return variant_group(i, path, top, levels, depth);
    if (kind == '?') return unsupported_subtree(i, path, top, other + " is not supported", depth);
    if (kind == 'S') {  // a struct (repeated: a list of them)
      size_t next = i + 1;
      for (int64_t c = 0; c < children; ++c) {
        const std::string& name = at(next).name;
        next = field(next, path + "." + name, top, levels, depth + 1);
      }
      return next;
    }
    const bool one_repeated = children == 1 && repetition_of(at(i + 1)) == format::repetition::kRepeated;
    if (kind == 'M') {
      // MAP: one repeated group of entries (key and value, whatever their names): a list of them, named by the map.
      if (!one_repeated || !is_group(at(i + 1))) {
        return unsupported_subtree(i, path, top, "MAP groups other than one repeated group are not supported", depth);
      }
      const format::SchemaElement& entries = at(i + 1);
      const Levels inner = levels.below(format::repetition::kRepeated);
      size_t next = i + 2;
      for (int64_t c = 0; c < children_of(entries, path); ++c) {
        const std::string& name = at(next).name;
        next = field(next, path + "." + name, top, inner, depth + 1);
      }
      return next;
    }
    // LIST: one repeated field, whose levels the elements take, named by the list.
    if (!one_repeated) {
      return unsupported_subtree(i, path, top, "LIST groups other than one repeated field are not supported", depth);
    }
    const format::SchemaElement& r = at(i + 1);
    const Levels inner = levels.below(format::repetition::kRepeated);
    if (!is_group(r)) {  // two-level: the repeated field is the (required) element
      Leaf& leaf = add_leaf(path, top);
      set_primitive(&leaf, r);
      set_levels(&leaf, inner);
      return i + 2;
    }
    // The spec's backward-compatibility rules: a repeated group of several fields, or of one named "array" or
    // "<list>_tuple", is itself the (required) element (a struct, or a list or map by its annotation);
    // otherwise its one field is the element, of its own repetition (the three-level form).
    if (children_of(r, path) != 1 || r.name == "array" || r.name == g.name + "_tuple") {
      return group(i + 1, path, top, inner, depth + 1);
    }
    return field(i + 2, path, top, inner, depth + 1);
  }

  Leaf& add_leaf(std::string name, const std::string& top) {
    Leaf leaf;
    leaf.field = top;
    leaf.name = name;
    leaf.schema.name = std::move(name);
    leaf.index = chunks_++;
    leaves_.push_back(std::move(leaf));
    return leaves_.back();
  }

  // Why a VARIANT group cannot be read (see variant_node).
  struct BadVariant : std::runtime_error {
    using std::runtime_error::runtime_error;
  };

  // The VARIANT group at schema[i], named `path` (its own repetition counted in `levels`): one Leaf, a STRING
  // column of JSON text (under repeated fields, a list or a list of lists of them: a list's elements, a map's
  // values), holding the group's leaves and shape. Unsupported, naming why, when the group is not of the shape
  // the spec gives.
  size_t variant_group(size_t i, const std::string& path, const std::string& top, const Levels& levels, int depth) {
    const size_t first_leaf = leaves_.size(), first_chunk = chunks_;
    auto shape = std::make_shared<VariantShape>();
    std::string why;
    size_t next = i;
    variant_first_leaf_ = first_leaf;
    try {
      next = variant_node(i, path, top, levels, depth, shape.get(), &shape->root);
      for (size_t k = first_leaf; k < leaves_.size() && why.empty(); ++k) {
        if (!leaves_[k].unsupported.empty()) why = "leaf '" + leaves_[k].name + "': " + leaves_[k].unsupported;
        if (leaves_[k].int96) why = "leaf '" + leaves_[k].name + "': INT96";
      }
    } catch (const BadVariant& e) {
      why = e.what();
    }
    if (!why.empty()) {
      leaves_.resize(first_leaf);
      chunks_ = first_chunk;
      return unsupported_subtree(i, path, top, "VARIANT group of a shape the spec does not give (" + why + ")", depth);
    }
    shape->parts.assign(std::make_move_iterator(leaves_.begin() + static_cast<std::ptrdiff_t>(first_leaf)),
                        std::make_move_iterator(leaves_.end()));
    leaves_.resize(first_leaf);
    Leaf leaf;
    leaf.field = top;
    leaf.name = path;
    leaf.index = shape->parts[static_cast<size_t>(shape->metadata)].index;
    leaf.physical_type = format::type::kByteArray;
    leaf.schema.name = path;
    leaf.schema.type = PhysicalType::kByteArray;
    leaf.schema.is_string = true;
    leaf.schema.logical.kind = LogicalKind::kVariant;
    set_levels(&leaf, levels);  // the group's levels: a variant present at levels.def, in a list or not
    leaf.variant = std::move(shape);
    leaves_.push_back(std::move(leaf));
    return next;
  }

  // The part number the next leaf added will have in the VARIANT being walked.
  int next_part() const { return static_cast<int>(leaves_.size() - variant_first_leaf_); }

  // A binary leaf at schema[i] (`metadata` or `value`) of a VARIANT pair below `levels`, added; returns its part.
  int variant_binary(size_t i, const std::string& path, const std::string& top, const Levels& levels, int depth,
                     size_t* next) {
    const format::SchemaElement& e = at(i);
    if (is_group(e) || *e.type != format::type::kByteArray) throw BadVariant("'" + path + "' is not BYTE_ARRAY");
    const int part = next_part();
    *next = field(i, path, top, levels, depth + 1);
    return part;
  }

  // The `value` / `typed_value` pair group at schema[i] (with `metadata` too, for the variant itself: node ==
  // &shape->root), its own repetition counted in `levels`: its leaves added, *node filled in. Returns the index
  // after its subtree. Throws BadVariant for a group of another shape.
  size_t variant_node(size_t i, const std::string& path, const std::string& top, const Levels& levels, int depth,
                      VariantShape* shape, VariantNode* node) {
    check_depth(depth);
    const format::SchemaElement& g = at(i);
    const bool root = node == &shape->root;
    if (!is_group(g)) throw BadVariant("'" + path + "' is not a group");
    node->def = levels.def;
    size_t next = i + 1;
    for (int64_t c = 0, n = children_of(g, path); c < n; ++c) {
      const format::SchemaElement& e = at(next);
      const std::string child = path + "." + e.name;
      const int32_t rep = repetition_of(e);
      if (rep == format::repetition::kRepeated) throw BadVariant("'" + child + "' is repeated");
      if (root && e.name == "metadata") {
        shape->metadata = variant_binary(next, child, top, levels, depth, &next);
        node->parts.push_back(shape->metadata);
      } else if (e.name == "value") {
        node->value = variant_binary(next, child, top, levels, depth, &next);
        node->parts.push_back(node->value);
      } else if (e.name == "typed_value") {
        const Levels typed = levels.below(rep);
        const int first_part = next_part();
        if (!is_group(e)) {
          node->typed = VariantNode::Typed::kPrimitive;
          node->typed_part = first_part;
          next = field(next, child, top, levels, depth + 1);
        } else {
          std::string other;
          const char kind = group_kind(e, &other);
          node->typed_def = typed.def;
          if (kind == 'L') {
            // typed_value (LIST) { repeated group list { required group element { value, typed_value } } }
            const format::SchemaElement& list = at(next + 1);
            if (children_of(e, child) != 1 || !is_group(list) || repetition_of(list) != format::repetition::kRepeated ||
                children_of(list, child) != 1) {
              throw BadVariant("'" + child + "' is a LIST but not of one repeated group of one element");
            }
            const Levels in_list = typed.below(format::repetition::kRepeated);
            node->typed = VariantNode::Typed::kArray;
            node->element_rep = static_cast<int>(in_list.empty_defs.size());
            node->element.resize(1);
            const format::SchemaElement& element = at(next + 2);
            if (repetition_of(element) == format::repetition::kRepeated) throw BadVariant("'" + child + "' element is repeated");
            next = variant_node(next + 2, child + "." + list.name + "." + element.name, top,
                                in_list.below(repetition_of(element)), depth + 3, shape, &node->element[0]);
          } else if (kind == 'S') {
            node->typed = VariantNode::Typed::kObject;
            const int64_t fields = children_of(e, child);
            if (fields == 0) throw BadVariant("'" + child + "' is an object of no fields");
            size_t k = next + 1;
            for (int64_t f = 0; f < fields; ++f) {
              const format::SchemaElement& fe = at(k);
              if (repetition_of(fe) == format::repetition::kRepeated) throw BadVariant("'" + child + "." + fe.name + "' is repeated");
              node->fields.emplace_back(fe.name, VariantNode());
              k = variant_node(k, child + "." + fe.name, top, typed.below(repetition_of(fe)), depth + 2, shape,
                               &node->fields.back().second);
            }
            next = k;
          } else {
            throw BadVariant("'" + child + "' is a group annotated " + (kind == 'M' ? std::string("MAP") : other));
          }
        }
        for (int p = first_part; p < next_part(); ++p) node->typed_parts.push_back(p);
        node->parts.insert(node->parts.end(), node->typed_parts.begin(), node->typed_parts.end());
      } else {
        throw BadVariant("unexpected field '" + child + "'");
      }
    }
    if (root && shape->metadata < 0) throw BadVariant("no metadata");
    if (node->value < 0 && node->typed == VariantNode::Typed::kNone) {
      throw BadVariant("'" + path + "' has neither value nor typed_value");
    }
    return next;
  }

  // A leaf's levels and nullability from the fields above it: flat under no repeated field, else a list with a
  // level for each.
  static void set_levels(Leaf* leaf, const Levels& levels) {
    leaf->max_def = levels.def;
    if (levels.empty_defs.empty()) {
      leaf->schema.nullable = levels.def > 0;
      return;
    }
    leaf->max_rep = static_cast<int>(levels.empty_defs.size());
    leaf->list_def = levels.empty_defs[0];
    leaf->inner_list_defs.assign(levels.empty_defs.begin() + 1, levels.empty_defs.end());
    leaf->schema.is_list = true;
    leaf->schema.nullable = levels.nullable[0];
    leaf->schema.inner_list_nullable.assign(levels.nullable.begin() + 1, levels.nullable.end());
    leaf->schema.element_nullable = levels.def > levels.after_repeated;
    if (leaf->int96 && leaf->unsupported.empty()) leaf->unsupported = "lists of INT96 timestamps are not supported";
  }

  // Adds every leaf under schema[i] (named `path`, its fields by their dotted paths below it) as unsupported;
  // returns the index after it.
  size_t unsupported_subtree(size_t i, const std::string& path, const std::string& top, const std::string& why,
                             int depth) {
    check_depth(depth);
    const format::SchemaElement& e = at(i);
    repetition_of(e);
    if (!is_group(e)) {
      Leaf& leaf = add_leaf(path, top);
      leaf.physical_type = *e.type;
      leaf.unsupported = why;
      return i + 1;
    }
    size_t next = i + 1;
    for (int64_t c = 0, n = children_of(e, path); c < n; ++c) {
      const std::string& name = at(next).name;
      next = unsupported_subtree(next, path + "." + name, top, why, depth + 1);
    }
    return next;
  }

  const format::FileMetaData& md_;
  std::vector<Leaf> leaves_;
  size_t chunks_ = 0;              // column chunks of the leaves so far
  size_t variant_first_leaf_ = 0;  // the first leaf of the VARIANT being walked
};

}  // namespace

std::vector<Leaf> schema_leaves(const format::FileMetaData& md) { return SchemaWalker(md).walk(); }

size_t chunk_count(const std::vector<Leaf>& leaves) {
  size_t n = 0;
  for (const Leaf& leaf : leaves) n += leaf.variant ? leaf.variant->parts.size() : 1;
  return n;
}

bool legacy_statistics_usable(const Leaf& leaf) {
  if (leaf.schema.type == PhysicalType::kByteArray || leaf.schema.type == PhysicalType::kFixedLenByteArray) return false;
  if (leaf.schema.int_annotation && !leaf.schema.int_annotation->is_signed) return false;
  return true;
}

ColumnSchema output_schema(const Leaf& leaf) {
  ColumnSchema s = leaf.schema;
  if (leaf.int96) {
    s.type = PhysicalType::kInt64;
    s.type_length = 0;
    s.logical.kind = LogicalKind::kTimestamp;
    s.logical.unit = TimeUnit::kMicros;
    s.logical.utc = false;
  }
  return s;
}

format::SchemaElement to_schema_element(const ColumnSchema& c) {
  format::SchemaElement e;
  e.name = c.name;
  e.repetition_type = c.nullable ? format::repetition::kOptional : format::repetition::kRequired;
  switch (c.type) {
    case PhysicalType::kBoolean: e.type = format::type::kBoolean; break;
    case PhysicalType::kInt32: e.type = format::type::kInt32; break;
    case PhysicalType::kInt64: e.type = format::type::kInt64; break;
    case PhysicalType::kFloat: e.type = format::type::kFloat; break;
    case PhysicalType::kDouble: e.type = format::type::kDouble; break;
    case PhysicalType::kByteArray: e.type = format::type::kByteArray; break;
    case PhysicalType::kFixedLenByteArray:
      e.type = format::type::kFixedLenByteArray;
      e.type_length = c.type_length;
      break;
  }
  if (c.int_annotation) {
    const IntAnnotation& a = *c.int_annotation;
    format::LogicalType lt;
    lt.kind = format::logical::kInteger;
    lt.int_bit_width = static_cast<int8_t>(a.bit_width);
    lt.int_is_signed = a.is_signed;
    e.logical_type = lt;
    const int k = a.bit_width == 8 ? 0 : a.bit_width == 16 ? 1 : a.bit_width == 32 ? 2 : 3;
    e.converted_type = (a.is_signed ? format::converted::kInt8 : format::converted::kUint8) + k;
  } else if (c.is_string) {
    format::LogicalType lt;
    lt.kind = format::logical::kString;
    e.logical_type = lt;
    e.converted_type = format::converted::kUtf8;
  }
  const LogicalAnnotation& a = c.logical;
  if (a.kind != LogicalKind::kNone) {
    format::LogicalType lt;
    const int32_t unit = a.unit == TimeUnit::kMillis ? 1 : a.unit == TimeUnit::kMicros ? 2 : 3;
    switch (a.kind) {
      case LogicalKind::kNone: break;
      case LogicalKind::kDate:
        lt.kind = format::logical::kDate;
        e.converted_type = format::converted::kDate;
        break;
      case LogicalKind::kTime:
      case LogicalKind::kTimestamp: {
        const bool ts = a.kind == LogicalKind::kTimestamp;
        lt.kind = ts ? format::logical::kTimestamp : format::logical::kTime;
        lt.time_unit = unit;
        lt.time_utc = a.utc;
        // The legacy converted types mean UTC-adjusted millis or micros only.
        if (a.utc && unit != 3) {
          e.converted_type = ts ? (unit == 1 ? format::converted::kTimestampMillis : format::converted::kTimestampMicros)
                                : (unit == 1 ? format::converted::kTimeMillis : format::converted::kTimeMicros);
        }
        break;
      }
      case LogicalKind::kDecimal:
        lt.kind = format::logical::kDecimal;
        lt.decimal_precision = a.precision;
        lt.decimal_scale = a.scale;
        e.converted_type = format::converted::kDecimal;
        e.precision = a.precision;
        e.scale = a.scale;
        break;
      case LogicalKind::kFloat16: lt.kind = format::logical::kFloat16; break;
      case LogicalKind::kUuid: lt.kind = format::logical::kUuid; break;
      case LogicalKind::kVariant:  // its JSON text
      case LogicalKind::kJson:
        lt.kind = format::logical::kJson;
        e.converted_type = format::converted::kJson;
        break;
      case LogicalKind::kEnum:
        lt.kind = format::logical::kEnum;
        e.converted_type = format::converted::kEnum;
        break;
      case LogicalKind::kBson:  // (no converted type: DuckDB refuses a file with converted type BSON)
        lt.kind = format::logical::kBson;
        e.converted_type.reset();
        break;
      case LogicalKind::kInterval:  // a converted type only: LogicalType has no INTERVAL
        e.converted_type = format::converted::kInterval;
        break;
    }
    if (a.kind != LogicalKind::kInterval) e.logical_type = lt;
  }
  return e;
}

std::vector<format::SchemaElement> to_schema_elements(const ColumnSchema& c) {
  if (!c.is_list) return {to_schema_element(c)};
  // A group (LIST) and its repeated `list` group for each level of lists, outside in; inner levels are the
  // outer level's `element`.
  std::vector<format::SchemaElement> out;
  for (int k = 0; k < c.list_depth(); ++k) {
    const bool optional = k == 0 ? c.nullable : c.inner_list_nullable[static_cast<size_t>(k - 1)];
    format::SchemaElement group;
    group.name = k == 0 ? c.name : "element";
    group.repetition_type = optional ? format::repetition::kOptional : format::repetition::kRequired;
    group.num_children = 1;
    format::LogicalType lt;
    lt.kind = format::logical::kList;
    group.logical_type = lt;
    group.converted_type = format::converted::kList;  // readers that predate LogicalType look for this
    format::SchemaElement repeated;
    repeated.name = "list";
    repeated.repetition_type = format::repetition::kRepeated;
    repeated.num_children = 1;
    out.push_back(std::move(group));
    out.push_back(std::move(repeated));
  }
  ColumnSchema element = c;
  element.name = "element";
  element.is_list = false;
  element.nullable = c.element_nullable;
  element.element_nullable = false;
  element.inner_list_nullable.clear();
  out.push_back(to_schema_element(element));
  return out;
}

std::vector<std::string> path_in_schema(const ColumnSchema& c) {
  std::vector<std::string> path{c.name};
  for (int k = 0; k < c.list_depth(); ++k) {
    path.push_back("list");
    path.push_back("element");
  }
  return path;
}

}  // namespace feedline::parquet
