// The head every modelstat JSON document starts with, spelled once.
#pragma once

#include "analyzer/measurements/record_json.hpp"

namespace modelstat {

// {"schema_version": VERSION, "tool": "modelstat", "kind": KIND}, in this
// order; the writer adds the record's keys after it.
inline Json document_head(const char* schema_version, const char* kind) {
  Json doc;
  doc["schema_version"] = schema_version;
  doc["tool"] = "modelstat";
  doc["kind"] = kind;
  return doc;
}

}  // namespace modelstat
