import { useQuery } from '@tanstack/react-query';
import { BarChart3, Download, FileText, ImageIcon, Loader2, Table2 } from 'lucide-react';
import { useState } from 'react';
import { DataTable, type TableColumn } from '@/components/data-table';
import { PlotlyChart } from '@/components/plotly-chart';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogTitle } from '@/components/ui/dialog';
import { downloadUrl } from '@/lib/api';
import type { PlotlyFigure } from '@/lib/plotly-figure';
import { formatBytes } from '@/lib/utils';
import type { StreamArtifact } from './events';
import { artifactBlobUrlQuery, artifactJsonQuery } from './queries';

type TableData = { columns: (string | TableColumn)[]; rows: unknown[][]; row_count?: number };

function Loading() {
  return (
    <div className="flex h-24 items-center justify-center text-sm text-muted-foreground">
      <Loader2 className="mr-2 size-4 animate-spin" /> Loading…
    </div>
  );
}

function Failed({ message }: { message: string }) {
  return <p className="p-3 text-sm text-destructive">Could not load this artifact: {message}</p>;
}

function PlotlyArtifact({ a }: { a: StreamArtifact }) {
  const q = useQuery(artifactJsonQuery<PlotlyFigure>(a.url));
  if (q.isLoading) return <Loading />;
  if (q.error) return <Failed message={q.error.message} />;
  return q.data ? <PlotlyChart figure={q.data} /> : null;
}

function ImageArtifact({ a }: { a: StreamArtifact }) {
  const q = useQuery(artifactBlobUrlQuery(a.url));
  const [open, setOpen] = useState(false);
  if (q.isLoading) return <Loading />;
  if (q.error) return <Failed message={q.error.message} />;
  return (
    <>
      <button type="button" className="block w-full cursor-zoom-in p-2" onClick={() => setOpen(true)} aria-label={`Enlarge ${a.name}`}>
        <img src={q.data} alt={a.name} className="mx-auto max-h-96 rounded" />
      </button>
      <Dialog open={open} onOpenChange={setOpen}>
        <DialogContent className="max-w-[min(95vw,1400px)]" aria-describedby={undefined}>
          <DialogTitle>{a.name}</DialogTitle>
          <img src={q.data} alt={a.name} className="max-h-[80vh] w-full object-contain" />
        </DialogContent>
      </Dialog>
    </>
  );
}

function TableArtifact({ a }: { a: StreamArtifact }) {
  const q = useQuery(artifactJsonQuery<TableData>(a.url));
  if (q.isLoading) return <Loading />;
  if (q.error) return <Failed message={q.error.message} />;
  if (!q.data) return null;
  const columns = q.data.columns.map((c) => (typeof c === 'string' ? { name: c } : c));
  return <DataTable columns={columns} rows={q.data.rows} rowCount={q.data.row_count} className="rounded-none border-0" />;
}

const ICONS = { plotly: BarChart3, image: ImageIcon, table: Table2, file: FileText } as const;

export function ArtifactView({ artifact: a }: { artifact: StreamArtifact }) {
  const Icon = ICONS[a.kind as keyof typeof ICONS] ?? FileText;
  return (
    <figure className="overflow-hidden rounded-xl border bg-card" data-testid={`artifact-${a.kind}`}>
      <figcaption className="flex items-center gap-2 border-b bg-muted/40 px-3 py-1.5 text-xs text-muted-foreground">
        <Icon className="size-3.5" />
        <span className="min-w-0 flex-1 truncate font-medium text-foreground">{a.name}</span>
        <span>{formatBytes(a.size)}</span>
        <Button variant="ghost" size="icon-sm" aria-label={`Download ${a.name}`} onClick={() => void downloadUrl(a.url, a.name)}>
          <Download />
        </Button>
      </figcaption>
      {a.kind === 'plotly' && <PlotlyArtifact a={a} />}
      {a.kind === 'image' && <ImageArtifact a={a} />}
      {a.kind === 'table' && <TableArtifact a={a} />}
      {a.kind !== 'plotly' && a.kind !== 'image' && a.kind !== 'table' && (
        <div className="flex items-center justify-between gap-2 p-3 text-sm">
          <span className="text-muted-foreground">{a.mime}</span>
          <Button variant="outline" size="sm" onClick={() => void downloadUrl(a.url, a.name)}>
            <Download /> Download
          </Button>
        </div>
      )}
    </figure>
  );
}
