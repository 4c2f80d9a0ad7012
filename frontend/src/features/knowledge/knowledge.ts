import type { AppliesTo, KnowledgeItem, KnowledgeKind, KnowledgeStatus, RunKnowledge } from './types';

export const KINDS: { value: KnowledgeKind; label: string; plural: string; hint: string }[] = [
  { value: 'definition', label: 'Definition', plural: 'Definitions', hint: 'a term and what it means, with its formula or code' },
  { value: 'rule', label: 'Rule', plural: 'Rules', hint: '“always …” or “never …”, given with every question' },
  { value: 'column', label: 'Column', plural: 'Columns', hint: 'what a column means, its unit, its quirks' },
  { value: 'example', label: 'Example', plural: 'Examples', hint: 'a question with the code that answered it correctly' },
  { value: 'lesson', label: 'Lesson', plural: 'Lessons', hint: 'a correction learned in a run' },
];

export const STATUSES: { value: KnowledgeStatus; label: string }[] = [
  { value: 'proposed', label: 'Proposed' },
  { value: 'approved', label: 'Approved' },
  { value: 'rejected', label: 'Rejected' },
];

export const kindLabel = (kind: string) => KINDS.find((k) => k.value === kind)?.label ?? kind;

export const FLAGGED_INSTRUCTIONS = 'This proposal reads like instructions to the agent; review it carefully.';

/** The warnings an item carries, as sentences: flagged text first, then the server's sentence on a deleted file, source or table. */
export function warningsOf(item: Pick<KnowledgeItem, 'flags' | 'target_missing'>): string[] {
  const out: string[] = [];
  if (item.flags.includes('instructions')) out.push(FLAGGED_INSTRUCTIONS);
  if (item.target_missing) out.push(item.target_missing);
  return out;
}

/** Names for the ids an item may apply to (the project's files and sources). */
export type Names = { files: Record<string, string>; sources: Record<string, string> };

/**
 * What an item applies to, said in a few words: "file orders.csv · column amount",
 * "source Shop DB · table public.orders"; "the whole project" when it names nothing.
 */
export function appliesToText(a: AppliesTo | null | undefined, names: Names): string {
  if (!a) return 'the whole project';
  const parts: string[] = [];
  if (a.file_id) parts.push(`file ${names.files[a.file_id] ?? 'a deleted file'}`);
  if (a.source_id) parts.push(`source ${names.sources[a.source_id] ?? 'a deleted source'}`);
  if (a.table) parts.push(`table ${a.table}`);
  if (a.column) parts.push(`column ${a.column}`);
  return parts.length ? parts.join(' · ') : 'the whole project';
}

/** Who, as a user reads it: "you", their email, or null when the server names no one. */
export function personOf(id: string | null, email: string | null, me?: string | null): string | null {
  if (!id && !email) return null;
  if (id && id === me) return 'you';
  return email ?? 'a former member';
}

/** Proposals first (they wait for someone), then approved, then rejected; newest first within each. */
export function sortItems<T extends Pick<KnowledgeItem, 'status' | 'created_at'>>(items: T[]): T[] {
  const rank: Record<string, number> = { proposed: 0, approved: 1, rejected: 2 };
  return [...items].sort((a, b) => (rank[a.status] ?? 3) - (rank[b.status] ?? 3) || b.created_at.localeCompare(a.created_at));
}

/** An applies-to with only what was filled in (null: the whole project). */
export function cleanAppliesTo(a: AppliesTo): AppliesTo | null {
  const out = Object.fromEntries(Object.entries(a).filter(([, v]) => typeof v === 'string' && v.trim() !== '').map(([k, v]) => [k, (v as string).trim()]));
  return Object.keys(out).length ? (out as AppliesTo) : null;
}

/** What shaped an answer (the items it used) and what it was given besides. */
export function shapedBy(knowledge: RunKnowledge[] | null | undefined): { used: RunKnowledge[]; unused: RunKnowledge[] } {
  const list = knowledge ?? [];
  return { used: list.filter((k) => k.used), unused: list.filter((k) => !k.used) };
}

/** The link to an item in the project's Knowledge panel. */
export const itemHref = (projectId: string, itemId: string) => `/projects/${projectId}/knowledge?item=${itemId}`;
