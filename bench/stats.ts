/** Small statistics and printing helpers shared by the benchmarks. */

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 0 ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[mid]!
}

export const report = (title: string, rows: ReadonlyArray<readonly [string, string, string]>): void => {
  const width = Math.max(...rows.map(([name]) => name.length))
  console.log(`\n${title}`)
  for (const [name, value, note] of rows) console.log(`  ${name.padEnd(width)}  ${value.padStart(12)}  ${note}`)
}
