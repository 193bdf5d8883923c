/** Rows in columns two spaces apart, the last one as long as it is. */
export function table(rows: readonly string[][]): string {
  const widths = rows[0].map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
