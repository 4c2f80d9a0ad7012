/**
 * What differs between two branches, computed in the browser from their runs: where their
 * histories part, which number in an answer changed against the other side's answer, and which
 * rows of a table were added or removed against the other side's table of the same name (or at
 * the same position). Pure: no React, no fetching.
 */

/** A piece of an answer's text: a number that differs from the other side's is `changed`. */
export type Segment = { text: string; number: boolean; changed: boolean };

/** A number as written in text: "1,234.5", "-3", "12%" (value 12), "0.25". */
export type NumberToken = { raw: string; value: number; start: number; end: number };

// A number not glued to a word (so "Q2" or "v1.2b" are not numbers): digits with optional thousands
// separators, an optional decimal part, an optional sign before it.
const NUMBER = /(?<![\p{L}\p{N}_.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\p{L}\p{N}_])/gu;

export function numbersIn(text: string): NumberToken[] {
  const found: NumberToken[] = [];
  for (const m of text.matchAll(NUMBER)) {
    const raw = m[0];
    const value = Number(raw.replace(/,/g, '').replace('−', '-'));
    if (Number.isFinite(value)) found.push({ raw, value, start: m.index, end: m.index + raw.length });
  }
  return found;
}

/**
 * The text split into plain pieces and numbers; the n-th number is `changed` when the other
 * text's n-th number has another value, or the other text has no n-th number.
 */
export function diffNumbers(text: string, other: string): Segment[] {
  const mine = numbersIn(text);
  const theirs = numbersIn(other);
  const segments: Segment[] = [];
  let at = 0;
  mine.forEach((n, i) => {
    if (n.start > at) segments.push({ text: text.slice(at, n.start), number: false, changed: false });
    segments.push({ text: n.raw, number: true, changed: theirs[i]?.value !== n.value });
    at = n.end;
  });
  if (at < text.length) segments.push({ text: text.slice(at), number: false, changed: false });
  return segments;
}

export type Table = { columns: (string | { name: string })[]; rows: unknown[][] };

const columnNames = (t: Table) => t.columns.map((c) => (typeof c === 'string' ? c : c.name));

/** A row by its content, its cells in the order of `names` (a column the table lacks is empty). */
function rowKey(t: Table, row: unknown[], names: string[]): string {
  const index = new Map(columnNames(t).map((n, i) => [n, i]));
  return JSON.stringify(names.map((n) => (index.has(n) ? (row[index.get(n)!] ?? null) : null)));
}

export type RowDiff = {
  /** Indexes of this side's rows the other side does not have (counted: a row twice here, once there, is added once). */
  added: number[];
  /** The other side's rows this side does not have, as the other side has them. */
  removed: unknown[][];
};

/** Rows compared by content over the columns both tables have, as multisets. */
export function diffRows(table: Table, other: Table): RowDiff {
  const shared = columnNames(table).filter((n) => columnNames(other).includes(n));
  const names = shared.length ? shared : columnNames(table);
  const left = new Map<string, number>();
  for (const row of other.rows) {
    const k = rowKey(other, row, names);
    left.set(k, (left.get(k) ?? 0) + 1);
  }
  const added: number[] = [];
  table.rows.forEach((row, i) => {
    const k = rowKey(table, row, names);
    const n = left.get(k) ?? 0;
    if (n > 0) left.set(k, n - 1);
    else added.push(i);
  });
  const removed = other.rows.filter((row) => {
    const k = rowKey(other, row, names);
    const n = left.get(k) ?? 0;
    if (n > 0) {
      left.set(k, n - 1);
      return true;
    }
    return false;
  });
  return { added, removed };
}

/** For each of this side's tables, the other side's table it is compared with: the same name, else the same position. */
export function pairTables<T extends { name: string }>(mine: T[], theirs: T[]): (T | null)[] {
  const byName = new Map(theirs.map((t) => [t.name, t]));
  return mine.map((t, i) => byName.get(t.name) ?? (theirs[i] && !mine.some((m) => m.name === theirs[i].name) ? theirs[i] : null));
}

/** Two histories side by side: the runs both have (the common past), then each side's own, paired by position. */
export function alignHistories<R extends { id: string }>(left: R[], right: R[]): { common: R[]; pairs: [R | null, R | null][] } {
  let k = 0;
  while (k < left.length && k < right.length && left[k].id === right[k].id) k++;
  const a = left.slice(k);
  const b = right.slice(k);
  const pairs: [R | null, R | null][] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) pairs.push([a[i] ?? null, b[i] ?? null]);
  return { common: left.slice(0, k), pairs };
}
