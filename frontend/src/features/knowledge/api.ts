import { client } from '@/lib/api';
import type { AppliesTo, KnowledgeItem, KnowledgeKind, KnowledgeStatus } from './types';

// The calls of the knowledge API (API.md, "Project knowledge and checks"), in one place.

export type KnowledgeFilter = { kind?: KnowledgeKind | null; status?: KnowledgeStatus | null; q?: string | null };
export type KnowledgeDraft = { kind: KnowledgeKind; title: string; body: string; applies_to?: AppliesTo | null };
export type KnowledgeChange = { title?: string; body?: string; applies_to?: AppliesTo | null; status?: 'approved' | 'rejected' };
type Page<T> = { items: T[]; total?: number };

const auth = [{ scheme: 'bearer' as const, type: 'http' as const }];

export async function listKnowledge(projectId: string, f: KnowledgeFilter = {}): Promise<Page<KnowledgeItem>> {
  const query = Object.fromEntries(Object.entries({ kind: f.kind, status: f.status, q: f.q?.trim() }).filter(([, v]) => v));
  const res = await client.get<{ 200: Page<KnowledgeItem> }, unknown, true>({
    security: auth,
    url: '/api/v1/projects/{project_id}/knowledge',
    path: { project_id: projectId },
    query,
  });
  return res.data;
}

export async function createKnowledge(projectId: string, body: KnowledgeDraft): Promise<KnowledgeItem> {
  const res = await client.post<{ 201: KnowledgeItem }, unknown, true>({
    security: auth,
    url: '/api/v1/projects/{project_id}/knowledge',
    path: { project_id: projectId },
    body,
    headers: { 'Content-Type': 'application/json' },
  });
  return res.data;
}

export async function updateKnowledge(itemId: string, body: KnowledgeChange): Promise<KnowledgeItem> {
  const res = await client.patch<{ 200: KnowledgeItem }, unknown, true>({
    security: auth,
    url: '/api/v1/knowledge/{item_id}',
    path: { item_id: itemId },
    body,
    headers: { 'Content-Type': 'application/json' },
  });
  return res.data;
}

export async function deleteKnowledge(itemId: string): Promise<void> {
  await client.delete<{ 204: void }, unknown, true>({ security: auth, url: '/api/v1/knowledge/{item_id}', path: { item_id: itemId } });
}

/** Saves a succeeded run as an `example` item (its question and code). */
export async function verifyRun(runId: string): Promise<KnowledgeItem> {
  const res = await client.post<{ 201: KnowledgeItem }, unknown, true>({ security: auth, url: '/api/v1/runs/{run_id}/verify', path: { run_id: runId } });
  return res.data;
}
