import { AlertCircle, FileChartColumn, FileText, Link2, ListChecks, Loader2, MoreHorizontal, NotebookText } from 'lucide-react';
import { useRef, useState } from 'react';
import { toast } from 'sonner';
import type { SessionOut } from '@/client';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { useBlocked } from '@/features/projects/role';
import { ShareDialog } from '@/features/shares/share-dialog';
import { cn } from '@/lib/utils';
import { EXPORT_FORMATS, type ExportFormat, useExportSession } from './export';
import { ExportDialog } from './export-dialog';

const ICONS: Record<ExportFormat, typeof NotebookText> = { ipynb: NotebookText, html: FileChartColumn, md: FileText };

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The export failed.');

/**
 * The session's actions, in its header: export as a notebook, a report (the questions answered) or
 * Markdown at once, or choose the questions that go in (a dialog); share it as a read-only link
 * (editors and owners). The menu stays
 * open while a file is made, so the item can say so and a failure can say why; a download that
 * fails after the menu was closed is reported in a toast instead. A session with a run in progress
 * exports what it has recorded so far.
 */
export function SessionMenu({ session, className }: { session: SessionOut; className?: string }) {
  const [open, setOpen] = useState(false);
  const [choosing, setChoosing] = useState(false);
  const [sharing, setSharing] = useState(false);
  const shareBlocked = useBlocked('editor', 'share sessions');
  const openRef = useRef(false);
  const exporting = useExportSession();
  const pending = exporting.isPending ? exporting.variables.format : null;

  const onOpenChange = (next: boolean) => {
    openRef.current = next;
    setOpen(next);
    // A past failure is not news the next time the menu opens.
    if (!next && !exporting.isPending) exporting.reset();
  };

  const start = (format: ExportFormat) =>
    exporting.mutate(
      { sessionId: session.id, title: session.title, format },
      {
        onSuccess: () => onOpenChange(false),
        onError: (e) => {
          if (!openRef.current) toast.error(`Export failed: ${failure(e)}`);
        },
      },
    );

  return (
    <>
      <DropdownMenu open={open} onOpenChange={onOpenChange}>
        <DropdownMenuTrigger asChild>
          <Button variant="ghost" size="icon-sm" className={cn('data-[state=open]:bg-muted', className)} aria-label="Session actions" title="Session actions">
            <MoreHorizontal />
          </Button>
        </DropdownMenuTrigger>
        <DropdownMenuContent className="w-72" data-testid="session-menu">
          {EXPORT_FORMATS.map(({ format, label }) => {
            const Icon = pending === format ? Loader2 : ICONS[format];
            return (
              <DropdownMenuItem
                key={format}
                disabled={pending !== null}
                aria-busy={pending === format || undefined}
                className={cn(pending === format && 'data-[disabled]:opacity-100')}
                onSelect={(e) => {
                  e.preventDefault(); // stay open: the item shows the progress, the menu any failure
                  start(format);
                }}
              >
                <Icon className={cn('text-muted-foreground', pending === format && 'animate-spin')} />
                {pending === format ? <span className="text-muted-foreground">Exporting…</span> : label}
              </DropdownMenuItem>
            );
          })}
          <DropdownMenuSeparator />
          <DropdownMenuItem disabled={pending !== null} onSelect={() => setChoosing(true)}>
            <ListChecks className="text-muted-foreground" />
            Choose questions to export…
          </DropdownMenuItem>
          <DropdownMenuSeparator />
          <DropdownMenuItem disabled={!!shareBlocked || pending !== null} title={shareBlocked ?? undefined} onSelect={() => setSharing(true)}>
            <Link2 className="text-muted-foreground" />
            Share…
          </DropdownMenuItem>
          {shareBlocked && (
            <p className="px-2 pb-1.5 text-xs text-muted-foreground" data-testid="share-blocked">
              {shareBlocked}
            </p>
          )}
          {exporting.isError && (
            <>
              <DropdownMenuSeparator />
              <p role="alert" className="flex gap-2 px-2 py-1.5 text-xs text-destructive" data-testid="export-error">
                <AlertCircle className="mt-px size-3.5 shrink-0" />
                <span>Export failed: {failure(exporting.error)}</span>
              </p>
            </>
          )}
        </DropdownMenuContent>
      </DropdownMenu>
      <ExportDialog session={session} open={choosing} onOpenChange={setChoosing} />
      <ShareDialog session={session} open={sharing} onOpenChange={setSharing} />
    </>
  );
}
