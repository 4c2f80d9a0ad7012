import { createItem, deleteItem, listItems, updateItem, type KnowledgeCreate, type KnowledgeUpdate } from '@/client';
import { client } from '@/lib/api';
import type { KnowledgeItem, KnowledgeKind, KnowledgeStatus } from './types';

// The calls of the knowledge API (API.md, "Project knowledge and checks"), in one place.

export type KnowledgeFilter = { kind?: KnowledgeKind | null; status?: KnowledgeStatus | null; q?: string | null };
export type KnowledgeDraft = KnowledgeCreate;
export type KnowledgeChange = KnowledgeUpdate;

/** The items that match (the first 500, as the panel shows them). */
export async function listKnowledge(projectId: string, f: KnowledgeFilter = {}) {
  const query = { kind: f.kind || undefined, status: f.status || undefined, q: f.q?.trim() || undefined, limit: 500 };
  return (await listItems({ path: { project_id: projectId }, query })).data!;
}

export async function createKnowledge(projectId: string, body: KnowledgeDraft) {
  return (await createItem({ path: { project_id: projectId }, body })).data!;
}

export async function updateKnowledge(itemId: string, body: KnowledgeChange) {
  return (await updateItem({ path: { item_id: itemId }, body })).data!;
}

export async function deleteKnowledge(itemId: string): Promise<void> {
  await deleteItem({ path: { item_id: itemId } });
}

/**
 * Saves a succeeded run as an `example` item (its question and code). POST /runs/{id}/verify is
 * in API.md but not yet in the server's OpenAPI document: called through the client until it is.
 */
export async function verifyRun(runId: string): Promise<KnowledgeItem> {
  const res = await client.post<{ 201: KnowledgeItem }, unknown, true>({
    security: [{ scheme: 'bearer', type: 'http' }],
    url: '/api/v1/runs/{run_id}/verify',
    path: { run_id: runId },
  });
  return res.data;
}
