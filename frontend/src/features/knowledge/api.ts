import { createItem, deleteItem, listItems, updateItem, verifyRun as verify, type KnowledgeCreate, type KnowledgeUpdate } from '@/client';
import type { KnowledgeKind, KnowledgeStatus } from './types';

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

/** Saves a succeeded run as an approved `example` item (its question and code). */
export async function verifyRun(runId: string) {
  return (await verify({ path: { run_id: runId } })).data!;
}
