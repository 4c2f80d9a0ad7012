import { Loader2, Play } from 'lucide-react';
import { useId, useState } from 'react';
import { toast } from 'sonner';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label } from '@/components/ui/input';
import { useRunJob } from './mutations';
import type { Job } from './types';

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The run could not start.');

type Param = Job['params'][number];

/** A parameter's typed value back in the type of its default ("12" → 12 for a number default). */
export function paramValue(param: Param, text: string): unknown {
  if (typeof param.default === 'number') {
    const n = Number(text);
    return text.trim() !== '' && Number.isFinite(n) ? n : text;
  }
  if (typeof param.default === 'boolean') return text === 'true';
  return text;
}

/**
 * Run now: at once for a job with no parameters; otherwise a dialog with each parameter, its
 * default filled in, so the usual case is still one more click.
 */
export function RunNow({ job }: { job: Job }) {
  const run = useRunJob(job);
  const [open, setOpen] = useState(false);
  const start = (params?: Record<string, unknown>) =>
    run.mutate(params, {
      onSuccess: () => {
        setOpen(false);
        toast.success('The run started: it shows in the history.');
      },
      onError: (e) => {
        if (!params) toast.error(failure(e));
      },
    });
  return (
    <>
      <Button size="sm" onClick={() => (job.params.length ? setOpen(true) : start())} disabled={run.isPending} data-testid="run-now">
        {run.isPending ? <Loader2 className="animate-spin" /> : <Play />} Run now
      </Button>
      <Dialog
        open={open}
        onOpenChange={(o) => {
          setOpen(o);
          if (!o) run.reset();
        }}
      >
        {open && <ParamsForm job={job} pending={run.isPending} error={run.isError ? failure(run.error) : null} onRun={start} onCancel={() => setOpen(false)} />}
      </Dialog>
    </>
  );
}

function ParamsForm({ job, pending, error, onRun, onCancel }: { job: Job; pending: boolean; error: string | null; onRun: (p: Record<string, unknown>) => void; onCancel: () => void }) {
  const id = useId();
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(job.params.map((p) => [p.name, p.default == null ? '' : String(p.default)])));
  return (
    <DialogContent className="max-w-md" data-testid="run-params">
      <div className="space-y-1 pr-6">
        <DialogTitle>Run {job.name}</DialogTitle>
        <DialogDescription>With its parameters as below (their defaults to start with).</DialogDescription>
      </div>
      <form
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          onRun(Object.fromEntries(job.params.map((p) => [p.name, paramValue(p, values[p.name] ?? '')])));
        }}
      >
        {job.params.map((p) => (
          <div key={p.name} className="space-y-1">
            <Label htmlFor={`${id}-${p.name}`} className="font-mono text-xs">
              {p.name} <span className="font-sans font-normal text-muted-foreground">({p.kind === 'file' ? 'a project file' : p.kind === 'query' ? 'a query' : 'a value'})</span>
            </Label>
            <Input id={`${id}-${p.name}`} value={values[p.name] ?? ''} onChange={(e) => setValues((v) => ({ ...v, [p.name]: e.target.value }))} />
          </div>
        ))}
        <FormError>{error}</FormError>
        <DialogFooter>
          <Button type="button" variant="outline" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" disabled={pending}>
            {pending ? <Loader2 className="animate-spin" /> : <Play />} Run
          </Button>
        </DialogFooter>
      </form>
    </DialogContent>
  );
}
