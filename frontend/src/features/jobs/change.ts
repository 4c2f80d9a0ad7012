import { formatCell } from '@/components/data-table';

/** A result's change since the job's last run that succeeded (`job_run.change[name]`). */
export type ChangeEntry = {
  before?: unknown;
  after?: unknown;
  pct?: number | null;
  changed?: boolean;
  rows_added?: number | null;
  rows_removed?: number | null;
};

export type ChangeText = {
  /** "48,210 → 52,000"; a table's rows: "12 rows → 15 rows". */
  text: string;
  /** "+7.9%", "−10%", or null when there is no per cent (not numbers, or nothing before). */
  pct: string | null;
  direction: 'up' | 'down' | 'same' | 'new';
  /** "3 rows added, 1 removed" for a table, else null. */
  rows: string | null;
};

const MINUS = '\u2212';

/** A per cent change as read: +7.9%, −10%, 0%. At most one decimal, none for whole numbers. */
export function formatPct(pct: number): string {
  const rounded = Math.round(pct * 10) / 10;
  if (rounded === 0) return '0%';
  const text = `${Math.abs(rounded)}%`;
  return rounded > 0 ? `+${text}` : `${MINUS}${text}`;
}

/** A value of a run's results shown short: numbers with separators, a table as its row count. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  const table = tableOf(value);
  if (table) return `${table.rowCount} row${table.rowCount === 1 ? '' : 's'}`;
  if (typeof value === 'string') return value;
  return formatCell(value);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** How a result changed, in words and with its direction (up green, down red, as the page colours it). */
export function changeText(entry: ChangeEntry, isTable = false): ChangeText {
  const rowsText =
    isTable || entry.rows_added != null || entry.rows_removed != null
      ? entry.rows_added == null && entry.rows_removed == null
        ? null
        : `${entry.rows_added ?? 0} added, ${entry.rows_removed ?? 0} removed`
      : null;
  const show = (v: unknown) => (rowsText !== null && typeof v === 'number' ? plural(v, 'row') : valueText(v));
  if (entry.before === null || entry.before === undefined) {
    return { text: `new: ${show(entry.after)}`, pct: null, direction: 'new', rows: rowsText };
  }
  const pct = typeof entry.pct === 'number' ? entry.pct : null;
  const bothNumbers = typeof entry.before === 'number' && typeof entry.after === 'number';
  const [before, after] = [entry.before as number, entry.after as number];
  const direction: ChangeText['direction'] = !bothNumbers ? 'same' : after > before ? 'up' : after < before ? 'down' : 'same';
  return { text: `${show(entry.before)} → ${show(entry.after)}`, pct: pct === null ? null : formatPct(pct), direction, rows: rowsText };
}

/** A result that is a table: `{columns, rows, row_count}` (as a run keeps it) or a list of records. */
export function tableOf(value: unknown): { columns: string[]; rows: unknown[][]; rowCount: number } | null {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const v = value as { columns?: unknown; rows?: unknown; row_count?: unknown };
    if (Array.isArray(v.columns) && Array.isArray(v.rows)) {
      const columns = v.columns.map((c) => (c && typeof c === 'object' && 'name' in c ? String((c as { name: unknown }).name) : String(c)));
      const rows = v.rows.map((r) => (Array.isArray(r) ? r : [r]));
      return { columns, rows, rowCount: typeof v.row_count === 'number' ? v.row_count : rows.length };
    }
  }
  if (Array.isArray(value) && value.length && value.every((r) => r && typeof r === 'object' && !Array.isArray(r))) {
    const records = value as Record<string, unknown>[];
    const columns = [...new Set(records.flatMap((r) => Object.keys(r)))];
    return { columns, rows: records.map((r) => columns.map((c) => r[c])), rowCount: records.length };
  }
  return null;
}

/** "1.2 s", "3 min 4 s": how long a run took, or null while it has not ended. */
export function runDuration(startedAt: string | null | undefined, finishedAt: string | null | undefined): number | null {
  if (!startedAt || !finishedAt) return null;
  return Math.max(0, new Date(finishedAt).getTime() - new Date(startedAt).getTime());
}
