import { ArrowDown, ArrowUp, ArrowUpDown, ChevronLeft, ChevronRight, ChevronsLeft, ChevronsRight, Filter, Loader2 } from 'lucide-react';
import type { FilePreview, PreviewColumn } from '@/client';
import { formatCell } from '@/components/data-table';
import { Button } from '@/components/ui/button';
import { cn } from '@/lib/utils';

export type Sort = { column: string; order: 'asc' | 'desc' } | null;

type UserType = NonNullable<PreviewColumn['type']>;

/** A column's type in a person's words (the server says it; older previews only had the dtype). */
export function columnType(column: PreviewColumn): UserType {
  if (column.type) return column.type;
  if (column.dtype.startsWith('datetime64')) return 'date';
  if (/^(bool|boolean)$/.test(column.dtype)) return 'yes/no';
  if (/^(u?int|float|Int|UInt|Float)/.test(column.dtype)) return 'number';
  return 'text';
}

/** A column's type in a person's words, with how its text was written: "number · €", "number · %". */
export function typeLabel(column: PreviewColumn): string {
  const type = columnType(column);
  if (column.mixed === 'date') return `${type} · ${column.day_first ? 'day-first' : 'month-first'}`;
  if (column.currencies?.length) return `${type} · ${column.currencies.join(' ')}`;
  return column.unit ? `${type} · ${column.unit}` : type;
}

/** A cell the server could not read as its column's kind: it keeps the text as written. */
export function unreadableText(value: unknown): string | null {
  if (value && typeof value === 'object' && 'unreadable' in value) return String((value as { unreadable: unknown }).unreadable);
  return null;
}

/** An amount with cents when it has any (310.1 → 310.10, 2400 → 2,400), or with the column's usual decimals. */
function amount(value: number, decimals?: number | null): string {
  if (!Number.isFinite(value) || value >= 1e15) return formatCell(value);
  if (typeof decimals === 'number') return new Intl.NumberFormat('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: Math.max(decimals, 2) }).format(value);
  if (Number.isInteger(value)) return formatCell(value);
  return new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(value);
}

/** A column's currency as shown before its amounts: a symbol as it is (€1.00), a code apart (EUR 1.00). */
function currencyMark(unit: string): string {
  return unit.length > 1 ? `${unit} ` : unit;
}

/** A cell as the file wrote it: amounts with their currency and the column's usual decimals, percents as percents, yes/no in words, dates without a midnight. */
export function previewCell(value: unknown, column: PreviewColumn): string {
  if (value === null || value === undefined) return '';
  const unread = unreadableText(value);
  if (unread !== null) return unread;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const decimals = column.decimals;
  if (typeof value === 'number' && column.unit === '%') {
    const percent = Number((value * 100).toPrecision(12));
    return `${typeof decimals === 'number' ? amount(percent, decimals) : formatCell(percent)}%`;
  }
  const currency = column.currency ?? column.unit;
  if (typeof value === 'number' && currency) return `${value < 0 ? '-' : ''}${currencyMark(currency)}${amount(Math.abs(value), decimals)}`;
  if (typeof value === 'number' && column.currencies?.length && typeof decimals === 'number') return amount(value, decimals);
  if (typeof value === 'string' && columnType(column) === 'date' && value.endsWith('T00:00:00')) return value.slice(0, -9);
  return formatCell(value);
}

/** The next sort when a column's header is clicked: ascending, then descending, then the file's order. */
export function nextSort(current: Sort, column: string): Sort {
  if (current?.column !== column) return { column, order: 'asc' };
  return current.order === 'asc' ? { column, order: 'desc' } : null;
}

/**
 * A page of a file's whole table, as the server sends it: sorting asks the server to sort every row,
 * paging asks it for the next rows, and "Page n of N" counts the whole file.
 */
export function PreviewTable({
  preview,
  page,
  pageRows,
  sort,
  onPage,
  onSort,
  onFilter,
  fetching = false,
}: {
  preview: FilePreview;
  page: number;
  pageRows: number;
  sort: Sort;
  onPage: (page: number) => void;
  onSort: (sort: Sort) => void;
  /** Opens the condition menu of a column (none: no filter controls). */
  onFilter?: (column: PreviewColumn) => void;
  fetching?: boolean;
}) {
  const { columns, row_count: total } = preview;
  const rows = preview.rows as unknown[][];
  const pages = Math.max(1, Math.ceil(total / pageRows));
  const first = page * pageRows;
  const numeric = columns.map((c) => columnType(c) === 'number');
  return (
    <div className="border-t bg-card" data-testid="data-table" aria-busy={fetching}>
      {/* A page of 50 rows scrolls within the panel, its header in view. */}
      <div className={cn('max-h-[32rem] overflow-auto transition-opacity', fetching && 'opacity-60')}>
        <table className="w-full text-sm">
          <thead className="sticky top-0 z-10 bg-muted">
            <tr>
              {columns.map((c, i) => {
                const sorted = sort?.column === c.name ? sort.order : null;
                return (
                  <th
                    key={`${i}-${c.name}`}
                    scope="col"
                    aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
                    className={cn('border-b px-3 py-2 align-bottom font-medium whitespace-nowrap', numeric[i] ? 'text-right' : 'text-left')}
                  >
                    <button
                      type="button"
                      className="group inline-flex cursor-pointer items-center gap-1 hover:text-primary"
                      onClick={() => onSort(nextSort(sort, c.name))}
                      aria-label={`Sort by ${c.name}`}
                      title={sorted ? `Sorted over all ${total.toLocaleString()} rows` : 'Sort all rows by this column'}
                    >
                      <span className="max-w-60 truncate">{c.name}</span>
                      {sorted === 'asc' && <ArrowUp className="size-3" />}
                      {sorted === 'desc' && <ArrowDown className="size-3" />}
                      {!sorted && <ArrowUpDown className="size-3 opacity-0 group-hover:opacity-50" />}
                    </button>
                    <div
                      className={cn('flex items-center gap-1 text-[11px] font-normal text-muted-foreground', numeric[i] && 'justify-end')}
                      data-testid="column-type"
                      title={c.reading ?? undefined}
                    >
                      <span>
                        {typeLabel(c)} <span className="font-mono">{c.dtype}</span>
                      </span>
                      {onFilter && (
                        <button
                          type="button"
                          className="cursor-pointer rounded p-0.5 hover:bg-background hover:text-primary"
                          aria-label={`Filter by ${c.name}`}
                          title={`Filter rows by ${c.name}`}
                          onClick={() => onFilter(c)}
                        >
                          <Filter className="size-3" />
                        </button>
                      )}
                    </div>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, r) => (
              <tr key={first + r} className="border-b last:border-0 hover:bg-muted/40">
                {columns.map((c, i) => {
                  const text = previewCell(row[i], c);
                  const unread = unreadableText(row[i]) !== null;
                  return (
                    <td
                      key={i}
                      className={cn('max-w-72 truncate px-3 py-1.5 font-mono text-xs tabular-nums', numeric[i] && 'text-right')}
                      title={unread ? `“${text}” could not be read as a ${columnType(c)}: shown as written` : text.length > 40 ? text : undefined}
                    >
                      {unread ? (
                        <span
                          className="rounded bg-amber-100 px-1 text-amber-900 italic dark:bg-amber-900/40 dark:text-amber-200"
                          data-testid="unreadable-cell"
                        >
                          {text}
                        </span>
                      ) : (
                        text
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="flex flex-wrap items-center justify-between gap-2 border-t px-3 py-1.5 text-xs text-muted-foreground">
        <span data-testid="row-range">
          {rows.length
            ? `Rows ${(first + 1).toLocaleString()}–${(first + rows.length).toLocaleString()} of ${total.toLocaleString()}`
            : `No rows of ${total.toLocaleString()}`}
          {preview.filter?.length ? ' matching' : ''}
          {sort && ` · sorted by ${sort.column}, ${sort.order === 'asc' ? 'smallest' : 'largest'} first`} · {columns.length} columns
          {preview.notice && (
            <span className="block text-amber-700 dark:text-amber-400" data-testid="preview-notice">
              {preview.notice}
            </span>
          )}
          {preview.kinds_pending && typeof preview.decided_rows === 'number' && (
            <span className="block" data-testid="kinds-pending">
              Column types decided over the first {preview.decided_rows.toLocaleString()} rows; checking the whole file…
            </span>
          )}
        </span>
        <div className="flex items-center gap-1">
          {fetching && <Loader2 className="size-3 animate-spin" aria-label="Loading rows" />}
          <span data-testid="page-indicator">
            Page {(page + 1).toLocaleString()} of {pages.toLocaleString()}
          </span>
          <Button variant="ghost" size="icon-sm" onClick={() => onPage(0)} disabled={page === 0} aria-label="First page">
            <ChevronsLeft />
          </Button>
          <Button variant="ghost" size="icon-sm" onClick={() => onPage(page - 1)} disabled={page === 0} aria-label="Previous page">
            <ChevronLeft />
          </Button>
          <Button variant="ghost" size="icon-sm" onClick={() => onPage(page + 1)} disabled={page + 1 >= pages} aria-label="Next page">
            <ChevronRight />
          </Button>
          <Button variant="ghost" size="icon-sm" onClick={() => onPage(pages - 1)} disabled={page + 1 >= pages} aria-label="Last page">
            <ChevronsRight />
          </Button>
        </div>
      </div>
    </div>
  );
}
