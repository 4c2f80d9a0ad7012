import { queryOptions } from '@tanstack/react-query';
import { listKnowledge, type KnowledgeFilter } from './api';

export const knowledgeKeys = {
  all: ['knowledge'] as const,
  project: (projectId: string) => ['knowledge', projectId] as const,
  list: (projectId: string, f: KnowledgeFilter) => ['knowledge', projectId, f.kind ?? null, f.status ?? null, f.q ?? ''] as const,
};

/** A project's knowledge items, filtered by kind, status and a search (any member may read them). */
export const knowledgeQuery = (projectId: string, f: KnowledgeFilter = {}) =>
  queryOptions({
    queryKey: knowledgeKeys.list(projectId, f),
    queryFn: () => listKnowledge(projectId, f),
  });

/** The proposals waiting for a person, counted for the project page's link. */
export const proposalsQuery = (projectId: string) => knowledgeQuery(projectId, { status: 'proposed' });
