import { useQuery } from '@tanstack/react-query';
import { CirclePause } from 'lucide-react';
import { Link } from 'react-router';
import { LoadState } from '@/components/notice';
import { Badge } from '@/components/ui/badge';
import { jobsQuery } from './queries';
import { scheduleInWords } from './schedule-words';
import { RunStatusBadge, When } from './status';
import type { Job } from './types';

/**
 * A project's jobs: each with its schedule in words, its next run (relative, the date on hover),
 * its last run's status and time, and a mark when it is paused.
 */
export function JobsList({ projectId }: { projectId: string }) {
  const jobs = useQuery(jobsQuery(projectId));
  if (!jobs.data) return <LoadState query={jobs} loading="Loading the jobs…" />;
  if (!jobs.data.length)
    return (
      <p className="text-sm text-muted-foreground" data-testid="jobs-empty">
        No jobs yet. Open a session and choose <span className="font-medium text-foreground">Make this a job</span> to run its answers again without the
        model.
      </p>
    );
  return (
    <ul className="divide-y rounded-lg border" data-testid="jobs-list">
      {jobs.data.map((job) => (
        <JobRow key={job.id} projectId={projectId} job={job} />
      ))}
    </ul>
  );
}

function JobRow({ projectId, job }: { projectId: string; job: Job }) {
  return (
    <li data-testid="job-row" data-job={job.id}>
      <Link to={`/projects/${projectId}/jobs/${job.id}`} className="flex flex-wrap items-center gap-x-4 gap-y-1 px-4 py-3 hover:bg-muted/50">
        <div className="min-w-0 flex-1 basis-56">
          <p className="flex items-center gap-2 font-medium break-words">
            {job.name}
            {job.paused && (
              <Badge variant="warning" data-testid="job-paused">
                <CirclePause /> Paused
              </Badge>
            )}
          </p>
          <p className="text-sm text-muted-foreground" data-testid="job-schedule">
            {scheduleInWords(job.schedule)}
          </p>
        </div>
        <dl className="grid shrink-0 grid-cols-[auto_auto] gap-x-3 gap-y-0.5 text-xs">
          <dt className="text-muted-foreground">Next run</dt>
          <dd data-testid="job-next-run">{job.next_run_at && !job.paused ? <When iso={job.next_run_at} /> : '—'}</dd>
          <dt className="text-muted-foreground">Last run</dt>
          <dd className="flex items-center gap-1.5" data-testid="job-last-run">
            {job.last_run ? (
              <>
                <RunStatusBadge status={job.last_run.status} />
                {job.last_run.finished_at && <When iso={job.last_run.finished_at} className="text-muted-foreground" />}
              </>
            ) : (
              <span className="text-muted-foreground">never</span>
            )}
          </dd>
        </dl>
      </Link>
    </li>
  );
}
