import { useQuery } from '@tanstack/react-query';
import { AlertTriangle, ChevronDown, ChevronRight, Database, Loader2, Pencil, Search, Table2 } from 'lucide-react';
import { useDeferredValue, useId, useMemo, useState } from 'react';
import type { ColumnOut, SchemaOut, SourceOut, TableOut } from '@/client';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Input, Textarea } from '@/components/ui/input';
import { Segmented } from '@/components/ui/segmented';
import { useBlocked } from '@/features/projects/role';
import { cn, formatNumber } from '@/lib/utils';
import { useDescribeSchema } from './mutations';
import { schemaQuery } from './queries';
import { TableSample } from './table-sample';

/** Tables (and columns of a table) shown at first, and added by each "Show more": thousands stay quick. */
export const SCHEMA_PAGE = 50;

/** `schema.name`, or the name alone where the schema is the only one there is (SQLite's main). */
export function tableName(t: Pick<TableOut, 'schema' | 'name'>): string {
  return t.schema ? `${t.schema}.${t.name}` : t.name;
}

/** The tables whose name, description or a column's name holds every word of `filter`. */
export function filterTables(tables: TableOut[], filter: string): TableOut[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return tables;
  return tables.filter((t) => {
    const text = [tableName(t), t.description, ...t.columns.map((c) => c.name)].join(' ').toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/**
 * "~1,204 rows" (an estimate: databases count them roughly), or "rows unknown" where the database
 * keeps no count (a table never analysed, a view): never 0 or -1.
 */
export function rowEstimate(n: number | null): string {
  if (n == null) return 'rows unknown';
  return `~${formatNumber(n)} ${n === 1 ? 'row' : 'rows'}`;
}

/** Why a table's row count is unknown, for its tooltip. */
const UNKNOWN_ROWS = 'The database keeps no row count for it yet (a table never analysed, or a view).';

/** A mark beside a description that is the database's own comment, not the team's. */
function FromDatabase() {
  return (
    <Badge
      className="shrink-0 px-1.5 py-0 text-[10px] font-normal"
      title="The database's own comment: it describes this until the team writes a description."
      data-testid="from-database"
    >
      <Database /> DB comment
    </Badge>
  );
}

/** Why only some tables are listed, in words. */
export function truncatedSentence(kept: number, total: number | null | undefined): string {
  const of = total != null && total > kept ? ` of its ${formatNumber(total)}` : '';
  return `This database's schema is larger than the workbench keeps: the first ${formatNumber(kept)} tables${of} are listed here and described to the agent. Queries can still name the others.`;
}

/**
 * A description of the data dictionary, edited where it is shown: Enter saves, Shift+Enter starts
 * a new line, Escape gives up. An empty description removes it.
 */
export function DescriptionEditor({
  value,
  what,
  onSave,
  fromDatabase = false,
}: {
  value: string;
  what: string;
  onSave: (text: string) => Promise<unknown>;
  /** `value` is the database's own comment (shown until the team writes a description). */
  fromDatabase?: boolean;
}) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(value);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const blocked = useBlocked('editor', 'describe tables and columns');
  const save = () => {
    if (text.trim() === value) return setEditing(false);
    setSaving(true);
    setError(null);
    onSave(text.trim())
      .then(() => setEditing(false))
      .catch((e: unknown) => setError(e instanceof Error ? e.message : 'The description could not be saved.'))
      .finally(() => setSaving(false));
  };
  // A viewer reads the descriptions as text; there is nothing to add.
  if (blocked)
    return value ? (
      <p className="flex min-w-0 items-start gap-1.5 text-xs text-muted-foreground" data-testid="description" title={blocked}>
        <span className="min-w-0 break-words whitespace-pre-wrap">{value}</span>
        {fromDatabase && <FromDatabase />}
      </p>
    ) : null;
  if (!editing)
    return (
      <button
        type="button"
        className={cn(
          'group flex max-w-full cursor-pointer items-start gap-1.5 rounded text-left text-xs hover:text-foreground',
          value ? 'text-muted-foreground' : 'text-muted-foreground/70 italic',
        )}
        onClick={() => {
          setText(value);
          setEditing(true);
        }}
        aria-label={value ? `Edit the description of ${what}` : `Describe ${what}`}
        data-testid="description"
      >
        <span className="min-w-0 break-words whitespace-pre-wrap">{value || 'Add a description'}</span>
        {fromDatabase && <FromDatabase />}
        <Pencil className="mt-0.5 size-3 shrink-0 opacity-40 group-hover:opacity-100" />
      </button>
    );
  return (
    <div className="grid gap-1.5">
      <Textarea
        rows={2}
        className="text-xs"
        value={text}
        onChange={(e) => setText(e.target.value)}
        autoFocus
        aria-label={`Description of ${what}`}
        aria-describedby={error ? `${id}-error` : undefined}
        maxLength={10_000}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            save();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            setEditing(false);
            setError(null);
          }
        }}
      />
      {error && (
        <p id={`${id}-error`} role="alert" className="text-xs text-destructive">
          {error}
        </p>
      )}
      <div className="flex items-center gap-2">
        <Button type="button" size="sm" onClick={save} disabled={saving}>
          {saving && <Loader2 className="animate-spin" />}
          Save
        </Button>
        <Button
          type="button"
          size="sm"
          variant="ghost"
          onClick={() => {
            setEditing(false);
            setError(null);
          }}
        >
          Cancel
        </Button>
        <span className="text-[11px] text-muted-foreground max-sm:hidden">Enter saves · Esc cancels</span>
      </div>
    </div>
  );
}

function ShowMore({ shown, total, onMore, what }: { shown: number; total: number; onMore: () => void; what: string }) {
  if (shown >= total) return null;
  return (
    <div className="flex items-center gap-3 px-3 py-2 text-xs text-muted-foreground">
      <span>
        {formatNumber(shown)} of {formatNumber(total)} {what} shown
      </span>
      <Button variant="outline" size="sm" onClick={onMore}>
        Show {formatNumber(Math.min(SCHEMA_PAGE, total - shown))} more
      </Button>
    </div>
  );
}

function Columns({ table, describe }: { table: TableOut; describe: (c: ColumnOut, text: string) => Promise<unknown> }) {
  const [shown, setShown] = useState(SCHEMA_PAGE);
  const name = tableName(table);
  return (
    <div data-testid="schema-columns">
      <div className="hidden grid-cols-[minmax(7rem,1fr)_minmax(6rem,0.8fr)_4.5rem_2fr] gap-3 px-3 pt-2 pb-1 pl-10 text-[11px] font-medium tracking-wide text-muted-foreground uppercase sm:grid">
        <span>Column</span>
        <span>Type</span>
        <span>Null</span>
        <span>Description</span>
      </div>
      <ul aria-label={`Columns of ${name}`} className="divide-y divide-border/60">
        {table.columns.slice(0, shown).map((c) => (
          <li
            key={c.name}
            className="grid grid-cols-[1fr_auto] gap-x-3 gap-y-1 px-3 py-1.5 pl-10 text-xs sm:grid-cols-[minmax(7rem,1fr)_minmax(6rem,0.8fr)_4.5rem_2fr] sm:items-start"
            data-testid="schema-column"
            data-column={c.name}
          >
            <span className="min-w-0 font-mono font-medium break-all">{c.name}</span>
            <span className="min-w-0 text-right font-mono text-muted-foreground break-all sm:text-left" title={c.type}>
              {c.type}
              <span className="sm:hidden">{c.nullable ? '' : ' · not null'}</span>
            </span>
            <span className="hidden text-muted-foreground sm:block">{c.nullable ? 'yes' : 'no'}</span>
            <div className="col-span-2 min-w-0 sm:col-span-1">
              <DescriptionEditor
                value={c.description}
                fromDatabase={c.description_source === 'database'}
                what={`${name}.${c.name}`}
                onSave={(text) => describe(c, text)}
              />
            </div>
          </li>
        ))}
      </ul>
      <ShowMore shown={shown} total={table.columns.length} onMore={() => setShown(shown + SCHEMA_PAGE)} what="columns" />
    </div>
  );
}

type TableView = 'columns' | 'sample';

function TableItem({ table, sourceId }: { table: TableOut; sourceId: string }) {
  const [open, setOpen] = useState(false);
  const [view, setView] = useState<TableView>('columns');
  const describe = useDescribeSchema(sourceId);
  const name = tableName(table);
  const ref = { schema: table.schema, name: table.name };
  const rows = rowEstimate(table.row_estimate);
  return (
    <li data-testid="schema-table" data-table={name}>
      <div className="flex items-start gap-2 px-3 py-2">
        <button
          type="button"
          className="flex min-w-0 flex-1 cursor-pointer items-center gap-2 text-left text-sm"
          onClick={() => setOpen(!open)}
          aria-expanded={open}
          aria-label={`${open ? 'Hide' : 'Show'} the columns of ${name}`}
        >
          {open ? <ChevronDown className="size-4 shrink-0 text-muted-foreground" /> : <ChevronRight className="size-4 shrink-0 text-muted-foreground" />}
          <Table2 className="size-4 shrink-0 text-primary" />
          <span className="min-w-0 truncate">
            {table.schema && <span className="text-muted-foreground">{table.schema}.</span>}
            <span className="font-medium">{table.name}</span>
          </span>
          <span className="ml-auto shrink-0 pl-2 text-xs text-muted-foreground tabular-nums">
            <span data-testid="row-estimate" title={table.row_estimate == null ? UNKNOWN_ROWS : undefined}>
              {rows}
            </span>
            {' · '}
            {table.columns.length} {table.columns.length === 1 ? 'column' : 'columns'}
          </span>
        </button>
      </div>
      <div className="-mt-1 px-3 pb-2 pl-[3.25rem]">
        <DescriptionEditor
          value={table.description}
          fromDatabase={table.description_source === 'database'}
          what={name}
          onSave={(description) => describe.mutateAsync({ tables: [{ ...ref, description }] })}
        />
      </div>
      {open && (
        <div className="border-t bg-muted/20">
          <div className="px-3 pt-2 sm:pl-10">
            <Segmented
              label={`What to show of ${name}`}
              className="w-fit grid-cols-2"
              value={view}
              onChange={setView}
              items={[
                { value: 'columns', content: 'Columns' },
                { value: 'sample', content: 'Sample rows' },
              ]}
            />
          </div>
          {view === 'columns' ? (
            <Columns
              table={table}
              describe={(c, description) => describe.mutateAsync({ tables: [{ ...ref, columns: [{ name: c.name, description }] }] })}
            />
          ) : (
            <TableSample sourceId={sourceId} table={table} />
          )}
        </div>
      )}
    </li>
  );
}

function SchemaTables({ schema, source }: { schema: SchemaOut; source: SourceOut }) {
  const [filter, setFilter] = useState('');
  const deferred = useDeferredValue(filter);
  const [shown, setShown] = useState(SCHEMA_PAGE);
  const matching = useMemo(() => filterTables(schema.tables, deferred), [schema.tables, deferred]);
  const total = schema.tables.length;
  return (
    <div className="border-t" data-testid="schema-browser">
      {schema.truncated && (
        <p className="flex items-start gap-2 border-b bg-amber-500/5 px-3 py-2 text-xs text-amber-800 dark:text-amber-300" data-testid="schema-truncated">
          <AlertTriangle className="mt-0.5 size-3.5 shrink-0" />
          {truncatedSentence(total, source.table_count)}
        </p>
      )}
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2 px-3 py-2">
        <div className="relative min-w-0 flex-1 basis-48">
          <Search className="pointer-events-none absolute top-1/2 left-2.5 size-3.5 -translate-y-1/2 text-muted-foreground" />
          <Input
            type="search"
            className="h-8 pl-8 text-xs"
            placeholder="Filter tables and columns"
            aria-label={`Filter the tables of ${source.name}`}
            value={filter}
            onChange={(e) => {
              setFilter(e.target.value);
              setShown(SCHEMA_PAGE);
            }}
          />
        </div>
        <span className="shrink-0 text-xs text-muted-foreground tabular-nums" data-testid="schema-count">
          {deferred.trim() ? `${formatNumber(matching.length)} of ${formatNumber(total)} tables` : `${formatNumber(total)} ${total === 1 ? 'table' : 'tables'}`}
        </span>
      </div>
      {matching.length === 0 ? (
        <p className="border-t px-3 py-3 text-sm text-muted-foreground">No table or column matches “{deferred.trim()}”.</p>
      ) : (
        <ul className="divide-y border-t" aria-label={`Tables of ${source.name}`}>
          {matching.slice(0, shown).map((t) => (
            <TableItem key={tableName(t)} table={t} sourceId={source.id} />
          ))}
        </ul>
      )}
      <ShowMore shown={Math.min(shown, matching.length)} total={matching.length} onMore={() => setShown(shown + SCHEMA_PAGE)} what="tables" />
    </div>
  );
}

/** A source's tables and columns, with row estimates and the team's descriptions (editable). */
export function SchemaBrowser({ source }: { source: SourceOut }) {
  const schema = useQuery(schemaQuery(source.id));
  if (schema.isLoading)
    return (
      <p className="flex items-center gap-2 border-t p-3 text-sm text-muted-foreground">
        <Loader2 className="size-4 animate-spin" /> Loading the tables…
      </p>
    );
  if (schema.error) return <p className="border-t p-3 text-sm text-destructive">Could not read the tables: {schema.error.message}</p>;
  if (!schema.data) return null;
  if (schema.data.tables.length === 0)
    return (
      <p className="border-t p-3 text-sm text-muted-foreground" data-testid="schema-empty">
        {source.status === 'ready' ? 'The database has no tables.' : 'No tables listed yet: once a check reaches the database, its tables show here.'}
      </p>
    );
  return <SchemaTables schema={schema.data} source={source} />;
}
