import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { Loader2 } from 'lucide-react';
import { useState } from 'react';
import { previewArtifact } from '@/client';
import { Tabs } from '@/components/ui/tabs';
import { PreviewTable, type Sort } from '@/features/files/preview-table';
import type { StreamArtifact } from './events';

/** Rows on a page of a file's preview under an answer: a glance, the rest a page away. */
export const FILE_PREVIEW_ROWS = 20;

const TABULAR = /\.(csv|tsv|xlsx|xlsm|xls|parquet|json|jsonl|ndjson)$/i;

/** Whether a file the code wrote reads as a table (the server's preview says so for sure). */
export function isTabularFile(a: Pick<StreamArtifact, 'kind' | 'name'>): boolean {
  return a.kind === 'file' && TABULAR.test(a.name);
}

type Window = { sheet: string | null; page: number; sort: Sort };

/** A page of an artifact's table, read by the server with the datasets' own preview. An artifact never changes. */
export const artifactPreviewQuery = (artifactId: string, w: Window) =>
  queryOptions({
    queryKey: ['artifact', artifactId, 'preview', w.sheet, w.page, w.sort?.column ?? null, w.sort?.order ?? null] as const,
    queryFn: async () =>
      (
        await previewArtifact({
          path: { artifact_id: artifactId },
          query: {
            sheet: w.sheet,
            offset: w.page * FILE_PREVIEW_ROWS,
            limit: FILE_PREVIEW_ROWS,
            sort: w.sort?.column ?? null,
            order: w.sort?.order ?? 'asc',
          },
        })
      ).data!,
    staleTime: Infinity,
    retry: false,
  });

/**
 * A CSV, workbook, Parquet or JSON file the code wrote, previewed like a dataset: its first rows,
 * pages and sorting over the whole table, and a workbook's sheets to switch.
 */
export function FilePreviewArtifact({ a }: { a: StreamArtifact }) {
  const [sheet, setSheet] = useState<string | null>(null);
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState<Sort>(null);
  const q = useQuery({ ...artifactPreviewQuery(a.id, { sheet, page, sort }), placeholderData: keepPreviousData });
  if (q.isLoading)
    return (
      <div className="flex h-16 items-center justify-center text-sm text-muted-foreground">
        <Loader2 className="mr-2 size-4 animate-spin" /> Loading…
      </div>
    );
  if (q.error) return <p className="p-3 text-sm text-muted-foreground">No preview: {q.error.message}</p>;
  if (!q.data) return null;
  const sheets = q.data.sheets ?? [];
  return (
    <div data-testid="file-preview">
      {sheets.length > 1 && (
        <div className="border-b px-2 py-1.5">
          <Tabs
            label={`Sheets of ${a.name}`}
            items={sheets.map((s) => ({ value: s, text: s }))}
            current={sheet ?? q.data.sheet ?? sheets[0]}
            onSelect={(s) => {
              setSheet(s === sheets[0] ? null : s);
              setPage(0);
              setSort(null);
            }}
            className="max-w-full"
          />
        </div>
      )}
      <PreviewTable
        preview={q.data}
        page={page}
        pageRows={FILE_PREVIEW_ROWS}
        sort={sort}
        onPage={setPage}
        onSort={(s) => {
          setSort(s);
          setPage(0);
        }}
        fetching={q.isPlaceholderData}
      />
    </div>
  );
}
