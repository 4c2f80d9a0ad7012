import {
  flexRender,
  getCoreRowModel,
  getPaginationRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type SortingState,
} from '@tanstack/react-table';
import { ArrowDown, ArrowUp, ChevronLeft, ChevronRight } from 'lucide-react';
import { useMemo, useState } from 'react';
import { Button } from '@/components/ui/button';
import { cn } from '@/lib/utils';

export type TableColumn = { name: string; dtype?: string | null };
type Row = unknown[];

function show(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * A cell as it reads best: integers exact with thousands separators (an id-like integer past 2^53
 * arrives as a string and stays as it is), other numbers with thousands separators and at most 4
 * decimals, or 4 significant digits when smaller than 1 (0.0001234 → 0.0001234, 3.14159 → 3.1416).
 */
export function formatCell(v: unknown): string {
  if (typeof v !== 'number') return show(v);
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return Math.abs(v) >= 1e21 ? String(v) : whole.format(v);
  const abs = Math.abs(v);
  if (abs >= 1e15) return v.toExponential(4);
  if (abs < 1) return abs < 1e-6 ? v.toExponential(3) : String(Number(v.toPrecision(4)));
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 }).format(v);
}

/** A paged, sortable table for previews and table artifacts (rows are arrays aligned with columns). */
export function DataTable({
  columns,
  rows,
  rowCount,
  pageSize = 10,
  className,
}: {
  columns: TableColumn[];
  rows: Row[];
  rowCount?: number;
  pageSize?: number;
  className?: string;
}) {
  const [sorting, setSorting] = useState<SortingState>([]);
  const defs = useMemo<ColumnDef<Row>[]>(
    () =>
      columns.map((c, i) => ({
        id: `${i}`,
        accessorFn: (r) => r[i],
        header: c.name,
        cell: (info) => {
          const v = info.getValue();
          const text = formatCell(v);
          const full = show(v);
          return full === text ? text : <span title={full}>{text}</span>;
        },
        sortingFn: 'basic',
        sortUndefined: 'last',
      })),
    [columns],
  );
  // Numbers line up on the right, their headers with them.
  const numeric = useMemo(() => columns.map((_, i) => typeof rows.find((r) => r[i] != null)?.[i] === 'number'), [columns, rows]);
  const table = useReactTable({
    data: rows,
    columns: defs,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getPaginationRowModel: getPaginationRowModel(),
    initialState: { pagination: { pageSize } },
  });
  const page = table.getState().pagination.pageIndex;
  const pages = Math.max(table.getPageCount(), 1);
  return (
    <div className={cn('overflow-hidden rounded-lg border bg-card', className)} data-testid="data-table">
      <div className="overflow-x-auto">
        <table className="w-full text-sm">
          <thead className="bg-muted/60">
            {table.getHeaderGroups().map((hg) => (
              <tr key={hg.id}>
                {hg.headers.map((h) => {
                  const sorted = h.column.getIsSorted();
                  const dtype = columns[Number(h.column.id)]?.dtype;
                  return (
                    <th
                      key={h.id}
                      className={cn('border-b px-3 py-2 align-bottom font-medium whitespace-nowrap', numeric[Number(h.column.id)] ? 'text-right' : 'text-left')}
                    >
                      <button
                        type="button"
                        className="inline-flex cursor-pointer items-center gap-1 hover:text-primary"
                        onClick={h.column.getToggleSortingHandler()}
                        aria-label={`Sort by ${String(h.column.columnDef.header)}`}
                      >
                        {flexRender(h.column.columnDef.header, h.getContext())}
                        {sorted === 'asc' && <ArrowUp className="size-3" />}
                        {sorted === 'desc' && <ArrowDown className="size-3" />}
                      </button>
                      {dtype && <div className="font-mono text-[11px] font-normal text-muted-foreground">{dtype}</div>}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((r) => (
              <tr key={r.id} className="border-b last:border-0 hover:bg-muted/40">
                {r.getVisibleCells().map((c) => (
                  <td
                    key={c.id}
                    className={cn('max-w-72 truncate px-3 py-1.5 font-mono text-xs tabular-nums', typeof c.getValue() === 'number' && 'text-right')}
                  >
                    {flexRender(c.column.columnDef.cell, c.getContext())}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="flex items-center justify-between gap-2 border-t px-3 py-1.5 text-xs text-muted-foreground">
        <span>
          {rows.length.toLocaleString()} rows{rowCount != null && rowCount > rows.length ? ` shown of ${rowCount.toLocaleString()}` : ''} ·{' '}
          {columns.length} columns
        </span>
        <div className="flex items-center gap-1">
          <span data-testid="page-indicator">
            Page {page + 1} of {pages}
          </span>
          <Button
            variant="ghost"
            size="icon-sm"
            onClick={() => table.previousPage()}
            disabled={!table.getCanPreviousPage()}
            aria-label="Previous page"
          >
            <ChevronLeft />
          </Button>
          <Button
            variant="ghost"
            size="icon-sm"
            onClick={() => table.nextPage()}
            disabled={!table.getCanNextPage()}
            aria-label="Next page"
          >
            <ChevronRight />
          </Button>
        </div>
      </div>
    </div>
  );
}
