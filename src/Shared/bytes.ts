/**
 * Byte counts in human units (`512 B`, `1.5 KB`, `12.0 MB`, `2.00 GB`), as tool results show sizes.
 *
 * @internal
 */

/** A byte count in human units. */
export const formatBytes = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KB`
    : bytes < 1024 ** 3
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : `${(bytes / 1024 ** 3).toFixed(2)} GB`
