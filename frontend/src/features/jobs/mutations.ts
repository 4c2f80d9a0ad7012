import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { JobUpdate } from '@/client';
import { createJob, decideRepair, deleteJob, startJobRun, updateJob } from './api';
import { jobKeys } from './queries';
import type { Job } from './types';

export function useCreateJob(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { session_id: string; name: string; run_ids?: string[] }) => createJob(projectId, body),
    meta: { silent: true },
    onSuccess: (job) => {
      qc.setQueryData(jobKeys.job(job.id), job);
      void qc.invalidateQueries({ queryKey: jobKeys.jobs(projectId) });
    },
  });
}

/** PATCH a job; the answer replaces the cached job (and the list is asked again). */
export function useUpdateJob(job: Job) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: JobUpdate) => updateJob(job.id, body),
    meta: { silent: true },
    onSuccess: (next) => {
      qc.setQueryData(jobKeys.job(job.id), next);
      void qc.invalidateQueries({ queryKey: jobKeys.jobs(job.project_id) });
    },
  });
}

export function useDeleteJob(job: Job) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => deleteJob(job.id),
    meta: { silent: true },
    onSuccess: () => {
      qc.removeQueries({ queryKey: jobKeys.job(job.id) });
      void qc.invalidateQueries({ queryKey: jobKeys.jobs(job.project_id) });
    },
  });
}

export function useRunJob(job: Job) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (params?: Record<string, unknown>) => startJobRun(job.id, params),
    meta: { silent: true },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: jobKeys.runs(job.id) });
      void qc.invalidateQueries({ queryKey: jobKeys.job(job.id) });
      void qc.invalidateQueries({ queryKey: jobKeys.jobs(job.project_id) });
    },
  });
}

export function useDecideRepair(job: Job) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ repairId, decision }: { repairId: string; decision: 'approve' | 'reject' }) => decideRepair(job.id, repairId, decision),
    meta: { silent: true },
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: jobKeys.job(job.id) });
      void qc.invalidateQueries({ queryKey: jobKeys.runs(job.id) });
      void qc.invalidateQueries({ queryKey: jobKeys.code(job.id) });
    },
  });
}
