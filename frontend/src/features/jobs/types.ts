import type { Alert, JobCheckOut, JobDeliveryOut, JobOut, JobRepairOut, JobRunOut, ScheduleIn } from '@/client';

/** A job, its runs and alerts as the API gives them (API.md, "Jobs, schedules and alerts"), from the generated client. */
export type JobCheck = JobCheckOut;
export type JobDelivery = JobDeliveryOut;
export type Schedule = ScheduleIn;
export type JobAlert = Alert;
export type AlertWhen = Alert['when'];
export type AlertDelivery = Alert['deliver'][number];

/**
 * A repair of a job's code after a failed run (issue 45, point 3), as the generated client
 * types it: the failed run's `repair` and the job's `pending_repair` (only `proposed` there).
 */
export type Repair = JobRepairOut;
/** repairing (the agent is making it) | proposed | approved | rejected | applied | failed. */
export type RepairStatus = 'repairing' | 'proposed' | 'approved' | 'rejected' | 'applied' | 'failed';

export type Job = JobOut;
export type JobRun = JobRunOut;
export type JobRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'skipped';

/** Whether a run is still going (its history is asked again until it ends). */
export const isGoing = (status: string) => status === 'queued' || status === 'running';

/** Whether a run's repair is being made (the history is asked again until it is proposed or ends). */
export const isRepairing = (run: { repair?: { status: string } | null }) => run.repair?.status === 'repairing';
