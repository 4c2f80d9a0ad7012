import { useQuery } from '@tanstack/react-query';
import { ChevronLeft, CirclePause, Pause, Play, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { toast } from 'sonner';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { LoadState } from '@/components/notice';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Tabs } from '@/components/ui/tabs';
import { can, useProjectRole } from '@/features/projects/role';
import { JobAlerts } from './job-alerts';
import { JobCode } from './job-code';
import { JobHistory } from './job-history';
import { JobSchedule } from './job-schedule';
import { useDeleteJob, useUpdateJob } from './mutations';
import { jobQuery, jobRunsQuery } from './queries';
import { RepairAutonomy, RepairBanner, RepairOutcome } from './repairs';
import { RunNow } from './run-now';
import { scheduleInWords } from './schedule-words';
import { ChecksState, When } from './status';
import type { Job } from './types';

type Tab = 'history' | 'code' | 'schedule' | 'alerts' | 'repairs';
const TABS: { value: Tab; text: string }[] = [
  { value: 'history', text: 'History' },
  { value: 'code', text: 'Code & tests' },
  { value: 'schedule', text: 'Schedule' },
  { value: 'alerts', text: 'Alerts' },
  { value: 'repairs', text: 'Repairs' },
];

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'That did not work.');

/** A job: its header (Run now, Pause/Resume, Delete for editors), a repair waiting, and its tabs. */
export function JobPage({ projectId, jobId, projectName }: { projectId: string; jobId: string; projectName: string | undefined }) {
  const job = useQuery(jobQuery(jobId));
  const role = useProjectRole();
  const editor = !!role && can(role, 'editor');
  const [tab, setTab] = useState<Tab>('history');
  return (
    <div className="mx-auto max-w-4xl space-y-6 px-4 py-8 md:px-6">
      <Link to={`/projects/${projectId}/jobs`} className="inline-flex items-center gap-1 text-sm text-muted-foreground hover:text-foreground">
        <ChevronLeft className="size-4" /> {projectName ?? '…'} · Jobs
      </Link>
      {!job.data ? (
        <LoadState query={job} loading="Loading the job…" />
      ) : (
        <>
          <JobHeader job={job.data} editor={editor} />
          <RepairBanner job={job.data} editor={editor} />
          <Tabs label="The job's parts" items={TABS} current={tab} onSelect={setTab} className="border-b pb-2" />
          <div role="tabpanel" aria-label={TABS.find((t) => t.value === tab)!.text}>
            {tab === 'history' && <JobHistory job={job.data} />}
            {tab === 'code' && <JobCode job={job.data} />}
            {tab === 'schedule' && <JobSchedule job={job.data} editor={editor} />}
            {tab === 'alerts' && <JobAlerts job={job.data} editor={editor} />}
            {tab === 'repairs' && <JobRepairs job={job.data} editor={editor} />}
          </div>
        </>
      )}
    </div>
  );
}

function JobHeader({ job, editor }: { job: Job; editor: boolean }) {
  const update = useUpdateJob(job);
  const remove = useDeleteJob(job);
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const paused = update.isPending && update.variables.paused !== undefined ? !!update.variables.paused : !!job.paused;
  return (
    <header className="space-y-3">
      <div className="flex flex-wrap items-start gap-x-4 gap-y-3">
        <div className="min-w-0 flex-1 basis-64 space-y-1">
          <h1 className="flex flex-wrap items-center gap-2 text-2xl font-semibold tracking-tight break-words" data-testid="job-title">
            {job.name}
            {job.paused && (
              <Badge variant="warning" data-testid="job-paused">
                <CirclePause /> Paused
              </Badge>
            )}
          </h1>
          <p className="text-sm text-muted-foreground">
            <span data-testid="job-schedule">{scheduleInWords(job.schedule)}</span>
            {job.next_run_at && !job.paused && (
              <>
                {' · next run '}
                <When iso={job.next_run_at} className="text-foreground" />
              </>
            )}
            {job.source_session_id && (
              <>
                {' · '}
                <Link to={`/projects/${job.project_id}/sessions/${job.source_session_id}`} className="underline-offset-4 hover:underline">
                  its session
                </Link>
              </>
            )}
          </p>
        </div>
        {editor && (
          <div className="flex shrink-0 flex-wrap items-center gap-2">
            <RunNow job={job} />
            <Button
              variant="outline"
              size="sm"
              disabled={update.isPending}
              onClick={() => update.mutate({ paused: !paused }, { onError: (e) => toast.error(failure(e)) })}
              data-testid="pause-job"
            >
              {paused ? <Play /> : <Pause />} {paused ? 'Resume' : 'Pause'}
            </Button>
            <Button variant="outline" size="sm" onClick={() => setConfirming(true)} aria-label="Delete the job">
              <Trash2 /> <span className="hidden sm:inline">Delete</span>
            </Button>
          </div>
        )}
      </div>
      <ChecksState checks={job.checks} />
      <ConfirmDialog
        open={confirming}
        onOpenChange={setConfirming}
        title={`Delete ${job.name}?`}
        description="Its history, schedule and alerts go with it. The session it was made from stays."
        pending={remove.isPending}
        onConfirm={() =>
          remove.mutate(undefined, {
            onSuccess: () => void navigate(`/projects/${job.project_id}/jobs`),
            onError: (e) => toast.error(failure(e)),
          })
        }
      />
    </header>
  );
}

/** Whether repairs wait for an editor, and the repairs the job's runs led to. */
function JobRepairs({ job, editor }: { job: Job; editor: boolean }) {
  const runs = useQuery(jobRunsQuery(job.id));
  const repairs = (runs.data ?? []).flatMap((r) => (r.repair ? [r.repair] : []));
  return (
    <div className="space-y-4" data-testid="job-repairs">
      <p className="text-sm text-muted-foreground">
        When a run fails because the data changed shape (a column renamed, a type changed), the agent may repair the code against the new data; the
        job's checks must pass again.
      </p>
      <RepairAutonomy job={job} editor={editor} />
      {repairs.length === 0 ? (
        <p className="text-sm text-muted-foreground">No repairs so far.</p>
      ) : (
        <ul className="space-y-2">
          {repairs.map((r) => (
            <li key={r.id}>
              <RepairOutcome repair={r} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
