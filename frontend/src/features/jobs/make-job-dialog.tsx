import { AlertCircle, Loader2, Repeat } from 'lucide-react';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import type { SessionOut } from '@/client';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label } from '@/components/ui/input';
import { can, useProjectRole } from '@/features/projects/role';
import { RunPicker, useRunChoice } from '@/features/sessions/run-picker';
import { cn } from '@/lib/utils';
import { useCreateJob } from './mutations';

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The job could not be made.');

/**
 * "Make this a job", in the session's header (editors): a dialog with the job's name and the
 * questions it takes (those answered, to start with); Create makes the job and opens its page,
 * where its checks show as they are written. Two clicks for the usual case.
 */
export function MakeJobButton({ session, className }: { session: SessionOut; className?: string }) {
  const role = useProjectRole();
  const [open, setOpen] = useState(false);
  if (!role || !can(role, 'editor')) return null;
  return (
    <>
      <Button
        variant="outline"
        size="sm"
        className={cn('shrink-0 max-sm:size-8 max-sm:px-0', className)}
        onClick={() => setOpen(true)}
        title="Make this session's answers a job that runs again without the model"
        aria-label="Make this a job"
        data-testid="make-job"
      >
        <Repeat /> <span className="hidden sm:inline">Make this a job</span>
      </Button>
      <Dialog open={open} onOpenChange={setOpen}>
        {open && <MakeJob session={session} onDone={() => setOpen(false)} />}
      </Dialog>
    </>
  );
}

function MakeJob({ session, onDone }: { session: SessionOut; onDone: () => void }) {
  const choice = useRunChoice(session.id);
  const [name, setName] = useState(session.title || 'Untitled job');
  const create = useCreateJob(session.project_id);
  const navigate = useNavigate();
  const answered = choice.runs.filter((r) => r.status === 'succeeded');
  const everyAnswered = answered.length > 0 && choice.chosenIds.length === answered.length && answered.every((r) => choice.chosen.has(r.id));
  const submit = () =>
    create.mutate(
      { session_id: session.id, name: name.trim(), ...(everyAnswered ? {} : { run_ids: choice.chosenIds }) },
      {
        onSuccess: (job) => {
          onDone();
          void navigate(`/projects/${session.project_id}/jobs/${job.id}`);
        },
      },
    );
  return (
    <DialogContent className="max-w-lg" data-testid="make-job-dialog">
      <div className="space-y-1 pr-6">
        <DialogTitle>Make this a job</DialogTitle>
        <DialogDescription>
          The code that answered these questions becomes a script that runs again with no model, on demand or on a schedule. Data checks are written
          for it once it is made.
        </DialogDescription>
      </div>
      <form
        className="min-w-0 space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <div className="space-y-1.5">
          <Label htmlFor="job-name">Name</Label>
          <Input id="job-name" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} autoFocus />
        </div>
        <RunPicker choice={choice} empty="No questions yet: ask some first, then make them a job." testId="job-runs" />
        {create.isError && (
          <p role="alert" className="flex gap-2 text-sm text-destructive" data-testid="make-job-error">
            <AlertCircle className="mt-0.5 size-4 shrink-0" />
            <span>{failure(create.error)}</span>
          </p>
        )}
        <DialogFooter className="flex-wrap items-center">
          <span className="mr-auto text-xs text-muted-foreground">
            {choice.chosen.size} of {choice.runs.length} question{choice.runs.length === 1 ? '' : 's'}
          </span>
          <Button type="button" variant="outline" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" disabled={create.isPending || !name.trim() || choice.chosen.size === 0}>
            {create.isPending && <Loader2 className="animate-spin" />}
            {create.isPending ? 'Making the job…' : 'Create job'}
          </Button>
        </DialogFooter>
      </form>
    </DialogContent>
  );
}
