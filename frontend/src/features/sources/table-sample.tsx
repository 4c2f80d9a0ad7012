import { useQuery } from '@tanstack/react-query';
import { Loader2, RefreshCw } from 'lucide-react';
import type { TableOut } from '@/client';
import { DataTable } from '@/components/data-table';
import { Button } from '@/components/ui/button';
import { SAMPLE_ROWS, sampleQuery } from './queries';

/** A table's first rows, as the database gives them now (read-only, capped by the server). */
export function TableSample({ sourceId, table }: { sourceId: string; table: TableOut }) {
  const sample = useQuery(sampleQuery(sourceId, table.schema, table.name));
  if (sample.isLoading)
    return (
      <p className="flex items-center gap-2 px-3 py-3 pl-10 text-xs text-muted-foreground">
        <Loader2 className="size-3.5 animate-spin" /> Reading the first rows…
      </p>
    );
  if (sample.error)
    return (
      <p role="alert" className="px-3 py-3 pl-10 text-xs break-words text-destructive" data-testid="sample-error">
        Could not read the rows: {sample.error.message}
      </p>
    );
  if (!sample.data) return null;
  const { columns, rows } = sample.data;
  // The database's own type names, as the schema lists them (the rows' own where it does not).
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  return (
    <div className="grid gap-2 px-3 py-2 sm:pl-10" data-testid="table-sample">
      <div className="flex items-center gap-2 text-xs text-muted-foreground">
        <span data-testid="sample-count">
          {rows.length === 0 ? 'The table has no rows.' : rows.length < SAMPLE_ROWS ? `All ${rows.length} rows` : `The first ${rows.length} rows`}
        </span>
        <Button
          variant="ghost"
          size="sm"
          className="ml-auto h-7 px-2 text-xs"
          onClick={() => sample.refetch()}
          disabled={sample.isFetching}
          aria-label="Read the rows again"
        >
          <RefreshCw className={sample.isFetching ? 'animate-spin' : undefined} /> Refresh
        </Button>
      </div>
      {rows.length > 0 && <DataTable columns={columns.map((c) => ({ name: c.name, dtype: types.get(c.name) ?? c.type }))} rows={rows} pageSize={SAMPLE_ROWS} />}
    </div>
  );
}
