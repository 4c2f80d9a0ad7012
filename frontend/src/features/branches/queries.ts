import { queryOptions } from '@tanstack/react-query';
import { sessionTree } from './api';

export const branchKeys = {
  all: ['branches'] as const,
  tree: (sessionId: string) => ['branches', 'tree', sessionId] as const,
};

/** The whole tree the session belongs to, from its root. */
export const treeQuery = (sessionId: string) =>
  queryOptions({
    queryKey: branchKeys.tree(sessionId),
    queryFn: () => sessionTree(sessionId),
  });
