import { client } from '@/lib/api';
import type { CheckRun, ProjectCheck } from './types';

// The calls of the checks API (API.md, "Project knowledge and checks"), in one place.

export type CheckDraft = { question: string; expected: Record<string, string>; format?: string; from_run_id?: string };
type Page<T> = { items: T[]; total?: number };
const auth = [{ scheme: 'bearer' as const, type: 'http' as const }];
const json = { 'Content-Type': 'application/json' };

export async function listChecks(projectId: string): Promise<Page<ProjectCheck>> {
  return (await client.get<{ 200: Page<ProjectCheck> }, unknown, true>({ security: auth, url: '/api/v1/projects/{project_id}/checks', path: { project_id: projectId } }))
    .data;
}

export async function createCheck(projectId: string, body: Partial<CheckDraft>): Promise<ProjectCheck> {
  return (
    await client.post<{ 201: ProjectCheck }, unknown, true>({ security: auth, url: '/api/v1/projects/{project_id}/checks', path: { project_id: projectId }, body, headers: json })
  ).data;
}

export async function updateCheck(checkId: string, body: Partial<CheckDraft>): Promise<ProjectCheck> {
  return (await client.patch<{ 200: ProjectCheck }, unknown, true>({ security: auth, url: '/api/v1/checks/{check_id}', path: { check_id: checkId }, body, headers: json })).data;
}

export async function deleteCheck(checkId: string): Promise<void> {
  await client.delete<{ 204: void }, unknown, true>({ security: auth, url: '/api/v1/checks/{check_id}', path: { check_id: checkId } });
}

export async function startCheckRun(projectId: string, body: { model?: string | null }): Promise<CheckRun> {
  return (
    await client.post<{ 202: CheckRun }, unknown, true>({
      security: auth,
      url: '/api/v1/projects/{project_id}/check-runs',
      path: { project_id: projectId },
      body: body.model ? { model: body.model } : {},
      headers: json,
    })
  ).data;
}

export async function listCheckRuns(projectId: string): Promise<Page<CheckRun>> {
  return (
    await client.get<{ 200: Page<CheckRun> }, unknown, true>({ security: auth, url: '/api/v1/projects/{project_id}/check-runs', path: { project_id: projectId } })
  ).data;
}

export async function getCheckRun(id: string): Promise<CheckRun> {
  return (await client.get<{ 200: CheckRun }, unknown, true>({ security: auth, url: '/api/v1/check-runs/{id}', path: { id } })).data;
}
