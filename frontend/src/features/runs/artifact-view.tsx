import { useQuery } from '@tanstack/react-query';
import { BarChart3, Download, FileText, ImageIcon, Loader2, Table2 } from 'lucide-react';
import { useRef, useState, type RefObject } from 'react';
import { toast } from 'sonner';
import { DataTable, type TableColumn } from '@/components/data-table';
import { chartImage, PlotlyChart } from '@/components/plotly-chart';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogTitle } from '@/components/ui/dialog';
import { downloadAttachment, downloadUrl, saveBlob } from '@/lib/api';
import { useObjectUrl } from '@/lib/object-url';
import type { PlotlyFigure } from '@/lib/plotly-figure';
import { cn, formatBytes } from '@/lib/utils';
import { FilePreviewArtifact, isTabularFile } from './artifact-view-file';
import { artifactTitle } from './artifacts';
import type { StreamArtifact } from './events';
import { artifactBlobQuery, artifactJsonQuery } from './queries';

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

function PlotlyArtifact({ a, plotRef }: { a: StreamArtifact; plotRef: RefObject<HTMLDivElement | null> }) {
  const q = useQuery(artifactJsonQuery<PlotlyFigure>(a.url));
  if (q.isLoading) return <Loading />;
  if (q.error) return <Failed message={q.error.message} />;
  return q.data ? <PlotlyChart figure={q.data} plotRef={plotRef} /> : null;
}

function ImageArtifact({ a }: { a: StreamArtifact }) {
  const q = useQuery(artifactBlobQuery(a.url));
  const src = useObjectUrl(q.data);
  const [open, setOpen] = useState(false);
  if (q.error) return <Failed message={q.error.message} />;
  if (!src) return <Loading />;
  return (
    <>
      <button type="button" className="block w-full cursor-zoom-in p-2" onClick={() => setOpen(true)} aria-label={`Enlarge ${a.name}`}>
        <img src={src} alt={a.name} className="mx-auto max-h-96 rounded" />
      </button>
      <Dialog open={open} onOpenChange={setOpen}>
        <DialogContent className="max-w-[min(95vw,1400px)]" aria-describedby={undefined}>
          <DialogTitle>{artifactTitle(a)}</DialogTitle>
          <img src={src} alt={a.name} className="max-h-[80vh] w-full object-contain" />
        </DialogContent>
      </Dialog>
    </>
  );
}

const ISO_MOMENT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A cell of a table saved before tables wrote their dates as dates: `2023-04-01T00:00:00.000` reads
 * `2023-04-01`, a time of day is kept without its zeros (`2023-04-01 13:05`). Other cells as they are.
 */
export function plainMoment(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = ISO_MOMENT.exec(value);
  if (!m) return value;
  const [, day, hm, rest = '', zone = ''] = m;
  const [sec = '', fraction = ''] = rest.split('.');
  const digits = fraction.replace(/0+$/, '');
  const seconds = (sec && sec !== ':00') || digits ? `${sec}${digits ? `.${digits}` : ''}` : '';
  if (hm === '00:00' && !seconds && (!zone || zone === 'Z')) return day;
  return `${day} ${hm}${seconds}${zone === 'Z' ? ' UTC' : zone ? ` ${zone}` : ''}`;
}

function TableArtifact({ a }: { a: StreamArtifact }) {
  const q = useQuery(artifactJsonQuery<TableData>(a.url));
  if (q.isLoading) return <Loading />;
  if (q.error) return <Failed message={q.error.message} />;
  if (!q.data) return null;
  const columns = q.data.columns.map((c) => (typeof c === 'string' ? { name: c } : c));
  return <DataTable columns={columns} rows={q.data.rows.map((r) => r.map(plainMoment))} rowCount={q.data.row_count} className="rounded-none border-0" />;
}

const ICONS = { plotly: BarChart3, image: ImageIcon, table: Table2, file: FileText } as const;

/** A small labelled download button in a card's caption ("PNG", "CSV", …). */
function DownloadButton({ label, title, onClick }: { label: string; title: string; onClick: () => Promise<unknown> }) {
  const [busy, setBusy] = useState(false);
  return (
    <Button
      variant="ghost"
      size="sm"
      className="h-7 gap-1 px-2"
      title={title}
      aria-label={title}
      disabled={busy}
      onClick={() => {
        setBusy(true);
        onClick()
          .catch((e: unknown) => toast.error(e instanceof Error ? e.message : 'The download failed.'))
          .finally(() => setBusy(false));
      }}
    >
      {busy ? <Loader2 className="animate-spin" /> : <Download />}
      {label}
    </Button>
  );
}

/**
 * One artifact as a card. A chart downloads as PNG or SVG (drawn from the chart on screen) or as
 * its figure JSON; a table as the CSV written with it (`csv`) or as an Excel workbook.
 */
export function ArtifactView({ artifact: a, csv = null, className }: { artifact: StreamArtifact; csv?: StreamArtifact | null; className?: string }) {
  const Icon = ICONS[a.kind as keyof typeof ICONS] ?? FileText;
  const title = artifactTitle(a);
  const plotRef = useRef<HTMLDivElement | null>(null);
  const image = async (format: 'png' | 'svg') => {
    if (!plotRef.current) throw new Error('The chart has not been drawn yet.');
    saveBlob(await chartImage(plotRef.current, format), `${title}.${format}`);
  };
  return (
    <figure className={cn('overflow-hidden rounded-xl border bg-card', className)} data-testid={`artifact-${a.kind}`} data-name={a.name}>
      <figcaption className="flex flex-wrap items-center gap-x-2 gap-y-0.5 border-b bg-muted/40 px-3 py-1 text-xs text-muted-foreground">
        <Icon className="size-3.5 shrink-0" />
        <span className="min-w-0 flex-1 basis-32 truncate font-medium text-foreground" title={a.name} data-testid="artifact-title">
          {title}
        </span>
        {a.kind === 'plotly' ? (
          <span className="flex items-center" role="group" aria-label={`Download ${title}`}>
            <DownloadButton label="PNG" title={`Download ${title} as PNG`} onClick={() => image('png')} />
            <DownloadButton label="SVG" title={`Download ${title} as SVG`} onClick={() => image('svg')} />
            <DownloadButton label="JSON" title={`Download ${title} as JSON`} onClick={() => downloadUrl(a.url, a.name)} />
          </span>
        ) : a.kind === 'table' ? (
          <span className="flex items-center" role="group" aria-label={`Download ${title}`}>
            {csv && <DownloadButton label="CSV" title={`Download ${title} as CSV`} onClick={() => downloadUrl(csv.url, csv.name)} />}
            <DownloadButton
              label="Excel"
              title={`Download ${title} as Excel`}
              onClick={() => downloadAttachment(`/api/v1/artifacts/${a.id}/content?format=xlsx`, `${title}.xlsx`)}
            />
          </span>
        ) : (
          <>
            <span>{formatBytes(a.size)}</span>
            <DownloadButton label="Download" title={`Download ${a.name}`} onClick={() => downloadUrl(a.url, a.name)} />
          </>
        )}
      </figcaption>
      {a.kind === 'plotly' && <PlotlyArtifact a={a} plotRef={plotRef} />}
      {a.kind === 'image' && <ImageArtifact a={a} />}
      {a.kind === 'table' && <TableArtifact a={a} />}
      {isTabularFile(a) && <FilePreviewArtifact a={a} />}
    </figure>
  );
}
