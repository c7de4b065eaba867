/* empty.c — stands in for a layer of src/ that has no sources yet. */
typedef int ng_empty_translation_unit;
