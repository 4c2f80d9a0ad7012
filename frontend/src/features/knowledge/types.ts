/**
 * A project's knowledge as the API gives it (API.md, "Project knowledge and checks"). These
 * mirror the contract until the generated client (`make client`) has them; then they are its.
 */
export type KnowledgeKind = 'definition' | 'rule' | 'column' | 'example' | 'lesson';
export type KnowledgeStatus = 'proposed' | 'approved' | 'rejected';

/** What an item applies to; none of them: the whole project. */
export type AppliesTo = { file_id?: string | null; source_id?: string | null; table?: string | null; column?: string | null };

/** Who wrote or approved an item: a user's id, or the user with their email. */
export type Person = string | { user_id?: string | null; email?: string | null } | null | undefined;

export type KnowledgeItem = {
  id: string;
  project_id: string;
  kind: KnowledgeKind;
  title: string;
  body: string;
  applies_to: AppliesTo | null;
  status: KnowledgeStatus;
  source_run_id: string | null;
  created_by: Person;
  approved_by: Person;
  approved_at: string | null;
  created_at: string;
  /** What the screening of its text found ("instructions": it reads like instructions to the agent). */
  flags?: string[];
  /** Its file, source or table was deleted. */
  target_missing?: boolean;
};

/** An item a run was given; `used`: its code or answer relied on it. */
export type RunKnowledge = { item_id: string; title: string; used: boolean };
