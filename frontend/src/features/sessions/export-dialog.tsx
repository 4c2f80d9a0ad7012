import { AlertCircle, Loader2 } from 'lucide-react';
import { useState } from 'react';
import type { SessionOut } from '@/client';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Segmented } from '@/components/ui/segmented';
import { EXPORT_FORMATS, type ExportFormat, useExportSession } from './export';
import { RunPicker, useRunChoice } from './run-picker';

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The export failed.');

/**
 * Export with a choice: the format, and which of the session's questions go in (those answered, to
 * start with: a report is made to send). The file downloads under the name the server gives.
 */
export function ExportDialog({ session, open, onOpenChange }: { session: SessionOut; open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      {open && <ExportChoice session={session} onDone={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function ExportChoice({ session, onDone }: { session: SessionOut; onDone: () => void }) {
  const choice = useRunChoice(session.id);
  const { history, runs, chosen } = choice;
  const [format, setFormat] = useState<ExportFormat>('html');
  const exporting = useExportSession();

  const start = () =>
    exporting.mutate(
      // A session with no questions yet exports its setup: no runs to name.
      { sessionId: session.id, title: session.title, format, runs: runs.length ? choice.chosenIds : undefined },
      { onSuccess: onDone },
    );
  const extension = EXPORT_FORMATS.find((f) => f.format === format)!.extension;
  return (
    <DialogContent className="max-w-lg" data-testid="export-dialog">
      <div className="space-y-1 pr-6">
        <DialogTitle>Export questions</DialogTitle>
        <DialogDescription>Choose the format and the questions that go in. Answered ones are chosen to start with.</DialogDescription>
      </div>
      <Segmented
        label="Format"
        className="grid-cols-3"
        value={format}
        onChange={setFormat}
        items={EXPORT_FORMATS.map((f) => ({
          value: f.format,
          content: (
            <>
              {f.short} <span className="text-xs font-normal text-muted-foreground">{f.extension}</span>
            </>
          ),
        }))}
      />
      <RunPicker choice={choice} empty="No questions yet: the export holds the session's setup only." testId="export-runs" />
      {exporting.isError && (
        <p role="alert" className="flex gap-2 text-sm text-destructive" data-testid="export-error">
          <AlertCircle className="mt-0.5 size-4 shrink-0" />
          <span>Export failed: {failure(exporting.error)}</span>
        </p>
      )}
      <DialogFooter className="flex-wrap items-center">
        <span className="mr-auto text-xs text-muted-foreground">
          {chosen.size} of {runs.length} question{runs.length === 1 ? '' : 's'}
        </span>
        <Button variant="outline" onClick={onDone}>
          Cancel
        </Button>
        <Button onClick={start} disabled={exporting.isPending || history.isPending || (runs.length > 0 && chosen.size === 0)}>
          {exporting.isPending ? <Loader2 className="animate-spin" /> : null}
          {exporting.isPending ? 'Exporting…' : `Export ${extension}`}
        </Button>
      </DialogFooter>
    </DialogContent>
  );
}
