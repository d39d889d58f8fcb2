// The WIT `fs-error` variant as jco expects a `result` error: a plain value, thrown.

/** A WIT variant value, as jco expects it thrown for a `result` error. */
export function failure(tag, val) {
  return { tag, val };
}
