import type { AppliesTo, KnowledgeKind, KnowledgeOut, KnowledgeStatus, RunKnowledgeOut } from '@/client';

/** A project's knowledge as the API gives it (API.md, "Project knowledge and checks"), from the generated client. */
export type { AppliesTo, KnowledgeKind, KnowledgeStatus };

export type KnowledgeItem = KnowledgeOut;

/** An item a run was given; `used`: its code or answer relied on it. */
export type RunKnowledge = RunKnowledgeOut;
