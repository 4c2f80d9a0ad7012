import { keepPreviousData, useQuery, type UseQueryResult } from '@tanstack/react-query';
import { AlertCircle, AlertTriangle, FileText, Loader2 } from 'lucide-react';
import { useState } from 'react';
import type { ColumnProfile, FileOut, FilePreview, FileProfile, FilterCondition, PreviewColumn, TextFormat } from '@/client';
import { formatCell } from '@/components/data-table';
import { Badge } from '@/components/ui/badge';
import { Tabs } from '@/components/ui/tabs';
import { cn } from '@/lib/utils';
import { ConditionForm, FilterChips } from './preview-filters';
import { PreviewTable, previewCell, type Sort } from './preview-table';
import { PREVIEW_PAGE_ROWS, previewQuery, profileQuery } from './queries';

type Check = FileOut['check'];

/** Checks that mean the file cannot be used as the table it claims to be (or holds nothing). */
const PROBLEMS: Partial<Record<NonNullable<Check>, { label: string; tone: 'error' | 'warning' }>> = {
  unreadable: { label: 'Unreadable', tone: 'error' },
  empty: { label: 'Empty', tone: 'warning' },
  too_large: { label: 'Too large to preview', tone: 'warning' },
};

export const hasProblem = (file: Pick<FileOut, 'check'>) => !!file.check && file.check in PROBLEMS;

/** What the check after upload found, next to the file's name: nothing when it reads fine. */
export function FileCheckBadge({ file }: { file: Pick<FileOut, 'check' | 'problem' | 'name'> }) {
  if (file.check === 'not_tabular')
    return (
      <Badge data-testid="file-check" data-check="not_tabular" title={`${file.name} is not a table: no preview`}>
        <FileText /> No preview
      </Badge>
    );
  const problem = file.check ? PROBLEMS[file.check] : undefined;
  if (!problem) return null;
  const Icon = problem.tone === 'error' ? AlertCircle : AlertTriangle;
  return (
    <Badge variant={problem.tone} data-testid="file-check" data-check={file.check} title={file.problem ?? problem.label}>
      <Icon /> {problem.label}
      {file.problem && <span className="sr-only">: {file.problem}</span>}
    </Badge>
  );
}

/** The problem sentence in full, at the top of an opened file. */
function ProblemNote({ file }: { file: FileOut }) {
  const problem = file.check ? PROBLEMS[file.check] : undefined;
  if (!problem || !file.problem) return null;
  const Icon = problem.tone === 'error' ? AlertCircle : AlertTriangle;
  return (
    <div
      className={cn(
        'flex items-start gap-2 border-t px-3 py-2 text-sm',
        problem.tone === 'error' ? 'bg-destructive/5 text-destructive' : 'bg-amber-500/5 text-amber-800 dark:text-amber-300',
      )}
      data-testid="file-problem"
    >
      <Icon className="mt-0.5 size-4 shrink-0" />
      <p>
        {file.problem}
        {file.check !== 'empty' && <span className="text-muted-foreground"> It can still be downloaded and used in questions.</span>}
      </p>
    </div>
  );
}

/** "Separated by ; · decimal comma · cp1252": how a CSV was read, when that is worth saying. */
export function describeFormat(format: TextFormat): string {
  const separator = format.delimiter === '\t' ? 'tab' : format.delimiter === ',' ? 'comma' : `“${format.delimiter}”`;
  const parts = [`Separated by ${separator}`];
  if (format.decimal === ',') parts.push(format.thousands ? `decimal comma, “${format.thousands}” between thousands` : 'decimal comma');
  parts.push(format.encoding.replace(/^utf-8-sig$/, 'UTF-8 with BOM').replace(/^utf-(\d+)$/, 'UTF-$1'));
  return parts.join(' · ');
}

/** A date cell without the midnight it does not have: 2026-01-31T00:00:00 → 2026-01-31. */
function withoutMidnight(value: unknown): unknown {
  return typeof value === 'string' && value.endsWith('T00:00:00') ? value.slice(0, -9) : value;
}

function Pending({ what }: { what: string }) {
  return (
    <p className="flex items-center gap-2 border-t p-4 text-sm text-muted-foreground">
      <Loader2 className="size-4 animate-spin" /> Loading {what}…
    </p>
  );
}

/** Rows offered as the header row: the first twenty, or a few past the one in use. */
const HEADER_CHOICES = 20;

/**
 * An opened file: its problem if any, sheet tabs for a workbook, the row its column names come
 * from (found under title rows, or chosen), and a page of its whole table (sorted by the server
 * over every row) or its columns' profile.
 */
export function FileDetails({ file }: { file: FileOut }) {
  const [sheet, setSheet] = useState<string | null>(null);
  const [view, setView] = useState<'rows' | 'columns'>('rows');
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState<Sort>(null);
  const [headerRow, setHeaderRow] = useState<number | null>(null);
  const [filter, setFilter] = useState<FilterCondition[]>([]);
  const [editing, setEditing] = useState<PreviewColumn | null>(null);
  // Unreadable or too costly files answer the same again: no need to ask (a costly one takes seconds).
  const previewable = file.check !== 'not_tabular' && file.check !== 'unreadable' && file.check !== 'too_large';
  const first = useQuery({ ...previewQuery(file.id, file.sha256), enabled: previewable });
  const window = {
    offset: page * PREVIEW_PAGE_ROWS,
    limit: PREVIEW_PAGE_ROWS,
    sort: sort?.column ?? null,
    order: sort?.order ?? 'asc',
    headerRow,
    filter,
  } as const;
  const preview = useQuery({
    ...previewQuery(file.id, file.sha256, sheet, window),
    enabled: previewable,
    placeholderData: keepPreviousData,
  });
  const profile = useQuery({
    ...profileQuery(file.id, file.sha256, sheet, headerRow),
    enabled: previewable && view === 'columns',
  });

  if (file.check === 'not_tabular')
    return (
      <p className="border-t p-4 text-sm text-muted-foreground" data-testid="no-preview">
        No preview: {file.name} is not a table (CSV, TSV, Excel, Parquet or JSON). It can still be downloaded and used in questions.
      </p>
    );
  if (!previewable) return <ProblemNote file={file} />;
  const sheets = first.data?.sheets ?? [];
  const format = preview.data?.format;
  const usedHeader = preview.data?.header_row;
  const reset = () => {
    setPage(0);
    setSort(null);
    setFilter([]);
    setEditing(null);
  };
  const refilter = (next: FilterCondition[]) => {
    setFilter(next);
    setPage(0);
  };
  const readings = (preview.data?.columns ?? []).filter((c) => c.reading);
  return (
    <>
      <ProblemNote file={file} />
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 border-t px-2 py-1.5">
        {sheets.length > 1 && (
          <Tabs
            label={`Sheets of ${file.name}`}
            items={sheets.map((s) => ({ value: s, text: s }))}
            current={sheet ?? first.data?.sheet ?? sheets[0]}
            onSelect={(s) => {
              setSheet(s === sheets[0] ? null : s);
              setHeaderRow(null);
              reset();
            }}
            className="max-w-full"
          />
        )}
        <Tabs
          label="Show"
          items={[
            { value: 'rows', text: 'Rows' },
            { value: 'columns', text: 'Columns' },
          ]}
          current={view}
          onSelect={setView}
          className="ml-auto"
        />
      </div>
      {(format || usedHeader != null) && (
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1 border-t px-3 py-1 text-[11px] text-muted-foreground">
          {format && <span data-testid="file-format">{describeFormat(format)}</span>}
          {usedHeader != null && (
            <label className="ml-auto inline-flex items-center gap-1" data-testid="header-row">
              Column names in row
              <select
                className="rounded border bg-background px-1 py-0.5 text-[11px] text-foreground"
                value={usedHeader}
                onChange={(e) => {
                  setHeaderRow(Number(e.target.value));
                  reset();
                }}
              >
                {Array.from({ length: Math.max(HEADER_CHOICES, usedHeader + 5) }, (_, row) => (
                  <option key={row} value={row}>
                    {row + 1}
                  </option>
                ))}
              </select>
              {headerRow === null && usedHeader > 0 && (
                <span data-testid="header-found">
                  (found under {usedHeader === 1 ? 'a title row' : `${usedHeader} title rows`})
                </span>
              )}
              {headerRow !== null && (
                <button
                  type="button"
                  className="cursor-pointer underline underline-offset-2 hover:text-foreground"
                  onClick={() => {
                    setHeaderRow(null);
                    reset();
                  }}
                >
                  detect
                </button>
              )}
            </label>
          )}
        </div>
      )}
      {readings.length > 0 && (
        <ul className="space-y-0.5 border-t px-3 py-1 text-[11px] text-muted-foreground" data-testid="column-readings">
          {readings.map((c) => (
            <li key={c.name}>
              <span className="font-medium text-foreground/80">{c.name}</span>: {c.reading}
            </li>
          ))}
        </ul>
      )}
      {view === 'rows' && editing && (
        <ConditionForm
          key={editing.name}
          column={editing}
          onApply={(condition) => {
            refilter([...filter, condition]);
            setEditing(null);
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      {view === 'rows' && preview.data && (
        <FilterChips
          conditions={filter}
          matching={preview.data.row_count}
          total={preview.data.unfiltered_row_count ?? preview.data.row_count}
          onRemove={(index) => refilter(filter.filter((_, i) => i !== index))}
          onClear={() => refilter([])}
        />
      )}
      {view === 'rows' ? (
        <Rows
          query={preview}
          page={page}
          sort={sort}
          onPage={setPage}
          onSort={(next) => {
            setSort(next);
            setPage(0);
          }}
          onFilter={setEditing}
        />
      ) : (
        <Columns query={profile} />
      )}
    </>
  );
}

function Rows({
  query,
  page,
  sort,
  onPage,
  onSort,
  onFilter,
}: {
  query: UseQueryResult<FilePreview>;
  page: number;
  sort: Sort;
  onPage: (page: number) => void;
  onSort: (sort: Sort) => void;
  onFilter: (column: PreviewColumn) => void;
}) {
  const data = query.data;
  if (query.isLoading) return <Pending what="preview" />;
  if (query.error) return <p className="border-t p-4 text-sm text-muted-foreground">No preview: {query.error.message}</p>;
  if (!data) return null;
  return (
    <PreviewTable
      preview={data}
      page={page}
      pageRows={PREVIEW_PAGE_ROWS}
      sort={sort}
      onPage={onPage}
      onSort={onSort}
      onFilter={onFilter}
      fetching={query.isPlaceholderData}
    />
  );
}

function Columns({ query }: { query: UseQueryResult<FileProfile> }) {
  if (query.isLoading) return <Pending what="column profile" />;
  if (query.error) return <p className="border-t p-4 text-sm text-muted-foreground">No profile: {query.error.message}</p>;
  if (!query.data) return null;
  return <ProfileTable profile={query.data} />;
}

const KIND_LABEL: Record<ColumnProfile['kind'], NonNullable<ColumnProfile['type']>> = { number: 'number', datetime: 'date', boolean: 'yes/no', text: 'text' };

/** A profile's value as the preview shows the column's cells: a number column's with its currency and decimals ($1,204.50). */
function shown(value: unknown, column: ColumnProfile): string {
  if (column.kind === 'number' && typeof value === 'number') {
    const { name, dtype, unit, currency, currencies, decimals } = column;
    return previewCell(value, { name, dtype, type: 'number', unit, currency, currencies, decimals });
  }
  return formatCell(column.kind === 'datetime' ? withoutMidnight(typeof value === 'string' ? value.replace(/\.\d+$/, '') : value) : value);
}

/** Each column's type, missing and distinct counts, and range or most frequent values. */
export function ProfileTable({ profile }: { profile: FileProfile }) {
  const rows = profile.rows_profiled;
  const percent = (n: number) => (rows ? `${Math.round((n / rows) * 100)}%` : '');
  return (
    <div className="border-t" data-testid="profile">
      <p className="px-3 py-1.5 text-xs text-muted-foreground" data-testid="profile-coverage">
        {profile.complete
          ? `All ${profile.row_count.toLocaleString()} rows profiled.`
          : `Profiled the first ${rows.toLocaleString()} of ${profile.row_count.toLocaleString()} rows.`}
      </p>
      <div className="overflow-x-auto">
        <table className="w-full text-sm">
          <thead className="bg-muted/60 text-left text-xs">
            <tr>
              <th className="border-y px-3 py-1.5 font-medium">Column</th>
              <th className="border-y px-3 py-1.5 font-medium">Type</th>
              <th className="border-y px-3 py-1.5 text-right font-medium">Missing</th>
              <th className="border-y px-3 py-1.5 text-right font-medium">Distinct</th>
              <th className="border-y px-3 py-1.5 font-medium">Values</th>
            </tr>
          </thead>
          <tbody>
            {profile.columns.map((c) => (
              <tr key={c.name} className="border-b align-top last:border-0" data-column={c.name}>
                <td className="max-w-48 truncate px-3 py-1.5 font-medium" title={c.name}>
                  {c.name}
                </td>
                <td className="px-3 py-1.5 whitespace-nowrap">
                  {c.type ?? KIND_LABEL[c.kind]} <span className="font-mono text-[11px] text-muted-foreground">{c.dtype}</span>
                </td>
                <td className="px-3 py-1.5 text-right font-mono text-xs whitespace-nowrap tabular-nums" data-testid="profile-missing">
                  {c.unreadable ? (
                    <span data-testid="profile-unreadable" title="Cells whose text could not be read as the column's type">
                      {c.unreadable.toLocaleString()} unreadable,{' '}
                    </span>
                  ) : null}
                  {c.unreadable ? `${c.missing.toLocaleString()} empty` : c.missing.toLocaleString()}
                  {c.missing > 0 && <span className="text-muted-foreground"> ({percent(c.missing)})</span>}
                </td>
                <td className="px-3 py-1.5 text-right font-mono text-xs tabular-nums" data-testid="profile-distinct">
                  {c.distinct.toLocaleString()}
                </td>
                <td className="px-3 py-1.5 text-xs" data-testid="profile-values">
                  <Values column={c} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Values({ column: c }: { column: ColumnProfile }) {
  if (c.top)
    return (
      <span className="flex flex-wrap gap-1">
        {c.top.map((t) => (
          <span key={String(t.value)} className="max-w-48 truncate rounded bg-muted px-1.5 py-0.5" title={String(t.value)}>
            {formatCell(t.value)} <span className="text-muted-foreground tabular-nums">×{t.count.toLocaleString()}</span>
          </span>
        ))}
      </span>
    );
  if (c.min === null && c.max === null) return <span className="text-muted-foreground">no values</span>;
  return (
    <span className="font-mono whitespace-nowrap tabular-nums">
      <span className="text-muted-foreground">min</span> {shown(c.min, c)} <span className="text-muted-foreground">· mean</span>{' '}
      {shown(c.mean, c)} <span className="text-muted-foreground">· max</span> {shown(c.max, c)}
    </span>
  );
}
