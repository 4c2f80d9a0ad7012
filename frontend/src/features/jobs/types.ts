import type { Alert, JobCheckOut, JobDeliveryOut, JobOut, JobRunOut, ScheduleIn } from '@/client';

/** A job, its runs and alerts as the API gives them (API.md, "Jobs, schedules and alerts"), from the generated client. */
export type JobCheck = JobCheckOut;
export type JobDelivery = JobDeliveryOut;
export type Schedule = ScheduleIn;
export type JobAlert = Alert;
export type AlertWhen = Alert['when'];
export type AlertDelivery = Alert['deliver'][number];

/**
 * A repair of a job's code after a failed run (issue 45, point 3). The backend adds it beside
 * the generated types (`job.pending_repair`, `job_run.repair`), so it is typed here; both fields
 * may be absent, and then nothing about repairs shows.
 */
export type Repair = {
  id: string;
  status: 'proposed' | 'approved' | 'rejected' | 'applied' | 'failed';
  reason: string;
  diff: string;
  checks: { name: string; passed: boolean; message: string }[];
  proposed_at: string;
  decided_by_name: string | null;
  decided_at: string | null;
};

export type Job = JobOut & { pending_repair?: Repair | null };
export type JobRun = JobRunOut & { repair?: Repair | null };
export type JobRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'skipped';

/** Whether a run is still going (its history is asked again until it ends). */
export const isGoing = (status: string) => status === 'queued' || status === 'running';
