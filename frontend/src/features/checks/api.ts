import {
  createCheck as create,
  deleteCheck as remove,
  getCheckRun as getRun,
  listCheckRuns as listRuns,
  listChecks as list,
  startCheckRun as start,
  updateCheck as update,
  type ProjectCheckCreate,
} from '@/client';

// The calls of the checks API (API.md, "Project knowledge and checks"), in one place.

export type CheckDraft = ProjectCheckCreate;

export async function listChecks(projectId: string) {
  return (await list({ path: { project_id: projectId }, query: { limit: 500 } })).data!;
}

export async function createCheck(projectId: string, body: CheckDraft) {
  return (await create({ path: { project_id: projectId }, body })).data!;
}

export async function updateCheck(checkId: string, body: CheckDraft) {
  return (await update({ path: { check_id: checkId }, body })).data!;
}

export async function deleteCheck(checkId: string): Promise<void> {
  await remove({ path: { check_id: checkId } });
}

export async function startCheckRun(projectId: string, body: { model?: string | null }) {
  return (await start({ path: { project_id: projectId }, body: body.model ? { model: body.model } : {} })).data!;
}

/** The history: the newest runs first. */
export async function listCheckRuns(projectId: string) {
  return (await listRuns({ path: { project_id: projectId }, query: { limit: 50 } })).data!;
}

export async function getCheckRun(id: string) {
  return (await getRun({ path: { check_run_id: id } })).data!;
}
