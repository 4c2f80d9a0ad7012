import {
  createJob as create,
  decideJobRepair as decide,
  deleteJob as remove,
  getJob as get,
  getJobCode as code,
  getJobRun as getRun,
  listJobRuns as listRuns,
  listJobs as list,
  startJobRun as start,
  updateJob as update,
  type JobUpdate,
} from '@/client';
import { downloadAttachment } from '@/lib/api';
import type { Job, JobRun } from './types';

// The calls of the jobs API (API.md, "Jobs, schedules and alerts"), in one place.

export async function listJobs(projectId: string) {
  return (await list({ path: { project_id: projectId }, query: { limit: 200 } })).data!.items as Job[];
}

export async function createJob(projectId: string, body: { session_id: string; name: string; run_ids?: string[] }) {
  return (await create({ path: { project_id: projectId }, body })).data! as Job;
}

export async function getJob(jobId: string) {
  return (await get({ path: { job_id: jobId } })).data! as Job;
}

export async function updateJob(jobId: string, body: JobUpdate) {
  return (await update({ path: { job_id: jobId }, body })).data! as Job;
}

export async function deleteJob(jobId: string): Promise<void> {
  await remove({ path: { job_id: jobId } });
}

export async function startJobRun(jobId: string, params?: Record<string, unknown>) {
  return (await start({ path: { job_id: jobId }, body: params ? { params } : {} })).data! as JobRun;
}

/** The history: the newest runs first. */
export async function listJobRuns(jobId: string) {
  return (await listRuns({ path: { job_id: jobId }, query: { limit: 50 } })).data!.items as JobRun[];
}

export async function getJobRun(id: string) {
  return (await getRun({ path: { job_run_id: id } })).data! as JobRun;
}

export async function getJobCode(jobId: string) {
  return (await code({ path: { job_id: jobId } })).data!;
}

/** Downloads the job as a standalone script with its tests (a zip) or a notebook. */
export function exportJob(job: Job, format: 'py' | 'ipynb') {
  return downloadAttachment(`/api/v1/jobs/${job.id}/export?format=${format}`, `${job.name}.${format === 'py' ? 'zip' : 'ipynb'}`);
}

/** Approve or reject a repair the agent proposed. 409 `repair_not_pending` (decided already), `repair_stale` (the code changed since). */
export async function decideRepair(jobId: string, repairId: string, decision: 'approve' | 'reject') {
  return (await decide({ path: { job_id: jobId, repair_id: repairId }, body: { decision } })).data!;
}
